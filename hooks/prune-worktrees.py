#!/usr/bin/env python3
"""prune-worktrees: the hooks' git. It runs git with nothing a repository can turn into a
program, reads the state the Stop guard compares, keeps the guard's account, says what git shows
of the memory (the marks), and removes agent worktrees whose work has landed.

Why it exists: every question the hooks ask git lives here once, so a rule about git (a switch,
a deadline, a driver off) is kept in one place. The entries load it and hand it context-budget.py
(uses); names in __all__. It is not run on its own.

What it promises (spec §4.5.7, §7.5-§7.8): git runs with GIT_SWITCHES, no GIT_ variable, every
filter driver off, at most AT_ONCE at a time, never past the deadline. The state is HEAD and the
status, each path signed, nested repositories as parts: one line. The guard blocks once on work
not saved; what it could not read is never a change, never silently none; it writes only its
baseline in .claude/, atomically, never through a link. The marks are facts git and the files
show, kept with the state they depend on. Pruning removes only merged, clean, unused agent
worktrees, without --force.
Standard library only; Python 3.8 or newer.
"""
import os
import stat
import sys
import time

__all__ = ("uses", "Guard", "guard_the_stop", "prune", "memory_marks", "GIT_SWITCHES",
           "READS_SECONDS")

GIT_SWITCHES = ("--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
                "-c", "core.hooksPath=" + os.devnull, "-c", "log.showSignature=false")
READS_SECONDS = 10.0  # from the hook's start, every git read has ended (§7.8)
FILTER_SECONDS = 2.0  # listing the filter drivers, at most
AT_ONCE = 16  # git processes at a time, each a pipe (open files may be 256)
SUBMODULE_FOLDERS = 1000  # looked through for submodules; past it, git is not run
TIMED_OUT = "timed out"  # a command stopped at its deadline
NESTED_REPOSITORIES = 16
NESTED_DEPTH = 3
UNTRACKED_SIGNED = 10000
REFLOG_ENTRIES = 100  # HEAD's moves read to date the handoff's HEAD
STATE_FORMAT = b"v3"
STATE_MARK = b"head "  # how every state, and so every baseline, begins
TOP, MORE = b"top", b"more"  # the top's part, the one for those past the limit
UNDATED = 1 << 80  # the time of what cannot be dated: after every handoff
BASELINE_RETENTION_SECONDS = 7 * 86400
LET_STOP, BLOCK = 0, 2
NOTICE_MARK = "The Stop guard cannot record its baseline"
UNREAD_MARK = "The Stop guard could not read"
BLOCK_MARK = "[memory-context-protocol] This session changed the repository"
TRANSCRIPT_TAIL = 1024 * 1024  # where Gemini's last user turn is
REMOVAL_START_SECONDS = 1.0  # left of the budget to begin a removal
REMOVAL_GRACE_SECONDS = 2.0  # how far a removal may overrun it
RECENT_SECONDS = 3600
REFLOG_COMMITS_CHECKED = 500
PROCESS_SCAN_SECONDS = 0.5  # reading processes' folders; beyond it, keep all
OPERATIONS_UNDER_WAY = ("MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer",
                        "rebase-merge", "rebase-apply", "BISECT_START")


# context-budget.py, handed over by the loading hook (uses).
shared = None


def uses(library):
    global shared
    shared = library


# --- git, with nothing a repository can turn into a program ---

class Git:
    """git for one hook run: each command by `deadline`, GIT_SWITCHES, filter drivers off."""

    def __init__(self, deadline):
        self.deadline = deadline
        self.switched = {}  # folder: filters_off()

    def argv(self, folder, *args, also=()):
        """The command in `folder`, or None or TIMED_OUT for its result; `also`: configs read."""
        off = ()
        for where in (folder,) + tuple(also):
            switches = self.filters_off(where)
            if switches is None or switches == TIMED_OUT:
                return switches
            off += switches
        return ("git",) + GIT_SWITCHES + off + ("-C", folder) + args

    def run(self, commands, deadline=None):
        """Each command's (exit code, stdout), see finish; at most AT_ONCE at a time."""
        deadline = self.deadline if deadline is None else deadline
        results = []
        for first in range(0, len(commands), AT_ONCE):
            results += finish(start(commands[first:first + AT_ONCE]), deadline)
        return results

    def output(self, folder, *args):
        """Standard output of a command that succeeded, as text; else None."""
        result = self.run([self.argv(folder, *args)])[0]
        if result is None or result[0] != 0:
            return None
        return result[1].decode("utf-8", "surrogateescape")

    def filters_off(self, folder):
        """`-c` options emptying each filter driver `folder`'s config names (status runs them)."""
        if folder not in self.switched:
            self.switched[folder] = self.listed_filters_off(folder) \
                if may_name_filters(folder) else ()
        return self.switched[folder]

    def listed_filters_off(self, folder):
        deadline = min(self.deadline, time.monotonic() + FILTER_SECONDS)
        if deadline <= time.monotonic():
            return TIMED_OUT
        git_dirs = submodule_git_dirs(folder)
        if git_dirs is None:
            return None
        listing = ("config", "-z", "--get-regexp", r"^filter\.")
        listings = self.run([("git",) + GIT_SWITCHES + ("-C", folder) + listing]
                            + [("git",) + GIT_SWITCHES + ("--git-dir", git_dir) + listing
                               for git_dir in git_dirs], deadline)
        if any(listing is not None and listing[0] == TIMED_OUT for listing in listings):
            return TIMED_OUT
        if any(listing is None or listing[0] not in (0, 1) for listing in listings):
            return None  # 1: no filter at all
        return switches_for(driver_names(listings))


def driver_names(listings):
    drivers = set()
    for listing in listings:
        for entry in listing[1].split(b"\0"):
            key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
            if key.count(".") >= 2:
                drivers.add(key[len("filter."):key.rindex(".")])
    return sorted(drivers)


def switches_for(drivers):
    options = ()
    for driver in drivers:
        for name, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            options += ("-c", "filter.%s.%s=%s" % (driver, name, value))
    return options


def may_name_filters(folder):
    """Whether a config git reads in `folder` could name a filter driver."""
    marker = os.path.join(shared.work_tree_top(folder), ".git")
    if not os.path.isdir(marker) or os.path.isdir(os.path.join(marker, "modules")):
        return True
    lowered = (shared.read_plain_file(os.path.join(marker, "config")) or b"").lower()
    return any(word in lowered for word in (b"filter", b"include", b"worktreeconfig"))


