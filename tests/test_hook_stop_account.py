"""The Stop guard's account of the work since the save (spec §7.6), case by case, on real git
repositories: what counts as a change (HEAD and its ancestry, the listing, each nested repository
read by one rule at the start and at the stop), what a fresh handoff covers (judged by when each
change happened here, never by a date a commit or a file brought with it), and what "could not
read" means (neither a change nor, silently, no change)."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

import pytest

from conftest import (clean_environment, git, load_hook, make_repo, run_hook, set_age,
                      system_message)

STATE = ".session-state.md"
UNREAD_MARK = "The Stop guard could not read"


def start(project, session="s1", env=None):
    done = run_hook("session-start.py", project, env=env,
                    stdin={"session_id": session, "source": "startup", "cwd": str(project)})
    assert done.returncode == 0 and done.stderr == b""


def stop(project, session="s1", transcript=None, env=None):
    payload = {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False}
    if transcript is not None:
        payload["transcript_path"] = str(transcript)
    done = run_hook("stop-handoff.py", project, stdin=payload, env=env)
    assert done.returncode in (0, 2) and b"Traceback" not in done.stderr
    return done


def git_at(repo, seconds_ago, *args):
    """git with its clock set `seconds_ago` in the past: the commit's dates and the reflog entry
    of the move it makes both carry that time, as they would have had it run then."""
    env = clean_environment(repo.parent / "home")
    stamp = "@%d +0000" % int(time.time() - seconds_ago)
    env.update(GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp)
    done = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True, env=env)
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode().strip()


def write_handoff(project):
    """/handoff, run now; everything done after this call is after it."""
    time.sleep(0.05)  # file times move by the kernel's tick: the handoff lands in a later one
    (project / STATE).write_text("## Handoff\nWorking on the feature.\n", encoding="utf-8")
    time.sleep(0.05)  # and so does what follows


def commit_memory(project, text="- a fact\n"):
    """/dream: an edit to the memory, committed on its own."""
    with open(str(project / "memory" / "topic.md"), "a", encoding="utf-8") as stream:
        stream.write(text)
    git(project, "add", "memory")
    git(project, "commit", "-q", "-m", "memory: what the session learned", "--", "memory")


def handoff_from_yesterday(project):
    """The handoff of a session a day ago: older than any work this session does."""
    (project / STATE).write_text("## Handoff: yesterday\n", encoding="utf-8")
    set_age(project / STATE, 86400)


def after_the_throttle(project):
    set_age(project / STATE, 50 * 60)


@pytest.fixture
def session(project):
    """A project whose session started with a day-old handoff and a clean tree."""
    handoff_from_yesterday(project)
    start(project)
    set_age(project / ".claude" / "hooks" / ".session-baseline.s1", 20 * 60)
    set_age(project / ".claude" / "hooks", 20 * 60)
    return project


# --- 1. the documented order: code committed, then /handoff and /dream ------------------------

def test_code_committed_before_the_handoff_is_covered_by_it(session):
    (session / "feature.py").write_text("def feature():\n    return 1\n", encoding="utf-8")
    git_at(session, 10 * 60, "add", "feature.py")
    git_at(session, 10 * 60, "commit", "-q", "-m", "the feature")
    write_handoff(session)
    commit_memory(session)
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 0  # nothing changed since: an idle stop is never held


def test_a_code_commit_after_the_handoff_is_still_asked_for(session):
    write_handoff(session)
    (session / "feature.py").write_text("late\n", encoding="utf-8")
    git(session, "add", "feature.py")
    git(session, "commit", "-q", "-m", "after the handoff")
    commit_memory(session)
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


# --- 4. a dropped commit --------------------------------------------------------------------

@pytest.fixture
def unpushed(project):
    """A session that starts on a commit of the developer's own that nothing else holds."""
    (project / "work.py").write_text("precious = True\n", encoding="utf-8")
    git(project, "add", "work.py")
    git_at(project, 10 * 60, "commit", "-q", "-m", "unpushed work")
    handoff_from_yesterday(project)
    start(project)
    return project


def test_a_reset_that_drops_a_commit_is_work(unpushed):
    git(unpushed, "reset", "-q", "--hard", "HEAD~1")
    assert stop(unpushed).returncode == 2


def test_a_memory_commit_after_a_dropped_commit_does_not_hide_it(unpushed):
    git(unpushed, "reset", "-q", "--hard", "HEAD~1")
    commit_memory(unpushed)
    assert stop(unpushed).returncode == 2


def test_a_rewritten_memory_commit_is_not_a_dropped_commit_once_saved(session):
    commit_memory(session)
    assert stop(session).returncode == 0
    git(session, "commit", "-q", "--amend", "-m", "memory: reworded")
    assert stop(session).returncode == 2  # the old commit is gone from the branch: that is a change


