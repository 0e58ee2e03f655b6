"""The README's quick start must work on a fresh clone: its first command runs against the
shipped example, its second is the Test section's command, which .ci/run runs."""
import os
import re
import subprocess
import sys

from installtools import REPO, sealed_env

README = os.path.join(REPO, "README.md")


def section(title):
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    match = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert match, "README has no '## {}' section".format(title)
    return match.group(1)


def first_code_block(body):
    match = re.search(r"^```[^\n]*\n(.*?)^```\s*$", body, re.M | re.S)
    assert match, "no code block"
    return [line.strip() for line in match.group(1).splitlines() if line.strip()]


def quick_start():
    commands = first_code_block(section("Quick start"))
    assert len(commands) == 2, commands
    return commands


def test_quick_start_has_exactly_two_commands_and_the_second_is_the_test_command():
    check, tests = quick_start()
    assert first_code_block(section("Test")) == [tests]
    assert tests == ("python3 -m venv .venv && .venv/bin/python -m pip install -r requirements-dev.txt"
                     " && .venv/bin/python -m pytest")
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as handle:
        ci = handle.read()
    ci_commands = [line.strip() for line in ci.splitlines() if "pytest" in line and not line.startswith("#")]
    assert ci_commands, ".ci/run runs no pytest"
    assert ci_commands == [tests]


def test_quick_start_first_command_runs_against_the_example(tmp_path):
    check, _ = quick_start()
    assert check == "python3 install.py --check examples/example-project"
    argv = check.split()
    assert argv[0] == "python3"
    done = subprocess.run([sys.executable] + argv[1:], cwd=REPO, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=sealed_env(str(tmp_path / "home")))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_test_command_installs_into_a_virtual_environment_git_ignores():
    """A distribution's Python refuses `pip install` outside a virtual environment (PEP 668): the
    command makes one, every later step runs its interpreter, and git ignores the folder."""
    _, tests = quick_start()
    steps = [step.split() for step in tests.split(" && ")]
    assert steps[0][:3] == ["python3", "-m", "venv"]
    folder = steps[0][3]
    assert all(step[0] == folder + "/bin/python" for step in steps[1:]), steps
    with open(os.path.join(REPO, ".gitignore"), encoding="utf-8") as handle:
        ignored = [line.strip() for line in handle]
    assert folder + "/" in ignored or "/" + folder + "/" in ignored


def test_every_test_the_agents_table_cites_exists():
    """Each cell of the table of what each agent gets names the test that measures it: a test
    renamed or removed must not leave the README citing nothing."""
    body = section("Other agents: Codex CLI, Gemini CLI and AGENTS.md")
    cited = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`(?: and `::(test_\w+)`)?", body)
    assert len(cited) >= 13, cited
    for path, *names in cited:
        with open(os.path.join(REPO, path), encoding="utf-8") as handle:
            source = handle.read()
        for name in filter(None, names):
            assert "\ndef %s(" % name in source, "%s::%s" % (path, name)