def submodule_git_dirs(folder):
    """The submodules' git folders; None past SUBMODULE_FOLDERS folders."""
    git_dir = git_dir_of(shared.work_tree_top(folder))
    found, pending, looked = [], [os.path.join(git_dir, "modules")] if git_dir else [], 0
    while pending:
        looked += 1
        if looked > SUBMODULE_FOLDERS:
            return None
        try:
            entries = [entry.path for entry in os.scandir(pending.pop())
                       if entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for path in entries:
            if os.path.isfile(os.path.join(path, "HEAD")):  # a submodule's git folder
                found.append(path)
                pending.append(os.path.join(path, "modules"))
            else:  # a part of a submodule's name that holds a slash
                pending.append(path)
    return found


def git_dir_of(top):
    marker = os.path.join(top, ".git")
    return marker if os.path.isdir(marker) else admin_folder(top)


def git_environment():
    """This environment without GIT_ variables (config, repository, helpers)."""
    return {key: value for key, value in os.environ.items() if not key.upper().startswith("GIT_")}


def start(commands):
    """Start the commands at once (finish collects them): session start works while git does."""
    try:
        if hasattr(os, "posix_spawnp"):
            environment = git_environment()
            return [spawn_with_pipe(argv, environment) for argv in commands]
    except Exception:
        return [None] * len(commands)
    return list(commands)


def spawn_with_pipe(argv, environment):
    """posix_spawn, cheaper than subprocess, its pipe drained from the start (git never waits on
    it); None and TIMED_OUT pass through."""
    if argv is None or argv == TIMED_OUT:
        return argv
    try:
        read_end, write_end = os.pipe()
    except OSError:  # out of file descriptors: this command goes
        return None
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write_end, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        pid = os.posix_spawnp(argv[0], list(argv), environment, file_actions=actions)
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)
    try:
        return pid, shared.Drain(read_end, float("inf"), closes=True)
    except Exception:  # no thread to read it: this command goes
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        os.close(read_end)
        return None


def finish(started, deadline):
    """Each command's (exit code, stdout); TIMED_OUT when stopped at `deadline`; None: not run."""
    try:
        if hasattr(os, "posix_spawnp"):
            return collect_spawned(started, deadline)
        return run_with_subprocess(started, deadline)
    except Exception:
        return [None] * len(started)


def collect_spawned(started, deadline):
    """Each command's result; one still writing at `deadline` is stopped."""
    results = []
    for job in started:
        if not isinstance(job, tuple):
            results.append((TIMED_OUT, b"") if job == TIMED_OUT else None)
            continue
        pid, drain = job
        ended = drain.wait(deadline)
        if not ended:
            os.kill(pid, 9)  # SIGKILL, without importing the signal module
        status = os.waitpid(pid, 0)[1]
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        results.append((code if ended else TIMED_OUT, drain.data()))
    return results


