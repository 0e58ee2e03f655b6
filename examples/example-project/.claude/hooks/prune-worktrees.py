#!/usr/bin/env python3
"""prune-worktrees: removes agent worktrees whose work has already landed, and nothing else.

Why it exists: every agent worktree is a full second checkout. Left behind after their branches
merge, a handful of them once held 1.7 GB inside one repository and broke lint and fetch before
anyone looked. session-start.py loads this file and runs it before each session; it also runs
on its own as `python3 -I -S prune-worktrees.py`.

What it promises, because deleting work is the one failure a hook must never have:
- It considers only worktrees whose path lies inside MCP_WORKTREE_DIR (.claude/worktrees) of
  this repository, compared by path components after resolving links.
- It keeps every worktree that is locked, on a detached HEAD, on the base branch itself, on a
  branch with commits the base branch lacks, that holds changes, untracked files or ignored
  files (git would delete ignored files without a word), or that a session stands in.
- It removes without --force, so git's own refusals stand, then deletes the branch ref only if
  it still points at the commit that was checked out: no commit is lost.
- It never runs `git worktree prune`, which would forget worktrees on unmounted drives too.
- It prints one line, `pruned N merged agent worktree(s): names`, only when it removed
  something, and exits 0 on every path.

Base branch: MCP_BASE_BRANCH, else the remote's HEAD, else init.defaultBranch, else whichever
of main and master exists. Standard library only; Python 3.8 or newer.
"""
import os
import sys
import time

GIT_SECONDS = 20.0  # for the whole prune when run on its own
STDIN_SECONDS = 2.0
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false")


class Git:
    """git without optional locks or the repository's fsmonitor, and never past one deadline
    for the whole prune: the session waits for this hook."""

    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds

    def run(self, cwd, *args):
        """(exit code, stdout), or None when git cannot run or the time is up."""
        if time.monotonic() >= self.deadline:
            return None
        argv = GIT + ("-C", cwd) + args
        try:
            if hasattr(os, "posix_spawnp"):
                return run_with_posix_spawn(argv, self.deadline)
            return run_with_subprocess(argv, self.deadline)
        except Exception:
            return None

    def output(self, cwd, *args):
        """Standard output of a command that succeeded, as text; None otherwise."""
        result = self.run(cwd, *args)
        if result is None or result[0] != 0:
            return None
        return result[1].decode("utf-8", "surrogateescape")


def run_with_posix_spawn(argv, deadline):
    """posix_spawn and a pipe: the subprocess module alone costs more than a git call."""
    import select
    read_end, write_end = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write_end, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        pid = os.posix_spawnp(argv[0], list(argv), os.environ, file_actions=actions)
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)
    chunks = []
    finished = False
    while time.monotonic() < deadline:
        if select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunk = os.read(read_end, 65536)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
    os.close(read_end)
    if not finished:
        os.kill(pid, 9)  # SIGKILL; the signal module would import enum just for this number
    status = os.waitpid(pid, 0)[1]
    code = os.WEXITSTATUS(status) if finished and os.WIFEXITED(status) else -1
    return code, b"".join(chunks)


def run_with_subprocess(argv, deadline):
    import subprocess
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=max(0.1, deadline - time.monotonic()),
                              creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout


def listed_worktrees(git, project):
    """`git worktree list --porcelain`, one dict per worktree."""
    listing = git.output(project, "worktree", "list", "--porcelain")
    worktrees = []
    current = None
    for line in (listing or "").split("\n"):
        if line.startswith("worktree "):
            current = {"path": line[len("worktree "):], "locked": False, "detached": False}
            worktrees.append(current)
        elif current is None:
            continue
        elif line.startswith("HEAD "):
            current["head"] = line[len("HEAD "):]
        elif line.startswith("branch refs/heads/"):
            current["branch"] = line[len("branch refs/heads/"):]
        elif line == "detached":
            current["detached"] = True
        elif line == "locked" or line.startswith("locked "):
            current["locked"] = True
    return worktrees


