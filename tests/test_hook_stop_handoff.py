"""stop-handoff.py: blocks a stop only when work happened and the handoff is stale, never twice."""
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import (HOOKS, InstalledHooks, clean_environment, git, load_hook, make_repo, run_hook, set_age,
                      system_message)

NOTICE = "The Stop guard cannot record its baseline"

STATE = ".session-state.md"
OLD_STATE = ".claude/session-state.md"


def start(project, session="s1", source="startup"):
    done = run_hook("session-start.py", project,
                    stdin={"session_id": session, "source": source, "cwd": str(project),
                           "hook_event_name": "SessionStart"})
    assert done.returncode == 0


def stop(project, session="s1", stdin=None, **env):
    payload = {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False}
    done = run_hook("stop-handoff.py", project, stdin=payload if stdin is None else stdin, env=env)
    assert done.returncode in (0, 2)
    assert b"Traceback" not in done.stderr
    return done


def stale_handoff(project, minutes=24 * 60, name=STATE):
    state = project / name
    state.write_text("## Handoff: 2026-01-01 09:00\n", encoding="utf-8")
    set_age(state, minutes * 60)
    return state


@pytest.fixture
def session(project):
    """A project whose session has started and whose handoff is a day old."""
    stale_handoff(project)
    start(project)
    return project


def test_passes_when_nothing_changed(session):
    assert stop(session).returncode == 0


def test_blocks_when_the_repository_changed(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(session)
    assert done.returncode == 2
    message = done.stderr.decode("utf-8")
    assert "/handoff" in message and "/dream" in message
    assert "write .session-state.md" in message
    assert "its handoff (.session-state.md) is older than 45 minutes" in message


def test_the_next_stop_passes(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2
    assert stop(session).returncode == 0


def test_blocks_again_after_further_work(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2
    (session / "other.txt").write_text("more work\n", encoding="utf-8")
    assert stop(session).returncode == 2


def test_editing_an_already_modified_file_counts_as_work(project):
    stale_handoff(project)
    (project / "README.md").write_text("modified before the session\n", encoding="utf-8")
    start(project)
    assert stop(project).returncode == 0
    (project / "README.md").write_text("modified during the session, longer\n", encoding="utf-8")
    assert stop(project).returncode == 2


def test_a_new_commit_counts_as_work(session):
    git(session, "commit", "-q", "--allow-empty", "-m", "work")
    assert stop(session).returncode == 2


def test_a_new_untracked_file_counts_as_work(session):
    (session / "notes.txt").write_text("new\n", encoding="utf-8")
    assert stop(session).returncode == 2


@pytest.mark.parametrize("payload", [
    b'{"stop_hook_active":true}',
    b'{"stop_hook_active": true}',
    b'{ "stop_hook_active" :\n\ttrue }',
    b'{"session_id": "s1", "stop_hook_active": true, "cwd": "C:\\\\Users\\\\me"}',
    b'{"stop_hook_active": "true"}',
])
def test_passes_when_a_stop_hook_is_already_active(session, payload):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session, stdin=payload).returncode == 0


def test_passes_outside_a_git_repository(plain_dir):
    (plain_dir / ".claude").mkdir()
    stale_handoff(plain_dir)
    (plain_dir / "file.txt").write_text("work\n", encoding="utf-8")
    assert stop(plain_dir).returncode == 0
    assert os.listdir(str(plain_dir / ".claude")) == []


def test_throttle_44_minutes_passes(session):
    set_age(session / STATE, 44 * 60 + 30)
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 0


def test_throttle_45_minutes_checks(session):
    set_age(session / STATE, 45 * 60 + 30)
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2


def test_throttle_can_be_changed(session):
    set_age(session / STATE, 10 * 60 + 30)
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session, MCP_THROTTLE_MIN="15").returncode == 0
    assert stop(session, MCP_THROTTLE_MIN="10").returncode == 2


@pytest.mark.parametrize("value", ["soon", "", "-1", "4.5"])
def test_non_numeric_throttle_falls_back_to_45(session, value):
    set_age(session / STATE, 30 * 60)
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session, MCP_THROTTLE_MIN=value).returncode == 0


