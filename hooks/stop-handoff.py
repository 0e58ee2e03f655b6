#!/usr/bin/env python3
"""stop-handoff: the write guard. A session that did real work cannot stop without saving it.

Why it exists: what a session learned dies at the next /clear unless it was written down, and a
rule that depends on remembering is a preference. This Stop hook asks for /handoff and /dream,
but only when it is owed: a guard that interrupts every stop gets disabled.

What it promises (spec §7.6 is the table; each of its rows is a function here):
- One account of the work since the save. The stop passes when the harness is already
  continuing because of a stop hook (`stop_hook_active`), outside a git repository, within
  MCP_THROTTLE_MIN minutes (45) of a handoff, when nothing changed since this session's
  baseline, and when the only change is the saving itself: what /dream writes into the memory
  folder, and commits on top of the recorded HEAD that touch the memory and nothing else.
- A change blocks (exit 2): the current state becomes the baseline and the instructions go to
  stderr, saying whether no handoff exists yet or the last one is old, and naming the path to
  write. The very next stop with no further change passes: it cannot loop.
- A change is judged by identity and content: HEAD (a commit dropped from the branch is a
  change, whatever follows it), the status listing (every untracked file, whatever
  status.showUntrackedFiles says; every submodule, whatever .gitmodules or
  diff.ignoreSubmodules say; the stash count), the size and modification time of each listed
  path, and each nested repository, read as a part of its own by the same rule and deadline
  at the session's start and at every stop. Untracked files are read one by one up to
  UNTRACKED_SIGNED, then by the times of their folders, so the cost stays near git's own and
  the baseline stays one line, whatever the tree holds.
- "Could not read" is never a change and never, silently, no change: a part git did not answer
  for in time keeps its recorded reading and is judged when read; a part the baseline holds no
  reading of is taken as it is now, and the user is told once per session (a JSON
  systemMessage on stdout).
- A handoff nobody asked for counts: the first stop after it moves the baseline to the current
  state when every change since the baseline happened before it, judged by when it happened
  here (the reflog for HEAD, the status-change times of a path and its folders), never by a
  date a commit or a copied file brings with it. Work after the handoff is asked for once the
  window ends. A session-state file dated in the future is not fresh.
- If it cannot record the baseline it never blocks, and it tells the user so once per session.
  A session whose start hook never ran (no baseline) is blocked at most once, and only when the
  working tree holds changes: without a baseline there is no other evidence of work.
- Time: stdin is read for at most STDIN_SECONDS (2); every git call of a stop, and the reading
  of the transcript for a notice, ends READS_SECONDS (10) after the hook began. Every wait is
  over within 10 s of the 15-second timeout install.py writes into settings.json.
- It writes only the baseline, inside the project's .claude/ folder, atomically, never through
  a symlink and never over a file that is not a baseline. No traceback reaches the user: any
  failure lets the stop through.
- Git runs with nothing the repository's configuration or the settings' "env" can turn into a
  program: no fsmonitor, pager, hooks, signature check, filter driver (a submodule's own
  included) or moved helper folder.
- It serves Claude Code, Codex CLI (as its Stop hook) and Gemini CLI (as its AfterAgent hook),
  knowing each by what it sends, and answers in its form: Codex and Gemini get the block as a
  JSON decision on stdout, exit 0, so under them it never exits 2. Codex names no project: it
  is the top of the work tree the hook runs in. Gemini says stop_hook_active false again after
  a continuation that ran a tool: a stop whose transcript's last user text is this guard's
  block ends that continuation, and passes.

The guard owns the definition of "work": session-start.py loads this file to read the hook
input, run the git reads and record the baseline, so both hooks compute the state one way.

Standard library only; Python 3.8 or newer; runs as `python3 -I -S stop-handoff.py`.
Configuration: CLAUDE_PROJECT_DIR (else GEMINI_PROJECT_DIR), MCP_SESSION_STATE (.session-state.md;
.claude/session-state.md is read while only it exists), MCP_BASELINE
(.claude/hooks/.session-baseline, one file per session_id), MCP_THROTTLE_MIN (45), and
MCP_MEMORY_INDEX (memory/MEMORY.md), whose folder the instructions name and the state leaves out.
"""
import os
import stat
import sys
import time

STARTED = time.monotonic()  # when this hook began: its deadlines count from here
STDIN_SECONDS = 2.0
STDIN_LIMIT = 64 * 1024 * 1024
READS_SECONDS = 10.0  # every git read of a hook ends this long after the hook began (§7.8)
TIMED_OUT = "timed out"  # the exit code of a command stopped at its deadline
NESTED_REPOSITORIES = 16
NESTED_DEPTH = 3
UNTRACKED_SIGNED = 10000  # untracked files read one by one; past that, by their folders
REFLOG_ENTRIES = 100  # HEAD's moves read to find where it stood when the handoff was written
STATE_FORMAT = b"v3"
STATE_MARK = b"head "  # how every state, and so every baseline, begins
TOP, MORE = b"top", b"more"  # the top's part, and the one that stands for those past the limit
UNDATED = 1 << 80  # the time of what cannot be dated: after every handoff
DEFAULT_STATE = ".session-state.md"
OLD_DEFAULT_STATE = ".claude/session-state.md"
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_BASELINE = ".claude/hooks/.session-baseline"
DEFAULT_THROTTLE_MINUTES = 45
# git with nothing the repository's configuration can turn into a program: no pager, no
# fsmonitor, no hooks, no signature check (gpg); filter drivers are switched off per
# repository (filters_off), and the environment loses what would move git's own programs.
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "core.hooksPath=" + os.devnull, "-c", "log.showSignature=false",
       "-c", "diff.ignoreSubmodules=none", "-c", "status.submoduleSummary=false")