def test_a_drop_after_the_handoff_is_not_covered_by_it(unpushed):
    set_age(unpushed / ".claude" / "hooks" / ".session-baseline.s1", 20 * 60)
    set_age(unpushed / ".claude" / "hooks", 20 * 60)
    write_handoff(unpushed)
    git(unpushed, "reset", "-q", "--hard", "HEAD~1")
    commit_memory(unpushed)
    assert stop(unpushed).returncode == 0
    after_the_throttle(unpushed)
    assert stop(unpushed).returncode == 2


# --- 5. work that carries old timestamps, arriving after the handoff ------------------------

def old_branch(project, tmp_path, name="subagent"):
    """A branch of commits dated two days back, made in a worktree of its own as a subagent's
    branch is."""
    worktree = tmp_path / name
    git(project, "worktree", "add", "-q", "-b", name, str(worktree))
    (worktree / "agent.py").write_text("from the subagent\n", encoding="utf-8")
    git_at(worktree, 2 * 86400, "add", "agent.py")
    git_at(worktree, 2 * 86400, "commit", "-q", "-m", "the subagent's work")


def test_a_fast_forward_of_old_commits_after_the_handoff_is_not_covered(project, tmp_path):
    old_branch(project, tmp_path)
    handoff_from_yesterday(project)
    start(project)
    set_age(project / ".claude" / "hooks" / ".session-baseline.s1", 20 * 60)
    set_age(project / ".claude" / "hooks", 20 * 60)
    write_handoff(project)
    git(project, "merge", "-q", "--ff-only", "subagent")
    assert stop(project).returncode == 0
    after_the_throttle(project)
    assert stop(project).returncode == 2


def aged_file(folder, name="old.py", days=3):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text("written long ago\n" * 4, encoding="utf-8")
    set_age(path, days * 86400)
    return path


def copy_keeping_times(source, target):
    done = subprocess.run(["cp", "-p", str(source), str(target)], capture_output=True)
    assert done.returncode == 0, done.stderr


def extract_with_tar(source, target):
    archive = source.parent / "bundle.tar"
    with tarfile.open(str(archive), "w") as bundle:
        bundle.add(str(source), arcname=target.name)
    done = subprocess.run(["tar", "xf", str(archive), "-C", str(target.parent)],
                          capture_output=True)
    assert done.returncode == 0, done.stderr


def synchronise(source, target):
    done = subprocess.run(["rsync", "-a", str(source), str(target)], capture_output=True)
    assert done.returncode == 0, done.stderr


MOVES = {
    "mv": lambda source, target: os.rename(str(source), str(target)),
    "cp -p": copy_keeping_times,
    "tar x": extract_with_tar,
    "rsync -a": synchronise,
}


@pytest.mark.skipif(os.name != "posix", reason="the tools are the POSIX ones")
@pytest.mark.parametrize("how", sorted(MOVES))
def test_a_file_moved_in_after_the_handoff_with_its_old_time_is_not_covered(session, tmp_path,
                                                                             how):
    if how != "mv" and shutil.which(how.split()[0]) is None:
        pytest.skip("%s is not installed" % how.split()[0])
    source = aged_file(tmp_path / "elsewhere")
    (session / "src").mkdir()
    write_handoff(session)
    MOVES[how](source, session / "src" / "old.py")
    assert (session / "src" / "old.py").stat().st_mtime < time.time() - 86400
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


@pytest.mark.skipif(os.name != "posix", reason="cp is the POSIX one")
def test_an_old_file_copied_over_a_tracked_one_after_the_handoff_is_not_covered(session, tmp_path):
    source = aged_file(tmp_path / "elsewhere", name="README.md")
    folder_time = session.stat().st_mtime_ns
    write_handoff(session)
    copy_keeping_times(source, session / "README.md")
    assert session.stat().st_mtime_ns == folder_time  # the folder did not change: the file did
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_a_folder_moved_in_whole_after_the_handoff_is_not_covered(session, tmp_path):
    package = tmp_path / "elsewhere" / "pkg"
    aged_file(package / "inner")
    set_age(package / "inner", 3 * 86400)
    set_age(package, 3 * 86400)
    write_handoff(session)
    os.rename(str(package), str(session / "pkg"))
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_a_new_folder_made_before_the_handoff_is_covered_by_it(session):
    (session / "src").mkdir()
    (session / "src" / "early.py").write_text("before the handoff\n", encoding="utf-8")
    write_handoff(session)
    commit_memory(session)
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 0


# --- 3. submodule settings that hide work ----------------------------------------------------

def add_submodule(project, tmp_path, ignore=None):
    library = make_repo(tmp_path / "library")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    if ignore:
        git(project, "config", "-f", ".gitmodules", "submodule.lib.ignore", ignore)
        git(project, "add", ".gitmodules")
    git(project, "commit", "-q", "-m", "library as a submodule")
    return project / "lib"


