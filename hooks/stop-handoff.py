#!/usr/bin/env python3
"""stop-handoff: the write guard. A session that did real work cannot stop without saving it.

Why it exists: what a session learned dies at the next /clear unless written down, and a rule
that depends on remembering is a preference. It asks for /handoff and /dream only when owed.

What it promises (spec §7.6; prune-worktrees.py's Guard keeps the account): it passes at once
within MCP_THROTTLE_MIN minutes (45) of a handoff a stop took in, the path most turns take;
otherwise it blocks only on work not yet saved, once for the same state (exit 2 and stderr under
Claude Code, a JSON decision and exit 0 under Codex CLI and Gemini CLI). Exit 0 or 2, no
traceback, any failure lets the stop through, every wait over within 10 s.

It holds the hooks' one loader: a hook file runs from its source, compiled or from the
account's cache (~/.cache in the home the user database names) whose entry keeps the bytes it
was compiled from; never from a __pycache__ beside the hooks, which a repository can commit.
Standard library only; Python 3.8 or newer.
"""
import sys
import time

STARTED = time.monotonic()  # when this hook began: deadlines count from here


def passes_at_once(env=None):
    """The throttle's shortcut before `os` (a millisecond) or a hook file loads, for the default
    settings: a fresh `.session-state.md` a stop took in (the baselines' folder changed since).
    stop_may_pass_at_once judges the rest, and passes wherever this does."""
    try:
        from posix import environ, stat as look
        env = env or {k.decode("utf-8", "replace"): v.decode("utf-8", "replace")
                      for k, v in environ.items() if k[:4] in (b"MCP_", b"CLAU", b"GEMI")}
    except ImportError:
        from nt import environ, stat as look
        env = env or environ
    project = env.get("CLAUDE_PROJECT_DIR") or env.get("GEMINI_PROJECT_DIR")
    if not project or any(env.get("MCP_" + n) for n in ("SESSION_STATE", "BASELINE",
                                                         "THROTTLE_MIN")):
        return False
    try:
        handoff = look(project + "/.session-state.md")
        taken_in = look(project + "/.claude/hooks").st_mtime_ns > handoff.st_mtime_ns
    except (OSError, ValueError, TypeError):
        return False
    age = time.time() - handoff.st_mtime_ns / 1e9
    return taken_in and handoff.st_mode & 0o170000 == 0o100000 and -60 < age and age // 60 < 45


if __name__ == "__main__" and passes_at_once():
    sys.exit(0)

import os  # noqa: E402 (after the shortcut, which does without it)
import stat  # noqa: E402

HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
CODE_CACHE = os.path.join(".cache", "memory-context-protocol")
CODE_CACHE_ENTRIES = 64  # a few releases for a few interpreters
CACHE_ENTRIES = 256  # the listings, marks and verdicts of the latest projects
SOURCE_LIMIT = 1024 * 1024


def load_sibling(file_name):
    """A hook file beside this one as a module, run from its own source (code_for)."""
    path = os.path.join(HOOK_DIR, file_name)
    module = type(sys)("mcp_" + file_name[:-len(".py")].replace("-", "_"))
    module.__file__ = path
    exec(code_for(hook_source(path), path), vars(module))
    return module


def hook_source(path):
    """A hook file's bytes, read without waiting (a FIFO never holds the session), or OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > SOURCE_LIMIT:
            raise OSError("not a hook file: %s" % path)
        return b"".join(iter(lambda: os.read(fd, 1 << 20), b""))
    finally:
        os.close(fd)


def code_for(source, path):
    """The code of `source`: the cache's entry compiled from these very bytes (kept, compared) by
    this interpreter, else compiled now and kept."""
    name = "%s-%d-%x.code" % (os.path.basename(path), len(source), sys.hexversion)
    kept = account_cache(name)
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == source \
            and isinstance(kept[1], type(code_for.__code__)):
        return kept[1]
    code = compile(source, path, "exec")
    account_cache(name, (source, code))
    return code


def code_cache_folder():
    """The cache folder in the account's home, made if missing; None where it cannot be trusted (a
    link, another's, open to others; on Windows the hooks compile every time)."""
    try:
        import pwd
        home = pwd.getpwuid(os.getuid()).pw_dir
        folder = os.path.join(home, CODE_CACHE)
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except (ImportError, KeyError, AttributeError, OSError, ValueError):
        return None
    return folder if os.path.isabs(home) and is_mine_alone(info, stat.S_ISDIR) else None


def account_cache(name, value=None):
    """The value kept under `name` (None: none), or given one, keep it (not where no bytecode is
    written: install.py --check)."""
    import marshal
    folder = code_cache_folder()
    if folder is not None and value is None:
        return cached(os.path.join(folder, name), marshal)
    if folder is not None and not sys.dont_write_bytecode:
        keep(folder, os.path.join(folder, name), marshal.dumps(value))


def is_mine_alone(info, kind):
    """Of that kind, this user's, and writable by no one else."""
    return kind(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def cached(entry, marshal):
    """The value kept at `entry`, or None when none this user wrote."""
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        return None
    try:
        if not is_mine_alone(os.fstat(fd), stat.S_ISREG):
            return None
        return marshal.loads(b"".join(iter(lambda: os.read(fd, 1 << 20), b"")))
    except Exception:  # unreadable, or not a marshalled value: compile instead
        return None
    finally:
        os.close(fd)


def keep(folder, entry, data):
    """Write the entry atomically, for this user alone; past CODE_CACHE_ENTRIES code and
    CACHE_ENTRIES others, the least recently read (access time) or written go."""
    temporary = "%s.%d.tmp" % (entry, os.getpid())
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            data = memoryview(data)
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.replace(temporary, entry)
        entries = sorted(((max(info.st_atime, info.st_mtime), item.path) for item in
                          os.scandir(folder) if item.is_file(follow_symlinks=False)
                          for info in [item.stat(follow_symlinks=False)]), reverse=True)
        for code, most in ((True, CODE_CACHE_ENTRIES), (False, CACHE_ENTRIES)):
            for path in [path for _, path in entries if path.endswith(".code") == code][most:]:
                os.unlink(path)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass


def main():
    shared = load_sibling("context-budget.py")
    shared.keep_the_hook_folder_off_the_import_path()
    project = shared.project_dir()
    if project is None or shared.stop_may_pass_at_once(project, os.environ):
        return 0
    # The block names where to save, never a place outside chosen by a file of the repository.
    shared.adopt_the_trusted_environment(project,
                                         shared.text_field(shared.read_hook_input(), "cwd"))
    git = load_sibling("prune-worktrees.py")
    git.uses(shared)
    code, out, err = git.guard_the_stop(project, STARTED)
    shared.write_text_to(sys.stdout, out)
    shared.write_text_to(sys.stderr, err)
    return code


if __name__ == "__main__":
    try:
        exit_code = main()
    except BaseException:  # a failing guard lets the stop through rather than trap the session
        exit_code = 0
    os._exit(exit_code)  # all said is flushed; the teardown of what loaded costs milliseconds