GIT_FILTER_SECONDS = 2.0  # at most, and never past the reads' deadline
SUBMODULE_FOLDERS = 1000  # looked through for submodules' git folders; past that, git is not run
LET_STOP, BLOCK = 0, 2
NOTICE_MARK = "The Stop guard cannot record its baseline"
UNREAD_MARK = "The Stop guard could not read"
BLOCK_MARK = "[memory-context-protocol] This session changed the repository"
CLAUDE, CODEX, GEMINI = "claude", "codex", "gemini"
TRANSCRIPT_TAIL = 1024 * 1024  # where Gemini's last user turn is, whatever a tool returned
hook_input_read = None  # the harness's input, once read


# --- hook input ---------------------------------------------------------------------------

def read_hook_input():
    """The harness's JSON object, or {} for anything else. Never waits longer than STDIN_SECONDS.
    Read once: a later call returns the same object, so main answers in the form of the
    harness that sent it."""
    global hook_input_read
    if hook_input_read is None:
        hook_input_read = read_stdin_object()
    return hook_input_read


def read_stdin_object():
    try:
        if sys.stdin is None or sys.stdin.isatty():
            return {}
        fd = sys.stdin.fileno()
    except (OSError, ValueError, AttributeError):
        return {}
    reader = read_with_select if os.name == "posix" else read_with_thread
    return reader(fd, time.monotonic() + STDIN_SECONDS)


def read_with_select(fd, deadline):
    import select
    data = b""
    while len(data) < STDIN_LIMIT:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        data += chunk
        # The harness may keep the pipe open: a complete object is as good as end of file.
        # Past a mebibyte, only end of file ends the read, so parsing is never repeated at length.
        if len(data) <= 1024 * 1024 and data.rstrip().endswith(b"}") and json_object(data):
            break
    return json_object(data)


