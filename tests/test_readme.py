"""What the README claims, held to what the code does: the quick start, run step by step in a new
repository, prints what the README shows and leaves a committed install that --check calls ok,
and a session start shows what the README says it shows; every mode and option of --help-all has
its line; the Test section's command is what .ci/run runs; the init prompt's size is the one its
own head states; every link leads to a file (and heading) that is there. And the README stays
short: at most 3,000 words, no line over 400 characters."""
import os
import re
import subprocess
import sys

from installtools import REPO, make_repo, sealed_env, write

README = os.path.join(REPO, "README.md")
DOCS = os.path.join(REPO, "docs")
# How the quick start names the clone and the repository it installs into.
CLONE = "~/memory-context-protocol"
SHOWN_PROJECT = "/home/you/src/your-project"


def readme():
    with open(README, encoding="utf-8") as handle:
        return handle.read()


def section(title, text=None):
    match = re.search(r"^## " + re.escape(title) + r"\n(.*?)(?=^## |\Z)", text or readme(),
                      re.M | re.S)
    assert match, "README has no '## {}' section".format(title)
    return match.group(1)


def code_blocks(body):
    """Each fenced block's lines, indentation of the list item removed."""
    blocks = []
    for indent, content in re.findall(r"^( *)```[^\n]*\n(.*?)^ *```\s*$", body, re.M | re.S):
        blocks.append([line[len(indent):] for line in content.splitlines()])
    return blocks


def matches_with_ellipses(shown, real):
    """Whether the lines shown (where a line that is "..." after its indentation stands for
    any lines, and a line ending in "..." for any line starting with what comes before) appear
    in real, in order."""
    at = 0
    skipping = False
    for line in shown:
        if line.strip() == "...":
            skipping = True
            continue
        prefix = line[:-3] if line.endswith("...") else None
        while at < len(real):
            hit = real[at].startswith(prefix) if prefix is not None else real[at] == line
            at += 1
            if hit:
                break
            if not skipping:
                return False
        else:
            return False
        skipping = False
    return True


def run(argv, cwd, env):
    return subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


def quick_start_blocks():
    return code_blocks(section("Quick start"))


def test_the_readme_is_short():
    text = readme()
    assert len(text.split()) <= 3000
    long_lines = [number for number, line in enumerate(text.splitlines(), 1) if len(line) > 400]
    assert long_lines == []


def test_the_quick_start_runs_as_written_in_a_new_repository(tmp_path):
    """Step 1 to 4: install, with the output the README shows; the git add line the install
    printed, run as printed, then the commit; --check then says ok and git has nothing left."""
    env = sealed_env(str(tmp_path / "home"))
    project = make_repo(str(tmp_path / "your-project"), env)
    cd, install, commit, start = quick_start_blocks()[:4]
    assert cd == ["cd ~/src/your-project"]
    typed = install[0]
    assert typed == "$ python3 {}/install.py --project .".format(CLONE)
    done = run([sys.executable, os.path.join(REPO, "install.py"), "--project", "."], project, env)
    assert done.returncode == 0, done.stderr
    shown = [line.replace(SHOWN_PROJECT, project) for line in install[1:]]
    assert matches_with_ellipses(shown, done.stdout.splitlines()), done.stdout
    [add] = [line for line in done.stdout.splitlines() if line.startswith("  next     git add ")]
    add = re.sub(r" \(then commit[^)]*\)$", "", add[len("  next     "):])
    assert run(["sh", "-c", add], project, env).returncode == 0
    assert commit[0].startswith("git commit -m ")
    assert run(["sh", "-c", commit[0]], project, env).returncode == 0
    assert run(["git", "status", "--porcelain"], project, env).stdout == ""
    hooks = run(["git", "ls-files", "--stage", ".claude/hooks"], project, env).stdout
    assert hooks.count("100755") == 4
    assert start == ["claude"]
    check = run([sys.executable, os.path.join(REPO, "install.py"), "--check", "."], project, env)
    assert check.returncode == 0 and check.stdout.startswith("ok: "), check.stdout


def test_the_session_start_shows_what_the_quick_start_says(tmp_path):
    """Step 5: with a note in a topic folder and a handoff, session start hands the agent what
    the README shows."""
    env = sealed_env(str(tmp_path / "home"))
    project = make_repo(str(tmp_path / "your-project"), env)
    assert run([sys.executable, os.path.join(REPO, "install.py"), "--project", "."], project,
               env).returncode == 0
    shown = quick_start_blocks()[4]
    handoff = shown[shown.index("## Last handoff (.session-state.md — local to this machine, "
                                "first 40 lines)") + 1]
    write(os.path.join(project, ".session-state.md"), handoff + "\n\n## Working On\nLogin.\n")
    write(os.path.join(project, "memory", "gotchas", "dev-server-ipv6.md"),
          "# Dev server\n\n- 2026-12-07: it listens on IPv6 only.\n")
    env = dict(env, CLAUDE_PROJECT_DIR=project)
    hook = subprocess.run([sys.executable, "-I", "-S", ".claude/hooks/session-start.py"],
                          cwd=project, env=env, input='{"session_id": "s1", "source": "startup", '
                          '"hook_event_name": "SessionStart"}', stdout=subprocess.PIPE,
                          universal_newlines=True)
    assert matches_with_ellipses(shown, hook.stdout.splitlines()), hook.stdout


