"""Nothing a repository carries makes install.py run a program of its choosing.

`--check` is offered for repositories nobody has trusted yet, and the writing modes run in clones
whose `.git/config` may have come in an archive or on a shared disk. Each test builds the malicious
clone: a repository configuration that names programs for git to start (fsmonitor, hooks, a
signature program for git log), and settings whose hook commands or `env` would make the
interpreter probe run the repository's code. Every program the clone plants writes a marker file
when it runs; the marker must never appear."""

import json
import os
import shlex
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    expected_settings, git, installer, make_repo, path_in, read, write,
)

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the planted programs are shell scripts")


def planted_program(path, marker, then=""):
    """An executable script at path that appends a line to marker when it runs, then `then`."""
    write(path, "#!/bin/sh\necho \"$0 $*\" >> {}\n{}\n".format(shlex.quote(marker), then))
    os.chmod(path, 0o755)
    return path


def clone_whose_git_config_runs_programs(tmp_path, env):
    """A repository whose .git/config names a program for every way git could be made to start
    one in the commands the installer and the memory report run: its fsmonitor, a hooks folder
    (and the default one) with a hook for every event, a signature program that git log calls,
    an external diff and a pager."""
    repo = make_repo(str(tmp_path / "clone"), env, {
        "README.md": "# clone\n", "memory/MEMORY.md": "# Memory\n- [a](a.md) - see `README.md`\n",
        "memory/a.md": "# a\nSee README.md.\n"})
    marker = str(tmp_path / "a planted program ran")
    program = planted_program(str(tmp_path / "planted" / "program"), marker)
    hooks = tmp_path / "planted" / "hooks"
    for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction",
                 "pre-auto-gc", "fsmonitor-watchman"):
        planted_program(str(hooks / name), marker)
        planted_program(path_in(repo, ".git/hooks/" + name), marker)
    for key, value in (("core.fsmonitor", program), ("core.hooksPath", str(hooks)),
                       ("log.showSignature", "true"), ("gpg.program", program),
                       ("diff.external", program), ("core.pager", program),
                       ("pager.log", program), ("core.untrackedCache", "true")):
        git_of_the_test(repo, env, "config", key, value)
    return repo, marker


def git_of_the_test(repo, env, *args):
    """The test's own git commands, which must not run the planted programs either."""
    return git(repo, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
               "--no-pager", *args, env=env)


def ran(marker):
    return read(marker).decode("utf-8") if os.path.exists(marker) else ""


def test_git_run_by_every_mode_starts_no_program_the_repository_names(installer, tmp_path):
    repo, marker = clone_whose_git_config_runs_programs(tmp_path, installer.env)
    installer.ok("--project", repo)
    assert ran(marker) == ""
    # hooks committed without their executable bit: --update sets it in git's index
    git_of_the_test(repo, installer.env, "add", "--chmod=-x", "--", ".claude/hooks")
    git_of_the_test(repo, installer.env, "commit", "-q", "-m", "hooks")
    assert git_of_the_test(repo, installer.env, "ls-files", "--stage",
                           ".claude/hooks/stop-handoff.py").startswith("100644")
    assert ran(marker) == ""
    installer.ok("--update", repo)
    assert git_of_the_test(repo, installer.env, "ls-files", "--stage",
                           ".claude/hooks/stop-handoff.py").startswith("100755")
    for args in (["--check", repo], ["--check", "--json", repo], ["--check", "--memory", repo],
                 ["--check", "--recursive", str(tmp_path)]):
        installer.run(*args)
    installer.ok("--uninstall", repo)
    assert ran(marker) == ""


# ------------------------------------------------------------ the interpreter probe

STANDARD = 'python3 -I -S "${CLAUDE_PROJECT_DIR}/.claude/hooks/'


