"""Whether the protocol reaches teammates, and whether the run is about the right folder: parts git
ignores are named with the line that ignores them, a folder outside git is said to be one, --check
from inside a project checks the project, and an install inside .claude/ is refused."""

import os
import shutil
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    HOOKS, git, installer, make_repo, outside_git, path_in, project, read, repo, write,
)


# How the last line of an install ends when a note above says the protocol will not work fully
# or reach teammates: "done" alone would read as all is well.
# The protocol's hooks as the note that adds them to git names them, one by one.
ADD_HOOKS = " ".join(".claude/hooks/" + name for name in HOOKS)
UNFINISHED = (", but the protocol cannot work fully or reach teammates until the note above is "
              "dealt with")


def test_an_install_in_a_repository_that_shares_everything_just_says_done(installer, repo):
    done = installer.ok("--project", repo, cwd=repo)
    assert done.stdout.splitlines()[-1].startswith("done: ")
    assert UNFINISHED not in done.stdout and "  note " not in done.stdout
    [add] = [line for line in done.stdout.splitlines() if line.startswith("  next     git add")]
    assert add.startswith("  next     git add --chmod=+x " + ADD_HOOKS +
                          " && git add .claude/memory-context-protocol.json ")
    subprocess.run(add[len("  next     "):].split(" (then commit")[0], shell=True, cwd=repo,
                   env=installer.env, check=True)
    git(repo, "commit", "-q", "-m", "protocol", env=installer.env)
    again = installer.ok("--project", repo).stdout
    assert UNFINISHED not in again and "  next " not in again


def test_a_gitignore_that_ignores_the_claude_folder_is_named_at_install_and_in_check(
        installer, repo):
    write(path_in(repo, ".gitignore"), "build/\n.claude/\n")
    done = installer.ok("--project", repo)
    line = ("git ignores .claude/commands/handoff.md, .claude/hooks/session-start.py, "
            ".claude/memory-context-protocol.json, .claude/settings.json (.gitignore:2: "
            ".claude/), so teammates never get them; remove or narrow that line")
    assert "  note     " + line in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1].endswith(UNFINISHED)
    # git add refuses an ignored path: the line to run leaves them out, the note names them
    [add] = [line for line in done.stdout.splitlines() if line.startswith("  next     ")
             and "git add" in line]
    assert ".claude/" not in add and "memory/MEMORY.md" in add
    check = installer.run("--check", repo)
    assert check.returncode == 1
    assert "  UNSHARED " + line in check.stdout.splitlines()


def test_an_ignored_memory_folder_is_named(installer, repo):
    installer.ok("--project", repo)
    with open(path_in(repo, ".gitignore"), "a") as handle:
        handle.write("memory/\n")
    check = installer.run("--check", repo)
    assert check.returncode == 1
    assert "  UNSHARED git ignores memory/MEMORY.md (.gitignore:" in check.stdout


def test_an_ignored_file_that_is_tracked_is_shared(installer, repo):
    installer.ok("--project", repo)
    make_repo(repo, installer.env)  # commits everything
    with open(path_in(repo, ".gitignore"), "a") as handle:
        handle.write(".claude/\nmemory/\n")
    assert "UNSHARED" not in installer.run("--check", repo).stdout


def test_a_negated_line_is_no_ignoring_line(installer, repo):
    write(path_in(repo, ".gitignore"), ".claude/*\n!.claude/settings.json\n!.claude/hooks/\n"
          "!.claude/commands/\n")
    installer.ok("--project", repo)
    # the record is shared with the settings it speaks of: ignored, it is named
    assert ("  UNSHARED git ignores .claude/memory-context-protocol.json (.gitignore:1: .claude/*)"
            ) in installer.run("--check", repo).stdout
    with open(path_in(repo, ".gitignore"), "a") as handle:
        handle.write("!.claude/memory-context-protocol.json\n")
    assert "UNSHARED" not in installer.run("--check", repo).stdout


