"""What a new user meets at the command line: --help on one screen; the three installs that would
succeed and not work refused with one line, exit 1 and nothing written, each with its override;
the git add line and the agent step that say what comes next; each --check finding with its own
repair, none of which throws an edit away; a settings file with comments named as such; and
Ctrl-C at any moment one line and exit 130, never a traceback."""

import json
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    HOOKS, git, index_mode, installer, invoked, outside_git, path_in,
    read, repo, snapshot, write,
)

ADD_HOOKS = "git add --chmod=+x " + " ".join(".claude/hooks/" + name for name in HOOKS)


def next_lines(done):
    return [line[len("  next     "):] for line in done.stdout.splitlines()
            if line.startswith("  next     ")]


def git_add_line(done):
    """The git add line the run printed, as a command to run."""
    [line] = [line for line in next_lines(done) if line.startswith(("git add", "cd "))]
    return re.sub(r" \(then commit[^)]*\)$", "", line)


# ------------------------------------------------------------------ --help

@pytest.mark.parametrize("flag, most_lines", [("--help", 30), ("--help-all", None)])
def test_help_fits_a_screen_and_help_all_names_every_option(installer, flag, most_lines):
    lines = installer.ok(flag).stdout.splitlines()
    assert max(len(line) for line in lines) <= 100
    if most_lines:
        assert len(lines) <= most_lines
    else:
        for option in ("--json", "--memory", "--recursive", "--allow-no-git",
                       "--allow-missing-python", "--allow-subfolder", "--agents", "--force"):
            assert any(line.lstrip().startswith(option) for line in lines), option


# ------------------------------------------------------------------ three refused mistakes

def assert_refused_in_one_line(done, *words):
    assert done.returncode == 1, done.stdout
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.endswith("; nothing was changed\n")
    for word in words:
        assert word in done.stderr, done.stderr


def test_a_folder_outside_git_is_refused_unless_allowed(installer, outside_git):
    assert_refused_in_one_line(installer.run("--project", outside_git),
                               "is not in a git repository", "git init", "--allow-no-git")
    assert os.listdir(outside_git) == []
    done = installer.ok("--project", outside_git, "--allow-no-git")
    assert "not a git repository" in done.stdout  # the note says what it costs
    assert not any(line.startswith("git add") for line in next_lines(done))
    installer.ok("--project", outside_git)  # installed: a rerun needs no override


def test_a_folder_inside_a_repository_is_refused_unless_allowed(installer, repo):
    before = snapshot(repo)
    done = installer.run("--project", ".", cwd=path_in(repo, "src"))
    assert_refused_in_one_line(done, "is a folder inside the git repository " + repo,
                               "--project " + shlex.quote(repo), "--allow-subfolder")
    assert snapshot(repo) == before
    installer.ok("--project", path_in(repo, "src"), "--allow-subfolder")
    assert os.path.isfile(path_in(repo, "src/.claude/settings.json"))
    installer.ok("--project", path_in(repo, "src"))  # installed there: no override needed again
    installer.ok("--project", repo)  # the top itself is no subfolder


@pytest.mark.parametrize("python", ["python9.9", "/no/such/python3", "py -3.99"])
def test_a_python_that_is_not_there_is_refused_unless_allowed(installer, repo, python):
    before = snapshot(repo)
    program = shlex.split(python)[0]
    for mode in ("--project", "--update"):
        assert_refused_in_one_line(installer.run(mode, repo, "--python", python),
                                   "--python {}: {}".format(python, program),
                                   "--allow-missing-python")
        assert snapshot(repo) == before
        if mode == "--project":
            installer.ok("--project", repo)
            before = snapshot(repo)
    done = installer.ok("--update", repo, "--python", python, "--allow-missing-python")
    assert "the hooks fail wherever it is missing" in done.stdout


@pytest.mark.parametrize("words, named", [
    (["--check", "{repo}", "--allow-no-git"], "--allow-no-git works only with --project"),
    (["--uninstall", "{repo}", "--allow-subfolder"], "--allow-subfolder works only with"),
    (["--project", "{repo}", "--allow-missing-python"], "--allow-missing-python goes with"),
])
def test_an_override_with_nothing_to_override_is_a_usage_error(installer, repo, words, named):
    done = installer.run(*[word.format(repo=repo) for word in words])
    assert done.returncode == 2 and named in done.stderr and done.stdout == ""


# ------------------------------------------------------------------ what comes next