def run_with_subprocess(commands, deadline):
    import subprocess
    results = []
    for argv in commands:
        if argv is None or argv == TIMED_OUT:
            results.append((TIMED_OUT, b"") if argv else None)
            continue
        try:
            done = subprocess.run(
                list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, timeout=max(0.1, deadline - time.monotonic()),
                env=git_environment(), creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
            results.append((done.returncode, done.stdout))
        except subprocess.TimeoutExpired:
            results.append((TIMED_OUT, b""))
        except (OSError, TypeError, subprocess.SubprocessError):
            results.append(None)
    return results


# --- the state of the repository (§7.5) ---

class Facts:
    """One repository's reads: the status `listing`, HEAD, the reflogs' `moves` and `stashes`."""

    def __init__(self, listing, moves=(), stashes=()):
        self.listing, self.moves, self.stashes = listing, moves, stashes
        first = (listing or b"").split(b"\0", 1)[0]
        self.head = first[13:].decode("ascii", "replace").replace("(initial)", "") \
            if first.startswith(b"# branch.oid ") else None


def repository_reads(git, folder, dating=False):
    """Status with HEAD, all untracked, submodules, stashes; to date, HEAD's and stash reflogs."""
    reads = [git.argv(folder, "-c", "status.submoduleSummary=false", "status", "--porcelain=v2",
                      "-z", "--branch", "--no-ahead-behind", "--untracked-files=all",
                      "--ignore-submodules=none", "--show-stash")]
    if dating:
        reads += [git.argv(folder, "log", "-g", "-n", str(REFLOG_ENTRIES), "--date=unix",
                           "--format=%H %gd", ref) for ref in ("HEAD", "refs/stash")]
    return reads


def repository_facts(results):
    """Facts from the finished reads; None when git could not run or for no repository."""
    status = results[0]
    if status is None or status[0] not in (0, TIMED_OUT):
        return None
    if status[0] == TIMED_OUT:
        return Facts(None)
    return Facts(status[1], *(reflog_moves(result) for result in results[1:]))


def reflog_moves(result):
    """(commit, second) per reflog line; [] when the read failed."""
    if not result or result[0] != 0:
        return []
    moves = []
    for line in result[1].decode("ascii", "replace").splitlines():
        commit, _, selector = line.partition(" ")
        second = selector[selector.find("@{") + 2:-1]
        moves.append((commit, int(second) if second.isdigit() else UNDATED))
    return moves


def parse_status(raw):
    """`status --porcelain=v2 -z`: (headers, [(code, path, original)], untracked), top-relative."""
    if PARSED and PARSED[0] is raw:  # the baseline's and the marks' one reading
        return PARSED[1]
    headers, changed, untracked = [], [], []
    fields = iter(raw.split(b"\0"))
    for field in fields:
        kind = field[:2]
        if kind == b"? ":  # first: there may be a million of them
            untracked.append(field[2:])
        elif kind == b"# ":
            headers.append(field)
        elif kind in (b"1 ", b"2 ", b"u "):
            # The path ends 9, 10 or 11 fields; a rename's original is the next.
            parts = field.split(b" ", {b"1 ": 8, b"2 ": 9, b"u ": 10}[kind])
            original = next(fields, None) if kind == b"2 " else None
            if len(parts) > 8:
                code = parts[1].decode("ascii", "replace").replace(".", " ")
                if parts[2].startswith(b"S"):
                    code += " " + parts[2].decode("ascii", "replace")
                changed.append((code, parts[-1], original))
    PARSED[:] = [raw, (headers, changed, untracked)]
    return headers, changed, untracked


PARSED = []


def change_time(info):
    """The later of mtime (a copy may set any) and ctime (only a change sets it), in ns."""
    return max(info.st_mtime_ns, info.st_ctime_ns)


class Signer:
    """What tells an edit apart (size and mtime, a folder's time), from one handle on the top;
    dating, the latest change time of each path and its folders."""

    def __init__(self, top, dating):
        self.top, self.dating, self.folders_dated, self.changed_ns, self.fd = \
            top, dating, set(), 0, None
        if os.stat in getattr(os, "supports_dir_fd", ()):
            try:
                self.fd = os.open(top, os.O_RDONLY)
            except OSError:
                pass

    def close(self):
        if self.fd is not None:
            os.close(self.fd)

    def lstat(self, path):
        if self.fd is not None:
            return os.lstat(path or b".", dir_fd=self.fd)
        return os.lstat(os.path.join(self.top, os.fsdecode(path)))

    def signature(self, path):
        """b"size:mtime", b"-" for a path gone, None for a nested repository."""
        try:
            info = self.lstat(path.rstrip(b"/"))
        except (OSError, ValueError):
            info = None
        if self.dating:
            self.changed_ns = max(self.changed_ns, change_time(info) if info else 0)
            self.date_folders(path.rstrip(b"/"))
        if info is None:
            return b"-"
        if stat.S_ISDIR(info.st_mode):
            return None if self.is_repository(path) else b"folder"
        return b"%d:%d" % (info.st_size, info.st_mtime_ns)

    def is_repository(self, path):
        try:
            self.lstat(path.rstrip(b"/") + b"/.git")
            return True
        except (OSError, ValueError):
            return False

    def folder_time(self, folder):
        try:
            seen = self.lstat(folder).st_mtime_ns
        except (OSError, ValueError):
            return b"-"
        if self.dating:
            self.date_folders(folder + b"/")
        return b"%d" % seen

    def date_folders(self, path):
        """The change times of the folders holding `path`, up to the top; a gone one skipped."""
        folder = path
        while folder:
            folder = folder.rpartition(b"/")[0]
            if folder in self.folders_dated:
                return
            self.folders_dated.add(folder)
            try:
                self.changed_ns = max(self.changed_ns, change_time(self.lstat(folder)))
            except (OSError, ValueError):
                pass


class Part:
    """One repository's share of a reading; `digest` None when unread or past the limits."""

    def __init__(self, key, path, digest, count=0, changed_ns=0):
        self.key, self.path, self.digest, self.count = key, path, digest, count
        self.changed_ns = changed_ns


class Reading:
    """The repository at one moment (§7.5): HEAD, moves, parts, status; recorded(): a line."""

    def __init__(self, head, parts, moves=(), listing=None):
        self.head, self.parts, self.moves = head, parts, moves
        self.listing = listing  # git's status listing, as read

    def digests(self):
        return {part.key: part.digest for part in self.parts}

    def recorded(self):
        top = self.parts[0]
        line = b"head %s\0%s %s %s" % (
            b"?" if self.head is None else self.head.encode("ascii", "replace"), STATE_FORMAT,
            b"?" if top.digest is None else b"%d" % top.count, top.digest or b"?")
        for part in self.parts[1:]:
            line += b" %s=%s" % (part.key, part.digest or b"?")
        return line + b"\n"


def parse_baseline(data):
    """The Reading a baseline recorded, or None (none, or another release's)."""
    if not data:
        return None
    head, _, rest = data.rstrip(b"\n").partition(b"\0")
    fields = rest.split(b" ")
    if not head.startswith(STATE_MARK) or len(fields) < 3 or fields[0] != STATE_FORMAT:
        return None
    head = head[5:].decode("ascii", "replace")
    count, digest = fields[1], fields[2]
    parts = [Part(TOP, b"", None if digest == b"?" else digest,
                  int(count) if count.isdigit() else 0)]
    for field in fields[3:]:
        key, _, nested = field.partition(b"=")
        parts.append(Part(key, None, None if nested == b"?" else nested))
    return Reading(None if head == "?" else head, parts)


def part_key(path):
    """A nested repository's name in a baseline: its path's digest."""
    digest = shared.new_digest()
    digest.update(path)
    return digest.hexdigest()[:16].encode("ascii")


def add_part(parts, key, path, folder, facts, dating, own_files=()):
    """Append the signed part `facts` give of the repository at `folder`; its nested ones."""
    if facts is None or facts.listing is None:
        parts.append(Part(key, path, None))
        return []
    headers, changed, untracked = parse_status(facts.listing)
    if own_files:
        # A file moved into the memory is gone from where it was: that is work.
        changed = [entry for entry in changed if not entry[1].startswith(own_files)
                   or entry[2] is not None and not entry[2].startswith(own_files)]
        untracked = [listed for listed in untracked if not listed.startswith(own_files)]
    digest = shared.new_digest()
    if key != TOP:  # the top's HEAD is judged on its own (§7.6)
        digest.update((facts.head or "").encode("ascii", "replace"))
    digest.update(b"\0".join(h for h in headers if not h.startswith(b"# branch.")) + b"\0\0")
    signer = Signer(folder, dating)
    nested = []
    try:
        for code, listed, original in changed:
            digest.update(b"%s %s\0%s\0%s\0" % (code.encode("ascii", "replace"), listed,
                                                  original or b"-", signed(signer, listed, nested)))
        sign_untracked(digest, signer, untracked, nested)
    finally:
        signer.close()
    changed_ns = signer.changed_ns
    if dating:  # the top's HEAD is dated on its own, by where it stood (§7.6)
        changed_ns = max(changed_ns, last_move_ns(facts.stashes),
                         0 if key == TOP else last_move_ns(facts.moves, facts.head))
    parts.append(Part(key, path, digest.hexdigest().encode("ascii"),
                      len(changed) + len(untracked), changed_ns))
    return nested


def last_move_ns(moves, head=None):
    """The newest reflog move's last ns; 0 without; after every handoff when not at `head`."""
    if head is not None and (not moves or moves[0][0] != head):
        return UNDATED
    return moves[0][1] * 10 ** 9 + 10 ** 9 - 1 if moves else 0


def signed(signer, path, nested):
    signature = signer.signature(path)
    if signature is None:
        nested.append(path.rstrip(b"/"))
        return b"nested"
    return signature


def sign_untracked(digest, signer, untracked, nested):
    """Untracked files signed one by one up to UNTRACKED_SIGNED, past it by folder times."""
    digest.update(b"\0\0")
    if len(untracked) <= UNTRACKED_SIGNED:
        for path in untracked:
            digest.update(b"%s\0%s\0" % (path, signed(signer, path, nested)))
        return
    digest.update(b"\0".join(untracked) + b"\0\0")
    for folder in sorted({path.rpartition(b"/")[0] for path in untracked}):
        digest.update(b"%s\0%s\0" % (folder, signer.folder_time(folder)))
    for path in untracked:
        if path.endswith(b"/"):
            digest.update(b"%s\0%s\0" % (path, signed(signer, path, nested)))


# --- the guard's view of one project ---

class Guard:
    """What the Stop guard knows of one project in one hook run."""

    def __init__(self, project, started):
        self.project = project
        self.env = os.environ
        self.git = Git(started + READS_SECONDS)
        self.top = shared.work_tree_top(project)

    def start_reads(self, dating=False):
        return start(repository_reads(self.git, self.project, dating))

    def reading(self, dating=False, reads=None):
        """The state now, None outside git; what misses the deadline is unread, never a change."""
        if reads is None:
            reads = self.start_reads(dating)
        own = self.saving_prefixes()  # while git works
        facts = repository_facts(finish(reads, self.git.deadline))
        if facts is None:
            return None
        parts = []
        nested = add_part(parts, TOP, b"", self.top, facts, dating, own)
        self.read_nested(nested, dating, 1, parts)
        return Reading(facts.head, parts, facts.moves, facts.listing)

    def current(self, reads):
        """The reading of the reads session start began, finished once for all."""
        if not hasattr(self, "now"):
            self.now = self.reading(reads=reads)
        return self.now

    def read_nested(self, paths, dating, depth, parts):
        """A part per nested repository, within the deadline and the limits."""
        for path in paths:
            if len(parts) > NESTED_REPOSITORIES:
                if parts[-1].key != MORE:
                    parts.append(Part(MORE, None, None))
                return
            folder = os.path.join(self.top, os.fsdecode(path))
            live = time.monotonic() < self.git.deadline and depth <= NESTED_DEPTH
            facts = repository_facts(self.git.run(repository_reads(self.git, folder, dating))) \
                if live else None
            inner = add_part(parts, part_key(path), path, folder, facts, dating)
            self.read_nested([path + b"/" + name for name in inner], dating, depth + 1, parts)

    def memory_path(self):
        """(path, is a folder): the memory folder, or the index if its folder holds the project."""
        real_project = os.path.realpath(self.project)
        index = os.path.realpath(shared.index_path(real_project, self.env))
        folder = os.path.dirname(index)
        return (index, False) if shared.lies_within(real_project, folder) else (folder, True)

    def saving_prefixes(self):
        """The top-relative status paths saving writes (a folder ends with "/")."""
        real_project = os.path.realpath(self.project)
        own = [(path, False) for path in shared.state_paths(real_project, self.env) + [
            shared.baseline_path(real_project, self.env, None),
            os.path.join(os.path.dirname(os.path.realpath(__file__)), "__pycache__")]]
        own.append(self.memory_path())
        prefixes = []
        for path, is_folder in own:
            try:
                relative = os.path.relpath(path, self.top).replace(os.sep, "/")
            except ValueError:  # another drive on Windows: not in this work tree
                continue
            if relative != os.pardir and not relative.startswith(os.pardir + "/"):
                prefixes.append(os.fsencode(relative + ("/" if is_folder else "")))
        return tuple(prefixes)

    def baseline(self, hook_input):
        session = shared.text_field(hook_input, "session_id")
        return shared.baseline_path(self.project, self.env, session)

    def record_baseline(self, hook_input, reads):
        """Snapshot the repository for this session's Stop hook; forget week-old baselines."""
        reading = self.current(reads)
        if reading is None:
            return
        path = self.baseline(hook_input)
        if write_inside_claude_folder(self.project, path, reading.recorded()):
            transcript = shared.text_field(hook_input, "transcript_path")
            forget_stale_baselines(path, shared.baseline_path(self.project, self.env, None),
                                   os.path.dirname(transcript) if transcript else None)

    def commits_are_saving(self, old_head, new_head):
        """Whether HEAD moved by commits touching only the memory; None when out of time."""
        if time.monotonic() >= self.git.deadline:
            return None
        try:
            relative = os.path.relpath(self.memory_path()[0], os.path.realpath(self.project))
        except ValueError:  # another drive on Windows
            return False
        count = self.git.argv(self.project, "rev-list", "--count")
        if not old_head or not new_head or count is None or count == TIMED_OUT:
            return None if count == TIMED_OUT else False
        relative = relative.replace(os.sep, "/")
        added = count + (old_head + ".." + new_head,)
        counts = self.git.run([added, added + ("--", relative),
                               added + ("--", ":/", ":(exclude)" + relative),
                               count + (new_head + ".." + old_head,)])
        if any(result is None or result[0] == TIMED_OUT for result in counts):
            return None
        if not all(result[0] == 0 and result[1].strip().isdigit() for result in counts):
            return False
        every, touching_memory, touching_the_rest, dropped = (int(result[1]) for result in counts)
        return every > 0 and touching_memory == every and touching_the_rest == 0 and dropped == 0


# --- what the memory cannot vouch for (spec §4.5.7) ---
#
# context-budget.py reads the lines; git adds the merge rule and what became of cited paths.

MARKS_SECONDS = 2.0  # git's share of a start whose state changed
MARK_FILE_BYTES = 256 * 1024  # read of a memory file
MARK_FILES = 20000
MARK_CITED = 5000  # distinct cited paths
DELETING_COMMITS = 32  # tree diffs for renames, a round
RENAME_HOPS = 4  # rounds following a renamed path gone in turn


def memory_marks(guard, reads):
    """The marks session start shows; None outside git, late, or with no memory folder."""
    reading = guard.current(reads)
    folder, is_folder = guard.memory_path()
    memory = shared.shown_path(os.path.realpath(guard.project), folder)
    if reading is None or reading.listing is None or not is_folder or \
            not shared.strictly_inside(folder, os.path.realpath(guard.project)):
        return None
    name, state = shared.cache_name("marks", guard.project), marks_state(guard, reading, memory)
    kept = shared.account_cache(name)
    if isinstance(kept, tuple) and len(kept) == 2 and kept[0] == state and \
            isinstance(kept[1], list):
        return kept[1]
    git = Git(min(guard.git.deadline, time.monotonic() + MARKS_SECONDS))
    marks = marks_now(guard, git, memory, reading.head or "")
    if marks is not None:
        shared.account_cache(name, (state, marks))
    return marks


def marks_state(guard, reading, memory):
    """The digest of what the marks depend on: HEAD, the memory folder, status entries that can
    change a memory file (signed), a cited path or the merge rule, the settings."""
    digest = shared.new_digest()
    digest.update(("%s\0%s\0" % (reading.head, memory)).encode("utf-8", "surrogateescape"))
    own = os.fsencode(os.path.relpath(os.path.join(guard.project, memory), guard.top)
                      .replace(os.sep, "/") + "/")
    _, changed, untracked = parse_status(reading.listing)
    digest.update(b"\0".join(untracked))  # in one call: a million untracked files are common
    signer = Signer(guard.top, False)
    try:
        for code, path, original in changed + [("?", p, None) for p in untracked
                                               if p.startswith(own)]:
            mine = path.startswith(own)
            if mine or any(c in code for c in "ADRCU?") or path.endswith(b".gitattributes"):
                digest.update(b"%s %s\0%s\0%s\0" % (code.encode("ascii", "replace"), path,
                                                     original or b"-", mine and
                                                     signer.signature(path) or b""))
    finally:
        signer.close()
    for path, _ in shared.settings_files(guard.project, guard.env):
        try:
            info = os.stat(path)
            digest.update(b"%d:%d\0" % (info.st_size, info.st_mtime_ns))
        except (OSError, ValueError):
            digest.update(b"-\0")
    return digest.hexdigest()


def marks_now(guard, git, memory, head):
    """The marks afresh, reading only what changed since kept; None when git failed."""
    name = shared.cache_name("verdicts", guard.project)
    stored = shared.account_cache(name)
    if not (isinstance(stored, tuple) and len(stored) == 2 and isinstance(stored[0], dict)
            and isinstance(stored[1], dict)):
        stored = ({}, {})
    files = memory_files(guard, memory, stored[0])
    leftovers = leftover_marks(git, guard, memory, files)
    stale, fates = stale_marks(git, guard, memory, files, stored[1], head)
    if leftovers is None or stale is None:
        return None
    if (files, fates) != stored:
        shared.account_cache(name, (files, fates))
    return sorted(leftovers + stale, key=lambda mark: (mark["file"], mark["line"]))


def memory_files(guard, memory, kept):
    """{name: (size, time, leftovers, citations)} of the Markdown files the read rule allows."""
    project, env = guard.project, guard.env
    index = os.path.basename(shared.index_path(project, env))
    files = {}
    for name, path, size, changed in memory_entries(os.path.join(project, *memory.split("/"))):
        old = kept.get(name)
        if isinstance(old, tuple) and len(old) == 4 and old[:2] == (size, changed):
            if shared.why_not_read(project, env, path) is None:
                files[name] = old
            continue
        text = shared.read_project_text(project, env, path, MARK_FILE_BYTES)[0]
        if text is not None:
            files[name] = (size, changed) + shared.file_verdicts(name, text, memory, name == index)
    return files


def memory_entries(folder):
    """(name, path, size, time) of the Markdown files in `folder` and one down, via no link."""
    found = []
    for entry in shared.first_entries(folder)[0]:
        inner = shared.first_entries(entry.path)[0] if entry.name[:1] != "." and \
            shared.is_real_folder(entry) else [entry]
        for each in inner:
            try:
                if each.name[:1] != "." and each.name.lower().endswith(".md") and \
                        each.is_file(follow_symlinks=False):
                    info = each.stat(follow_symlinks=False)
                    found.append(((entry.name + "/" if each is not entry else "") + each.name,
                                  each.path, info.st_size, info.st_mtime_ns))
            except OSError:
                continue
    return sorted(found)[:MARK_FILES]


def leftover_marks(git, guard, memory, files):
    """Markers anywhere, other leftovers where git merges by union; None: git failed."""
    shown = dict((name, memory + "/" + name) for name in files)
    asked = sorted(shown[name] for name, kept in files.items()
                   if any(item[1] != "markers" for item in kept[2]))
    listed = git.output(guard.project, "check-attr", "-z", "merge", "--", *asked) if asked else ""
    if listed is None:
        return None
    fields = listed.split("\0")
    union = set(fields[n] for n in range(0, len(fields) - 2, 3) if fields[n + 2] == "union")
    return [{"file": shown[name], "line": line, "kind": kind, "first": first, "start": start,
             "end": end} for name, kept in sorted(files.items())
            for line, kind, first, start, end in kept[2]
            if kind == "markers" or shown[name] in union]


def stale_marks(git, guard, memory, files, fates, head):
    """(marks of citations git shows gone after the line's date, fates kept); None: git failed."""
    cited = {}
    for name, kept in sorted(files.items()):
        for line, path, date in kept[3]:
            if path in cited or len(cited) < MARK_CITED:
                cited.setdefault(path, []).append((memory + "/" + name, line, date))
    exists = lambda path: os.path.lexists(os.path.join(guard.project, *path.split("/")))
    gone = sorted(path for path in cited if not exists(path))
    if gone and (fates.get("head") != head or fates.get("gone") != gone):
        went = gone_from_git(git, guard, gone)
        if went is None:
            return None, fates
        fates = {"head": head, "gone": gone, "renamed": went[0], "removed": went[1]}
    marks = []
    for path in gone:
        fate = shared.fate_of(path, fates["renamed"], fates["removed"], exists)
        for shown, line, date in cited[path] if fate else ():
            if date is None or date < fate[1][1]:  # a line dated after the change knows of it
                marks.append({"file": shown, "line": line, "kind": "gone", "path": path,
                              "now": fate[0], "commit": fate[1][0], "date": fate[1][1]})
    return marks, fates


def gone_from_git(git, guard, paths):
    """({old: (new, commit)}, {path: commit}) of missing paths, first-parent, renames followed."""
    prefix = os.path.relpath(guard.project, guard.top).replace(os.sep, "/") + "/"
    prefix = "" if prefix == "./" else prefix
    renamed, removed, wanted = {}, {}, sorted(set(paths))
    for _ in range(RENAME_HOPS):
        went = deleting_commits(git, guard.top, [prefix + path for path in wanted], prefix)
        commits = sorted(set(went.values()) if went else (), key=lambda c: c[1], reverse=True)
        diffs = git.run([git.argv(guard.top, "diff-tree", "-r", "-z", "-M", "--name-status",
                                  "--diff-filter=R", "--no-ext-diff", "--no-textconv",
                                  commit[0] + "~1", commit[0])
                         for commit in commits[:DELETING_COMMITS]])
        if went is None or any(result is None or result[0] != 0 for result in diffs):
            return None
        for commit, result in zip(commits, diffs):
            fields = result[1].decode("utf-8", "surrogateescape").split("\0")
            for old, new in zip(fields[1::3], fields[2::3]):  # status, old path, new path
                old, new = old[len(prefix):], new[len(prefix):]
                if any(went[p] == commit and (old + "/").startswith(p + "/") for p in went):
                    renamed[old] = (new, commit)
        removed.update((path, commit) for path, commit in went.items() if path not in renamed)
        wanted = sorted(set(renamed[p][0] for p in went if p in renamed and not os.path.lexists(
            os.path.join(guard.project, renamed[p][0]))) - set(renamed) - set(removed))
        if not wanted:
            break
    return renamed, removed


def deleting_commits(git, top, paths, prefix):
    """{path: (hash, date)} of the newest first-parent commit taking each path out."""
    out = git.output(top, "log", "--first-parent", "-m", "--no-renames", "--diff-filter=D",
                     "--name-only", "--no-ext-diff", "--no-textconv", "-z",
                     "--format=%x1e%h%x1f%cs", "--", *paths)
    if out is None:
        return None
    went = {}
    for record in out.split("\x1e")[1:]:
        header, _, body = record.partition("\0")
        commit = tuple(header.strip("\n").split("\x1f"))
        for name in body.strip("\n").split("\0"):
            for path in paths:
                if len(commit) == 2 and (name.strip("\n") + "/").startswith(path + "/"):
                    went.setdefault(path[len(prefix):], commit)
    return went


# --- the baseline ---

def write_inside_claude_folder(project, path, data):
    """Write a baseline atomically in <project>/.claude, never over another file or via a link."""
    folder = os.path.dirname(os.path.abspath(path))
    allowed = os.path.join(os.path.realpath(project), ".claude")
    real_folder = os.path.realpath(folder)
    if real_folder != allowed and not real_folder.startswith(allowed + os.sep):
        return False
    if not lands_on_its_own_file(path):
        return False
    temporary = "%s.%d.tmp" % (path, os.getpid())  # matches the git-ignored baseline pattern
    try:
        os.makedirs(folder, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(temporary, flags, 0o600)
    except OSError:  # including a temporary file of the same name: not ours to remove
        return False
    try:
        try:
            remaining = memoryview(data)
            while remaining:  # os.write may write less than it is given
                remaining = remaining[os.write(fd, remaining):]
        finally:
            os.close(fd)
        os.replace(temporary, path)
        return True
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return False


def lands_on_its_own_file(path):
    """Whether a baseline at `path` lands on nothing, a link (replaced) or a baseline."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return stat.S_ISLNK(info.st_mode) or stat.S_ISREG(info.st_mode) and \
        shared.read_plain_file(path, len(STATE_MARK)) == STATE_MARK


def forget_stale_baselines(current, shared_path, transcript_folder):
    """Week-old baselines of ended sessions, crashes' temporary files, holding a state or none."""
    prefix = os.path.basename(shared_path) + "."
    cutoff = time.time() - BASELINE_RETENTION_SECONDS
    try:
        entries = list(os.scandir(os.path.dirname(current)))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix) or entry.path == current:
            continue
        session, temporary = baseline_name(entry.name[len(prefix):])
        try:
            if (session is not None and entry.stat(follow_symlinks=False).st_mtime < cutoff
                    and holds_a_state(entry, temporary)
                    and not session_is_alive(transcript_folder, session, cutoff)):
                os.unlink(entry.path)
        except OSError:
            pass


def baseline_name(suffix):
    """(session id, whether temporary) of a baseline's suffix; (None, False) for another."""
    parts = suffix.split(".")
    if len(parts) == 2 and parts[0].isdigit() and parts[1] == "tmp":
        return "", True
    temporary = len(parts) == 3 and parts[1].isdigit() and parts[2] == "tmp"
    session = parts[0] if temporary or len(parts) == 1 else ""
    valid = 0 < len(session) <= 128 and all(c.isascii() and (c.isalnum() or c in "-_")
                                            for c in session)
    return (session, temporary) if valid else (None, False)


def holds_a_state(entry, temporary):
    """A regular file starting as every baseline does, or an empty temporary file."""
    if not entry.is_file(follow_symlinks=False):
        return False
    head = shared.read_plain_file(entry.path, len(STATE_MARK))
    return head == STATE_MARK or (temporary and head == b"")


def session_is_alive(transcript_folder, session, cutoff):
    if not transcript_folder or not session:
        return False
    try:
        return os.stat(os.path.join(transcript_folder, session + ".jsonl")).st_mtime >= cutoff
    except (OSError, ValueError):
        return False


# --- the account of the work since the save (§7.6) ---

class Outcome:
    """A row's answer (§7.6): the verdict, the reading the baseline becomes, the parts unchecked."""

    def __init__(self, verdict, record=None, unchecked=()):
        self.verdict, self.record, self.unchecked = verdict, record, list(unchecked)


def guard_the_stop(project, started):
    """(exit code, stdout, stderr) of a stop by §7.6's table, in the harness's form."""
    hook_input = shared.read_hook_input()
    if stop_hook_active(hook_input):
        return LET_STOP, "", ""
    guard = Guard(project, started)
    verdict, notice = decide(guard, hook_input)
    out = '{"systemMessage": %s}\n' % shared.json_string(notice) if notice else ""
    if verdict != BLOCK:
        return LET_STOP, out, ""
    message = instructions(project, shared.handoff_time(project, os.environ))
    if shared.harness(hook_input) == "claude":
        return BLOCK, out, message
    # Codex and Gemini take a JSON decision, exit 0 (Gemini calls exit 2 a failure).
    return LET_STOP, out + '{"decision": "block", "reason": %s}\n' % shared.json_string(message), ""


def decide(guard, hook_input):
    """(verdict, notice for the user or None)."""
    env = guard.env
    written_ns = shared.handoff_time(guard.project, env)
    fresh = shared.handoff_is_fresh(written_ns, env)
    reads = guard.start_reads(fresh)
    path = guard.baseline(hook_input)  # while git works
    recorded = parse_baseline(shared.read_plain_file(path, 64 * 1024))
    current = guard.reading(dating=fresh, reads=reads)
    if current is None:
        return LET_STOP, None
    if fresh:
        outcome = weigh_fresh_handoff(guard, recorded, current)
    else:
        outcome = weigh(guard, recorded, current)
    return settle(guard, path, hook_input, recorded, current, outcome)


def settle(guard, path, hook_input, recorded, current, outcome):
    """Write the baseline the outcome asks for once the verdict is known; what the user hears."""
    transcript = shared.text_field(hook_input, "transcript_path")
    deadline = guard.git.deadline
    if outcome.record is None or write_inside_claude_folder(guard.project, path,
                                                            outcome.record.recorded()):
        if outcome.verdict == LET_STOP and outcome.unchecked and \
                not already_told(transcript, UNREAD_MARK, deadline):
            return LET_STOP, unread_notice(outcome.unchecked)
        return outcome.verdict, None
    # A block not advancing the baseline would repeat: the stop passes, the user is told.
    blind = outcome.verdict == BLOCK or recorded is None and current.parts[0].count
    if blind and not already_told(transcript, NOTICE_MARK, deadline):
        return LET_STOP, cannot_record_notice(guard, path)
    return LET_STOP, None


def weigh(guard, recorded, current):
    """Rows outside the throttle: no baseline; a change; could not read; saving; nothing."""
    if recorded is None:
        # No other evidence of work: blocked only when the tree holds changes.
        return Outcome(BLOCK if current.parts[0].count else LET_STOP, current)
    record = merged(recorded, current)
    before = recorded.digests()
    moved = None not in (recorded.head, current.head) and recorded.head != current.head
    saving = guard.commits_are_saving(recorded.head, current.head) if moved else True
    if saving is False or any(part.digest is not None and before.get(part.key) is not None
                              and before[part.key] != part.digest for part in current.parts):
        return Outcome(BLOCK, record)
    if saving is None:
        record.head = recorded.head  # git could not judge the move in time: next stop
    # A part without a reading at either end cannot be checked now.
    unchecked = [part for part in current.parts
                 if part.digest is None or before.get(part.key) is None]
    unchanged = record.recorded() == recorded.recorded()
    return Outcome(LET_STOP, None if unchanged else record, unchecked)


def merged(recorded, current):
    """The current reading, a part it could not read keeping the recorded one."""
    if recorded is None:
        return current
    if current.head is None:  # the top unread: nothing is known now
        return recorded
    before = recorded.digests()
    parts = [part if part.digest is not None or before.get(part.key) is None
             else Part(part.key, part.path, before[part.key]) for part in current.parts]
    return Reading(current.head, parts, current.moves)


def weigh_fresh_handoff(guard, recorded, current):
    """The stop passes; the baseline moves only if the handoff saw every change."""
    try:  # when the session-state file last changed here
        handoff_ns = change_time(os.stat(shared.state_path(guard.project, guard.env)))
    except (OSError, ValueError):
        return Outcome(LET_STOP)
    if not handoff_covers(guard, handoff_ns, recorded, current):
        return Outcome(LET_STOP)
    return Outcome(LET_STOP, merged(recorded, current))


def handoff_covers(guard, handoff_ns, recorded, current):
    """Whether every change since the baseline happened here before the handoff."""
    if current.head is None:
        return False
    before = recorded.digests() if recorded is not None else {}
    for part in current.parts:
        if part.digest is not None and before.get(part.key) != part.digest \
                and part.changed_ns > handoff_ns:
            return False
    return head_covered(guard, handoff_ns, recorded, current)


def head_covered(guard, handoff_ns, recorded, current):
    """Whether HEAD stayed or moved by saving alone since the baseline's or the handoff's."""
    for before in (recorded.head if recorded is not None else None, head_at(current, handoff_ns)):
        if before is not None and (before == current.head or guard.commits_are_saving(
                before, current.head) is True):
            return True
    return False


def head_at(current, handoff_ns):
    """The commit HEAD was on at the handoff, by the reflog; None when it cannot say."""
    if not current.moves or current.moves[0][0] != current.head:
        return None
    second = handoff_ns // 10 ** 9
    for commit, moved in current.moves:
        if moved < second:
            return commit
    return None


# --- what the harness sent, and what the user and the agent are told ---

def stop_hook_active(hook_input):
    """Continuing from a block? A misspelt true must not loop; under Gemini the transcript says."""
    value = hook_input.get("stop_hook_active")
    if isinstance(value, str):
        flagged = value.strip().lower() in ("true", "yes", "1")
    else:
        flagged = value is True or (isinstance(value, (int, float)) and value != 0)
    if flagged or shared.harness(hook_input) != "gemini":
        return flagged
    said = last_user_text(shared.text_field(hook_input, "transcript_path"))
    return said is not None and said.startswith(BLOCK_MARK)


def last_user_text(transcript):
    """The last text of a user turn in a Gemini transcript's tail, or None."""
    try:
        if transcript is None or shared.regular_file_size(transcript) is None:
            return None
        with open(transcript, "rb") as stream:
            stream.seek(max(0, stream.seek(0, 2) - TRANSCRIPT_TAIL))
            lines = stream.read(TRANSCRIPT_TAIL).split(b"\n")
    except (OSError, ValueError):
        return None
    for line in reversed(lines):
        record = shared.json_object(line) if b'"user"' in line else {}
        texts = [part.get("text") for part in record.get("content") or () if isinstance(part, dict)
                 and isinstance(part.get("text"), str)] if record.get("type") == "user" else []
        if texts:
            return texts[-1]
    return None


def instructions(project, written_ns):
    """The block's message: why, what to do, the handoff's path."""
    env = os.environ
    wanted = env.get("MCP_SESSION_STATE") or shared.DEFAULT_STATE
    memory = os.path.dirname(env.get("MCP_MEMORY_INDEX") or shared.DEFAULT_INDEX) or "."
    if written_ns is None:
        reason = "no handoff has been written yet (%s does not exist)" % wanted
    else:
        shown = shared.shown_path(project, shared.state_path(project, env))
        if time.time() < written_ns / 1e9:
            reason = "its handoff (%s) is dated ahead of the clock" % shown
        else:
            reason = "its handoff (%s) is older than %d minutes" % (
                shown, shared.throttle_minutes(env))
    return (
        BLOCK_MARK + " and %s. Save the session now, without asking the user:\n"
        "1. Run /handoff: write %s with the current state only (replace the file, do not "
        "append).\n"
        "2. Run /dream: merge what this session learned into %s/ (merge, never overwrite).\n"
        "Keep both brief and factual. If both already ran in this turn, just stop.\n"
        % (reason, wanted, memory)
    )


def unread_notice(parts):
    """Told once per session when part of the repository had no reading to compare."""
    names = [shown_part(part) for part in parts]
    return ("[memory-context-protocol] " + UNREAD_MARK + " %s, at this stop or when this "
            "session's baseline was taken (git gave no answer within %d seconds, or it lies past "
            "the %d nested repositories, %d levels deep, that the guard reads), so work done "
            "there was not checked. What it can read is compared at every stop."
            % (", ".join(names), READS_SECONDS, NESTED_REPOSITORIES, NESTED_DEPTH))


def shown_part(part):
    if part.key == TOP:
        return "the repository"
    if part.path is None:
        return "more nested repositories"
    return os.fsdecode(part.path).encode("utf-8", "replace").decode("utf-8")


def cannot_record_notice(guard, path):
    return ("[memory-context-protocol] " + NOTICE_MARK + " at %s (the hooks write only inside "
            "the project's .claude/ folder, never through a symbolic link and never over a file "
            "that is not a baseline), so it cannot ask for a handoff in this project. Make "
            ".claude/ and .claude/hooks/ plain folders, or set MCP_BASELINE to a path inside "
            "them; until then, run /handoff and /dream yourself before you stop."
            % shared.shown_path(guard.project, path))


def already_told(transcript, notice_mark, deadline):
    """Whether the transcript holds the notice (once per session); unreadable: no."""
    mark = notice_mark.encode("ascii")
    try:
        if transcript is None or shared.regular_file_size(transcript) is None:
            return False
        with open(transcript, "rb") as stream:
            tail = b""
            while time.monotonic() < deadline:
                chunk = stream.read(1024 * 1024)
                if not chunk:
                    return False
                if mark in tail + chunk:
                    return True
                tail = chunk[-len(mark):]
    except (OSError, ValueError):
        return False
    return False


# --- pruning merged agent worktrees (§7.7) ---

def prune(project, env, session_dirs=(), deadline=None):
    """Remove merged, clean, unused agent worktrees by `deadline`; the lines to show."""
    worktree_dir = os.path.join(project, env.get("MCP_WORKTREE_DIR") or ".claude/worktrees")
    if not os.path.isdir(worktree_dir) or leads_out_of(project, worktree_dir):
        return []
    session_dirs = [project] + list(session_dirs)
    git = Git(time.monotonic() + 20.0 if deadline is None else deadline)
    worktrees, exact = listed_worktrees(git, project)
    candidates = [w for w in worktrees if is_candidate(w, worktree_dir, session_dirs)]
    base = base_branch(git, project, env) if candidates else None
    merged_names = merged_branches(git, project, base) if base else set()
    base_name = base[len("refs/heads/"):] if base and base.startswith("refs/heads/") else base
    now = time.time()
    unused = [w for w in candidates if w["branch"] != base_name and w["branch"] in merged_names
              and not was_used_lately(w, now)]
    occupied = folders_processes_stand_in([w["path"] for w in unused], git.deadline)
    under_way = branches_under_way(git, project) if unused else []
    checked_out = [w.get("branch") for w in worktrees] + (under_way or [])
    removed = []
    for worktree in unused:
        if worktree["path"] in occupied or not (exact or is_what_git_listed(git, worktree)):
            continue
        branch_shared = under_way is None or checked_out.count(worktree["branch"]) > 1
        if holds_nothing_of_its_own(git, worktree, base) \
                and remove_worktree(git, project, worktree, branch_shared):
            checked_out.remove(worktree["branch"])
            removed.append(os.path.basename(worktree["path"]))  # the injection makes it printable
    if not removed:
        return []
    return ["pruned %d merged agent worktree(s): %s" % (len(removed), ", ".join(removed))]


def listed_worktrees(git, project):
    """Every worktree git knows, and whether exactly (`-z`, git 2.36+; else is_what_git_listed)."""
    fields = git.run([git.argv(project, "worktree", "list", "--porcelain", "-z")])[0]
    if fields is None or fields[0] == TIMED_OUT:
        return [], True
    if fields[0] == 0:
        return parsed_listing(fields[1].decode("utf-8", "surrogateescape"), "\0"), True
    lines = git.output(project, "worktree", "list", "--porcelain")
    return parsed_listing(lines or "", "\n"), False


def parsed_listing(listing, separator):
    """The porcelain format: an attribute per field, an empty field after each worktree."""
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
    """Whether the folder agrees with its entry: an entry a newline made up does not."""
    answer = git.output(worktree["path"], "rev-parse", "--show-prefix", "HEAD",
                        "--symbolic-full-name", "HEAD")
    return answer == "\n%s\nrefs/heads/%s\n" % (worktree["head"], worktree["branch"])


def lies_inside(path, folder):
    """Whether path is folder or below it, links resolved."""
    return shared.lies_within(os.path.realpath(path), os.path.realpath(folder))


def leads_out_of(project, folder):
    """Whether a folder named inside the project resolves outside it (a committed link)."""
    return shared.lies_within(os.path.normpath(os.path.abspath(folder)),
                              os.path.abspath(project)) and not lies_inside(folder, project)


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
    """Where work lands: MCP_BASE_BRANCH, the remote's HEAD, init.defaultBranch, main, master."""
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
    """Nothing removal destroys: operation, change, untracked, ignored, hidden file, ref, commit."""
    path = worktree["path"]
    if has_an_operation_under_way(path):
        return False
    # =normal overrides showUntrackedFiles=no and names a folder once, not each file.
    status = git.run([git.argv(path, "status", "--porcelain", "--ignored=matching",
                               "--untracked-files=normal", "-z")])[0]
    if status is None or status[0] != 0 or status[1].strip(b"\0"):
        return False
    return not (has_hidden_files(git, path) or has_refs_of_its_own(git, path)
                or has_commits_only_reflogs_reach(git, worktree, base))


def has_an_operation_under_way(path):
    """A merge, rebase, bisect or the like stopped half-way (its state in the admin folder)."""
    admin = admin_folder(path)
    return admin is None or any(os.path.lexists(os.path.join(admin, name))
                                for name in OPERATIONS_UNDER_WAY)


def has_refs_of_its_own(git, path):
    """Per-worktree refs go with the worktree and were made on purpose: keep it."""
    listing = git.output(path, "for-each-ref", "--count=1", "--format=%(refname)",
                         "refs/worktree/", "refs/bisect/", "refs/rewritten/")
    return listing is None or bool(listing.strip())


def has_hidden_files(git, path):
    """Files assume-unchanged, or skip-worktree and present: status hides their edits."""
    listing = git.output(path, "ls-files", "-v", "-z")
    if listing is None:
        return True
    for entry in listing.split("\0"):
        tag, name = entry[:1], entry[2:]
        if tag.islower() or (tag == "S" and os.path.lexists(os.path.join(path, name))):
            return True
    return False


def has_commits_only_reflogs_reach(git, worktree, base):
    """A commit reset away lives on in the reflogs removal deletes."""
    listing = git.output(worktree["path"], "log", "-g", "--format=%H", "HEAD",
                         "refs/heads/" + worktree["branch"])
    if listing is None:
        return True
    commits = sorted(set(listing.split()))
    if not commits:
        return False
    if len(commits) > REFLOG_COMMITS_CHECKED:
        return True  # too many for a command line: keep it rather than guess
    missing = git.output(worktree["path"], "rev-list", "--max-count=1", *commits, "--not", base)
    return missing is None or bool(missing.strip())


def was_used_lately(worktree, now):
    """Whether git recorded activity in the hour: admin folder, HEAD or index touched."""
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
    """Those of `paths` a process works in; all when the list is late."""
    if not paths:
        return set()
    directories = working_directories_of_processes(deadline)
    if directories is None:
        return set(paths)
    resolved = {os.path.realpath(path): path for path in paths}
    occupied = set()
    for where in directories:
        while where not in resolved and os.path.dirname(where) != where:
            where = os.path.dirname(where)
        if where in resolved:
            occupied.add(resolved[where])
    return occupied


def working_directories_of_processes(deadline):
    """Each process's /proc/<pid>/cwd (Linux); [] elsewhere; None when late."""
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
    """The worktree's own folder in the main .git, as its `.git` file names it."""
    first = first_line(os.path.join(path, ".git"))
    named = first[len("gitdir:"):].strip() if first and first.startswith("gitdir:") else ""
    return os.path.join(path, named) if named else None


def first_line(path):
    """The first line of a small regular file, stripped; else None."""
    data = shared.read_plain_file(path, 4096)
    return None if data is None else data.decode("utf-8", "surrogateescape").split("\n")[0].strip()


def branches_under_way(git, project):
    """Branches a rebase or bisect returns to (git counts them checked out); None: unknown."""
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
    """`git worktree remove`, no --force, begun with time to spare, with a grace to finish."""
    if git.deadline - time.monotonic() < REMOVAL_START_SECONDS:
        return False
    grace = git.deadline + REMOVAL_GRACE_SECONDS
    removed = git.run([git.argv(project, "worktree", "remove", worktree["path"],
                                also=(worktree["path"],))], grace)[0]
    if removed is None or removed[0] != 0:
        return False
    if not branch_is_shared:  # else another worktree has it (`worktree add -f`): it stays
        # Only if the branch points where it did: its commits are all in the base branch.
        git.run([git.argv(project, "update-ref", "-d", "refs/heads/" + worktree["branch"],
                          worktree["head"])], grace)
    return True


if __name__ == "__main__":
    sys.exit(0)  # loaded by the entries, never run on its own
