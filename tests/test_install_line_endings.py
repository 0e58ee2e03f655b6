"""install.py in checkouts whose files have CRLF line endings (core.autocrlf=true,
the default of git for Windows)."""

import os
import subprocess

from installtools import COMMANDS, git, installer, make_repo, path_in, read  # noqa: F401


def crlf_clone_of_an_installed_repo(installer, tmp_path):
    env = installer.env
    origin = make_repo(str(tmp_path / "origin"), env)
    installer.ok("--project", origin)
    git(origin, "add", "-A", env=env)
    git(origin, "commit", "-q", "-m", "install the protocol", env=env)
    clone = str(tmp_path / "clone")
    subprocess.run(["git", "-c", "core.autocrlf=true", "clone", "-q", origin, clone],
                   env=env, check=True)
    assert b"\r\n" in read(path_in(clone, ".claude/hooks/session-start.py"))
    return clone


def test_hooks_with_crlf_endings_are_current(installer, tmp_path):
    clone = crlf_clone_of_an_installed_repo(installer, tmp_path)
    done = installer.run("--check", clone)
    assert "DRIFT" not in done.stdout
    assert "hooks differ" not in done.stdout


def test_project_and_update_leave_a_crlf_checkout_alone(installer, tmp_path):
    clone = crlf_clone_of_an_installed_repo(installer, tmp_path)
    for mode in ("--project", "--update"):
        done = installer.ok(mode, clone)
        assert done.stdout.splitlines()[-1] == "nothing to do: already up to date", done.stdout


def test_uninstall_removes_unedited_commands_with_crlf_endings(installer, tmp_path):
    clone = crlf_clone_of_an_installed_repo(installer, tmp_path)
    done = installer.ok("--uninstall", clone)
    assert "edited by you" not in done.stdout
    for name in COMMANDS:
        assert not os.path.exists(path_in(clone, ".claude/commands/" + name))
    assert not os.path.exists(path_in(clone, ".claudeignore"))
