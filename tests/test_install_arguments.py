"""Options that contradict each other get one line naming the conflict and exit 2: a run
that silently drops part of its command line does something other than what was asked."""

import pytest

from installtools import installer, project  # noqa: F401  (fixtures are used by name)

USAGE = 2


@pytest.mark.parametrize("words, named", [
    (["--check", "--dry-run"], "--dry-run"),
    (["--version", "--global"], "--version"),
    (["--version", "--project", "{project}"], "--version"),
    (["--help", "--check"], "--help"),
    (["--help", "--version"], "--help"),
    (["--project", "{project}", "--update", "{project}"], "one mode at a time"),
    (["--project", "--update", "{project}"], "one mode at a time"),
    (["--uninstall", "--global", "--project", "{project}"], "one mode at a time"),
    (["--uninstall", "{project}", "--global", "--check"], "one mode at a time"),
    (["--uninstall", "--global", "{project}"], "--uninstall --global takes no directory"),
    (["--uninstall", "--global", "--python", "python3"], "--python works only"),
    (["--uninstall", "{project}", "--force"], "--force works only"),
])
def test_a_conflict_is_one_line_and_exit_2(installer, project, words, named):
    done = installer.run(*[word.format(project=project) for word in words])
    assert done.returncode == USAGE, done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("words", [["--version"], ["--help"], ["-h"]])
def test_help_and_version_alone_still_answer(installer, words):
    assert installer.run(*words).returncode == 0


def test_two_directories_for_one_mode_are_still_named(installer, project, tmp_path):
    done = installer.run("--project", project, str(tmp_path))
    assert done.returncode == USAGE
    assert "one directory at a time" in done.stderr


def test_global_with_a_home_that_does_not_exist_creates_nothing(installer, tmp_path):
    home = tmp_path / "no such home"
    done = installer.run("--global", env={"HOME": str(home)})
    assert done.returncode == USAGE and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "does not exist" in done.stderr
    assert not home.exists()


@pytest.mark.parametrize("words", [["--uninstall", "--global"], ["--global", "--uninstall"],
                                   ["--uninstall", "--global", "--dry-run", "--force"]])
def test_uninstall_with_global_is_one_mode(installer, tmp_path, words):
    done = installer.run(*words, env={"CLAUDE_CONFIG_DIR": str(tmp_path / "config")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].endswith(
        "removing the protocol section from " + str(tmp_path / "config" / "CLAUDE.md"))
