#!/usr/bin/env python3
"""prune-worktrees: removes agent worktrees whose work has already landed, and nothing else.

Why it exists: every agent worktree is a full second checkout. Left behind after their branches
merge, a handful of them once held 1.7 GB inside one repository and broke lint and fetch before
anyone looked. session-start.py loads this file and runs it before each session; it also runs
on its own as `python3 -I -S prune-worktrees.py`.

What it promises, because deleting work is the one failure a hook must never have:
- It considers only worktrees whose path lies inside MCP_WORKTREE_DIR (.claude/worktrees) of
  this repository, compared by path components after resolving links, and nothing at all when
  that folder, named inside the project, resolves outside it (a committed link).
- Git runs with nothing the repository's configuration or the settings' "env" can turn into a
  program: no fsmonitor, pager, hooks (a ref update runs one), filter driver or moved helpers.
- It keeps every worktree that is locked, on a detached HEAD, on the base branch itself, on a
  branch with commits the base branch lacks, that holds changes, untracked files or ignored
  files (git would delete ignored files without a word), files git was told not to look at
  (skip-worktree, assume-unchanged), refs of its own (refs/worktree/*, refs/bisect/*,
  refs/rewritten/*), a merge, cherry-pick, revert, rebase, `git am` or bisect stopped
  half-way, commits that only its reflogs still reach, that a session stands in, that
  a running process has its working directory in (where the platform lists them: Linux), or
  that git saw in use within the last hour (another session or a subagent may be working
  there: a worktree made for one starts clean and already "merged").
- It reads git's list of worktrees NUL-separated, so a path holding a newline cannot make up
  an entry; a git too old for that has each entry confirmed from inside its folder.
- It removes without --force, so git's own refusals stand, then deletes the branch ref only if
  no other worktree has it checked out or is rebasing or bisecting it, and it still points at
  the commit that was checked out: no commit is lost, no checkout left on a branch that is gone. A removal starts only
  with time left and is never cut short within a grace period: a half-done one leaves a
  half-deleted folder behind.
- It never runs `git worktree prune`, which would forget worktrees on unmounted drives too.
- It prints one line, `pruned N merged agent worktree(s): names`, only when it removed
  something, and exits 0 on every path.

Base branch: MCP_BASE_BRANCH, else the remote's HEAD, else init.defaultBranch, else whichever
of main and master exists. Standard library only; Python 3.8 or newer.
"""
import os
import stat
import sys
import time

GIT_SECONDS = 20.0  # for the whole prune when run on its own
STDIN_SECONDS = 2.0
REMOVAL_START_SECONDS = 1.0  # what must be left of the budget to begin removing a worktree
REMOVAL_GRACE_SECONDS = 2.0  # how far a removal may overrun the budget before it is stopped
RECENT_SECONDS = 3600
REFLOG_COMMITS_CHECKED = 500
PROCESS_SCAN_SECONDS = 0.5  # reading every process's working directory; beyond it, keep all
# What git keeps, in a worktree's folder in .git, for an operation stopped half-way.
OPERATIONS_UNDER_WAY = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer",
                        "rebase-merge", "rebase-apply", "BISECT_START")
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
# git with nothing the repository's configuration can turn into a program: no pager, no
# fsmonitor, no hooks (a ref update runs reference-transaction); filter drivers are switched
# off before anything reads files (Git.switch_off_filters).
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "core.hooksPath=" + os.devnull)