def lies_inside(path, folder):
    """Whether path is folder or below it, compared by components after resolving links."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    if os.name == "nt":
        path, folder = os.path.normcase(path), os.path.normcase(folder)
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def is_candidate(worktree, worktree_dir, session_dirs):
    path = worktree["path"]
    return (
        lies_inside(path, worktree_dir)
        and os.path.realpath(path) != os.path.realpath(worktree_dir)
        and not worktree["locked"]
        and not worktree["detached"]
        and bool(worktree.get("branch"))
        and bool(worktree.get("head"))
        and os.path.isdir(path)
        and not any(lies_inside(session_dir, path) for session_dir in session_dirs)
    )


def base_branch(git, project, env):
    """The branch that work lands on, as a ref git can resolve."""
    named = (env.get("MCP_BASE_BRANCH") or "").strip()
    if named:
        return named
    refs = git.output(project, "for-each-ref", "--format=%(refname) %(symref)",
                      "refs/remotes/origin/HEAD", "refs/heads/") or ""
    heads = set()
    remote_head = None
    for line in refs.splitlines():
        name, _, target = line.partition(" ")
        if name == "refs/remotes/origin/HEAD" and target:
            remote_head = target
        elif name.startswith("refs/heads/"):
            heads.add(name[len("refs/heads/"):])
    if remote_head:
        local = remote_head[len("refs/remotes/origin/"):]
        return local if local in heads else remote_head
    preferred = (git.output(project, "config", "--get", "init.defaultBranch") or "").strip()
    for name in (preferred, "main", "master"):
        if name and name in heads:
            return name
    return None


def merged_branches(git, project, base):
    listing = git.output(project, "for-each-ref", "--merged", base, "--format=%(refname)",
                         "refs/heads/")
    prefix = "refs/heads/"
    return {line[len(prefix):] for line in (listing or "").splitlines() if line.startswith(prefix)}


def holds_nothing_of_its_own(git, worktree):
    """No change, no untracked file and no ignored file: nothing that removal would destroy."""
    result = git.run(worktree["path"], "status", "--porcelain", "--ignored", "-z")
    return result is not None and result[0] == 0 and not result[1].strip(b"\0")


def remove_worktree(git, project, worktree):
    removed = git.run(project, "worktree", "remove", worktree["path"])
    if removed is None or removed[0] != 0:
        return False
    # Only if the branch still points where it did: its commits are all in the base branch.
    git.run(project, "update-ref", "-d", "refs/heads/" + worktree["branch"], worktree["head"])
    return True


def prune(project, env, session_dirs=(), seconds=GIT_SECONDS):
    """Remove merged, clean agent worktrees within `seconds`; the lines to show, or [] when
    nothing was removed."""
    worktree_dir = os.path.join(project, env.get("MCP_WORKTREE_DIR") or DEFAULT_WORKTREE_DIR)
    if not os.path.isdir(worktree_dir):
        return []
    session_dirs = [project] + list(session_dirs)
    git = Git(seconds)
    candidates = [w for w in listed_worktrees(git, project)
                  if is_candidate(w, worktree_dir, session_dirs)]
    base = base_branch(git, project, env) if candidates else None
    if not base:
        return []
    merged = merged_branches(git, project, base)
    base_name = base[len("refs/heads/"):] if base.startswith("refs/heads/") else base
    removed = []
    for worktree in candidates:
        branch = worktree["branch"]
        if branch == base_name or branch not in merged:
            continue
        if holds_nothing_of_its_own(git, worktree) and remove_worktree(git, project, worktree):
            removed.append(os.path.basename(worktree["path"]))
    if not removed:
        return []
    return ["pruned %d merged agent worktree(s): %s" % (len(removed), ", ".join(removed))]


# --- running on its own ---------------------------------------------------------------------

def hook_cwd():
    """The `cwd` the harness reports on stdin, if any: a session may stand in a worktree."""
    try:
        if sys.stdin is None or sys.stdin.isatty() or os.name != "posix":
            return None
        import select
        fd = sys.stdin.fileno()
        data = b""
        deadline = time.monotonic() + STDIN_SECONDS
        while len(data) < 1024 * 1024 and select.select([fd], [], [], max(0, deadline - time.monotonic()))[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            data += chunk
        import json
        value = json.loads(data.decode("utf-8-sig")).get("cwd")
    except Exception:
        return None
    return value if isinstance(value, str) and value else None


def project_dir():
    try:
        path = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    except OSError:
        return None
    return os.path.abspath(path) if os.path.isdir(path) else None


def main():
    project = project_dir()
    if project is None:
        return
    session_dirs = [os.getcwd()] + [d for d in [hook_cwd()] if d]
    lines = prune(project, os.environ, session_dirs)
    if lines:
        try:
            sys.stdout.buffer.write(("\n".join(lines) + "\n").encode("utf-8"))
            sys.stdout.buffer.flush()
        except (OSError, ValueError, AttributeError):
            pass


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # pruning is housekeeping: it must never take the session down
        pass
    sys.exit(0)
