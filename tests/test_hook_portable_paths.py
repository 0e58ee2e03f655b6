"""The code paths Windows takes (no posix_spawn), run here in-process so they are proven on
every machine, not only where they are needed; and the one reader of pipes every system uses."""
import os
import threading
import time

import pytest

from conftest import age_worktree, git, load_hook, make_repo


@pytest.fixture
def guard():
    """The hooks' git: the guard's account and the runner it reads the repository with."""
    return load_hook("prune-worktrees.py")


@pytest.fixture
def shared():
    return load_hook("context-budget.py")


@pytest.fixture
def without_posix_spawn(monkeypatch):
    if hasattr(os, "posix_spawnp"):
        monkeypatch.delattr(os, "posix_spawnp")


def test_git_reads_without_posix_spawn(guard, tmp_path, without_posix_spawn):
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_text("changed\n", encoding="utf-8")
    runner = guard.Git(time.monotonic() + 10)
    started = guard.start(guard.repository_reads(runner, str(repo)))
    facts = guard.repository_facts(guard.finish(started, runner.deadline))
    assert facts.head == git(repo, "rev-parse", "HEAD")
    assert guard.parse_status(facts.listing)[1] == [(" M", b"README.md", None)]


def test_both_ways_of_running_git_record_the_same_state(guard, tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    (repo / "new.txt").write_text("x\n", encoding="utf-8")
    with_spawn = guard.Guard(str(repo), time.monotonic()).reading().recorded()
    monkeypatch.delattr(os, "posix_spawnp", raising=False)
    assert guard.Guard(str(repo), time.monotonic()).reading().recorded() == with_spawn


def test_missing_git_without_posix_spawn(guard, tmp_path, monkeypatch, without_posix_spawn):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert guard.finish(guard.start([("git", "--version")]), time.monotonic() + 10) == [None]


def test_thread_reader_returns_the_object(shared):
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"session_id": "abc", "stop_hook_active": true}')
    os.close(write_end)
    try:
        assert shared.read_pipe_object(read_end, time.monotonic() + 2) == {
            "session_id": "abc", "stop_hook_active": True}
    finally:
        os.close(read_end)


def test_thread_reader_gives_up_on_a_pipe_that_stays_open(shared):
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"session_id": "ab')
    started = time.monotonic()
    try:
        assert shared.read_pipe_object(read_end, time.monotonic() + 0.5) == {}
        assert time.monotonic() - started < 2
    finally:
        os.close(write_end)
        os.close(read_end)


def test_pruner_runs_git_without_posix_spawn(tmp_path, without_posix_spawn):
    pruner = load_hook("prune-worktrees.py")
    repo = make_repo(tmp_path / "repo")
    path = repo / ".claude" / "worktrees" / "landed"
    git(repo, "worktree", "add", "-q", "-b", "landed", str(path))
    age_worktree(path)
    assert pruner.prune(str(repo), {}, []) == ["pruned 1 merged agent worktree(s): landed"]
    assert not path.exists()


def test_pruner_stops_at_its_deadline(tmp_path):
    pruner = load_hook("prune-worktrees.py")
    repo = make_repo(tmp_path / "repo")
    expired = pruner.Git(time.monotonic())
    assert expired.output(str(repo), "status") is None


def test_write_refuses_a_folder_outside_dot_claude(guard, tmp_path):
    project = make_repo(tmp_path / "repo")
    outside = tmp_path / "outside" / "baseline"
    assert not guard.write_inside_claude_folder(str(project), str(outside), b"head x\n")
    assert not outside.parent.exists()


def test_concurrent_writers_leave_one_whole_file(guard, tmp_path):
    project = make_repo(tmp_path / "repo")
    target = project / ".claude" / "hooks" / ".session-baseline.s"
    payloads = [(b"head %d\n" % n) * 5000 for n in range(8)]
    threads = [threading.Thread(target=guard.write_inside_claude_folder,
                                args=(str(project), str(target), payload)) for payload in payloads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert target.read_bytes() in payloads


@pytest.mark.skipif(not hasattr(os, "posix_spawnp"), reason="the posix_spawn path")
def test_a_command_is_drained_from_its_start_so_it_never_waits_on_a_full_pipe(guard):
    """Session start builds the injection while git lists the tree: a listing larger than a pipe
    holds must not stall git until the hook asks for it."""
    import sys
    writer = (sys.executable, "-c", "import sys; sys.stdout.write('x' * (4 << 20))")
    started = guard.start([writer])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and os.waitpid(started[0][0], os.WNOHANG) == (0, 0):
        time.sleep(0.01)
    assert time.monotonic() < deadline, "the writer waited on a full pipe"
    assert started[0][1].wait(deadline) and len(started[0][1].data()) == 4 << 20


@pytest.mark.skipif(not hasattr(os, "posix_spawnp"), reason="the posix_spawn path")
def test_a_command_still_writing_at_the_deadline_is_stopped(guard):
    import sys
    endless = (sys.executable, "-c", "import sys, time\nwhile True: print(1, flush=True); "
               "time.sleep(0.01)")
    began = time.monotonic()
    result = guard.finish(guard.start([endless]), time.monotonic() + 0.5)
    assert result[0][0] == guard.TIMED_OUT and result[0][1].startswith(b"1\n")
    assert time.monotonic() - began < 5


def test_a_non_blocking_pipe_is_read_until_the_object_arrives(shared):
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, False)
    timer = threading.Timer(0.3, os.write, (write_end, b'{"session_id": "abc"}'))
    timer.start()
    try:
        assert shared.read_pipe_object(read_end, time.monotonic() + 5) == {"session_id": "abc"}
    finally:
        timer.join()
        os.close(write_end)
        os.close(read_end)