class Git:
    """git without optional locks or any program the repository's configuration names, and
    never past one deadline for the whole prune: the session waits for this hook."""

    def __init__(self, seconds):
        self.deadline = time.monotonic() + seconds
        self.filters_off = ()

    def switch_off_filters(self, project):
        """Switch off, for every later command, each filter driver git's configuration names:
        `git status` (run here, and by `git worktree remove` in the worktree) runs a driver's
        program for every changed file it compares, and the repository's own .git/config can
        name any program. An empty program is no program. False when they cannot be listed."""
        listing = self.run(project, "config", "-z", "--get-regexp", r"^filter\.")
        if listing is None or listing[0] not in (0, 1):  # 1: no filter at all
            return False
        drivers = set()
        for entry in listing[1].split(b"\0"):
            key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
            if key.count(".") >= 2:
                drivers.add(key[len("filter."):key.rindex(".")])
        for driver in sorted(drivers):
            for name, value in (("clean", ""), ("smudge", ""), ("process", ""),
                                ("required", "false")):
                self.filters_off += ("-c", "filter.%s.%s=%s" % (driver, name, value))
        return True

    def run(self, cwd, *args):
        """(exit code, stdout), or None when git cannot run or the time is up."""
        if time.monotonic() >= self.deadline:
            return None
        return self.run_until(self.deadline, cwd, args)

    def run_to_completion(self, cwd, *args):
        """For a command that must not be cut short: started only with time to spare, and
        given a grace period past the deadline."""
        if self.deadline - time.monotonic() < REMOVAL_START_SECONDS:
            return None
        return self.run_until(self.deadline + REMOVAL_GRACE_SECONDS, cwd, args)

    def run_until(self, deadline, cwd, args):
        argv = GIT + self.filters_off + ("-C", cwd) + args
        try:
            if hasattr(os, "posix_spawnp"):
                return run_with_posix_spawn(argv, deadline)
            return run_with_subprocess(argv, deadline)
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
        pid = os.posix_spawnp(argv[0], list(argv), git_environment(), file_actions=actions)
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


# Variables no git of the pruner sees: those that would point it at another repository than the
# folder given with -C, and GIT_EXEC_PATH, through which a settings "env" would make `git
# worktree remove` run its `git status` from a folder of the repository's choosing.
GIT_ELSEWHERE = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                 "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
                 "GIT_PREFIX", "GIT_EXEC_PATH")


def git_environment():
    """This process's environment without GIT_ELSEWHERE."""
    if not any(name in os.environ for name in GIT_ELSEWHERE):
        return os.environ
    return {key: value for key, value in os.environ.items() if key not in GIT_ELSEWHERE}


