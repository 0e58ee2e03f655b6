"""memory-context-protocol.pyz: install.py and everything it installs, in one file to download.

Why it exists: a user should be able to put the protocol into a repository without cloning this
one: download one file, run it with python3. This is that file's __main__.py (build_pyz.py puts
it there). install.py loads its package and the files it copies (hooks, commands, templates,
memory_health.py) by their paths, so they must be plain files: the first run unpacks them into a
folder of the user's own cache, named by the digest of what this file holds, and every run then
runs install.py from there exactly as a clone runs it, with this file's name as the command name,
so what --check prints to run names this file.

What it promises: the same behaviour as install.py of the same commit (the tests compare them);
nothing written outside the cache folder before install.py runs; an unpacking that is
interrupted or fails leaves no folder that a later run would take for a complete one (it is made
under another name, then renamed); Ctrl-C or a failure is one line and an exit code, never a
traceback. Standard library only, Python 3.8 or newer.
"""

import sys

# As in install.py: Ctrl-C is one line and exit 130 from the first line on. An unpacking it
# stops leaves only a folder no run takes for a complete one.
try:
    import _signal as signal
except ImportError:
    import signal
try:
    from posix import _exit, write
except ImportError:
    from nt import _exit, write


def stop_at_once(signum, frame):
    write(2, b"install.py: interrupted\n")
    _exit(130)


if __name__ == "__main__" and signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
    signal.signal(signal.SIGINT, stop_at_once)

if sys.version_info < (3, 8):
    sys.stderr.write("install.py: error: this is Python {}.{}; install.py needs Python 3.8 or "
                     "newer: run it with python3\n".format(*sys.version_info[:2]))
    sys.exit(1)

import hashlib  # noqa: E402 (after the version check, which must come first)
import os  # noqa: E402
import shutil  # noqa: E402
import stat  # noqa: E402
import tempfile  # noqa: E402
import zipfile  # noqa: E402

# The folder of the cache the unpacked files go in, under the user's cache folder.
CACHE = "memory-context-protocol"


def cache_root():
    """The user's cache folder: %LOCALAPPDATA% on Windows, else $XDG_CACHE_HOME or ~/.cache."""
    if os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        return os.environ["LOCALAPPDATA"]
    return os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")


def payload(archive):
    """(name, bytes) of every file of the archive but this launcher, in the archive's order."""
    return [(info.filename, archive.read(info)) for info in archive.infolist()
            if not info.is_dir() and info.filename != "__main__.py"]


def digest_of(files):
    digest = hashlib.sha256()
    for name, data in files:
        digest.update(name.encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
        digest.update(data)
    return digest.hexdigest()[:20]


def is_mine_alone(path):
    """Whether path is a folder (not a link) of this user's that no one else may write; on
    Windows, where the cache is per user, whether it is a folder."""
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        return False
    return os.name == "nt" or (info.st_uid == os.getuid() and not info.st_mode & 0o022)


def unpacked(files):
    """The folder holding files, unpacked now or by an earlier run of the same file."""
    parent = os.path.join(cache_root(), CACHE)
    os.makedirs(parent, mode=0o700, exist_ok=True)
    if not is_mine_alone(parent):
        raise OSError("{} is not a folder of yours alone; remove it, or set XDG_CACHE_HOME to "
                      "another folder".format(parent))
    folder = os.path.join(parent, "installer-" + digest_of(files))
    if os.path.lexists(folder):
        if not is_mine_alone(folder):
            raise OSError("{} is not a folder of yours alone; remove it".format(folder))
        return folder
    staging = tempfile.mkdtemp(prefix=".unpacking-", dir=parent)
    try:
        for name, data in files:
            path = os.path.join(staging, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(data)
        try:
            os.rename(staging, folder)
        except OSError:
            if not os.path.isdir(folder):  # not another run of the same file, just done
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def run_install_py(folder):
    """install.py from folder as the main program; sys.argv[0] stays this file's name."""
    path = os.path.join(folder, "install.py")
    with open(path, "rb") as handle:
        code = compile(handle.read(), path, "exec")
    exec(code, {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__})


def main():
    try:
        with zipfile.ZipFile(os.path.abspath(sys.argv[0])) as archive:
            folder = unpacked(payload(archive))
    except (OSError, zipfile.BadZipFile) as error:
        sys.stderr.write("install.py: error: cannot unpack {}: {}\n".format(sys.argv[0], error))
        return 1
    run_install_py(folder)  # it ends the process with its exit code
    return 0


if __name__ == "__main__":
    sys.exit(main())