def test_no_thread_to_be_had_costs_the_input_and_the_command_alone(shared, guard, monkeypatch):
    """Under a process or memory limit a thread may not start: the hook input reads as none, and
    a git command that cannot be read is stopped, its siblings kept."""
    import _thread
    import sys
    real = _thread.start_new_thread
    calls = []

    def second_fails(*args):
        calls.append(args)
        if len(calls) == 2:
            raise RuntimeError("can't start new thread")
        return real(*args)

    monkeypatch.setattr(_thread, "start_new_thread", second_fails)
    echo = (sys.executable, "-c", "print('ok')")
    results = guard.finish(guard.start([echo, echo, echo]), time.monotonic() + 10)
    assert results == [(0, b"ok\n"), None, (0, b"ok\n")]
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)  # nothing left unreaped
    monkeypatch.setattr(_thread, "start_new_thread", lambda *args: 1 / 0)
    read_end, write_end = os.pipe()
    os.write(write_end, b'{"session_id": "abc"}')
    try:
        assert shared.read_pipe_object(read_end, time.monotonic() + 5) == {}
    finally:
        os.close(write_end)
        os.close(read_end)


@pytest.mark.skipif(not hasattr(os, "posix_spawnp"), reason="the posix_spawn path")
def test_a_pipe_that_cannot_be_made_costs_its_command_alone(guard, monkeypatch):
    """Out of file descriptors (hundreds of submodules under a low limit): the command that gets
    no pipe is not run; the ones before and after it run and are read."""
    import sys
    real, calls = os.pipe, []

    def second_fails():
        calls.append(1)
        if len(calls) == 2:
            raise OSError(24, "Too many open files")
        return real()

    monkeypatch.setattr(os, "pipe", second_fails)
    echo = (sys.executable, "-c", "print('ok')")
    results = guard.finish(guard.start([echo, echo, echo]), time.monotonic() + 10)
    assert results == [(0, b"ok\n"), None, (0, b"ok\n")]


@pytest.mark.parametrize("content, named", [
    ("gitdir: ../main/.git/worktrees/a\n", "../main/.git/worktrees/a"),
    ("gitdir:\n", None), ("gitdir:   \n", None), ("", None), ("not a gitdir line\n", None)])
def test_a_git_file_names_a_folder_only_when_it_names_one(guard, tmp_path, content, named):
    """A `.git` file that names no folder is no repository's: reading it as the work tree's own
    folder would send the submodule search through the work tree."""
    (tmp_path / ".git").write_text(content, encoding="utf-8")
    expected = None if named is None else os.path.join(str(tmp_path), named)
    assert guard.admin_folder(str(tmp_path)) == expected
    assert guard.git_dir_of(str(tmp_path)) == expected


PIPE_SEEDS = int(os.environ.get("MCP_GENERATED_SEEDS", "12"))


@pytest.mark.parametrize("seed", range(PIPE_SEEDS))
def test_any_way_the_input_arrives_the_object_is_read_by_the_deadline(shared, seed):
    """The hook input, written in random pieces with random pauses, on a pipe blocking or not,
    left open or closed, with or without trailing blanks: by the rule, the object when all of it
    arrived before the deadline, else {}."""
    import json
    import random
    rng = random.Random(seed)
    value = {"session_id": "s%d" % seed, "cwd": "/tmp/ü" * rng.randint(0, 3),
             "stop_hook_active": rng.random() < 0.5}
    data = (json.dumps(value) + " \n" * rng.randint(0, 2)).encode("utf-8")
    cuts = sorted(rng.sample(range(1, len(data)), rng.randint(0, 4)))
    pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    arrives_in_time = rng.random() < 0.75
    pause = 0.02 if arrives_in_time else 0.6
    closes = rng.random() < 0.5
    read_end, write_end = os.pipe()
    os.set_blocking(read_end, rng.random() < 0.5)

    def write():
        for piece in pieces:
            time.sleep(rng.random() * pause)
            os.write(write_end, piece)
        if closes:
            os.close(write_end)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        got = shared.read_pipe_object(read_end, time.monotonic() + 0.5)
    finally:
        writer.join()
        if not closes:
            os.close(write_end)
    if got == value:
        os.close(read_end)
    # else the reader may still be reading: its end stays open, never a number a later pipe gets
    if arrives_in_time:
        assert got == value
    else:  # a pause past the deadline: nothing, or the whole object if it came in time anyway
        assert got in ({}, value)
