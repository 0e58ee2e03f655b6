"""install.py and git's index: the executable bit of tracked hooks, set without staging content."""

import os
import shlex
import shutil
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    HOOKS, git, index_mode, installer, make_repo, path_in, read, release_a_new_version, repo,
    set_in_installer, snapshot, write,
)


def commit_the_hooks_without_their_bit(repo, env):
    """Commit the installed files with the hooks as 100644. Every index entry
    then gets a time well before the index's own, so git has no reason to
    compare a file's content again (and run a filter) when it writes the index."""
    git(repo, "add", "--chmod=-x", ".claude", env=env)
    git(repo, "commit", "-q", "-m", "the protocol, hooks 100644", env=env)
    for folder, folders, files in os.walk(repo):
        folders[:] = [name for name in folders if name != ".git"]
        for name in files:
            os.utime(os.path.join(folder, name), (1e9, 1e9))
    git(repo, "update-index", "-q", "--really-refresh", env=env)


def blob_in(repo, env, spec):
    return git(repo, "rev-parse", spec, env=env).strip()


def test_only_the_mode_changes_and_no_clean_filter_runs(installer, repo, tmp_path):
    env = installer.env
    installer.ok("--project", repo)
    commit_the_hooks_without_their_bit(repo, env)
    ran = tmp_path / "the clean filter ran"
    script = tmp_path / "clean.py"
    write(str(script), "import shutil, sys\nopen({!r}, 'w').close()\n"
          "shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)\n".format(str(ran)))
    write(path_in(repo, ".gitattributes"), "*.py filter=mark\n")
    git(repo, "config", "filter.mark.clean",
        "{} {}".format(shlex.quote(sys.executable), shlex.quote(str(script))), env=env)
    release_a_new_version(installer, "hooks/stop-handoff.py", "RELEASED_HOOK_DIGESTS")
    done = installer.ok("--update", repo)
    assert "  git +x   " + ", ".join(HOOKS) + " (mode 100755 in git's index)" in done.stdout
    assert not ran.exists()
    for name in HOOKS:
        rel = ".claude/hooks/" + name
        assert index_mode(repo, env, rel) == "100755"
        assert blob_in(repo, env, ":" + rel) == blob_in(repo, env, "HEAD:" + rel)


def test_hooks_of_a_project_in_a_subfolder_of_the_repository(installer, tmp_path):
    env = installer.env
    repo = make_repo(str(tmp_path / "monorepo"), env, {"README.md": "top\n"})
    project = path_in(repo, "services/api")
    os.makedirs(project)
    installer.ok("--project", project, "--allow-subfolder")
    commit_the_hooks_without_their_bit(project, env)
    installer.ok("--update", project)
    for name in HOOKS:
        rel = ".claude/hooks/" + name
        assert index_mode(project, env, rel) == "100755"
        assert blob_in(project, env, ":./" + rel) == blob_in(project, env, "HEAD:./" + rel)


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_hook_committed_as_a_symbolic_link_is_left_alone(installer, repo):
    env = installer.env
    installer.ok("--project", repo)
    hook = path_in(repo, ".claude/hooks/session-start.py")
    write(path_in(repo, "tools/session-start.py"), read(hook))
    os.chmod(path_in(repo, "tools/session-start.py"), 0o755)
    os.remove(hook)
    os.symlink("../../tools/session-start.py", hook)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "the session-start hook is shared", env=env)
    assert index_mode(repo, env, ".claude/hooks/session-start.py") == "120000"
    os.remove(path_in(repo, ".claude/commands/memory-status.md"))
    done = installer.ok("--update", repo)
    assert "git +x" not in done.stdout
    assert index_mode(repo, env, ".claude/hooks/session-start.py") == "120000"
    assert os.path.isfile(path_in(repo, ".claude/commands/memory-status.md"))


@pytest.mark.skipif(os.name == "nt", reason="the stand-in git is a shell script")
def test_a_git_that_never_says_where_its_index_lock_is_stops_the_run(installer, repo, tmp_path):
    env = installer.env
    installer.ok("--project", repo)
    commit_the_hooks_without_their_bit(repo, env)
    os.remove(path_in(repo, ".claude/commands/memory-status.md"))
    real_git = shutil.which("git", path=env["PATH"])
    folder = tmp_path / "slow git"
    write(str(folder / "git"), '#!/bin/sh\ncase " $* " in *" --git-path "*) exec sleep 120;; '
          'esac\nexec {} "$@"\n'.format(shlex.quote(real_git)))
    os.chmod(str(folder / "git"), 0o755)
    set_in_installer(installer, "GIT_TIMEOUT_SECONDS = 1", "git")
    before = snapshot(repo)
    done = installer.run("--update", repo, timeout=60,
                         env={"PATH": "{}{}{}".format(folder, os.pathsep, env["PATH"])})
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "no answer within 1 seconds about its index lock" in done.stderr
    assert "nothing was changed" in done.stderr
    assert snapshot(repo) == before