def test_the_install_ends_with_one_git_add_line_for_all_it_wrote_then_the_agent_step(
        installer, repo):
    done = installer.ok("--project", repo, cwd=repo)
    lines = done.stdout.splitlines()
    assert lines[-1].startswith("done: ")
    add, agent = next_lines(done)
    assert add.startswith(ADD_HOOKS + " && git add ")
    assert agent.startswith("start Claude Code in the project (claude) and accept its trust "
                            "prompt once")
    subprocess.run(git_add_line(done), shell=True, cwd=repo, check=True, env=installer.env)
    # every path the install wrote is staged, the hooks executable, and nothing else is left
    status = git(repo, "status", "--porcelain", env=installer.env).splitlines()
    assert len(status) == 15 and all(line[0] in "AM" and line[1] == " " for line in status)
    assert all(index_mode(repo, installer.env, ".claude/hooks/" + name) == "100755"
               for name in HOOKS)
    git(repo, "commit", "-q", "-m", "protocol", env=installer.env)
    again = installer.ok("--project", repo)
    assert next_lines(again) == []  # committed, nothing changed: nothing to do next


def test_run_from_elsewhere_the_lines_go_to_the_project_first(installer, repo, tmp_path):
    done = installer.ok("--project", repo, cwd=str(tmp_path))
    add, agent = next_lines(done)
    assert add.startswith("cd {} && {}".format(shlex.quote(repo), ADD_HOOKS))
    assert "(cd {} && claude)".format(shlex.quote(repo)) in agent
    subprocess.run(git_add_line(done), shell=True, cwd=str(tmp_path), check=True,
                   env=installer.env)
    assert git(repo, "ls-files", "--others", "--exclude-standard", env=installer.env) == ""


def test_an_ignored_part_is_left_out_of_the_line_and_named_by_the_note(installer, repo):
    write(path_in(repo, ".gitignore"), "build/\n.claude/commands/\n")
    done = installer.ok("--project", repo, cwd=repo)
    assert ".claude/commands/" not in git_add_line(done)
    assert "git ignores .claude/commands/handoff.md" in done.stdout
    subprocess.run(git_add_line(done), shell=True, cwd=repo, check=True, env=installer.env)


def test_each_wired_agent_gets_its_step(installer, repo):
    done = installer.ok("--project", repo, "--agents", "claude,codex,gemini", cwd=repo)
    steps = next_lines(done)
    assert [step.split(" (")[0] for step in steps[1:]] == [
        "start Claude Code in the project", "start Codex CLI there",
        "start Gemini CLI at the project's top"]


def test_the_uninstall_says_what_to_commit(installer, repo):
    installer.ok("--project", repo)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "protocol", env=installer.env)
    done = installer.ok("--uninstall", repo, cwd=repo)
    [line] = next_lines(done)
    assert line.endswith("(then commit the removal)") and "--chmod" not in line
    subprocess.run(git_add_line(done), shell=True, cwd=repo, check=True, env=installer.env)
    assert git(repo, "status", "--porcelain", "--untracked-files=no",
               env=installer.env).splitlines() and all(
        line.startswith(("D  ", "M  ")) for line in git(
            repo, "status", "--porcelain", "--untracked-files=no", env=installer.env).splitlines())
    assert git(repo, "diff", "--name-only", env=installer.env) == ""


def test_a_dry_run_says_nothing_of_what_comes_next(installer, repo):
    assert next_lines(installer.ok("--project", repo, "--dry-run")) == []


# ------------------------------------------------------------------ each finding, its repair

def test_each_finding_carries_its_own_repair_and_none_loses_an_edit(installer, repo):
    """Over budget, an edited /dream and a dead pointer: three findings, three repairs; the
    one that replaces the edit keeps it first, as the line says."""
    installer.ok("--project", repo)
    dream = path_in(repo, ".claude/commands/dream.md")
    edited = read(dream) + b"\nMy team's own step.\n"
    write(dream, edited)
    with open(path_in(repo, "memory/MEMORY.md"), "a", encoding="utf-8") as handle:
        handle.write("".join("- [topic {0}](topic-{0}.md) - a topic\n".format(n)
                             for n in range(90)))
    done = installer.run("--check", repo)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    findings = [number for number, line in enumerate(lines) if re.match(r"  [A-Z]+ +\S", line)]
    for number in findings:
        if not lines[number].startswith("  WARN"):
            assert lines[number + 1].startswith("           fix: "), lines[number]
    [force] = [line for line in lines if "--update --force" in line and "fix: " in line]
    assert force == "           fix: {} --update --force {} (keeps each edited file beside it " \
        "as <file>.mine)".format(invoked(installer), shlex.quote(repo))
    assert "fix: the repair on each line of the budget report below" in done.stdout
    assert "fix: the repair on each line of the memory report below" in done.stdout
    subprocess.run(force.split("fix: ", 1)[1].split(" (keeps")[0], shell=True, check=True,
                   env=installer.env)
    assert read(dream + ".mine") == edited  # the edit is kept
    assert b"My team's own step." not in read(dream)
    report = json.loads(installer.run("--check", "--json", repo).stdout)
    assert all("fix" in finding for finding in report["findings"])