def test_missing_state_file_counts_as_stale(project):
    start(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(project)
    assert done.returncode == 2
    message = done.stderr.decode("utf-8")
    assert "no handoff has been written yet (.session-state.md does not exist)" in message
    assert "older than" not in message and "write .session-state.md" in message


def test_state_path_can_be_overridden(project):
    start(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    (project / ".claude" / "handoff.md").write_text("fresh\n", encoding="utf-8")
    done = stop(project, MCP_SESSION_STATE=".claude/handoff.md")
    assert done.returncode == 0


def test_message_names_the_configured_state_path(project):
    start(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(project, MCP_SESSION_STATE=".claude/handoff.md")
    assert done.returncode == 2 and b".claude/handoff.md" in done.stderr


def test_missing_baseline_with_changes_blocks_once(project):
    stale_handoff(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(project).returncode == 2
    assert stop(project).returncode == 0


def test_missing_baseline_on_a_clean_tree_passes(project):
    stale_handoff(project)
    assert stop(project).returncode == 0
    assert (project / ".claude" / "hooks" / ".session-baseline.s1").is_file()


def test_sessions_in_one_checkout_keep_their_own_baselines(project):
    stale_handoff(project)
    start(project, "alpha")
    start(project, "beta")
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(project, "beta").returncode == 2
    assert stop(project, "alpha").returncode == 2  # beta's block did not erase alpha's evidence
    assert stop(project, "alpha").returncode == 0


def test_resume_keeps_the_baseline_of_the_session(session):
    (session / "README.md").write_text("changed before compaction\n", encoding="utf-8")
    start(session, source="compact")
    start(session, source="resume")
    assert stop(session).returncode == 2


def test_startup_and_clear_take_a_fresh_baseline(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    start(session, source="clear")
    assert stop(session).returncode == 0


def test_without_session_id_the_shared_baseline_is_used(project):
    stale_handoff(project)
    run_hook("session-start.py", project, stdin={"source": "startup"})
    assert (project / ".claude" / "hooks" / ".session-baseline").is_file()
    assert stop(project, stdin={}).returncode == 0
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(project, stdin={}).returncode == 2


def test_own_files_are_not_work_even_when_not_ignored(tmp_path):
    from conftest import make_repo
    project = make_repo(tmp_path / "unignored")
    (project / ".claude" / "hooks").mkdir(parents=True)
    (project / ".claude" / "hooks" / "keep.txt").write_text("tracked\n", encoding="utf-8")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "hooks folder is tracked")
    stale_handoff(project)
    start(project, "a")
    start(project, "b")
    assert stop(project, "a").returncode == 0
    assert stop(project, "b").returncode == 0


def test_planted_symlink_baseline_is_replaced_not_followed(session, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n", encoding="utf-8")
    baseline = session / ".claude" / "hooks" / ".session-baseline.s1"
    baseline.unlink()
    baseline.symlink_to(victim)
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert baseline.is_file() and not baseline.is_symlink()


def test_never_writes_outside_dot_claude(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    hooks = project / ".claude" / "hooks"
    hooks.rmdir()
    hooks.symlink_to(elsewhere, target_is_directory=True)
    stale_handoff(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(project)
    assert done.returncode == 0  # a block it cannot record would repeat forever
    assert os.listdir(str(elsewhere)) == []
    assert NOTICE in system_message(done)  # but the user learns the guard is blind here


def test_baseline_outside_dot_claude_is_refused(project, tmp_path):
    stale_handoff(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    outside = tmp_path / "outside-baseline"
    done = stop(project, MCP_BASELINE=str(outside))
    assert done.returncode == 0
    assert not os.path.lexists(str(outside) + ".s1")
    assert "at %s.s1" % outside in system_message(done)


@pytest.mark.parametrize("payload", [
    b"", b"{", b"[1, 2]", b'"text"', b"\xff\xfe\x00garbage", b'{"session_id": 7}',
    b'{"stop_hook_active": "yes"}', b"[" * 100000, b"null",
])
def test_bad_input_never_crashes(session, payload):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(session, stdin=payload)
    assert done.returncode in (0, 2)
    assert b"Traceback" not in done.stderr


def stop_with_stdin_left_open(project, written):
    """Run the Stop hook with `written` on a stdin that is never closed: (exit code, seconds)."""
    env = clean_environment(project.parent / "home")
    env["CLAUDE_PROJECT_DIR"] = str(project)
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-I", "-S", str(HOOKS / "stop-handoff.py")],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
    try:
        process.stdin.write(written)
        process.stdin.flush()
        process.wait(timeout=15)
    finally:
        process.kill()
        process.stdin.close()
    return process.returncode, time.monotonic() - started


def test_gives_up_on_a_stdin_that_never_closes(session):
    code, seconds = stop_with_stdin_left_open(session, b'{"session_id": "s1", "stop_hook_act')
    assert code == 0 and seconds < 10


def test_does_not_wait_for_end_of_file_after_a_complete_object(session):
    code, seconds = stop_with_stdin_left_open(
        session, b'{"session_id": "s1", "stop_hook_active": false}')
    assert code == 0 and seconds < 1.5


@pytest.mark.skipif(os.name != "posix", reason="needs a pseudo-terminal")
def test_does_not_read_a_terminal(session):
    import pty
    leader, follower = pty.openpty()
    env = clean_environment(session.parent / "home")
    env["CLAUDE_PROJECT_DIR"] = str(session)
    try:
        done = subprocess.run([sys.executable, "-I", "-S", str(HOOKS / "stop-handoff.py")],
                              stdin=follower, capture_output=True, env=env, timeout=10)
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 0


def test_missing_project_directory_passes(tmp_path):
    done = run_hook("stop-handoff.py", tmp_path / "gone", stdin={"session_id": "x"})
    assert done.returncode == 0 and done.stderr == b""


def test_no_git_on_path_passes(session, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session, PATH=str(empty)).returncode == 0


def test_message_names_the_configured_memory_folder(project):
    start(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(project, MCP_MEMORY_INDEX="notes/INDEX.md")
    assert done.returncode == 2 and b"into notes/ (merge" in done.stderr


# --- untracked files, renames, the clock and answered blocks --------------------------------

def test_a_new_file_counts_even_when_status_hides_untracked_files(session):
    git(session, "config", "status.showUntrackedFiles", "no")
    start(session)
    (session / "new_module.py").write_text("work\n", encoding="utf-8")
    assert stop(session).returncode == 2


def test_editing_a_file_inside_an_untracked_folder_counts_as_work(project):
    stale_handoff(project)
    (project / "newpkg").mkdir()
    (project / "newpkg" / "a.py").write_text("started before the session\n", encoding="utf-8")
    start(project)
    assert stop(project).returncode == 0
    with open(str(project / "newpkg" / "a.py"), "a", encoding="utf-8") as handle:
        handle.write("and edited in place during it\n" * 50)
    assert stop(project).returncode == 2


def test_the_listing_keeps_a_rename_with_its_original_path(project):
    guard = load_hook("prune-worktrees.py")
    git(project, "mv", "CLAUDE.md", "RULES.md")
    (project / "new file.txt").write_text("new\n", encoding="utf-8")
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    runner = guard.Git(time.monotonic() + 10)
    facts = guard.repository_facts(runner.run(guard.repository_reads(runner, str(project))))
    assert facts.head == git(project, "rev-parse", "HEAD")
    _, changed, untracked = guard.parse_status(facts.listing)
    assert sorted(changed) == [(" M", b"README.md", None), ("R ", b"RULES.md", b"CLAUDE.md")]
    assert untracked == [b"new file.txt"]


def test_a_handoff_dated_in_the_future_is_not_fresh(session):
    state = session / STATE
    future = time.time() + 3600
    os.utime(str(state), (future, future))
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(session)
    assert done.returncode == 2
    assert b"its handoff (.session-state.md) is dated ahead of the clock" in done.stderr


def answer_the_block(project):
    """What the block asks for: /handoff rewrites the state, /dream edits and commits memory."""
    (project / STATE).write_text("## Handoff: now\n", encoding="utf-8")
    (project / "memory" / "MEMORY.md").write_text("# Index\n- [New](new.md) — learned\n",
                                                  encoding="utf-8")
    (project / "memory" / "new.md").write_text("# New\n", encoding="utf-8")
    git(project, "add", "memory")
    git(project, "commit", "-q", "-m", "memory: what the session learned", "--", "memory")


def continuation(project):
    return stop(project, stdin={"session_id": "s1", "hook_event_name": "Stop",
                                "stop_hook_active": True})


def after_the_throttle(project):
    set_age(project / STATE, 50 * 60)


def test_what_the_handoff_and_dream_wrote_is_not_new_work_later(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2
    answer_the_block(session)
    assert continuation(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 0


def test_memory_edits_alone_are_never_work(session):
    (session / "memory" / "topic.md").write_text("# Topic\nA fact.\n", encoding="utf-8")
    (session / "memory" / "fresh.md").write_text("# Fresh\n", encoding="utf-8")
    assert stop(session).returncode == 0
    git(session, "add", "memory")
    git(session, "commit", "-q", "-m", "memory only")
    assert stop(session).returncode == 0


def test_a_commit_touching_memory_and_code_is_work(session):
    (session / "memory" / "topic.md").write_text("# Topic\nA fact.\n", encoding="utf-8")
    (session / "README.md").write_text("code too\n", encoding="utf-8")
    git(session, "add", "-A")
    git(session, "commit", "-q", "-m", "both")
    assert stop(session).returncode == 2


def test_a_file_that_only_starts_like_the_memory_folder_is_work(session):
    (session / "memory_utils.py").write_text("work\n", encoding="utf-8")
    assert stop(session).returncode == 2


def test_an_index_at_the_top_leaves_only_itself_out(session):
    (session / "MEMORY.md").write_text("# Index\n", encoding="utf-8")
    run_hook("session-start.py", session, stdin={"session_id": "s1", "source": "startup"},
             env={"MCP_MEMORY_INDEX": "MEMORY.md"})
    (session / "MEMORY.md").write_text("# Index\n- [A](a.md) — a\n", encoding="utf-8")
    assert stop(session, MCP_MEMORY_INDEX="MEMORY.md").returncode == 0
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session, MCP_MEMORY_INDEX="MEMORY.md").returncode == 2


def test_work_after_the_answered_block_still_counts(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2
    answer_the_block(session)
    (session / "fix.py").write_text("written after the handoff\n", encoding="utf-8")
    assert continuation(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_work_after_a_handoff_counts_when_another_hook_blocked(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    (session / STATE).write_text("## Handoff: mid-session\n", encoding="utf-8")
    (session / "later.py").write_text("more work after the handoff\n", encoding="utf-8")
    assert continuation(session).returncode == 0  # another Stop hook had blocked
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_work_instead_of_saving_still_counts(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(session).returncode == 2
    (session / "more.txt").write_text("worked on instead of saving\n", encoding="utf-8")
    assert continuation(session).returncode == 0
    assert stop(session).returncode == 2


@pytest.mark.parametrize("spelling", ["absolute", "./MEMORY.md", "memory/../MEMORY.md"])
def test_an_index_at_the_top_however_spelled_never_hides_a_code_commit(session, spelling):
    index = str(session / "MEMORY.md") if spelling == "absolute" else spelling
    (session / "MEMORY.md").write_text("# Index\n", encoding="utf-8")
    git(session, "add", "MEMORY.md")
    git(session, "commit", "-q", "-m", "index at the top")
    run_hook("session-start.py", session, stdin={"session_id": "s1", "source": "startup"},
             env={"MCP_MEMORY_INDEX": index})
    (session / "README.md").write_text("code\n", encoding="utf-8")
    git(session, "commit", "-q", "-am", "code")
    assert stop(session, MCP_MEMORY_INDEX=index).returncode == 2


def test_in_a_subfolder_project_a_commit_touching_code_elsewhere_is_work(tmp_path):
    repo = make_repo(tmp_path / "repo")
    app = repo / "app"
    (app / "memory").mkdir(parents=True)
    (app / "memory" / "MEMORY.md").write_text("# Index\n", encoding="utf-8")
    (repo / "lib").mkdir()
    (repo / "lib" / "core.py").write_text("x = 1\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "layout")
    (app / ".claude" / "hooks").mkdir(parents=True)
    stale_handoff(app)
    start(app)
    (app / "memory" / "MEMORY.md").write_text("# Index\n- [A](a.md) — a\n", encoding="utf-8")
    (repo / "lib" / "core.py").write_text("x = 2\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "memory and code")
    assert stop(app).returncode == 2


def test_moving_code_into_the_memory_folder_is_work(session):
    git(session, "mv", "README.md", "memory/README.md")
    assert stop(session).returncode == 2


def memory_commit_states(project):
    """(recorded, current) readings of a session whose only change is a commit to the memory."""
    git_home = load_hook("prune-worktrees.py")
    before = git_home.Guard(str(project), time.monotonic()).reading()
    (project / "memory" / "topic.md").write_text("# Topic\nA fact.\n", encoding="utf-8")
    git(project, "commit", "-q", "-am", "memory only")
    return git_home, before, git_home.Guard(str(project), time.monotonic()).reading()


def test_memory_commits_are_saving_when_there_is_time_to_look(project):
    git_home, recorded, current = memory_commit_states(project)
    guard = git_home.Guard(str(project), time.monotonic())
    assert guard.commits_are_saving(recorded.head, current.head) is True
    outcome = git_home.weigh(guard, recorded, current)
    assert outcome.verdict == 0 and outcome.record.head == current.head


def test_no_time_left_to_judge_the_commits_is_neither_work_nor_saving(project):
    """Could not read is not a change: the stop passes and the baseline keeps the old HEAD, so
    the commits are judged at the next stop that has the time."""
    git_home, recorded, current = memory_commit_states(project)
    guard = git_home.Guard(str(project), time.monotonic() - git_home.READS_SECONDS)
    assert guard.commits_are_saving(recorded.head, current.head) is None
    outcome = git_home.weigh(guard, recorded, current)
    assert outcome.verdict == 0 and outcome.record is None


def test_a_memory_folder_outside_the_work_tree_leaves_the_other_exclusions(session, tmp_path):
    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    index = str(elsewhere / "MEMORY.md")
    run_hook("session-start.py", session, stdin={"session_id": "s1", "source": "startup"},
             env={"MCP_MEMORY_INDEX": index})
    (session / STATE).write_text("## Handoff: now\n", encoding="utf-8")
    set_age(session / STATE, 50 * 60)
    assert stop(session, MCP_MEMORY_INDEX=index).returncode == 0  # the handoff is not work
    (session / "memory" / "topic.md").write_text("# Topic\nno longer the memory\n", "utf-8")
    assert stop(session, MCP_MEMORY_INDEX=index).returncode == 2


# --- where the handoff lives ------------------------------------------------------------------

def test_the_old_state_path_is_read_while_the_new_one_is_missing(project):
    start(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    (project / OLD_STATE).write_text("## Handoff: now\n", encoding="utf-8")
    assert stop(project).returncode == 0


def test_a_stale_handoff_at_the_old_path_asks_for_the_new_one(project):
    stale_handoff(project, name=OLD_STATE)
    start(project)
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop(project)
    assert done.returncode == 2
    message = done.stderr.decode("utf-8")
    assert "its handoff (.claude/session-state.md) is older than 45 minutes" in message
    assert "write .session-state.md with" in message


def test_the_new_state_path_wins_over_the_old_one(project):
    stale_handoff(project)
    start(project)
    (project / OLD_STATE).write_text("## Handoff: now\n", encoding="utf-8")
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    assert stop(project).returncode == 2


@pytest.mark.parametrize("name", [STATE, OLD_STATE])
def test_writing_the_handoff_is_not_work_at_either_path(project, name):
    git(project, "rm", "-q", "--cached", ".gitignore")  # nothing ignored: both paths listed
    start(project)
    stale_handoff(project, name=name)
    assert stop(project).returncode == 0


def test_a_healthy_stop_prints_nothing(session):
    done = stop(session)
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""


# --- a guard that cannot keep its baseline says so, once per session --------------------------

def symlinked_claude_folder(project, tmp_path):
    """A project whose .claude/ is a symbolic link to a folder elsewhere (a dotfiles setup)."""
    real = tmp_path / "dotfiles-claude"
    os.rename(str(project / ".claude"), str(real))
    (project / ".claude").symlink_to(real, target_is_directory=True)
    return real


def stop_with_transcript(project, transcript):
    return stop(project, stdin={"session_id": "s1", "hook_event_name": "Stop",
                                "stop_hook_active": False, "transcript_path": str(transcript)})


def test_a_symlinked_claude_folder_is_reported_once_per_session(project, tmp_path):
    real = symlinked_claude_folder(project, tmp_path)
    stale_handoff(project)
    start(project)
    transcript = tmp_path / "s1.jsonl"
    transcript.write_text('{"type": "user"}\n', encoding="utf-8")
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    done = stop_with_transcript(project, transcript)
    assert done.returncode == 0 and done.stderr == b""
    message = system_message(done)
    assert NOTICE + " at .claude/hooks/.session-baseline.s1" in message
    assert "/handoff" in message
    assert os.listdir(str(real / "hooks")) == []  # nothing written through the link
    with open(str(transcript), "ab") as stream:  # the harness records the hook's output
        stream.write(b'{"type": "attachment", "stdout": ' + json.dumps(
            done.stdout.decode("utf-8")).encode("utf-8") + b'}\n')
    again = stop_with_transcript(project, transcript)
    assert again.returncode == 0 and again.stdout == b""


def test_a_symlinked_claude_folder_on_a_clean_tree_says_nothing(project, tmp_path):
    symlinked_claude_folder(project, tmp_path)
    with open(str(project / ".git" / "info" / "exclude"), "a", encoding="utf-8") as stream:
        stream.write("/.claude\n")
    stale_handoff(project)
    done = stop(project)
    assert done.returncode == 0 and done.stdout == b""


# --- what the listing does not show ----------------------------------------------------------

def add_submodule(project, tmp_path):
    library = make_repo(tmp_path / "library")
    (library / "core.py").write_text("x = 1\n", encoding="utf-8")
    git(library, "add", "core.py")
    git(library, "commit", "-q", "-m", "core")
    git(project, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "lib")
    git(project, "commit", "-q", "-m", "library as a submodule")
    return project / "lib"


@pytest.fixture
def dirty_submodule(project, tmp_path):
    """A session that starts with a submodule already modified: ` M lib` is in its baseline."""
    lib = add_submodule(project, tmp_path)
    (lib / "core.py").write_text("x = 2\n", encoding="utf-8")
    stale_handoff(project)
    start(project)
    assert stop(project).returncode == 0
    return lib


def test_an_edit_inside_a_modified_submodule_is_work(dirty_submodule):
    with open(str(dirty_submodule / "core.py"), "a", encoding="utf-8") as stream:
        stream.write("y = 3\n" * 20)
    assert stop(dirty_submodule.parent).returncode == 2


def test_a_commit_inside_a_modified_submodule_is_work(dirty_submodule):
    git(dirty_submodule, "commit", "-q", "-am", "inside the submodule")
    assert stop(dirty_submodule.parent).returncode == 2


def test_an_edit_inside_an_untracked_nested_repository_is_work(project):
    nested = make_repo(project / "vendor" / "tool")
    stale_handoff(project)
    start(project)
    assert stop(project).returncode == 0
    with open(str(nested / "README.md"), "a", encoding="utf-8") as stream:
        stream.write("edited in place\n")
    assert stop(project).returncode == 2


def test_stashed_work_is_work(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    (session / "new.py").write_text("new\n", encoding="utf-8")
    git(session, "stash", "-q", "-u")
    assert git(session, "status", "--porcelain") == ""
    assert stop(session).returncode == 2
    assert stop(session).returncode == 0


def test_a_baseline_of_another_version_counts_as_none(session):
    baseline = session / ".claude" / "hooks" / ".session-baseline.s1"
    head = git(session, "rev-parse", "HEAD")
    baseline.write_bytes(b"head " + head.encode("ascii") + b"\n")  # the clean state of 0.1
    assert stop(session).returncode == 0
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    baseline.write_bytes(b"head " + head.encode("ascii") + b"\0 M README.md - 9:1\n")
    assert stop(session).returncode == 2  # no baseline, changes: blocked once
    assert stop(session).returncode == 0


# --- a handoff nobody asked for -----------------------------------------------------------------

def test_a_handoff_the_user_ran_moves_the_baseline(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    set_age(session / "README.md", 60)
    (session / STATE).write_text("## Handoff: now\n", encoding="utf-8")
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 0


def test_a_handoff_and_its_memory_commit_move_the_baseline(session):
    (session / "README.md").write_text("changed\n", encoding="utf-8")
    set_age(session / "README.md", 60)
    answer_the_block(session)
    git(session, "commit", "-q", "--amend", "--no-edit", "--date=now")
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 0


def handoff_written_minutes_ago(project, minutes):
    """A handoff the user ran `minutes` ago, after the session's baseline was recorded."""
    set_age(project / ".claude" / "hooks" / ".session-baseline.s1", (minutes + 5) * 60)
    set_age(project / ".claude" / "hooks", (minutes + 5) * 60)
    (project / STATE).write_text("## Handoff: earlier\n", encoding="utf-8")
    set_age(project / STATE, minutes * 60)
    time.sleep(0.05)  # file times move by the kernel's tick: what follows lands in a later one


def test_an_edit_after_the_handoff_still_counts(session):
    handoff_written_minutes_ago(session, 5)
    (session / "README.md").write_text("changed after the handoff\n", encoding="utf-8")
    assert stop(session).returncode == 0  # within the window
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_a_code_commit_after_the_handoff_still_counts(session):
    handoff_written_minutes_ago(session, 5)
    (session / "README.md").write_text("changed before the handoff\n", encoding="utf-8")
    set_age(session / "README.md", 10 * 60)
    git(session, "commit", "-q", "-am", "code, committed after the handoff")
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_a_removal_after_the_handoff_still_counts(session):
    handoff_written_minutes_ago(session, 5)
    (session / "CLAUDE.md").unlink()
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 2


def test_an_edit_before_the_handoff_is_covered_by_it(session):
    (session / "README.md").write_text("changed before the handoff\n", encoding="utf-8")
    set_age(session / "README.md", 10 * 60)
    handoff_written_minutes_ago(session, 5)
    assert stop(session).returncode == 0
    after_the_throttle(session)
    assert stop(session).returncode == 0


# --- many untracked files -------------------------------------------------------------------

def untracked_tree(project, files, per_folder=100):
    for number in range(files):
        folder = project / "node_modules" / ("pkg%03d" % (number // per_folder))
        if number % per_folder == 0:
            folder.mkdir(parents=True)
        (folder / ("f%d.js" % number)).write_text("x\n", encoding="utf-8")


def test_the_baseline_stays_small_with_many_untracked_files(project):
    untracked_tree(project, 3000)
    stale_handoff(project)
    start(project)
    baseline = project / ".claude" / "hooks" / ".session-baseline.s1"
    assert baseline.stat().st_size < 200
    assert stop(project).returncode == 0
    with open(str(project / "node_modules" / "pkg007" / "f700.js"), "a") as stream:
        stream.write("edited in place\n")
    assert stop(project).returncode == 2


def in_process_state(git_home, project):
    return git_home.Guard(str(project), time.monotonic()).reading().recorded()


def edit_in_place_keeping_the_folder_time(path):
    folder = path.parent
    before = folder.stat()
    with open(str(path), "a", encoding="utf-8") as stream:
        stream.write("edited in place\n")
    os.utime(str(folder), ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.parametrize("files, seen", [(30, True), (31, False)])
def test_untracked_files_are_read_one_by_one_up_to_the_limit(project, files, seen):
    guard = load_hook("prune-worktrees.py")
    guard.UNTRACKED_SIGNED = 30
    untracked_tree(project, files, per_folder=10)
    recorded = in_process_state(guard, project)
    assert in_process_state(guard, project) == recorded
    edit_in_place_keeping_the_folder_time(project / "node_modules" / "pkg001" / "f12.js")
    assert (in_process_state(guard, project) != recorded) == seen


def test_past_the_limit_a_replaced_or_new_file_still_counts(project):
    guard = load_hook("prune-worktrees.py")
    guard.UNTRACKED_SIGNED = 30
    untracked_tree(project, 100, per_folder=10)
    recorded = in_process_state(guard, project)
    replacement = project / "node_modules" / "pkg003" / "f35.js.tmp"
    replacement.write_text("saved as the file tools save\n", encoding="utf-8")
    os.replace(str(replacement), str(project / "node_modules" / "pkg003" / "f35.js"))
    replaced = in_process_state(guard, project)
    assert replaced != recorded
    (project / "node_modules" / "pkg009" / "new.js").write_text("new\n", encoding="utf-8")
    assert in_process_state(guard, project) not in (recorded, replaced)


def test_without_folder_handles_paths_are_read_from_the_top(project, monkeypatch):
    """Where os.stat takes no dir_fd (Windows), each path is joined to the top instead."""
    guard = load_hook("prune-worktrees.py")
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    (project / "new.txt").write_text("new\n", encoding="utf-8")
    with_handle = in_process_state(guard, project)
    monkeypatch.setattr(os, "supports_dir_fd", set())
    assert in_process_state(guard, project) == with_handle
    with open(str(project / "README.md"), "a", encoding="utf-8") as stream:
        stream.write("edited again\n")
    assert in_process_state(guard, project) != with_handle


# --- the shortcut before anything loads ---------------------------------------------------------

SHORTCUT_HOOKS = []  # loaded once for every seed


@pytest.mark.parametrize("seed", range(int(os.environ.get("MCP_SHORTCUT_SEEDS", "300"))))
def test_the_shortcut_passes_only_where_the_full_rule_passes(tmp_path, seed):
    """stop-handoff.py passes the stops of the throttle's default case before `os` or a hook file
    loads (passes_at_once); the rule's one home is stop_may_pass_at_once. Generated layouts and
    settings: wherever the shortcut passes, the rule does."""
    import random
    rng = random.Random(seed)
    guard, shared = SHORTCUT_HOOKS or SHORTCUT_HOOKS.extend(
        (load_hook("stop-handoff.py"), load_hook("context-budget.py"))) or SHORTCUT_HOOKS
    project = tmp_path / "project"
    (project / ".claude" / "hooks").mkdir(parents=True)
    now = time.time()
    kinds = ["file", "file", "file", "folder", "link", "none"]
    kind = rng.choice(kinds)
    state = project / ".session-state.md"
    if kind == "file":
        state.write_text("## Handoff\n", encoding="utf-8")
    elif kind == "folder":
        state.mkdir()
    elif kind == "link":
        (project / "elsewhere.md").write_text("x\n", encoding="utf-8")
        state.symlink_to(project / "elsewhere.md")
    if kind != "none":
        written = now - rng.choice([-3600, -90, -30, 0, 60, 44 * 60, 46 * 60, 86400])
        os.utime(str(state), (written, written), follow_symlinks=kind != "link")
        taken = written + rng.choice([-5, -0.001, 0, 0.001, 5])
        os.utime(str(project / ".claude" / "hooks"), (taken, taken))
    (project / ".claude" / "old").mkdir()
    os.utime(str(project / ".claude" / "old"), (now - 86400, now - 86400))
    env = {"CLAUDE_PROJECT_DIR": str(project)} if rng.random() < 0.8 else \
        {"GEMINI_PROJECT_DIR": str(project)} if rng.random() < 0.5 else {}
    for name, values in (("MCP_SESSION_STATE", [".session-state.md", "notes/x.md"]),
                         ("MCP_THROTTLE_MIN", ["1", "45", "600"]),
                         ("MCP_BASELINE", [".claude/hooks/.session-baseline",
                                           ".claude/old/.session-baseline"])):
        if rng.random() < 0.25:
            env[name] = rng.choice(values)
    if guard.passes_at_once(dict(env)):
        assert shared.stop_may_pass_at_once(str(project), env), (seed, kind, env)


def test_the_shortcut_is_taken_in_the_default_case_and_loads_nothing(session):
    """Seen to fire: a fresh handoff a stop took in passes without `os` being imported."""
    (session / STATE).write_text("## Handoff\n", encoding="utf-8")
    os.utime(str(session / ".claude" / "hooks"), (time.time() + 1, time.time() + 1))
    env = clean_environment(session.parent / "home")
    env["CLAUDE_PROJECT_DIR"] = str(session)
    done = subprocess.run([sys.executable, "-I", "-S", "-X", "importtime",
                           str(InstalledHooks.folder() / "stop-handoff.py")],
                          input=b'{"session_id": "s1"}', capture_output=True, env=env)
    assert done.returncode == 0 and b"| os\n" not in done.stderr, done.stderr[-400:]
    (session / "README.md").write_text("work after the handoff\n", encoding="utf-8")
    os.utime(str(session / ".claude" / "hooks"), (time.time() - 60, time.time() - 60))
    slow = subprocess.run(done.args, input=b'{"session_id": "s1"}', capture_output=True, env=env)
    assert b"| os\n" in slow.stderr  # the full rule, once a stop has not taken it in
