"""Reading and writing the project's files without ever losing one.

Why it exists: every byte the installer puts into a project goes through here, so the promises
about files are kept in one place. A read refuses anything but a regular file (a FIFO, a device
or a folder under a file's name) without waiting on it. A write is atomic (a temporary file beside
the target, then a rename), never goes through a symbolic link, keeps the permission bits of the
file it replaces and, run as root, its owner; a file with other names (hard links) that the
installer edits is written through, so every name sees the change, with the old bytes put back if
the write fails. Text keeps its line endings: a checkout with CRLF holds the same text as one
with LF.
"""

import os
import shlex
import shutil
import stat
import tempfile

from .errors import Refusal


def same_content(data, other):
    """Whether two files hold the same text; a checkout with core.autocrlf=true
    (the default on Windows) holds every file with CRLF line endings."""
    return lf_endings(data) == lf_endings(other)


def lf_endings(data):
    return data.replace(b"\r\n", b"\n")


def read_bytes(path, shown, limit=None):
    """The file's bytes (its first limit bytes, when given), or None when there is no file (nor
    a folder it could be in). Anything but a regular file (a folder, a FIFO, a device) is
    refused, without waiting on it; errors name the file as shown."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise Refusal("cannot read {}: {}".format(shown, error.strerror or error))
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise Refusal("{} is a directory, not a file".format(shown))
        if not stat.S_ISREG(mode):
            raise Refusal("{} is not a regular file".format(shown))
        return read_all(descriptor, limit)
    except OSError as error:
        raise Refusal("cannot read {}: {}".format(shown, error.strerror or error))
    finally:
        os.close(descriptor)


def read_text(path, shown):
    """The file as text, line endings untouched, or None when there is no file."""
    data = read_bytes(path, shown)
    return None if data is None else data.decode("utf-8", "surrogateescape")


def encode_text(text):
    return text.encode("utf-8", "surrogateescape")


def newline_of(text):
    """The line ending most lines of the text use."""
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path, data, mode, owners=None, keep_links=True):
    """Write via a temporary file and a rename, so no reader sees half a file.
    Run as root, the new file keeps the owner of the one it replaces, or takes
    its folder's (owners keeps those it could not give). A file with other
    names (hard links) is written through instead when keep_links says so, so
    that every name sees the change."""
    owners = owners or Owners()
    folder = os.path.dirname(path)
    make_folders(folder, owners)
    existing = lstat_or_none(path)
    if keep_links and existing is not None and stat.S_ISREG(existing.st_mode) \
            and existing.st_nlink > 1:
        write_through_links(path, data)
        return
    handle, temporary = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        owner = owner_of(existing or os.lstat(folder))
        # before the mode: a change of owner clears the set-user-ID and set-group-ID bits
        owners.give(path, owner, descriptor=handle)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_through_links(path, data):
    """Write data into the file itself (its inode), so that its other names
    see it too; owner, group and permission bits stay as they are. The new
    bytes first go whole into a temporary file beside it, so that a disk too
    full for them fails before the file is touched, and a write into the file
    that fails anyway puts the old bytes back. Only a crash in the middle can
    leave the file part old, part new; the temporary file then holds the new
    version."""
    handle, temporary = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        descriptor = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise Refusal("{} is not a regular file".format(path))
            old = read_all(descriptor)
            try:
                overwrite(descriptor, data)
            except OSError:
                overwrite(descriptor, old)
                raise
        finally:
            os.close(descriptor)
    finally:
        os.unlink(temporary)


def read_all(descriptor, limit=None):
    """Every byte of the open file from its start, or its first limit bytes."""
    os.lseek(descriptor, 0, os.SEEK_SET)
    chunks, size = [], 0
    while limit is None or size < limit:
        chunk = os.read(descriptor, 1 << 20 if limit is None else min(1 << 20, limit - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def overwrite(descriptor, data):
    """Make the open file hold exactly data."""
    os.lseek(descriptor, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]
    os.ftruncate(descriptor, len(data))


def make_folders(folder, owners):
    """Make folder and the folders above it that are missing; run as root,
    each takes the owner of the folder it is made in."""
    if os.path.isdir(folder):
        return
    parent = os.path.dirname(folder)
    if parent != folder:
        make_folders(parent, owners)
    try:
        os.mkdir(folder)
    except FileExistsError:
        if os.path.isdir(folder):
            return
        raise
    owners.give(folder, owner_of(os.lstat(parent)))


def lstat_or_none(path):
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def owner_of(info):
    return (info.st_uid, info.st_gid)


class Owners(object):
    """Who the files a run makes belong to. Run as root (sudo), a file the run
    replaces keeps its owner and group, and a new file or folder takes those
    of the folder it is made in, so the user can still edit their own files.
    Anyone else writes as any editor does: only root may give a file away,
    and Windows keeps no such owners. A file system that refuses (a share
    that maps root to nobody) gets the write all the same, and the files are
    named at the end with the chown that gives them back."""

    def __init__(self):
        self.active = hasattr(os, "geteuid") and hasattr(os, "fchown") and os.geteuid() == 0
        self.lost = []  # (path, owner, why) for each owner that could not be given

    def give(self, path, owner, descriptor=None):
        """Give the file at path (open as descriptor, if it is) to owner."""
        if not self.active:
            return
        info = os.fstat(descriptor) if descriptor is not None else os.lstat(path)
        if owner_of(info) == owner:
            return
        try:
            if descriptor is not None:
                os.fchown(descriptor, *owner)
            else:
                os.chown(path, *owner, follow_symlinks=False)
        except OSError as error:
            self.lost.append((path, owner, error.strerror or str(error)))

    def refuse_if_any_lost(self):
        """One line for the files that could not be given their owner: the
        chown that does it (-R for a folder: the run made it and everything
        in it, which took the folder's owner as it was, root)."""
        if not self.lost:
            return
        paths = {}
        for path, owner, _ in self.lost:
            paths.setdefault(owner, []).append(shlex.quote(path))
        raise Refusal("every change was made, but their owner could not be kept (chown: {}); "
                      "give them back with: {}".format(self.lost[0][2], "; ".join(
                          "chown -R {}:{} {}".format(uid, gid, " ".join(names))
                          for (uid, gid), names in paths.items())))


def file_mode_for(path, executable):
    """The permission bits of the file a write replaces (a hook's made
    runnable by whoever may read it); for a new file, what the umask leaves,
    and 0o755 for a new hook."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o755 if executable else 0o666 & ~current_umask()
    return runnable(mode) if executable else mode


def runnable(mode):
    """The mode with the executable bit wherever the read bit is."""
    return mode | (mode & 0o444) >> 2


def is_executable(path):
    if os.name == "nt":  # Windows keeps no executable bit; git's index does (see plan_git_index)
        return True
    try:
        return bool(os.stat(path).st_mode & stat.S_IXUSR)
    except OSError:
        return False


def remove_path(path):
    """Remove a file or link (never what a link points to), an emptied folder,
    or a __pycache__ folder with its contents."""
    if os.path.islink(path) or not os.path.isdir(path):
        os.remove(path)
    elif os.path.basename(path) == "__pycache__":
        shutil.rmtree(path)
    else:
        os.rmdir(path)


def why_unsafe_to_change(root, rel, display, removing=False):
    """Why changing root/rel could reach outside it (a symbolic link on the way,
    or a file where a folder should be); None when it is safe. Removing a link
    itself is safe: it never touches what the link points to."""
    path = root
    parts = rel.split("/")
    for index, part in enumerate(parts):
        path = os.path.join(path, part)
        last = index == len(parts) - 1
        shown = "/".join(parts[:index + 1]) if display is None else display
        if os.path.islink(path) and not (last and removing):
            return "{} is a symbolic link; refusing to write through it".format(shown)
        if not os.path.exists(path):
            return None
        if not last and not os.path.isdir(path):
            return "{} is not a directory".format(shown)
    return None


def why_unwritable(root, rel, display):
    """Why root/rel cannot be created, replaced or removed (a read-only file or
    folder, an immutable one, a read-only file system); None when it can. The
    test is os.access, which those fail even for root."""
    path = os.path.join(root, *rel.split("/"))
    if os.path.isfile(path) and not os.path.islink(path) and not os.access(path, os.W_OK):
        return "{} is read-only".format(display or rel)
    folder = os.path.dirname(path)
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        return "cannot write in {}".format(folder)
    return None


def move_without_overwriting(old, new):
    """Rename old to new unless new exists by then: a hard link fails on an
    existing name, where a rename would replace it; a file system without
    hard links gets a plain rename after the check."""
    try:
        os.link(old, new)
    except FileExistsError:
        raise Refusal("{} appeared meanwhile; {} was kept".format(new, old))
    except OSError:
        if os.path.lexists(new):
            raise Refusal("{} appeared meanwhile; {} was kept".format(new, old))
        os.rename(old, new)
        return
    os.unlink(old)


def is_an_empty_folder(path):
    try:
        return os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)
    except OSError:
        return False