def flags_of_help_all():
    done = run([sys.executable, os.path.join(REPO, "install.py"), "--help-all"], REPO, None)
    flags = set(re.findall(r"^\s+(--[a-z][a-z-]*)", done.stdout, re.M))
    assert {"--project", "--check", "--allow-no-git", "--help-all"} <= flags
    return flags


def test_every_mode_and_option_has_its_line():
    bullets = re.findall(r"^- `(?:install\.py )?(--[a-z][a-z-]*)", section("Modes") +
                         section("Options"), re.M)
    listed = set(bullets)
    listed.update(re.findall(r"`(--[a-z-]+)`", "".join(
        line for line in section("Options").splitlines() if line.startswith("- `--help`"))))
    assert flags_of_help_all() <= listed | {"--uninstall"} and "--uninstall" in section("Modes")
    assert len(bullets) == len(listed - {"--help-all", "--version"}), "one line per mode/option"


def test_every_command_has_its_line():
    names = sorted(name[:-3] for name in os.listdir(os.path.join(REPO, "commands")))
    listed = re.findall(r"^- `/([a-z-]+)`: ", section("Commands the agent gets"), re.M)
    assert sorted(listed) == names


def test_the_test_section_command_is_what_ci_runs():
    [[command]] = code_blocks(section("Test"))
    assert command == ("python3 -m venv .venv && .venv/bin/python -m pip install -r "
                       "requirements-dev.txt && .venv/bin/python -m pytest")
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as handle:
        ci = [line.strip() for line in handle if "pytest" in line and not line.startswith("#")]
    assert ci == [command]
    assert re.search(r"Measured .*\d+ minutes", section("Test")), "the Test section's times"


def test_the_test_command_installs_into_a_virtual_environment_git_ignores():
    """A distribution's Python refuses `pip install` outside a virtual environment (PEP 668): the
    command makes one, every later step runs its interpreter, and git ignores the folder."""
    [[command]] = code_blocks(section("Test"))
    steps = [step.split() for step in command.split(" && ")]
    assert steps[0][:3] == ["python3", "-m", "venv"]
    folder = steps[0][3]
    assert all(step[0] == folder + "/bin/python" for step in steps[1:]), steps
    with open(os.path.join(REPO, ".gitignore"), encoding="utf-8") as handle:
        ignored = [line.strip() for line in handle]
    assert folder + "/" in ignored or "/" + folder + "/" in ignored


def test_the_init_prompt_size_is_the_one_its_head_states():
    with open(os.path.join(REPO, "init", "claude-context-init.md"), encoding="utf-8") as handle:
        head = handle.read().split("`````", 1)[0]
    stated = re.search(r"\*\*Its size\.\*\* Pasted, it is about ([\d,]+) tokens \(characters / 4\), "
                       r"(\d+)% of", head)
    assert stated, "init/sync_hooks.py writes the size paragraph"
    said = re.search(r"Pasted, it is about ([\d,]+) tokens \((\d+)% of", section("Other ways in"))
    assert said and said.groups() == stated.groups(), \
        "write 'about {} tokens ({}% of' in the README".format(*stated.groups())


def slug(heading):
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors_of(path):
    with open(path, encoding="utf-8") as handle:
        text = re.sub(r"^```.*?^```", "", handle.read(), flags=re.M | re.S)
    return {slug(title) for title in re.findall(r"^#+ (.+)$", text, re.M)} | \
        set(re.findall(r'<a name="([^"]+)">', text))


def test_every_link_of_the_readme_and_the_pages_leads_somewhere():
    pages = [README] + [os.path.join(DOCS, name) for name in sorted(os.listdir(DOCS))]
    for page in pages:
        with open(page, encoding="utf-8") as handle:
            text = re.sub(r"^ *```.*?^ *```", "", handle.read(), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            path = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
            assert os.path.exists(path), "{}: {}".format(os.path.relpath(page, REPO), target)
            if anchor and path.endswith(".md"):
                assert anchor in anchors_of(path), "{}: {}".format(
                    os.path.relpath(page, REPO), target)


def test_every_test_the_agents_table_cites_exists():
    """Each cell of the table of what each agent gets names the test that measures it: a test
    renamed or removed must not leave the page citing nothing."""
    with open(os.path.join(DOCS, "agents.md"), encoding="utf-8") as handle:
        body = handle.read()
    cited = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`(?: and `::(test_\w+)`)?", body)
    assert len(cited) >= 13, cited
    for path, *names in cited:
        with open(os.path.join(REPO, path), encoding="utf-8") as handle:
            source = handle.read()
        for name in filter(None, names):
            assert "\ndef %s(" % name in source, "%s::%s" % (path, name)
