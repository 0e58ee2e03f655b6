#!/usr/bin/env python3
"""stop-handoff: the write guard. A session that did real work cannot stop without saving it.

Why it exists: what a session learned dies at the next /clear unless it was written down, and a
rule that depends on remembering is a preference. This Stop hook asks for /handoff and /dream
only when owed: a guard that interrupts every stop gets disabled.

What it promises (spec §7.6; prune-worktrees.py's Guard keeps the account):
- It passes at once, reading nothing else, within MCP_THROTTLE_MIN minutes (45) of a handoff a
  stop has already taken in: the path most turns take.
- Otherwise it blocks only on work not yet saved, once for the same state: exit 2 with the
  instructions on stderr under Claude Code, a JSON decision with exit 0 under Codex CLI and
  Gemini CLI. Exit 0 or 2 and no traceback; any failure lets the stop through; every wait ends
  within 10 s, inside the installed 15 s timeout.

It holds the hooks' one loader (the smallest hook, run at every turn): a hook file runs from its
source, compiled here or taken from the account's cache (~/.cache in the home the user database
names) whose entry keeps the very bytes it was compiled from; never from a __pycache__ beside
the hooks, which a repository can commit. The cache also keeps the marks and the listing
(account_cache). Standard library only; Python 3.8 or newer.
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
    """A hook file's bytes, read whole without waiting (a FIFO never holds the session), or an
    OSError."""
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
    """The code of `source`: the cache's entry when compiled from these very bytes by this
    interpreter (kept whole, compared), else compiled now and kept."""
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
    """The cache folder in the account's home, made if missing; None where it cannot be trusted (a
    link, another's, writable by others; or on Windows, where the hooks compile every time)."""
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
    """The account's cache as a store of values: the one under `name` (None: none), or given a
    value, kept (not by a caller writing no bytecode, as install.py --check)."""
    import marshal
    folder = code_cache_folder()
    if folder is not None and value is None:
        return cached(os.path.join(folder, name), marshal)
    if folder is not None and not sys.dont_write_bytecode:
        keep(folder, os.path.join(folder, name), marshal.dumps(value))


def is_mine_alone(info, kind):
    """Of the expected kind, owned by this user, writable by no one else."""
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
        chunks = []
        for chunk in iter(lambda: os.read(fd, 1024 * 1024), b""):
            chunks.append(chunk)
        return marshal.loads(b"".join(chunks))
    except Exception:  # unreadable, or not a marshalled value: compile instead
        return None
    finally:
        os.close(fd)


def keep(folder, entry, data):
    """Write the entry atomically, for this user alone; past CODE_CACHE_ENTRIES the oldest code
    entries go."""
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
    # The block names where to save: never a place a file of the repository chose outside it.
    shared.adopt_the_trusted_environment(project, shared.text_field(shared.read_hook_input(), "cwd"))
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