def read_with_thread(fd, deadline):
    import threading
    chunks = []

    def drain():
        total = 0
        while total < STDIN_LIMIT:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            chunks.append(chunk)
            total += len(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    reader.join(max(0.0, deadline - time.monotonic()))
    return json_object(b"".join(chunks))


def json_object(data):
    if data.startswith(b"\xef\xbb\xbf"):  # by hand: the utf-8-sig codec is one more import
        data = data[3:]
    try:
        text = data.decode("utf-8").strip()
        value = parse_json(text) if text else {}
    except Exception:  # malformed, truncated, binary or absurdly nested: all mean "no input"
        return {}
    return value if isinstance(value, dict) else {}


class JsonOptions:
    """What the C scanner behind the json package reads from its decoder."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float


def parse_json(text):
    """json.loads without importing the json package, whose regular expressions cost more
    start-up time than the rest of this hook; the same C scanner does the parsing."""
    try:
        from _json import make_scanner
    except ImportError:
        from json import loads
        return loads(text)
    value, end = make_scanner(JsonOptions)(text, 0)
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


def stop_hook_active(hook_input):
    """True when the harness is already continuing because a stop hook blocked. Lenient on
    purpose: a misspelt true must never turn into a loop."""
    value = hook_input.get("stop_hook_active")
    if isinstance(value, str):
        flagged = value.strip().lower() in ("true", "yes", "1")
    else:
        flagged = value is True or (isinstance(value, (int, float)) and value != 0)
    return flagged or continues_this_guards_block(hook_input)


# --- the harness ----------------------------------------------------------------------------

def harness(hook_input):
    """Which CLI runs the hook, from what it sends: Gemini CLI names its stop AfterAgent and
    gives hooks the session's id in GEMINI_SESSION_ID; Codex CLI alone sends a turn_id and names
    its transcripts rollout-<time>-<session id>.jsonl. Anything else is answered as Claude Code."""
    session = text_field(hook_input, "session_id")
    if (hook_input.get("hook_event_name") == "AfterAgent"
            or session is not None and os.environ.get("GEMINI_SESSION_ID") == session):
        return GEMINI
    transcript = text_field(hook_input, "transcript_path") or ""
    if "turn_id" in hook_input or os.path.basename(transcript).startswith("rollout-"):
        return CODEX
    return CLAUDE


def continues_this_guards_block(hook_input):
    """Under Gemini CLI, whether this stop ends the continuation a block of this guard started.
    Gemini says stop_hook_active false again once the continuation ran a tool, but its
    transcript then holds the block's message as the last text of a user turn."""
    if harness(hook_input) != GEMINI:
        return False
    said = last_user_text(text_field(hook_input, "transcript_path"))
    return said is not None and said.startswith(BLOCK_MARK)


def last_user_text(transcript):
    """The last text part of a user turn in a Gemini transcript (JSON lines; a tool's response
    is a user turn without text and is passed over), read from its last TRANSCRIPT_TAIL bytes,
    where a line cut by the start does not parse; None when there is none or the file cannot
    be read."""
    try:
        if transcript is None or not stat.S_ISREG(os.stat(transcript).st_mode):
            return None
        with open(transcript, "rb") as stream:
            stream.seek(max(0, stream.seek(0, 2) - TRANSCRIPT_TAIL))
            lines = stream.read(TRANSCRIPT_TAIL).split(b"\n")
    except (OSError, ValueError):
        return None
    for line in reversed(lines):
        record = json_object(line) if b'"user"' in line else {}
        texts = [part.get("text") for part in record.get("content") or () if isinstance(part, dict)
                 and isinstance(part.get("text"), str)] if record.get("type") == "user" else []
        if texts:
            return texts[-1]
    return None


def block_answer(harness_name, message):
    """(exit code, stdout, stderr) that block a stop in the harness's form. Claude Code takes
    exit 2 with the message on stderr; Codex CLI and Gemini CLI take a JSON decision on stdout
    with exit 0 (Gemini reports an exit 2 as a failed hook besides), so under them the hook
    never exits 2, which a wrapper that cannot find the hook must not be mistaken for either."""
    if harness_name == CLAUDE:
        return BLOCK, "", message
    return LET_STOP, '{"decision": "block", "reason": %s}\n' % json_string(message), ""


# --- project and paths --------------------------------------------------------------------

def project_dir():
    """The project the harness names (Claude Code's CLAUDE_PROJECT_DIR, Gemini CLI's
    GEMINI_PROJECT_DIR); else the top of the work tree holding the working folder, since
    Codex CLI names none and starts hooks where it was started, a subfolder perhaps."""
    try:
        path = (os.environ.get("CLAUDE_PROJECT_DIR") or os.environ.get("GEMINI_PROJECT_DIR")
                or work_tree_top(os.getcwd()))
    except OSError:
        return None
    return os.path.abspath(path) if os.path.isdir(path) else None


def setting_path(project, name, default):
    return os.path.join(project, os.environ.get(name) or default)


def state_path(project):
    """The session-state file the guard reads: MCP_SESSION_STATE when set; else the default at
    the top of the project, or the old default inside .claude/ while only that one exists, so a
    project not yet updated keeps its handoff."""
    if os.environ.get("MCP_SESSION_STATE"):
        return setting_path(project, "MCP_SESSION_STATE", DEFAULT_STATE)
    path = os.path.join(project, DEFAULT_STATE)
    old = os.path.join(project, OLD_DEFAULT_STATE)
    return old if not os.path.lexists(path) and os.path.lexists(old) else path


def throttle_minutes():
    value = (os.environ.get("MCP_THROTTLE_MIN") or "").strip()
    return int(value) if value.isascii() and value.isdigit() else DEFAULT_THROTTLE_MINUTES


def handoff_time(project):
    """The session-state file's modification time in nanoseconds, or None when there is no
    such regular file."""
    try:
        info = os.stat(state_path(project))
    except (OSError, ValueError):
        return None
    return info.st_mtime_ns if stat.S_ISREG(info.st_mode) else None


def handoff_age(written_ns):
    """Seconds since the handoff was written (negative when it is dated ahead of the clock)."""
    return time.time() - written_ns / 1e9


def handoff_is_fresh(written_ns):
    """Whether the handoff was written within the throttle window, and not in the future (a
    skewed clock or a copied file must not silence the guard for good)."""
    if written_ns is None:
        return False
    age_seconds = handoff_age(written_ns)
    return -60 < age_seconds and age_seconds // 60 < throttle_minutes()


def safe_session_id(session_id):
    kept = "".join(c for c in session_id or "" if c.isascii() and (c.isalnum() or c in "-_"))
    return kept[:128]


def text_field(hook_input, name):
    value = hook_input.get(name)
    return value if isinstance(value, str) and value and "\0" not in value else None


def baseline_path(project, session_id):
    """One baseline per session, so sessions sharing a checkout never erase each other's
    evidence of work; the shared file only when the harness gives no session_id."""
    shared = setting_path(project, "MCP_BASELINE", DEFAULT_BASELINE)
    suffix = safe_session_id(session_id)
    return shared + "." + suffix if suffix else shared


def read_baseline(path):
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return None
        with open(path, "rb") as stream:
            return stream.read()
    except (OSError, ValueError):
        return None


def write_inside_claude_folder(project, path, data):
    """Atomic write of a baseline that refuses any target outside <project>/.claude, or over a
    file that is not a baseline (see lands_on_its_own_file), and replaces, never follows, a
    symlink planted at the target. Returns whether the data landed."""
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
    """Whether writing a baseline at `path` lands on nothing, on a symlink (replaced, never
    followed), or on a baseline: a regular file that starts as every state does. A writer
    must never land on a file it did not create: MCP_BASELINE naming a hook or a settings
    file, and a hook input without a session id to append, would make that file the
    baseline itself."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    if stat.S_ISLNK(info.st_mode):
        return True
    if not stat.S_ISREG(info.st_mode):
        return False
    try:
        with open(path, "rb") as stream:
            return stream.read(len(STATE_MARK)) == STATE_MARK
    except OSError:
        return False


# --- running git --------------------------------------------------------------------------

def start_commands(commands):
    """Start the commands at once; finish_commands collects them. Splitting the two lets the
    start hook weigh the budgets while git works."""
    try:
        if hasattr(os, "posix_spawnp"):
            return [spawn_with_pipe(argv) for argv in commands]
    except Exception:
        return [None] * len(commands)
    return list(commands)  # elsewhere they run one by one when the results are asked for


def spawn_with_pipe(argv):
    """posix_spawn and a pipe: the subprocess module alone costs more than two git calls. A
    command that is None or TIMED_OUT (git_command's) is not run, and stands for its result."""
    if argv is None or argv == TIMED_OUT:
        return argv
    read_end, write_end = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write_end, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        return os.posix_spawnp(argv[0], list(argv), git_environment(),
                               file_actions=actions), read_end
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)


def finish_commands(started, seconds=READS_SECONDS):
    """Each command's (exit code, stdout): the exit code is TIMED_OUT for one still running
    after `seconds`, which is stopped; None where a command could not run at all."""
    deadline = time.monotonic() + seconds
    try:
        if hasattr(os, "posix_spawnp"):
            return collect_spawned(started, deadline)
        return run_with_subprocess(started, deadline)
    except Exception:
        return [None] * len(started)


def collect_spawned(started, deadline):
    import select
    output = {job[1]: [] for job in started if isinstance(job, tuple)}
    open_ends = set(output)
    while open_ends:
        remaining = deadline - time.monotonic()
        ready = select.select(list(open_ends), [], [], remaining)[0] if remaining > 0 else []
        if not ready:
            break
        for fd in ready:
            chunk = os.read(fd, 65536)
            if chunk:
                output[fd].append(chunk)
            else:
                os.close(fd)
                open_ends.discard(fd)
    results = []
    for job in started:
        if not isinstance(job, tuple):
            results.append((TIMED_OUT, b"") if job == TIMED_OUT else None)
            continue
        pid, fd = job
        timed_out = fd in open_ends
        if timed_out:
            os.close(fd)
            os.kill(pid, 9)  # SIGKILL; the signal module would import enum just for this number
        status = os.waitpid(pid, 0)[1]
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        results.append((TIMED_OUT if timed_out else code, b"".join(output[fd])))
    return results


def run_with_subprocess(commands, deadline):
    import subprocess
    results = []
    for argv in commands:
        if argv == TIMED_OUT:
            results.append((TIMED_OUT, b""))
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


def reads_deadline(started):
    """When every git read of a hook that began at `started` (time.monotonic()) must be over:
    the one deadline both hooks read the repository by (§7.8)."""
    return started + READS_SECONDS


# --- reading the repository ---------------------------------------------------------------

def repository_reads(project, dating=False):
    """The git reads of one repository's state: the status listing, with HEAD in its first
    header (every untracked file named, whatever status.showUntrackedFiles says; every
    submodule looked into, whatever .gitmodules or the user's diff.ignoreSubmodules says; the
    number of stashes). To date the changes, also the reflogs of HEAD and of the stashes, which
    record when git made each move rather than a date a commit carries."""
    reads = [git_command(project, "status", "--porcelain=v2", "-z", "--branch",
                         "--no-ahead-behind", "--untracked-files=all", "--ignore-submodules=none",
                         "--show-stash")]
    if dating:
        reads += [git_command(project, "log", "-g", "-n", str(REFLOG_ENTRIES), "--date=unix",
                              "--format=%H %gd", ref) for ref in ("HEAD", "refs/stash")]
    return reads


class Facts:
    """What the reads of one repository said: the raw status `listing` (None when git ran out
    of time), HEAD ("" on an unborn branch, None when not read), and the reflogs' `moves` of
    HEAD and `stashes`, each (commit, second), newest first."""

    def __init__(self, listing, moves=(), stashes=()):
        self.listing = listing
        self.moves = moves
        self.stashes = stashes
        first = (listing or b"").split(b"\0", 1)[0]
        self.head = first[13:].decode("ascii", "replace").replace("(initial)", "") \
            if first.startswith(b"# branch.oid ") else None


# --- git, hardened against the repository's configuration ---------------------------------

def git_command(folder, *args):
    """The argv of a git command run in `folder`, with nothing the repository's configuration
    can turn into a program. When its filter drivers could not be listed, nothing runs: None
    when git failed (the read counts as failed), TIMED_OUT when the reads' deadline came first
    (the read counts as unanswered, §7.6's "could not read")."""
    off = filters_off(folder)
    return off if off is None or off == TIMED_OUT else GIT + off + ("-C", folder) + args


# Variables no git of the hooks sees: those that would point it at another repository than the
# folder given with -C, and GIT_EXEC_PATH, through which a settings "env" would make git run its
# helpers (the `git status` a submodule's read starts) from a folder of the repository's choosing.
GIT_ELSEWHERE = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                 "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
                 "GIT_PREFIX", "GIT_EXEC_PATH")