def edit_inside(lib):
    with open(str(lib / "README.md"), "a", encoding="utf-8") as stream:
        stream.write("edited inside the submodule\n")


def commit_inside(lib):
    edit_inside(lib)
    git(lib, "commit", "-q", "-am", "inside the submodule")


@pytest.mark.parametrize("ignore, work", [("dirty", edit_inside), ("all", edit_inside),
                                          ("all", commit_inside)])
def test_work_in_a_submodule_the_team_ignores_is_still_work(project, tmp_path, ignore, work):
    lib = add_submodule(project, tmp_path, ignore)
    handoff_from_yesterday(project)
    start(project)
    assert stop(project).returncode == 0
    work(lib)
    assert stop(project).returncode == 2


@pytest.mark.parametrize("setting", ["diff.ignoreSubmodules=all", "diff.ignoreSubmodules=dirty"])
def test_a_users_setting_that_ignores_submodules_hides_no_work(project, tmp_path, setting):
    lib = add_submodule(project, tmp_path)
    name, value = setting.split("=")
    (project.parent / "home").mkdir(exist_ok=True)
    git(project, "config", "--global", name, value)
    handoff_from_yesterday(project)
    start(project)
    assert stop(project).returncode == 0
    edit_inside(lib)
    assert stop(project).returncode == 2


# --- 2. a nested repository that cannot be read at one end -----------------------------------

def git_that_fails_inside(tmp_path, folder):
    """A git on PATH that refuses to read `folder` while the file it returns exists, as a git
    that ran out of time there would give no answer."""
    shim = tmp_path / "shim-bin"
    shim.mkdir(exist_ok=True)
    switch = tmp_path / "refuse"
    real = shutil.which("git")
    (shim / "git").write_text(
        '#!/bin/sh\n'
        'if [ -e "%s" ]; then\n'
        '  for argument in "$@"; do\n'
        '    [ "$argument" = "%s" ] && exit 128\n'
        '  done\n'
        'fi\n'
        'exec "%s" "$@"\n' % (switch, folder, real), encoding="utf-8")
    (shim / "git").chmod(0o755)
    env = {"PATH": str(shim) + os.pathsep + os.environ.get("PATH", "")}
    return switch, env


@pytest.fixture
def dirty_lib(project, tmp_path):
    """A submodule with uncommitted work in it: it shows in the listing, so it is read."""
    lib = add_submodule(project, tmp_path)
    edit_inside(lib)
    handoff_from_yesterday(project)
    return lib


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
def test_a_nested_repository_unread_at_the_start_does_not_block_an_idle_stop(dirty_lib, tmp_path):
    project = dirty_lib.parent
    switch, env = git_that_fails_inside(tmp_path, str(dirty_lib))
    switch.write_text("", encoding="utf-8")
    start(project, env=env)
    switch.unlink()
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text('{"type": "user"}\n', encoding="utf-8")
    done = stop(project, transcript=transcript, env=env)
    assert done.returncode == 0 and done.stderr == b""
    message = system_message(done)
    assert UNREAD_MARK in message and "lib" in message  # not silently taken as unchanged
    with open(str(transcript), "ab") as stream:  # the harness records the hook's output
        stream.write(b'{"type": "attachment", "stdout": ' + json.dumps(
            done.stdout.decode("utf-8")).encode("utf-8") + b'}\n')
    edit_inside(dirty_lib)
    assert stop(project, transcript=transcript, env=env).returncode == 2  # read from now on


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
def test_work_in_a_nested_repository_unread_at_a_stop_is_asked_for_when_it_is_read(dirty_lib,
                                                                                  tmp_path):
    project = dirty_lib.parent
    switch, env = git_that_fails_inside(tmp_path, str(dirty_lib))
    start(project, env=env)
    edit_inside(dirty_lib)
    switch.write_text("", encoding="utf-8")
    assert stop(project, env=env).returncode == 0  # could not read: not a change
    assert stop(project, env=env).returncode == 0
    switch.unlink()
    assert stop(project, env=env).returncode == 2  # nor taken as none: the edit is still seen


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
def test_an_unread_nested_repository_does_not_hide_work_beside_it(dirty_lib, tmp_path):
    project = dirty_lib.parent
    switch, env = git_that_fails_inside(tmp_path, str(dirty_lib))
    switch.write_text("", encoding="utf-8")
    start(project, env=env)
    (project / "beside.py").write_text("work\n", encoding="utf-8")
    assert stop(project, env=env).returncode == 2


def test_nested_repositories_are_read_by_one_rule_at_both_ends(dirty_lib):
    """session-start records what the stop computes for the same repository."""
    project = dirty_lib.parent
    start(project)
    recorded = (project / ".claude" / "hooks" / ".session-baseline.s1").read_bytes()
    reading = load_hook("prune-worktrees.py").Guard(str(project), time.monotonic()).reading()
    assert reading.recorded() == recorded
    assert b"?" not in recorded