def run_with_subprocess(argv, deadline):
    import subprocess
    try:
        done = subprocess.run(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=max(0.1, deadline - time.monotonic()),
                              env=git_environment(),
                              creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
    except (OSError, subprocess.SubprocessError):
        return None
    return done.returncode, done.stdout


def listed_worktrees(git, project):
    """Every worktree git knows, one dict each, and whether the listing is exact.
    `--porcelain -z` (git 2.36 and later) ends each field with NUL, so a path holding a newline
    stays one path. Older gits reject -z and print paths raw, one field a line: a newline in a
    path can then make up a whole entry, so that listing is used only with each candidate
    confirmed from inside its own folder (see is_what_git_listed)."""
    fields = git.run(project, "worktree", "list", "--porcelain", "-z")
    if fields is None:
        return [], True
    if fields[0] == 0:
        return parsed_listing(fields[1].decode("utf-8", "surrogateescape"), "\0"), True
    lines = git.output(project, "worktree", "list", "--porcelain")
    return parsed_listing(lines or "", "\n"), False


def parsed_listing(listing, separator):
    """The porcelain format: one attribute per field, an empty field after each worktree."""
    worktrees = []
    current = None
    for field in listing.split(separator):
        if field.startswith("worktree "):
            current = {"path": field[len("worktree "):], "locked": False, "detached": False}
            worktrees.append(current)
        elif current is None:
            continue
        elif field.startswith("HEAD "):
            current["head"] = field[len("HEAD "):]
        elif field.startswith("branch refs/heads/"):
            current["branch"] = field[len("branch refs/heads/"):]
        elif field == "detached":
            current["detached"] = True
        elif field == "locked" or field.startswith("locked "):
            current["locked"] = True
    return worktrees


def is_what_git_listed(git, worktree):
    """Whether the worktree's own folder agrees with its entry: it is the top of a checkout
    whose HEAD is the listed commit on the listed branch. An entry made up by a newline in
    another path names a folder whose checkout says otherwise, or no checkout at all."""
    answer = git.output(worktree["path"], "rev-parse", "--show-prefix", "HEAD",
                        "--symbolic-full-name", "HEAD")
    return answer == "\n%s\nrefs/heads/%s\n" % (worktree["head"], worktree["branch"])


def lies_inside(path, folder):
    """Whether path is folder or below it, compared by components after resolving links."""
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    if os.name == "nt":
        path, folder = os.path.normcase(path), os.path.normcase(folder)
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives
        return False


def leads_out_of(project, folder):
    """Whether a folder named inside the project resolves outside it: a link committed in
    place of .claude/worktrees would make the user's own worktrees beside the checkout look
    like agent worktrees. A folder the user named outside the project is the user's choice."""
    named = os.path.normpath(os.path.abspath(folder))
    top = os.path.abspath(project)
    named_inside = named == top or named.startswith(top.rstrip(os.sep) + os.sep)
    return named_inside and not lies_inside(folder, project)


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


def holds_nothing_of_its_own(git, worktree, base):
    """Nothing that removal would destroy: no operation under way, no change, no untracked or
    ignored file, no file git was told not to look at, no ref of its own, and no commit that
    only the worktree's reflogs reach."""
    path = worktree["path"]
    if has_an_operation_under_way(path):
        return False
    # --untracked-files=normal overrides a status.showUntrackedFiles=no that would hide them.
    # One entry is enough to keep the worktree: an untracked or ignored folder (node_modules)
    # is named once, not walked file by file, which took seconds and the whole budget.
    status = git.run(path, "status", "--porcelain", "--ignored=matching",
                     "--untracked-files=normal", "-z")
    if status is None or status[0] != 0 or status[1].strip(b"\0"):
        return False
    return not (has_hidden_files(git, path) or has_refs_of_its_own(git, path)
                or has_commits_only_reflogs_reach(git, worktree, base))


def has_an_operation_under_way(path):
    """A merge, cherry-pick, revert, rebase, `git am` or bisect stopped half-way keeps what is
    left to do (the patches still to apply, the commits still to pick, the message so far) in
    the worktree's folder in .git. Its files and HEAD can look untouched meanwhile: a patch
    that failed to apply changes nothing. Removal would take that state with it."""
    admin = admin_folder(path)
    return admin is None or any(os.path.lexists(os.path.join(admin, name))
                                for name in OPERATIONS_UNDER_WAY)


def has_refs_of_its_own(git, path):
    """Refs kept per worktree (refs/worktree/*, and refs/bisect/* and refs/rewritten/* of a
    bisect or rebase under way) live in the worktree's folder in .git and go with it: a commit
    only they reach would be lost to the next gc. Someone made each one on purpose: keep it."""
    listing = git.output(path, "for-each-ref", "--count=1", "--format=%(refname)",
                         "refs/worktree/", "refs/bisect/", "refs/rewritten/")
    return listing is None or bool(listing.strip())


def has_hidden_files(git, path):
    """Files marked assume-unchanged (a lower-case tag), or skip-worktree (S) and present on
    disk: status does not report their edits, and removal would delete them. A sparse
    checkout marks every file it leaves out skip-worktree; those are not there to lose."""
    listing = git.output(path, "ls-files", "-v", "-z")
    if listing is None:
        return True
    for entry in listing.split("\0"):
        tag, name = entry[:1], entry[2:]
        if tag.islower() or (tag == "S" and os.path.lexists(os.path.join(path, name))):
            return True
    return False


def has_commits_only_reflogs_reach(git, worktree, base):
    """A commit reset away in the worktree lives on in its HEAD and branch reflogs, which
    removal deletes; keep the worktree while any such commit is missing from the base branch."""
    listing = git.output(worktree["path"], "log", "-g", "--format=%H", "HEAD",
                         "refs/heads/" + worktree["branch"])
    if listing is None:
        return True
    commits = sorted(set(listing.split()))
    if not commits:
        return False
    if len(commits) > REFLOG_COMMITS_CHECKED:
        return True  # too many to name on a command line: keep it rather than guess
    missing = git.output(worktree["path"], "rev-list", "--max-count=1", *commits, "--not", base)
    return missing is None or bool(missing.strip())


def was_used_lately(worktree, now):
    """Whether git recorded activity in the worktree within the hour: its folder in the main
    repository's .git made or touched, its HEAD moved or its index written."""
    admin = admin_folder(worktree["path"])
    if admin is None:
        return True  # cannot tell: keep it
    for name in ("", "HEAD", "index", os.path.join("logs", "HEAD")):
        try:
            if now - os.stat(os.path.join(admin, name)).st_mtime < RECENT_SECONDS:
                return True
        except (OSError, ValueError):
            continue
    return False


def folders_processes_stand_in(paths, deadline):
    """Those of `paths` that a running process has its working directory in: a session, a
    shell or a server started there, however long git has not seen it write. Where the
    platform lists no working directories (macOS, Windows) none is known to be occupied and
    the hour of use is the only sign; where the list cannot be read in time, all are."""
    if not paths:
        return set()
    directories = working_directories_of_processes(deadline)
    if directories is None:
        return set(paths)
    resolved = {os.path.realpath(path): path for path in paths}
    occupied = set()
    for where in directories:
        folder = folder_holding(where, resolved)
        if folder is not None:
            occupied.add(resolved[folder])
    return occupied


def folder_holding(where, folders):
    """The one of `folders` that is `where` or a folder above it, or None: one lookup per
    level, however many folders there are."""
    while where not in folders:
        parent = os.path.dirname(where)
        if parent == where:
            return None
        where = parent
    return where


def working_directories_of_processes(deadline):
    """The working directory of every process this user may see, as Linux lists them: the
    link /proc/<pid>/cwd, which the kernel keeps resolved, so one readlink per process.
    [] where the platform has no such list; None when it could not be read to its end within
    PROCESS_SCAN_SECONDS (cannot tell)."""
    try:
        os.readlink("/proc/self/cwd")
    except (OSError, AttributeError, NotImplementedError):
        return []
    deadline = min(deadline, time.monotonic() + PROCESS_SCAN_SECONDS)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    directories = []
    for count, entry in enumerate(entries):
        if count % 256 == 0 and time.monotonic() >= deadline:
            return None
        if entry.isdigit():
            try:
                directories.append(os.readlink("/proc/" + entry + "/cwd"))
            except OSError:  # ended since the listing, or another user's
                continue
    return directories


def admin_folder(path):
    """The worktree's own folder in the main repository's .git, as its `.git` file names it."""
    first = first_line(os.path.join(path, ".git"))
    if first is None or not first.startswith("gitdir:"):
        return None
    return os.path.join(path, first[len("gitdir:"):].strip())


def first_line(path):
    """The first line of a small regular file, stripped; None when there is no such file (a
    FIFO would never answer)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as stream:
            return stream.read(4096).decode("utf-8", "surrogateescape").split("\n")[0].strip()
    except (OSError, ValueError):
        return None


def branches_under_way(git, project):
    """The branches a rebase or a bisect in any worktree returns to when it ends. Both detach
    HEAD while they run, so the worktree list names no branch there, yet git counts that branch
    as checked out: deleting it would leave the rebase nothing to finish on. None when the
    repository's .git cannot be found (cannot tell)."""
    common = git.output(project, "rev-parse", "--git-common-dir")
    if not common or not common.strip():
        return None
    common = os.path.join(project, common.rstrip("\n"))
    folders = [common]
    try:
        folders += [os.path.join(common, "worktrees", name)
                    for name in os.listdir(os.path.join(common, "worktrees"))]
    except OSError:
        pass  # no linked worktree
    branches = []
    for folder in folders:
        for name in (os.path.join("rebase-merge", "head-name"),
                     os.path.join("rebase-apply", "head-name")):
            line = first_line(os.path.join(folder, name)) or ""
            if line.startswith("refs/heads/"):
                branches.append(line[len("refs/heads/"):])
        bisected = first_line(os.path.join(folder, "BISECT_START"))  # a branch's short name
        if bisected:
            branches.append(bisected)
    return branches


def remove_worktree(git, project, worktree, branch_is_shared):
    removed = git.run_to_completion(project, "worktree", "remove", worktree["path"])
    if removed is None or removed[0] != 0:
        return False
    if branch_is_shared:
        return True  # another worktree has it checked out (`worktree add -f`): it stays
    # Only if the branch still points where it did: its commits are all in the base branch.
    git.run_to_completion(project, "update-ref", "-d", "refs/heads/" + worktree["branch"],
                          worktree["head"])
    return True


def prune(project, env, session_dirs=(), seconds=GIT_SECONDS):
    """Remove merged, clean agent worktrees within `seconds`; the lines to show, or [] when
    nothing was removed."""
    worktree_dir = os.path.join(project, env.get("MCP_WORKTREE_DIR") or DEFAULT_WORKTREE_DIR)
    if not os.path.isdir(worktree_dir) or leads_out_of(project, worktree_dir):
        return []
    session_dirs = [project] + list(session_dirs)
    git = Git(seconds)
    worktrees, exact = listed_worktrees(git, project)
    candidates = [w for w in worktrees if is_candidate(w, worktree_dir, session_dirs)]
    base = base_branch(git, project, env) if candidates else None
    if not base:
        return []
    merged = merged_branches(git, project, base)
    base_name = base[len("refs/heads/"):] if base.startswith("refs/heads/") else base
    now = time.time()
    unused = [w for w in candidates if w["branch"] != base_name and w["branch"] in merged
              and not was_used_lately(w, now)]
    if not unused:
        return []
    if not git.switch_off_filters(project):
        return []
    occupied = folders_processes_stand_in([w["path"] for w in unused], git.deadline)
    under_way = branches_under_way(git, project)
    checked_out = [w.get("branch") for w in worktrees] + (under_way or [])
    removed = []
    for worktree in unused:
        if worktree["path"] in occupied or not (exact or is_what_git_listed(git, worktree)):
            continue
        shared = under_way is None or checked_out.count(worktree["branch"]) > 1
        if holds_nothing_of_its_own(git, worktree, base) \
                and remove_worktree(git, project, worktree, shared):
            checked_out.remove(worktree["branch"])
            removed.append(shown_name(os.path.basename(worktree["path"])))
    if not removed:
        return []
    return ["pruned %d merged agent worktree(s): %s" % (len(removed), ", ".join(removed))]


def shown_name(name):
    """A folder name fit for one line of text: bytes that are not UTF-8 and control characters
    (a newline, an escape sequence) each become `?`."""
    return "".join("?" if ord(c) < 32 or 127 <= ord(c) < 160 or 0xD800 <= ord(c) < 0xE000 else c
                   for c in name)


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


def keep_the_hook_folder_off_the_import_path():
    """Run without -I (`python3 .claude/hooks/prune-worktrees.py`, as a user or a command
    may), Python puts the hook's folder first on the import path, and a module a repository
    commits beside the hooks (`_json.py`, `select.py`) would be imported in place of the
    standard library's: every module imported from here on comes from the standard library."""
    if sys.flags.isolated:  # -I, as the harness runs the hooks: the folder is not there
        return
    here = os.path.dirname(os.path.realpath(__file__))
    sys.path[:] = [entry for entry in sys.path if os.path.realpath(entry or os.curdir) != here]


if __name__ == "__main__":
    try:
        keep_the_hook_folder_off_the_import_path()
        main()
    except BaseException:  # pruning is housekeeping: it must never take the session down
        pass
    sys.exit(0)