def git_environment():
    """This process's environment without GIT_ELSEWHERE."""
    if not any(name in os.environ for name in GIT_ELSEWHERE):
        return os.environ
    return {key: value for key, value in os.environ.items() if key not in GIT_ELSEWHERE}


FILTERS_OFF = {}


def filters_off(folder):
    """`-c` options that switch off every filter driver git's configuration names for the
    repository at `folder`: git runs a driver's clean, smudge or process program whenever
    `git status` compares a changed file, and a repository's own .git/config (come in an
    archive, or on a shared disk) can name any program. An empty program is no program. The
    drivers are listed (one git call) only when the repository's configuration could name one:
    a .git/config that mentions a filter or includes another file, a linked worktree or
    submodule, or configuration given through the environment. None when git cannot list them,
    TIMED_OUT when it did not within GIT_FILTER_SECONDS or before the reads' deadline."""
    if folder not in FILTERS_OFF:
        FILTERS_OFF[folder] = listed_filters_off(folder) if may_name_filters(folder) else ()
    return FILTERS_OFF[folder]


def may_name_filters(folder):
    if any(key.startswith("GIT_CONFIG") for key in os.environ):
        return True
    marker = os.path.join(work_tree_top(folder), ".git")
    if not os.path.isdir(marker):
        return True  # a .git file: a linked worktree or a submodule, whose config lies elsewhere
    if os.path.isdir(os.path.join(marker, "modules")):
        return True  # submodules, each with a config of its own that git status reads
    config = read_baseline(os.path.join(marker, "config")) or b""
    lowered = config.lower()
    return any(word in lowered for word in (b"filter", b"include", b"worktreeconfig"))


def submodule_git_dirs(folder):
    """The git folders of the submodules of the repository at `folder`, where git keeps them
    (`modules/` in its git folder, theirs in theirs): looking into a submodule, `git status`
    starts another git there, which reads that folder's config, filter drivers included. None
    when there are more than SUBMODULE_FOLDERS folders to look through."""
    git_dir = git_dir_of(work_tree_top(folder))
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
    """The git folder of the work tree at `top`: its .git folder, or the one its .git file
    names (a linked worktree's, or a submodule's); None when neither can be read."""
    marker = os.path.join(top, ".git")
    if os.path.isdir(marker):
        return marker
    line = (read_baseline(marker) or b"").split(b"\n", 1)[0].strip()
    if not line.startswith(b"gitdir: "):
        return None
    return os.path.join(top, os.fsdecode(line[len(b"gitdir: "):]))