def test_a_folder_outside_git_is_said_to_be_one(installer, outside_git):
    project = outside_git
    said = ("not a git repository: the Stop hook's save check and the worktree pruner need git, "
            "and nothing is shared; run git init")
    done = installer.ok("--project", project, "--allow-no-git")
    assert "  note     " + said in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1].startswith("done: ")
    assert done.stdout.splitlines()[-1].endswith(UNFINISHED)
    assert installer.ok("--update", project).stdout.splitlines()[-1] == (
        "nothing to do: already up to date" + UNFINISHED)
    check = installer.run("--check", project)  # the memory loads, but nothing guards it
    assert check.returncode == 1
    assert "  UNSHARED " + said in check.stdout.splitlines()


def test_check_from_inside_a_project_checks_the_project(installer, repo):
    installer.ok("--project", repo)
    for inside in ("src", ".claude/hooks", ".claude"):
        done = installer.ok("--check", cwd=path_in(repo, inside))
        assert done.stdout.startswith("ok: {} - ".format(repo)), inside
        done = installer.ok("--check", path_in(repo, inside))
        assert done.stdout.startswith("ok: {} - ".format(repo)), inside


def test_a_nested_project_with_its_own_claude_folder_is_checked_itself(installer, repo):
    nested = path_in(repo, "packages/web")
    os.makedirs(nested)
    installer.ok("--project", nested, "--allow-subfolder")
    done = installer.run("--check", nested)
    assert done.stdout.startswith(nested + " - ") or done.stdout.startswith("ok: " + nested)


def test_an_install_inside_a_claude_folder_is_refused(installer, repo):
    os.makedirs(path_in(repo, ".claude/hooks"))
    for mode in ("--project", "--update", "--uninstall"):
        for inside in (".claude", ".claude/hooks"):
            done = installer.run(mode, path_in(repo, inside))
            assert done.returncode == 2 and done.stdout == ""
            assert done.stderr == ("install.py: error: {} is inside a .claude folder; name the "
                                   "project folder, {} (see --help)\n".format(
                                       path_in(repo, inside), repo))
    done = installer.run("--project", ".", cwd=path_in(repo, ".claude"))  # as typed in there
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("install.py: error: {} is inside a .claude folder; name the project "
                           "folder, {} (see --help)\n".format(path_in(repo, ".claude"), repo))
    assert sorted(os.listdir(path_in(repo, ".claude"))) == ["hooks"]


# ------------------------------------------------------------- git gives no answer

@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="git refuses another user's repository only to root here")
def test_a_repository_git_refuses_to_this_user_is_named_not_passed(installer, repo):
    # Root outside sudo (su -, a container) in a user's repository: git answers nothing, so a
    # .gitignore that ignores .claude/ must not pass as "nothing ignored".
    write(path_in(repo, ".gitignore"), ".claude/\n")
    for folder, _, names in os.walk(repo):
        for name in [folder] + [os.path.join(folder, name) for name in names]:
            os.lchown(name, 12345, 12345)
    env = {key: "" for key in ("SUDO_UID", "SUDO_GID")}
    said = ("git refuses this repository to the user running install.py (another user owns it), "
            "so what git shares and tracks cannot be checked; run install.py as the repository's "
            "owner")
    done = installer.ok("--project", repo, unset=env)
    assert "  note     " + said in done.stdout.splitlines()
    assert done.stdout.splitlines()[-1].endswith(UNFINISHED)
    check = installer.run("--check", repo, unset=env)
    assert check.returncode == 1
    assert "  UNSHARED " + said in check.stdout.splitlines()


def test_git_missing_from_path_is_named(installer, repo, tmp_path):
    installer.ok("--project", repo)
    folder = str(tmp_path / "bin")
    os.makedirs(folder)
    for name, target in (("sh", shutil.which("sh")), ("python3", sys.executable)):
        os.symlink(target, os.path.join(folder, name))
    done = installer.run("--check", repo, env={"PATH": folder}, python=sys.executable)
    assert done.returncode == 1
    assert ("  UNSHARED git is not found on PATH: the Stop hook's save check and the worktree "
            "pruner need it, and what git shares cannot be checked; install git") in \
        done.stdout.splitlines()