def test_force_keeps_each_edit_it_replaces_and_never_overwrites_a_kept_one(installer, repo):
    installer.ok("--project", repo)
    hook = path_in(repo, ".claude/hooks/stop-handoff.py")
    for number, edit in enumerate((b"# first edit\n", b"# second edit\n"), 1):
        write(hook, read(hook) + edit)
        done = installer.ok("--update", "--force", repo)
        kept = ".claude/hooks/stop-handoff.py.mine" + ("" if number == 1 else "-2")
        assert "  wrote    {} (your edited version, before --force)".format(kept) in done.stdout
        assert read(path_in(repo, kept)).endswith(edit)
        assert kept not in git_add_line(done)
    assert installer.ok("--update", "--force", repo).stdout.splitlines()[-1].startswith(
        "nothing to do")
    installer.ok("--uninstall", repo)
    assert os.path.isfile(path_in(repo, ".claude/hooks/stop-handoff.py.mine"))  # the user's


# ------------------------------------------------------------------ messages

@pytest.mark.parametrize("text, mark, line", [
    ('{\n  // my hooks\n  "hooks": {}\n}\n', "//", 2),
    ('{"permissions": {"allow": []} /* later */}\n', "/*", 1),
])
def test_a_settings_file_with_comments_is_named_as_such(installer, repo, text, mark, line):
    write(path_in(repo, ".claude/settings.json"), text)
    done = installer.run("--project", repo)
    assert_refused_in_one_line(done, ".claude/settings.json has comments ({} at line {},".format(
        mark, line), "which JSON does not allow")


@pytest.mark.parametrize("text, place", [('{"hooks": {}, }\n', "line 1, column 15"),
                                         ('{"permissions": {"allow": ["x",\n]}}', "line 2, column 1")])
def test_a_comma_after_the_last_entry_is_named_as_such(installer, repo, text, place):
    write(path_in(repo, ".claude/settings.json"), text)
    assert_refused_in_one_line(installer.run("--project", repo), "has a comma after its last "
                               "entry (before {})".format(place))


def test_other_invalid_json_is_still_named_by_its_place(installer, repo):
    write(path_in(repo, ".claude/settings.json"), '{"hooks": {} "permissions": {}}\n')
    assert_refused_in_one_line(installer.run("--project", repo), "is not valid JSON at line 1")


# ------------------------------------------------------------------ Ctrl-C at any moment

def interrupted_at(installer, argv, delay):
    process = subprocess.Popen([sys.executable, "-I", "-S", installer.script] + argv,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=installer.env, universal_newlines=True)
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return process.returncode, err


def before_the_first_line(err, script):
    """Whether a traceback is of an interrupt that landed before install.py's first line ran
    (Python's own start-up, where no program can catch it): no frame of the script past line 0,
    none of its package."""
    frames = re.findall(r'^  File "([^"]+)", line (\d+)', err, re.M)
    folder = os.path.join(os.path.dirname(script), "installer")
    return not any((path == script and line != "0") or path.startswith(folder + os.sep)
                   for path, line in frames)


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child is POSIX")
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(installer, repo):
    """Seeded: the moments are drawn across a whole run, most of them in its start-up, where
    the modules load (delay = whole run x u squared); MCP_CTRL_C_RUNS draws more."""
    installer.ok("--project", repo)
    started = time.monotonic()
    installer.ok("--check", repo)
    whole = time.monotonic() - started
    draw = random.Random(29)
    for _ in range(int(os.environ.get("MCP_CTRL_C_RUNS", "20"))):
        delay = whole * draw.random() ** 2
        code, err = interrupted_at(installer, ["--check", repo], delay)
        if code in (0, 1) and err == "":
            continue  # it finished first
        if (code, err) == (-signal.SIGINT, ""):
            continue  # before Python set its handler: killed by the signal (a shell says 130)
        assert "Traceback" not in err or before_the_first_line(err, installer.script), \
            (delay, err)
        if "Traceback" not in err:
            assert (code, err) == (130, "install.py: interrupted\n"), delay


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child is POSIX")
def test_an_interrupt_the_parent_ignores_stays_ignored(installer, repo):
    """A run a script started with `&` or nohup ignores SIGINT from the start, as Python leaves
    it: install.py does not take it back."""
    process = subprocess.Popen([sys.executable, installer.script, "--check", repo],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=installer.env,
                               universal_newlines=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 1 and err == ""  # not installed: the check ran to its end
    assert "protocol not installed" in out