def listed_filters_off(folder):
    seconds = min(GIT_FILTER_SECONDS, reads_deadline(STARTED) - time.monotonic())
    if seconds <= 0:
        return TIMED_OUT
    submodules = submodule_git_dirs(folder)
    if submodules is None:
        return None
    listings = finish_commands(start_commands(
        [GIT + ("-C", folder, "config", "-z", "--get-regexp", r"^filter\.")]
        + [GIT + ("--git-dir", git_dir, "config", "-z", "--get-regexp", r"^filter\.")
           for git_dir in submodules]), seconds)
    if any(listing is not None and listing[0] == TIMED_OUT for listing in listings):
        return TIMED_OUT
    if any(listing is None or listing[0] not in (0, 1) for listing in listings):
        return None  # 1: no filter at all
    drivers = set()
    for listing in listings:
        for entry in listing[1].split(b"\0"):
            key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
            if key.count(".") >= 2:
                drivers.add(key[len("filter."):key.rindex(".")])
    options = ()
    for driver in sorted(drivers):
        for name, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            options += ("-c", "filter.%s.%s=%s" % (driver, name, value))
    return options


def repository_facts(results):
    """Facts from the finished reads; None when git could not run or this is no repository,
    where there is nothing to guard."""
    status = results[0]
    if status is None or status[0] not in (0, TIMED_OUT):
        return None
    if status[0] == TIMED_OUT:
        return Facts(None)
    return Facts(status[1], *(reflog_moves(result) for result in results[1:]))


def reflog_moves(result):
    """(commit, second) of each `<commit> <ref>@{<seconds>}` line; [] when the read failed. A
    time that is not one counts as after every handoff."""
    if not result or result[0] != 0:
        return []
    moves = []
    for line in result[1].decode("ascii", "replace").splitlines():
        commit, _, selector = line.partition(" ")
        second = selector[selector.find("@{") + 2:-1]
        moves.append((commit, int(second) if second.isdigit() else UNDATED))
    return moves


def parse_status(raw):
    """`git status --porcelain=v2 -z` as (headers, changed, untracked): the header lines
    (`# stash 2`), the changed entries as (code, path, original path or None), and the
    untracked paths. Paths are relative to the top of the work tree; a code is two letters as
    in the short format, a space where v2 writes a dot, then for a submodule what changed in
    it (`SCMU`)."""
    headers, changed, untracked = [], [], []
    fields = iter(raw.split(b"\0"))
    for field in fields:
        kind = field[:2]
        if kind == b"? ":  # first: there may be a million of them
            untracked.append(field[2:])
        elif kind == b"# ":
            headers.append(field)
        elif kind in (b"1 ", b"2 ", b"u "):
            # The path is the last of 9, 10 or 11 space-separated fields; a rename or copy
            # carries its original path as the next field.
            parts = field.split(b" ", {b"1 ": 8, b"2 ": 9, b"u ": 10}[kind])
            original = next(fields, None) if kind == b"2 " else None
            if len(parts) > 8:
                code = parts[1].decode("ascii", "replace").replace(".", " ")
                if parts[2].startswith(b"S"):
                    code += " " + parts[2].decode("ascii", "replace")
                changed.append((code, parts[-1], original))
    return headers, changed, untracked


def status_entries(raw):
    """The status listing as (status, path, original path or None), untracked as `??`."""
    _, changed, untracked = parse_status(raw)
    return changed + [("??", path, None) for path in untracked]


def work_tree_top(project):
    """The folder status paths start from, found as git finds it: upwards to a .git entry."""
    folder = real_project = os.path.realpath(project)
    while not os.path.lexists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return real_project
        folder = parent
    return folder


def memory_path(project):
    """(path, whether a folder): the memory folder, resolved, or the index file alone when its
    folder holds the project itself (the index at the top, however it is spelled): that folder
    would leave out the whole project."""
    real_project = os.path.realpath(project)
    index = os.path.realpath(os.path.join(real_project, os.environ.get("MCP_MEMORY_INDEX")
                                          or DEFAULT_INDEX))
    folder = os.path.dirname(index)
    try:
        holds_project = os.path.commonpath([folder, real_project]) == folder
    except ValueError:  # another drive on Windows
        holds_project = False
    return (index, False) if holds_project else (folder, True)


def saving_files(project):
    """(path, whether a folder) of what saving writes, which is not the session's work: the
    session-state file (both defaults unless one is configured), the baselines, the hooks'
    bytecode cache, and the memory that /dream edits."""
    real_project = os.path.realpath(project)
    states = [os.environ.get("MCP_SESSION_STATE")] if os.environ.get("MCP_SESSION_STATE") \
        else [DEFAULT_STATE, OLD_DEFAULT_STATE]
    own = [(os.path.join(real_project, state), False) for state in states]
    own.append((os.path.join(real_project, os.environ.get("MCP_BASELINE") or DEFAULT_BASELINE),
                False))
    own.append((os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(__file__))),
                             "__pycache__"), False))
    own.append(memory_path(project))
    return own


def saving_prefixes(project, top):
    """The status paths of saving_files, relative to the top of the work tree; a folder ends
    with "/", so memory_utils.py still counts. Paths outside the work tree are left out."""
    prefixes = []
    for path, is_folder in saving_files(project):
        try:
            relative = os.path.relpath(path, top).replace(os.sep, "/")
        except ValueError:  # another drive on Windows: not in this work tree
            continue
        if relative != os.pardir and not relative.startswith(os.pardir + "/"):
            prefixes.append(os.fsencode(relative + ("/" if is_folder else "")))
    return tuple(prefixes)


def change_time(info):
    """When a path last changed here, in ns: the later of its modification time, which a copy
    or an archive may set to any date, and its status-change time, which nothing but the
    change itself sets (a write, a rename, a `touch`; on Windows the creation time)."""
    return max(info.st_mtime_ns, info.st_ctime_ns)