def clone_with_commands(tmp_path, env, session_start, settings_env=None):
    """An installed clone whose committed settings run session_start at every session start."""
    repo = make_repo(str(tmp_path / "clone"), env)
    settings = expected_settings()
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = session_start
    if settings_env is not None:
        settings["env"] = settings_env
    return repo, settings


def installed_with(installer, repo, settings):
    installer.ok("--project", repo)
    write(path_in(repo, ".claude/settings.json"), json.dumps(settings, indent=2) + "\n")


@pytest.mark.parametrize("recursive", [False, True])
def test_the_probe_runs_no_shell_text_the_command_puts_before_the_interpreter(
        installer, tmp_path, recursive):
    marker = str(tmp_path / "the echo ran")
    command = "echo planted >> {}; {}session-start.py\"".format(shlex.quote(marker), STANDARD)
    repo, settings = clone_with_commands(tmp_path, installer.env, command)
    installed_with(installer, repo, settings)
    done = installer.run("--check", *(["--recursive", str(tmp_path)] if recursive else [repo]))
    assert ran(marker) == "", done.stdout
    if not recursive:
        [line] = [line for line in done.stdout.splitlines() if "echo planted" in line]
        assert line.startswith("  WARN     ") and "not run" in line


def test_the_probe_looks_the_interpreter_up_on_your_path_not_the_settings_env(
        installer, tmp_path):
    """The settings' env is read for what it says, never handed to a process: a PATH there that
    puts the repository's tools/ first does not choose the python3 the probe runs."""
    marker = str(tmp_path / "the planted python3 ran")
    repo, settings = clone_with_commands(
        tmp_path, installer.env, STANDARD + 'session-start.py"',
        {"PATH": "tools:" + installer.env["PATH"], "LD_PRELOAD": "tools/preload.so",
         "PYTHONSTARTUP": "tools/startup.py"})
    planted_program(path_in(repo, "tools/python3"), marker, 'exec "{}" "$@"'.format(
        sys.executable))
    installed_with(installer, repo, settings)
    for args in (["--check", repo], ["--check", "--recursive", str(tmp_path)]):
        done = installer.run(*args)
    assert ran(marker) == ""
    done = installer.run("--check", repo)  # and what the harness would run there is named
    [line] = [line for line in done.stdout.splitlines() if "tools/python3" in line]
    assert line.startswith("  WARN     ") and "not run" in line


@pytest.mark.parametrize("program", ["tools/python3", '"$CLAUDE_PROJECT_DIR/tools/python3"',
                                     "'{repo}/tools/python3'", "./tools/python3"])
def test_the_probe_runs_no_interpreter_the_repository_carries(installer, tmp_path, program):
    marker = str(tmp_path / "the planted python3 ran")
    repo = str(tmp_path / "clone")
    command = program.format(repo=repo) + ' -I -S "${CLAUDE_PROJECT_DIR}/.claude/hooks/' \
        'session-start.py"'
    repo, settings = clone_with_commands(tmp_path, installer.env, command)
    planted_program(path_in(repo, "tools/python3"), marker, 'exec "{}" "$@"'.format(
        sys.executable))
    installed_with(installer, repo, settings)
    done = installer.run("--check", repo)
    assert ran(marker) == "", done.stdout
    assert "not run" in done.stdout


def test_an_interpreter_on_your_path_is_still_probed(installer, tmp_path):
    """The probe still does its job: a python3 on the user's PATH that is too old fails the
    check, named, with a repair."""
    old = tmp_path / "old python"
    write(str(old / "python3"), "#!/bin/sh\nprintf 3.6\n")
    os.chmod(str(old / "python3"), 0o755)
    repo = make_repo(str(tmp_path / "clone"), installer.env)
    installer.ok("--project", repo)
    done = installer.run("--check", repo, env={
        "PATH": "{}{}{}".format(old, os.pathsep, installer.env["PATH"])})
    assert done.returncode == 1
    assert "the hooks' interpreter (python3 -I -S) is Python 3.6" in done.stdout
