"""What the installer asks git about a project: the index, what git ignores, whether it answers.

Why it exists: what the protocol shares reaches teammates only through git, and a hook committed
without its executable bit breaks every fresh clone. These questions are asked here, each through
the hardened runner (git.py), each answering "cannot say" rather than guessing when git gives no
answer; the index's mode is set without staging content, so no filter runs. What the uninstall
gives back never depends on git: the ownership record says it (record.py).
"""

import os
import subprocess

from .errors import Refusal
from .git import GIT_TIMEOUT_SECONDS, git, repository_top, run_git


def is_in_a_repository(folder):
    """Whether folder or one above it holds a .git entry: the file system's
    answer, for when git itself gives none."""
    return repository_top(folder) is not None


class IndexEntry(object):
    """What git's index holds for one path: its mode, blob and merge stage, and
    the path from the top of the repository, which update-index --cacheinfo takes."""

    def __init__(self, mode, blob, stage, top_path):
        self.mode = mode
        self.blob = blob
        self.stage = stage
        self.top_path = top_path

    def is_a_plain_file(self):
        """Whether the executable bit is all it lacks: a regular, non-executable
        file outside a merge conflict (not a symbolic link, a submodule or an
        executable already)."""
        return self.mode == "100644" and self.stage == "0"


def index_entries(project, rels):
    """{path: IndexEntry} for the paths git's index tracks (a path in a merge
    conflict by its last stage); None outside a repository."""
    code, out = git(project, "ls-files", "--stage", "--full-name", "-z", "--", *rels)
    if code != 0:
        return None
    entries = {}
    for record in filter(None, out.split("\0")):
        info, _, top_path = record.partition("\t")
        mode, blob, stage = info.split(" ")
        for rel in rels:
            if top_path == rel or top_path.endswith("/" + rel):
                entries[rel] = IndexEntry(mode, blob, stage, top_path)
    return entries


def tracked_files_under(project, folder):
    """The paths (from project, with /) of the files git's index tracks under folder; [] when
    there are none or git cannot say. ls-files reads the index alone: no filter runs."""
    code, out = git(project, "ls-files", "-z", "--", folder)
    return [rel for rel in out.split("\0") if rel] if code == 0 else []


def why_index_cannot_change(project):
    """Why git cannot update the project's index now (another git command holds
    its lock, its folder is read-only, or git does not say where the lock is);
    None when it can."""
    code, out = git(project, "rev-parse", "--git-path", "index.lock")
    if code is None:
        return "git gave no answer within {} seconds about its index lock, so the index " \
            "cannot be changed safely".format(GIT_TIMEOUT_SECONDS)
    if code != 0:
        return "git could not say where its index lock is, so the index cannot be changed safely"
    lock = os.path.join(project, out.strip())
    if os.path.lexists(lock):
        return "git's index is locked ({} exists): wait for the other git command, or " \
            "remove the file if none is running".format(lock)
    if not os.access(os.path.dirname(lock), os.W_OK | os.X_OK):
        return "cannot write in {}, so git's index cannot change".format(os.path.dirname(lock))
    return None


def mark_executable_in_index(project, entries):
    """Set mode 100755 on the entries' blobs as the plan found them. Unlike
    --chmod=+x, this stages no work-tree content (and the runner switches off
    the filter drivers git would run on a file that looks racily clean)."""
    arguments = []
    for entry in entries:
        arguments += ["--cacheinfo", "100755,{},{}".format(entry.blob, entry.top_path)]
    code, _ = git(project, "update-index", *arguments)
    if code is None:
        raise Refusal("git update-index gave no answer within {} seconds in {}"
                      .format(GIT_TIMEOUT_SECONDS, project))
    if code != 0:
        raise Refusal("git update-index could not set mode 100755 in {}".format(project))


def why_git_gives_no_answer(project):
    """Why git answers nothing in a folder that is in a repository: git not on
    PATH (the hooks need it too), or git refusing a repository another user
    owns (safe.directory), as it does to root outside sudo. None when it answers."""
    try:
        done = run_git(project, ("rev-parse", "--git-dir"))
    except OSError:
        return ("git is not found on PATH: the Stop hook's save check and the worktree pruner "
                "need it, and what git shares cannot be checked; install git")
    except subprocess.TimeoutExpired:
        return ("git gave no answer within {} seconds, so what it shares cannot be checked"
                .format(GIT_TIMEOUT_SECONDS))
    if done.returncode == 0:
        return None
    if b"dubious ownership" in done.stderr:
        return ("git refuses this repository to the user running install.py (another user owns "
                "it), so what git shares and tracks cannot be checked; run install.py as the "
                "repository's owner")
    message = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return "git fails here ({}), so what it shares cannot be checked".format(
        message[0] if message else "exit {}".format(done.returncode))


def ignoring_lines(project, rels):
    """{path: 'file:line: pattern'} for each untracked path git ignores, naming
    the line that ignores it; {} when git cannot say."""
    code, out = git(project, "check-ignore", "-v", "-n", "--", *rels)
    if code not in (0, 1):
        return {}
    found = {}
    for record in out.splitlines():  # source:line:pattern<TAB>path; "::<TAB>path" when none
        rule, _, path = record.partition("\t")
        where, _, rest = rule.partition(":")
        line, _, pattern = rest.partition(":")
        if path in rels and where and not pattern.startswith("!"):
            found[path] = "{}:{}: {}".format(where, line, pattern)
    return found
