#!/usr/bin/env python3
"""session-start: the read path, at every session start, resume, fork, /clear and compaction.

Why it exists: a fresh context window remembers nothing, and a context problem cannot be seen
from inside the session that has it. What it prints is in the agent's context before its next
turn: the budget report, the memory's marks, the index and its folders, the last handoff.

What it promises (spec §5): exit status 0, no traceback. In order: the trusted environment
adopted; merged agent worktrees pruned; the baseline's git reads started; the injection made
while git works, the marks last; the baseline recorded (a resumed or compacted session keeps
its own); the injection printed. A part that fails costs only itself. Every wait is bounded
from the hook's start (stdin 2 s, pruning 3 + 2 s, the worktree walk 1 s, git 10 s).
It writes only baselines in .claude/ and the account's cache. `session-start.py --marks` prints
every mark. Standard library only; Python 3.8 or newer; run as `python3 -I -S session-start.py`.
"""
import os
import stat
import sys
import time

STARTED = time.monotonic()  # when this hook began: every deadline counts from here
HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
PRUNE_SECONDS = 3.0


def the_loader():
    """stop-handoff.py's namespace (load_sibling, account_cache), from its source, not waiting."""
    path = os.path.join(HOOK_DIR, "stop-handoff.py")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file: %s" % path)
        source = os.read(fd, 1024 * 1024)
    finally:
        os.close(fd)
    namespace = {"__name__": "mcp_stop_handoff", "__file__": path}
    exec(source, namespace)  # not compile(): its first call builds the ast types, a millisecond
    return namespace


def main(marks_only=False):
    spoke = the_loader()
    shared = spoke["load_sibling"]("context-budget.py")
    shared.keep_the_hook_folder_off_the_import_path()
    project = shared.project_dir()
    if project is None:
        return
    hook_input = {} if marks_only else shared.read_hook_input()
    refusals = shared.adopt_the_trusted_environment(project, shared.text_field(hook_input, "cwd"))
    seen_at = baseline_time(shared, project, hook_input)
    keeps_baseline = shared.text_field(hook_input, "source") in ("resume", "compact") \
        and seen_at is not None
    git, guard = the_git(spoke, shared, project)
    pruned = [] if marks_only else part([], prune, git, shared, project, hook_input)
    reads = part(None, guard.start_reads) if guard else None
    if marks_only:  # `session-start.py --marks`: every mark the injection shows the first of
        marks = part(None, git.memory_marks, guard, reads) if reads else None
        return shared.write_text_to(sys.stdout, "".join(line + "\n" for line in
                                                       shared.marks_lines(marks or [])))
    text = shared.injection_for(project, os.environ, hook_input, seen_at, pruned, refusals,
                                lambda: git.memory_marks(guard, reads) if reads else None)
    if reads is not None and not keeps_baseline:
        part(None, guard.record_baseline, hook_input, reads)
    shared.write_text_to(sys.stdout, shared.in_the_harness_form(shared.harness(hook_input), text))


def the_git(spoke, shared, project, started=STARTED):
    """(prune-worktrees.py, its Guard of the project), None where it fails; cache handed over."""
    shared.uses_cache(spoke["account_cache"])
    git = part(None, spoke["load_sibling"], "prune-worktrees.py")
    return git, part(None, lambda: git.uses(shared) or git.Guard(project, started))


def prune(git, shared, project, hook_input):
    cwd = shared.text_field(hook_input, "cwd")
    return git.prune(project, os.environ, [cwd] if cwd else [], STARTED + PRUNE_SECONDS)


def part(default, function, *args):
    """What `function` returns, or `default` when it fails: a part that fails costs only itself."""
    try:
        return function(*args)
    except Exception:
        return default


def baseline_time(shared, project, hook_input):
    """When this session's baseline was written (its conversation last took in the memory), before
    this start records; None without one."""
    path = shared.baseline_path(project, os.environ, shared.text_field(hook_input, "session_id"))
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_mtime if stat.S_ISREG(info.st_mode) else None


def preview_injection(project):
    """What a session starting now would be shown, nothing pruned or recorded (--check)."""
    spoke = the_loader()
    shared = spoke["load_sibling"]("context-budget.py")
    env, refusals = shared.trusted_environment(project, dict(os.environ))
    git, guard = the_git(spoke, shared, project, time.monotonic())
    reads = part(None, guard.start_reads) if guard else None
    return shared.injection_for(project, env, {}, None, [], refusals,
                                lambda: git.memory_marks(guard, reads) if reads else None)


if __name__ == "__main__":
    try:
        main(sys.argv[1:] == ["--marks"])
    except BaseException:  # the read path must never take the session down
        pass
    os._exit(0)  # all said is flushed; the teardown of what loaded costs milliseconds