class Signer:
    """Reads what tells an edit apart: the size and modification time of a listed path, so an
    edit to a file that was already modified counts, and the time of a folder. Every path is
    read relative to one open handle on the top of the repository. When asked to date, it also
    keeps the latest change time of every path it reads and of each folder above one, up to
    the top: a file moved, copied or unpacked with an old date lands in a folder that changed."""

    def __init__(self, top, dating):
        self.top = top
        self.dating = dating
        self.folders_dated = set()
        self.changed_ns = 0
        self.fd = None
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
        """b"size:mtime", b"-" for a path that is gone, or None for a nested repository."""
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
        """The change times of the folders holding `path`, up to the top; a folder that is
        gone is skipped, so a removal is dated by the nearest one still there."""
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
    """One repository's share of a reading: the listing of the top of the work tree, or a
    nested repository (its HEAD included). `digest` is None where git gave no answer in time,
    or the repository lies past NESTED_REPOSITORIES or NESTED_DEPTH; `changed_ns` is the
    latest change time seen in it, when dated."""

    def __init__(self, key, path, digest, count=0, changed_ns=0):
        self.key = key
        self.path = path
        self.digest = digest
        self.count = count
        self.changed_ns = changed_ns


class Reading:
    """The repository at one moment, as both hooks read it (§7.5): HEAD, HEAD's moves (when
    dated) and the parts, the top's first. What a baseline records is `recorded()`, one line
    whatever the tree holds."""

    def __init__(self, head, parts, moves=()):
        self.head = head
        self.parts = parts
        self.moves = moves

    @property
    def count(self):
        return self.parts[0].count

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
    """The Reading a baseline recorded, or None for none or one of another format (an older
    release's), which then counts as no baseline."""
    if not data:
        return None
    head, _, rest = data.rstrip(b"\n").partition(b"\0")
    fields = rest.split(b" ")
    if not head.startswith(b"head ") or len(fields) < 3 or fields[0] != STATE_FORMAT:
        return None
    head = head[5:].decode("ascii", "replace")
    count, digest = fields[1], fields[2]
    parts = [Part(TOP, b"", None if digest == b"?" else digest,
                  int(count) if count.isdigit() else 0)]
    for field in fields[3:]:
        key, _, nested = field.partition(b"=")
        parts.append(Part(key, None, None if nested == b"?" else nested))
    return Reading(None if head == "?" else head, parts)


def new_digest():
    """A 128-bit BLAKE2b: the C module behind hashlib's, without hashlib's start-up."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(digest_size=16)


def part_key(path):
    """A nested repository's name in a baseline: a digest of its path, so the line stays one
    line whatever the path holds."""
    digest = new_digest()
    digest.update(path)
    return digest.hexdigest()[:16].encode("ascii")


def add_part(parts, key, path, folder, facts, dating, own_files=()):
    """Append the part `facts` give of the repository at `folder`: unread when there are none
    or git ran out of time. The digest covers the stash count, every entry with its signature,
    and, for a nested repository, its HEAD; its own nested repositories are parts of their own,
    whose paths are returned. No file is read, so the cost stays near git's own whatever the
    tree holds."""
    if facts is None or facts.listing is None:
        parts.append(Part(key, path, None))
        return []
    headers, changed, untracked = parse_status(facts.listing)
    if own_files:
        # A file moved into the memory is still gone from where it was: that move is work.
        changed = [entry for entry in changed if not entry[1].startswith(own_files)
                   or entry[2] is not None and not entry[2].startswith(own_files)]
        untracked = [listed for listed in untracked if not listed.startswith(own_files)]
    digest = new_digest()
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
    """When the newest reflog entry was made, as the last ns of its second, so a move in the
    handoff's own second counts as after it; 0 without one. Given the `head` it must be, a
    reflog that does not end there (HEAD moved unlogged, or no reflog) dates it after every
    handoff."""
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
    """Each untracked file with its size and time while there are at most UNTRACKED_SIGNED;
    past that, reading every file would cost several times what git spends listing them, so
    each is signed by the time of its folder: creating, removing or renaming a file moves it,
    and so does every save by the harness's file tools, which replace the file. A nested
    repository (a path ending in /) is always looked into."""
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


def current_reading(project, deadline, dating=False, reads=None):
    """The repository's state now (a Reading), or None outside git. `reads` are the started
    repository_reads, when the caller started them early. Every git call, nested ones
    included, ends by `deadline`: what is not read by then is unread, never a change."""
    if reads is None:
        reads = start_commands(repository_reads(project, dating))
    facts = repository_facts(finish_commands(reads, deadline - time.monotonic()))
    if facts is None:
        return None
    top = work_tree_top(project)
    parts = []
    nested = add_part(parts, TOP, b"", top, facts, dating, saving_prefixes(project, top))
    read_nested(top, nested, deadline, dating, 1, parts)
    return Reading(facts.head, parts, facts.moves)


def read_nested(top, paths, deadline, dating, depth, parts):
    """Append a part for each nested repository at `paths` (relative to `top`), and for the
    ones inside them, by the rule the top is read by and within the same deadline; past
    NESTED_DEPTH a repository is not read, and past NESTED_REPOSITORIES one part stands for
    all the rest."""
    for path in paths:
        if len(parts) > NESTED_REPOSITORIES:
            if parts[-1].key != MORE:
                parts.append(Part(MORE, None, None))
            return
        folder = os.path.join(top, os.fsdecode(path))
        seconds = deadline - time.monotonic()
        facts = repository_facts(finish_commands(start_commands(repository_reads(
            folder, dating)), seconds)) if seconds > 0 and depth <= NESTED_DEPTH else None
        inner = add_part(parts, part_key(path), path, folder, facts, dating)
        read_nested(top, [path + b"/" + name for name in inner], deadline, dating, depth + 1,
                    parts)


# --- the account of the work since the save (§7.6) -----------------------------------------

def instructions(project, written_ns):
    """The block's message: why it blocks (no handoff yet, an old one, or one dated ahead of
    the clock) and what to do, naming the path the handoff is to be written to."""
    wanted = os.environ.get("MCP_SESSION_STATE") or DEFAULT_STATE
    memory = os.path.dirname(os.environ.get("MCP_MEMORY_INDEX") or DEFAULT_INDEX) or "."
    if written_ns is None:
        reason = "no handoff has been written yet (%s does not exist)" % wanted
    else:
        shown = shown_path(project, state_path(project))
        if handoff_age(written_ns) < 0:
            reason = "its handoff (%s) is dated ahead of the clock" % shown
        else:
            reason = "its handoff (%s) is older than %d minutes" % (shown, throttle_minutes())
    return (
        BLOCK_MARK + " and %s. Save the "
        "session now, without asking the user:\n"
        "1. Run /handoff: write %s with the current state only (replace the file, do not "
        "append).\n"
        "2. Run /dream: merge what this session learned into %s/ (merge, never overwrite).\n"
        "Keep both brief and factual. If both already ran in this turn, just stop.\n"
        % (reason, wanted, memory)
    )


class Outcome:
    """A row's answer: the verdict, the reading the baseline is to become (None: it stays),
    and the paths whose work before this stop could not be checked (§7.6, "could not read")."""

    def __init__(self, verdict, record=None, unchecked=()):
        self.verdict = verdict
        self.record = record
        self.unchecked = list(unchecked)


def decide(project):
    """(exit code, notice for the user or None), by the table of §7.6."""
    written_ns = handoff_time(project)
    fresh = handoff_is_fresh(written_ns)
    if fresh and handoff_was_taken_in(project, written_ns):
        return LET_STOP, None  # checked before reading stdin: the cheapest way out
    hook_input = read_hook_input()
    if stop_hook_active(hook_input):
        return LET_STOP, None
    path = baseline_path(project, text_field(hook_input, "session_id"))
    deadline = reads_deadline(STARTED)  # one deadline for every git call of this stop
    current = current_reading(project, deadline, dating=fresh)
    if current is None:
        return LET_STOP, None
    recorded = parse_baseline(read_baseline(path))
    if fresh:
        outcome = weigh_fresh_handoff(project, recorded, current, deadline)
    else:
        outcome = weigh(project, recorded, current, deadline)
    return settle(project, path, hook_input, recorded, current, outcome, deadline)


def settle(project, path, hook_input, recorded, current, outcome, deadline):
    """Write the baseline the outcome asks for (only now that the verdict is known, so a hook
    killed on the way loses no block), then say what the user must hear."""
    transcript = text_field(hook_input, "transcript_path")
    if outcome.record is None or write_inside_claude_folder(project, path,
                                                            outcome.record.recorded()):
        if outcome.verdict == LET_STOP and outcome.unchecked and \
                not already_told(transcript, UNREAD_MARK, deadline):
            return LET_STOP, unread_notice(outcome.unchecked)
        return outcome.verdict, None
    # A block that cannot advance the baseline would repeat at every stop: the stop goes
    # through, and the user learns that the guard is blind here.
    blind = outcome.verdict == BLOCK or recorded is None and current.count
    if blind and not already_told(transcript, NOTICE_MARK, deadline):
        return LET_STOP, cannot_record_notice(project, path)
    return LET_STOP, None


def handoff_was_taken_in(project, written_ns):
    """Whether a baseline was written after the handoff, which its folder's time tells without
    reading stdin for the session: the stop that wrote it already weighed the handoff. Both
    times within one tick of the file system's clock tell nothing, and the handoff is weighed."""
    folder = os.path.dirname(setting_path(project, "MCP_BASELINE", DEFAULT_BASELINE))
    try:
        return os.stat(folder).st_mtime_ns > written_ns
    except (OSError, ValueError):
        return False


