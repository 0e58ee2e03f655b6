"""Tools for the fault suite: an installed project to break, a way to start a hook with any kind
of standard input and environment, and the properties every run must keep."""
import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

from conftest import HOOK_NAMES, HOOKS, clean_environment, harness_length

INJECTION_LIMIT = 10000
HARNESS_TIMEOUT = 15    # seconds: the "timeout" install.py writes into settings.json
# A hook that has not finished when the harness's timeout ends has failed the session; one that
# finishes a little sooner on a loaded machine has not. The bound is the harness's, not a guess
# at how fast a hook should be, so the suite does not fail on a busy two-core runner.
RUN_SECONDS = HARNESS_TIMEOUT - 1
KILL_SECONDS = 2 * HARNESS_TIMEOUT  # the subprocess is killed after this, so a hang fails instead of blocking
OK_CODES = {
    "session-start.py": (0,),
    "context-budget.py": (0,),
    "prune-worktrees.py": (0,),
    "stop-handoff.py": (0, 2),
}
STANDARD_INPUT = {
    "session_id": "fault-session",
    "transcript_path": "/nonexistent/transcript.jsonl",
    "hook_event_name": "SessionStart",
    "source": "startup",
    "stop_hook_active": False,
}


class Estate:
    """A project with the hooks installed in its .claude/hooks/, a HOME beside it and a
    sentinel folder outside it: everything a hook could touch and must not."""

    def __init__(self, root, project, hooks_dir=None):
        self.root = Path(root)
        self.project = Path(project)
        self.hooks_dir = Path(hooks_dir) if hooks_dir else self.project / ".claude" / "hooks"
        self.home = self.root / "home"
        self.sentinel = self.root / "sentinel"
        self.home.mkdir(exist_ok=True)
        self.sentinel.mkdir(exist_ok=True)
        (self.sentinel / "keep.txt").write_text("outside the project\n", encoding="utf-8")

    def install(self):
        self.hooks_dir.mkdir(parents=True, exist_ok=True)
        for name in HOOK_NAMES:
            shutil.copyfile(str(HOOKS / name), str(self.hooks_dir / name))
        return self

    def standard_input(self, **changes):
        payload = dict(STANDARD_INPUT, cwd=str(self.project))
        payload.update(changes)
        return json.dumps(payload).encode("utf-8")


def tree_snapshot(folder, skip=()):
    """Every entry below `folder` as path -> (type, size, mtime, link target). FIFOs and devices
    are stat'ed, never opened; `skip` names top-level entries left out."""
    folder = Path(folder)
    shot = {}
    if not os.path.lexists(str(folder)):
        return shot
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(str(current)))
        except OSError:
            continue
        for entry in entries:
            relative = os.path.relpath(entry.path, str(folder))
            if current == folder and entry.name in skip:
                continue
            info = entry.stat(follow_symlinks=False)
            target = os.readlink(entry.path) if stat.S_ISLNK(info.st_mode) else None
            size = None if stat.S_ISDIR(info.st_mode) else info.st_size
            shot[relative] = (stat.S_IFMT(info.st_mode), size, info.st_mtime_ns, target)
            if stat.S_ISDIR(info.st_mode):
                pending.append(Path(entry.path))
    return shot


def code_cache():
    """Where the hooks keep their compiled code: in the account's own home, which HOME cannot
    move; the one place outside the project's .claude/ a hook writes."""
    import pwd
    return Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "memory-context-protocol"


def outside_claude(estate):
    """What a hook may not change: the project without .claude/ and .git/, HOME, and the
    sentinel."""
    return {
        "project": tree_snapshot(estate.project, skip=(".claude", ".git")),
        "home": tree_snapshot(estate.home),
        "sentinel": tree_snapshot(estate.sentinel),
    }


class Finished:
    def __init__(self, name, returncode, stdout, stderr, seconds):
        self.name = name
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        self.seconds = seconds


def hook_environment(estate, env=None, unset=()):
    environment = clean_environment(estate.home)
    environment["MCP_PROJECTS_DIR"] = str(estate.home / "no-projects")
    environment["CLAUDE_PROJECT_DIR"] = str(estate.project)
    environment.update(env or {})
    for name in unset:
        environment.pop(name, None)
    return environment


