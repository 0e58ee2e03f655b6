#!/usr/bin/env python3
"""stop-handoff: the write guard. A session that did real work cannot stop without saving it.

Why it exists: what a session learned dies at the next /clear unless it was written down, and a
rule that depends on remembering is a preference. This Stop hook asks for /handoff and /dream,
but only when it is owed: a guard that interrupts every stop gets disabled.

What it promises (spec §7.6 is the table; prune-worktrees.py's Guard keeps the account):
- It passes at once, reading nothing else, within MCP_THROTTLE_MIN minutes (45) of a handoff
  that a stop has already taken in: the path most turns take.
- Otherwise it weighs the work since this session's baseline and blocks only on work not yet
  saved, once for the same state: exit 2 with the instructions on stderr under Claude Code, a
  JSON decision on stdout with exit 0 under Codex CLI and Gemini CLI (its AfterAgent hook).
- Exit status 0 or 2 and nothing else; no traceback reaches the user: any failure lets the stop
  through. Every wait ends within READS_SECONDS (10) of its start, well inside the 15-second
  timeout install.py writes into settings.json.

It also holds the hooks' one loader, since it is the smallest hook and the one run at every
turn: the other hook files run from their source as it is now, compiled here or taken from
this user's cache of an earlier compilation of the very same bytes (~/.cache, in the home the
system's user database names, which a repository's settings cannot move), never from a
__pycache__ beside the hooks, which a repository can commit. session-start.py compiles this file
to use it. Standard library only; Python 3.8 or newer; runs as `python3 -I -S stop-handoff.py`.
Configuration: the variables context-budget.py lists.
"""
import os
import stat
import sys
import time

STARTED = time.monotonic()  # when this hook began: its deadlines count from here
HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
CODE_CACHE = os.path.join(".cache", "memory-context-protocol")
CODE_CACHE_ENTRIES = 64  # a few releases of the hook files for a few interpreters
SOURCE_LIMIT = 1024 * 1024


def load_sibling(file_name):
    """A hook file beside this one as a module, run from its own source (code_for)."""
    path = os.path.join(HOOK_DIR, file_name)
    module = type(sys)("mcp_" + file_name[:-len(".py")].replace("-", "_"))
    module.__file__ = path
    exec(code_for(hook_source(path), path), vars(module))
    return module


def hook_source(path):
    """The bytes of a hook file, read whole without waiting (a FIFO in its place never holds the
    session), or an OSError."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file: %s" % path)
        data = b""
        while len(data) <= SOURCE_LIMIT:
            chunk = os.read(fd, SOURCE_LIMIT + 1 - len(data))
            if not chunk:
                return data
            data += chunk
        raise OSError("too large for a hook: %s" % path)
    finally:
        os.close(fd)


def code_for(source, path):
    """The code of `source`: the cache's entry for it when that entry was compiled from these
    very bytes by this interpreter (the entry keeps the bytes it was compiled from, compared
    whole), else compiled now (10 ms for a large file) and kept."""
    import marshal
    folder = code_cache_folder()
    if folder is None:
        return compile(source, path, "exec")
    entry = os.path.join(folder, "%s-%d-%x.code" % (os.path.basename(path), len(source),
                                                    sys.hexversion))
    kept = cached(entry, marshal)
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == source \
            and isinstance(kept[1], type(code_for.__code__)):
        return kept[1]
    code = compile(source, path, "exec")
    if not sys.dont_write_bytecode:  # a caller that writes no bytecode (install.py --check)
        keep(folder, entry, marshal.dumps((source, code)))
    return code


def code_cache_folder():
    """The cache folder in the account's home, made if missing; None where it cannot be
    trusted: a link, another user's, or writable by others. On Windows, where there is no such
    ownership to check, the hooks are compiled every time."""
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
    """The account's cache as a store of values: the one kept under `name` (None: none this user
    wrote), or, given a value, that value kept there. A caller that writes no bytecode
    (install.py --check) keeps nothing."""
    import marshal
    folder = code_cache_folder()
    if folder is not None and value is None:
        return cached(os.path.join(folder, name), marshal)
    if folder is not None and not sys.dont_write_bytecode:
        keep(folder, os.path.join(folder, name), marshal.dumps(value))


def is_mine_alone(info, kind):
    """Whether a stat result is of the expected kind, owned by this user and writable by no
    one else."""
    return kind(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def cached(entry, marshal):
    """The value kept at `entry`, or None when there is none this user wrote."""
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        return None
    try:
        if not is_mine_alone(os.fstat(fd), stat.S_ISREG):
            return None
        chunks = []
        for chunk in iter(lambda: os.read(fd, 1024 * 1024), b""):
            chunks.append(chunk)
        return marshal.loads(b"".join(chunks))
    except Exception:  # unreadable, or not a marshalled value: compile instead
        return None
    finally:
        os.close(fd)


def keep(folder, entry, data):
    """Write the entry atomically, readable by this user alone; past CODE_CACHE_ENTRIES the
    oldest entries go. A failure costs only the next run a compilation."""
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
        entries = sorted((item.stat(follow_symlinks=False).st_mtime, item.path)
                         for item in os.scandir(folder) if item.name.endswith(".code")
                         and item.is_file(follow_symlinks=False))
        for _, path in entries[:-CODE_CACHE_ENTRIES]:
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
    sys.exit(exit_code)