def weigh(project, recorded, current, deadline):
    """The rows for a stop outside the throttle: no baseline; a change; could not read;
    saving; nothing."""
    if recorded is None:
        # Nothing else is evidence of work: blocked only when the tree holds changes.
        return Outcome(BLOCK if current.count else LET_STOP, current)
    record = merged(recorded, current)
    before = recorded.digests()
    moved = None not in (recorded.head, current.head) and recorded.head != current.head
    saving = commits_are_saving(project, recorded.head, current.head, deadline) if moved else True
    if saving is False or any(part.digest is not None and before.get(part.key) is not None
                              and before[part.key] != part.digest for part in current.parts):
        return Outcome(BLOCK, record)
    if saving is None:
        record.head = recorded.head  # git could not judge the move in time: judged next stop
    # A part the baseline holds no reading of (unread when it was taken, or past the limits
    # at both ends) cannot be checked until now.
    unchecked = [part for part in current.parts if before.get(part.key) is None]
    unchanged = record.recorded() == recorded.recorded()
    return Outcome(LET_STOP, None if unchanged else record, unchecked)


def merged(recorded, current):
    """The current reading, where a part it could not read keeps the recorded one: what could
    not be read is judged when it next is, never taken as changed or as unchanged."""
    if recorded is None:
        return current
    if current.head is None:  # the top unread: nothing is known now
        return recorded
    before = recorded.digests()
    parts = [part if part.digest is not None or before.get(part.key) is None
             else Part(part.key, part.path, before[part.key]) for part in current.parts]
    return Reading(current.head, parts, current.moves)


def commits_are_saving(project, old_head, new_head, deadline):
    """Whether HEAD went from one commit to the other by saving alone: the old HEAD is still
    an ancestor (no commit dropped), and at least one commit was added, each touching the
    memory and nothing else (an empty commit, or one that also touches code, is work). None
    when git did not answer in time; False when it cannot say otherwise (an unborn HEAD, a
    commit gone)."""
    seconds = deadline - time.monotonic()
    try:
        relative = os.path.relpath(memory_path(project)[0], os.path.realpath(project))
    except ValueError:  # another drive on Windows
        return False
    if not old_head or not new_head or seconds <= 0:
        return None if seconds <= 0 else False
    relative = relative.replace(os.sep, "/")
    count = git_command(project, "rev-list", "--count")
    if count is None or count == TIMED_OUT:
        return None if count else False
    added = count + (old_head + ".." + new_head,)
    counts = finish_commands(start_commands([
        added, added + ("--", relative), added + ("--", ":/", ":(exclude)" + relative),
        count + (new_head + ".." + old_head,)]), seconds)
    if any(result is None or result[0] == TIMED_OUT for result in counts):
        return None
    if not all(result[0] == 0 and result[1].strip().isdigit() for result in counts):
        return False
    every, touching_memory, touching_the_rest, dropped = (int(result[1]) for result in counts)
    return every > 0 and touching_memory == every and touching_the_rest == 0 and dropped == 0