def launch(estate, name, stdin=b"", env=None, unset=(), cwd=None, close=(), reader_gone=False):
    """Start one hook as installed (`python -I -S <hooks>/<name>`) and wait for it.

    `stdin` is bytes (written to a pipe, then closed), "devnull", "closed" (file descriptor 0
    not open at all) or ("open", bytes): the bytes are written and the pipe is held open until
    the hook exits, as a harness that never closes it would. `close` names file descriptors
    (1, 2) the hook starts without; `reader_gone` closes the read end of its stdout at once.
    """
    command = [sys.executable, "-I", "-S", str(estate.hooks_dir / name)]
    environment = hook_environment(estate, env, unset)
    cwd = str(cwd or (estate.project if estate.project.is_dir() else estate.root))
    options = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment, cwd=cwd)
    if close:
        options["preexec_fn"] = lambda: [os.close(fd) for fd in close]
    started = time.monotonic()
    if reader_gone:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, **options)
        process.stdout.close()
        try:
            _, err = process.communicate(stdin, timeout=KILL_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise AssertionError("%s did not finish within %.0f s" % (name, KILL_SECONDS))
        return Finished(name, process.returncode, b"", err, time.monotonic() - started)
    if isinstance(stdin, bytes):
        try:
            done = subprocess.run(command, input=stdin, timeout=KILL_SECONDS, **options)
        except subprocess.TimeoutExpired:
            raise AssertionError("%s did not finish within %.0f s" % (name, KILL_SECONDS))
        return Finished(name, done.returncode, done.stdout, done.stderr, time.monotonic() - started)
    if stdin == "devnull":
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, **options)
    elif stdin == "closed":
        options["preexec_fn"] = lambda: [os.close(fd) for fd in (0,) + tuple(close)]
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, **options)
    else:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, **options)
        process.stdin.write(stdin[1])
        process.stdin.flush()
    try:
        out, err = process.communicate(timeout=KILL_SECONDS) if stdin in ("devnull", "closed") \
            else drain_without_closing(process)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError("%s did not finish within %.0f s" % (name, KILL_SECONDS))
    finally:
        if process.stdin:
            process.stdin.close()
    return Finished(name, process.returncode, out, err, time.monotonic() - started)


def drain_without_closing(process):
    """Collect stdout and stderr while the hook's stdin stays open."""
    collected = {}

    def read(stream, key):
        collected[key] = stream.read()

    readers = [threading.Thread(target=read, args=(process.stdout, "out")),
               threading.Thread(target=read, args=(process.stderr, "err"))]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=KILL_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        for reader in readers:
            reader.join()
        raise
    for reader in readers:
        reader.join()
    return collected["out"], collected["err"]


def assert_run_properties(done, seconds=RUN_SECONDS):
    """The promises every hook keeps on every input."""
    label = "%s (exit %s, stderr %r)" % (done.name, done.returncode, done.stderr[-500:])
    assert done.returncode in OK_CODES[done.name], label
    assert b"Traceback" not in done.stderr, label
    text = done.stdout.decode("utf-8", "replace")
    assert harness_length(text) <= INJECTION_LIMIT, "%s printed %d characters" % (
        done.name, harness_length(text))
    assert done.seconds < seconds, "%s took %.1f s" % (done.name, done.seconds)


def run_every_hook(estate, stdin=None, hooks=HOOK_NAMES, parallel=False, **options):
    """Run the hooks on the same fault, one after the other (or all at once when `parallel`,
    for faults that make each wait); check every property, including that nothing outside
    .claude/ changed. Returns {hook name: Finished}."""
    if stdin is None:
        stdin = estate.standard_input()
    before = outside_claude(estate)
    results = {}
    if parallel:
        outcomes = {}

        def work(name):
            try:
                outcomes[name] = launch(estate, name, stdin=stdin, **options)
            except BaseException as error:  # re-raised on the main thread
                outcomes[name] = error

        threads = [threading.Thread(target=work, args=(name,)) for name in hooks]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for name in hooks:
            if isinstance(outcomes[name], BaseException):
                raise outcomes[name]
    for name in hooks:
        done = outcomes[name] if parallel else launch(estate, name, stdin=stdin, **options)
        assert_run_properties(done)
        results[name] = done
    after = outside_claude(estate)
    assert after == before, "written outside .claude/: %s" % describe_changes(before, after)
    return results


def describe_changes(before, after):
    changes = []
    for area in before:
        old, new = before[area], after[area]
        for path in sorted(set(old) | set(new)):
            if old.get(path) != new.get(path):
                changes.append("%s/%s: %r -> %r" % (area, path, old.get(path), new.get(path)))
    return "; ".join(changes[:20])