# --- what a fresh handoff covers --------------------------------------------------------------

def weigh_fresh_handoff(project, recorded, current, deadline):
    """The rows for a handoff written within the throttle window that no baseline has taken in
    yet: the stop passes. When the handoff saw every change since the baseline, the baseline
    moves to the current state, so what it saved is not asked for once the window ends; when
    something changed after it, nothing moves, and that work is asked for then."""
    handoff_ns = handoff_change_time(project)
    if handoff_ns is None or not handoff_covers(project, handoff_ns, recorded, current, deadline):
        return Outcome(LET_STOP)
    return Outcome(LET_STOP, merged(recorded, current))


def handoff_change_time(project):
    """When the session-state file last changed here: replacing it (as the harness's Write tool
    saves) also changes its folder, at the same moment."""
    try:
        return change_time(os.stat(state_path(project)))
    except (OSError, ValueError):
        return None


def handoff_covers(project, handoff_ns, recorded, current, deadline):
    """Whether every change since the baseline happened before the handoff was written, each
    judged by when it happened here: a path by its own change time and its folders', a nested
    repository also by when its HEAD moved, HEAD by the reflog. A part not read now keeps its
    recorded reading and is judged when it is read."""
    if current.head is None:
        return False
    before = recorded.digests() if recorded is not None else {}
    for part in current.parts:
        if part.digest is not None and before.get(part.key) != part.digest \
                and part.changed_ns > handoff_ns:
            return False
    return head_covered(project, handoff_ns, recorded, current, deadline)


def head_covered(project, handoff_ns, recorded, current, deadline):
    """Whether HEAD holds no work the handoff did not see: from the baseline's HEAD, which is
    older than the handoff, or from the commit HEAD was on when the handoff was written (the
    reflog's answer), it is where it was or moved since by saving alone."""
    for before in (recorded.head if recorded is not None else None, head_at(current, handoff_ns)):
        if before is not None and (before == current.head or commits_are_saving(
                project, before, current.head, deadline) is True):
            return True
    return False


def head_at(current, handoff_ns):
    """The commit HEAD was on when the handoff was written: that of the newest move the reflog
    dates before the handoff's second (a move within that second counts as after it). None
    when the reflog cannot say: it holds no such move, or its newest entry is not HEAD (HEAD
    moved without being logged)."""
    if not current.moves or current.moves[0][0] != current.head:
        return None
    second = handoff_ns // 10 ** 9
    for commit, moved in current.moves:
        if moved < second:
            return commit
    return None


# --- what the user is told ------------------------------------------------------------------

def unread_notice(parts):
    """What the user is told, once per session, when part of the repository had no reading to
    compare with: its work until this stop was not checked."""
    names = [shown_part(part) for part in parts]
    return ("[memory-context-protocol] " + UNREAD_MARK + " %s when this session's baseline "
            "was taken (git gave no answer within %d seconds, or it lies past the %d nested "
            "repositories, %d levels deep, that the guard reads), so work done there before "
            "this stop was not checked. What it can read from now on is compared at every stop."
            % (", ".join(names), READS_SECONDS, NESTED_REPOSITORIES, NESTED_DEPTH))


def shown_part(part):
    if part.key == TOP:
        return "the repository"
    if part.path is None:
        return "more nested repositories"
    return os.fsdecode(part.path).encode("utf-8", "replace").decode("utf-8")


def cannot_record_notice(project, path):
    """What the user is told when the guard cannot keep its baseline, and so cannot ask for a
    handoff: the path, and why writing there is refused."""
    return ("[memory-context-protocol] " + NOTICE_MARK + " at %s (the "
            "hooks write only inside the project's .claude/ folder, never through a symbolic "
            "link and never over a file that is not a baseline), so it cannot ask for a "
            "handoff in this project. Make .claude/ and "
            ".claude/hooks/ plain folders, or set MCP_BASELINE to a path inside them; until "
            "then, run /handoff and /dream yourself before you stop." % shown_path(project, path))


def shown_path(project, path):
    """A path as the user knows it: relative to the project when inside it."""
    try:
        relative = os.path.relpath(path, project)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


def already_told(transcript, notice_mark, deadline):
    """Whether this session's transcript already holds the notice, which the harness records
    with the hook's output: the user is told once per session, not at every stop. Read in
    chunks from the start, where the first notice usually is, until the deadline; a transcript
    that cannot be read counts as not told."""
    mark = notice_mark.encode("ascii")
    try:
        if transcript is None or not stat.S_ISREG(os.stat(transcript).st_mode):
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


def json_string(text):
    """A JSON string literal, without importing the json package."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"%s"' % "".join(c if c >= " " else "\\u%04x" % ord(c) for c in escaped)


def main():
    project = project_dir()
    if project is None:
        return LET_STOP
    verdict, notice = decide(project)
    if notice is not None:
        # Shown to the user as a warning; the stop goes through.
        write_bytes(sys.stdout, '{"systemMessage": %s}\n' % json_string(notice))
    if verdict != BLOCK:
        return verdict
    code, out, err = block_answer(harness(read_hook_input()),
                                  instructions(project, handoff_time(project)))
    write_bytes(sys.stdout, out)
    write_bytes(sys.stderr, err)
    return code


def write_bytes(stream, text):
    try:
        stream.buffer.write(text.encode("utf-8"))
        stream.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass


def keep_the_hook_folder_off_the_import_path():
    """Run without -I (`python3 .claude/hooks/stop-handoff.py`, as a user or a command
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
        code = main()
    except BaseException:  # a failing guard lets the stop through rather than trap the session
        code = LET_STOP
    sys.exit(code)
