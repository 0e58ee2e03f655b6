#!/usr/bin/env python3
"""stop-handoff: the write guard. A session that did real work cannot stop without saving it.

Why it exists: what a session learned dies at the next /clear unless it was written down, and a
rule that depends on remembering is a preference. This Stop hook asks for /handoff and /dream,
but only when it is owed: a guard that interrupts every stop gets disabled.

What it promises:
- It lets the stop through (exit 0) when the harness is already continuing because of a stop
  hook (`stop_hook_active`), outside a git repository, when the session-state file was written
  within MCP_THROTTLE_MIN minutes (45), or when the repository is exactly as this session's
  baseline recorded it.
- Otherwise it records the current state as the new baseline and blocks (exit 2) with the
  instructions on stderr, which say whether no handoff exists yet or the last one is old, and
  name the path to write. The very next stop with no further change passes: it cannot loop.
- A handoff nobody asked for counts: the first stop after it moves the baseline to the
  current state, unless a file changed or code was committed after the handoff was written.
- If it cannot record the baseline it never blocks, for the same reason, and it tells the
  user so once per session (a JSON systemMessage on stdout) instead of going quiet. A session
  whose start hook never ran (no baseline) is blocked at most once, and only when the working
  tree holds changes: without a baseline there is no other evidence of work.
- "The repository changed" means HEAD, the stash count, the status listing (every untracked
  file, whatever status.showUntrackedFiles says), the size or modification time of a changed
  file (editing a file that was already modified still counts), or the state of a nested
  repository in the listing (a submodule, or a repository in an untracked folder). Untracked
  files are read one by one up to UNTRACKED_SIGNED, then by the times of their folders, so
  the cost stays near git's own and the baseline stays a line, whatever the tree holds. The
  memory folder is not work: what /dream writes there, and commits that touch nothing else,
  are the saving, so answering a block never earns another. A session-state file dated in
  the future is not fresh.
- It writes only the baseline, inside the project's .claude/ folder, atomically, never through
  a symlink and never over a file that is not a baseline. No traceback reaches the user: any
  failure lets the stop through.
- Git runs with nothing the repository's configuration or the settings' "env" can turn into a
  program: no fsmonitor, pager, hooks, signature check, filter driver or moved helper folder.
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

STDIN_SECONDS = 2.0
STDIN_LIMIT = 64 * 1024 * 1024
GIT_SECONDS = 10.0
NESTED_SECONDS = 1.5  # what session-start may spend on nested repositories, past its git reads
NESTED_REPOSITORIES = 16
NESTED_DEPTH = 3
UNTRACKED_SIGNED = 10000  # untracked files read one by one; past that, by their folders
STATE_FORMAT = b"v2"
STATE_MARK = b"head "  # how every state, and so every baseline, begins
DEFAULT_STATE = ".session-state.md"
OLD_DEFAULT_STATE = ".claude/session-state.md"
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_BASELINE = ".claude/hooks/.session-baseline"
DEFAULT_THROTTLE_MINUTES = 45
# git with nothing the repository's configuration can turn into a program: no pager, no
# fsmonitor, no hooks, no signature check (gpg); filter drivers are switched off per
# repository (filters_off), and the environment loses what would move git's own programs.
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "core.hooksPath=" + os.devnull, "-c", "log.showSignature=false")
GIT_FILTER_SECONDS = 2.0
LET_STOP, BLOCK = 0, 2
NOTICE_MARK = "The Stop guard cannot record its baseline"
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


# --- the repository's state ---------------------------------------------------------------

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
    """posix_spawn and a pipe: the subprocess module alone costs more than two git calls."""
    if argv is None:
        return None
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


def finish_commands(started, seconds=GIT_SECONDS):
    """Each command's (exit code, stdout), or None where it could not run within `seconds`."""
    deadline = time.monotonic() + seconds
    try:
        if hasattr(os, "posix_spawnp"):
            return collect_spawned(started, deadline)
        return run_with_subprocess(started, deadline)
    except Exception:
        return [None] * len(started)


def collect_spawned(started, deadline):
    import select
    output = {job[1]: [] for job in started if job}
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
        if job is None:
            results.append(None)
            continue
        pid, fd = job
        timed_out = fd in open_ends
        if timed_out:
            os.close(fd)
            os.kill(pid, 9)  # SIGKILL; the signal module would import enum just for this number
        status = os.waitpid(pid, 0)[1]
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) and not timed_out else -1
        results.append((code, b"".join(output[fd])))
    return results


def run_with_subprocess(commands, deadline):
    import subprocess
    results = []
    for argv in commands:
        try:
            done = subprocess.run(
                list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, timeout=max(0.1, deadline - time.monotonic()),
                env=git_environment(), creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
            results.append((done.returncode, done.stdout))
        except (OSError, TypeError, subprocess.SubprocessError):
            results.append(None)
    return results


def repository_reads(project):
    """The two git reads both hooks need: the status listing, every untracked file named (a
    folder listed whole would hide edits inside it) and the number of stashes, then the last
    five commits."""
    return (git_command(project, "status", "--porcelain=v2", "-z", "--untracked-files=all",
                        "--show-stash"),
            git_command(project, "log", "-5", "--format=%H %ct %h %s"))


# --- git, hardened against the repository's configuration ---------------------------------

def git_command(folder, *args):
    """The argv of a git command run in `folder`, with nothing the repository's configuration
    can turn into a program; None when its filter drivers could not be listed (then nothing
    runs, and the read counts as failed)."""
    off = filters_off(folder)
    return None if off is None else GIT + off + ("-C", folder) + args


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
    submodule, or configuration given through the environment. None when they cannot be
    listed in time."""
    if folder not in FILTERS_OFF:
        FILTERS_OFF[folder] = listed_filters_off(folder) if may_name_filters(folder) else ()
    return FILTERS_OFF[folder]


def may_name_filters(folder):
    if any(key.startswith("GIT_CONFIG") for key in os.environ):
        return True
    marker = os.path.join(work_tree_top(folder), ".git")
    if not os.path.isdir(marker):
        return True  # a .git file: a linked worktree or a submodule, whose config lies elsewhere
    config = read_baseline(os.path.join(marker, "config")) or b""
    lowered = config.lower()
    return any(word in lowered for word in (b"filter", b"include", b"worktreeconfig"))


def listed_filters_off(folder):
    listing = finish_commands(start_commands([GIT + ("-C", folder, "config", "-z",
                                                     "--get-regexp", r"^filter\.")]),
                              GIT_FILTER_SECONDS)[0]
    if listing is None or listing[0] not in (0, 1):  # 1: no filter at all
        return None
    options = ()
    drivers = set()
    for entry in listing[1].split(b"\0"):
        key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
        if key.count(".") >= 2:
            drivers.add(key[len("filter."):key.rindex(".")])
    for driver in sorted(drivers):
        for name, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false")):
            options += ("-c", "filter.%s.%s=%s" % (driver, name, value))
    return options


def repository_facts(results):
    """(HEAD, ['abbrev subject', ...], raw status) from the finished reads; None outside git.
    An unborn branch has no HEAD and no commits, which is not an error."""
    facts = facts_with_time(results)
    return facts and facts[:3]


def facts_with_time(results):
    """repository_facts, and HEAD's commit time in seconds (0 when there is no commit)."""
    status, log = results
    if status is None or status[0] != 0:
        return None
    head, head_time, commits = "", 0, []
    if log is not None and log[0] == 0:
        for line in log[1].decode("utf-8", "replace").splitlines():
            full, _, rest = line.partition(" ")
            seconds, _, shown = rest.partition(" ")
            if not head:
                head, head_time = full, int(seconds) if seconds.isdigit() else 0
            commits.append(shown)
    return head, commits, status[1], head_time


def parse_status(raw):
    """`git status --porcelain=v2 -z` as (headers, changed, untracked): the header lines
    (`# stash 2`), the changed entries as (code, path, original path or None), and the
    untracked paths. Paths are relative to the top of the work tree; a code is two letters as
    in the short format, a space where v2 writes a dot."""
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
                changed.append((parts[1].decode("ascii", "replace").replace(".", " "),
                                parts[-1], original))
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


class Signer:
    """Reads what tells an edit apart: the size and modification time of a listed path, so an
    edit to a file that was already modified counts; the time of a folder; and the state of a
    nested repository (a submodule, or a repository in an untracked folder), whose inner edits
    and commits the outer listing does not show. Every path is read relative to one open
    handle on the top of the work tree. It keeps the newest time it saw."""

    def __init__(self, top, deadline, depth):
        self.top = top
        self.deadline = deadline
        self.depth = depth
        self.nested_left = NESTED_REPOSITORIES
        self.newest_ns = 0
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
        try:
            info = self.lstat(path.rstrip(b"/"))
        except (OSError, ValueError):
            self.date_a_removal(path)
            return b"-"
        self.newest_ns = max(self.newest_ns, info.st_mtime_ns)
        if stat.S_ISDIR(info.st_mode):
            return self.nested(path)
        return b"%d:%d" % (info.st_size, info.st_mtime_ns)

    def folder_time(self, folder):
        try:
            seen = self.lstat(folder).st_mtime_ns
        except (OSError, ValueError):
            return b"-"
        self.newest_ns = max(self.newest_ns, seen)
        return b"%d" % seen

    def date_a_removal(self, path):
        """A removed file leaves its time on the nearest folder still there."""
        folder = path.rstrip(b"/")
        while folder:
            folder = folder.rpartition(b"/")[0]
            if self.folder_time(folder) != b"-":
                return

    def nested(self, path):
        """The state of the repository in this folder; a fixed mark past the depth, the count
        or the time allowed, or when git cannot read it, so the answer does not flicker."""
        if self.depth >= NESTED_DEPTH or self.nested_left <= 0:
            return b"nested"
        self.nested_left -= 1
        folder = os.path.join(self.top, os.fsdecode(path.rstrip(b"/")))
        seconds = self.deadline - time.monotonic()
        facts = facts_with_time(finish_commands(start_commands(repository_reads(folder)),
                                                seconds)) if seconds > 0 else None
        if facts is None:
            return b"nested ?"
        head, _, raw, head_time = facts
        state, _, newest_ns = measured_state(folder, head, raw, self.deadline, self.depth + 1,
                                             own_files=())
        self.newest_ns = max(self.newest_ns, newest_ns, head_time * 10 ** 9)
        return b"nested " + state.rstrip(b"\n").replace(b"\0", b" ")


def measured_state(project, head, raw_status, deadline, depth=0, own_files=None):
    """(state, number of changed or untracked paths, newest modification time seen in ns).
    The state is short whatever the repository holds: HEAD, then the count and a digest of
    the listing with each path's signature, so the baseline stays small and the comparison
    cheap with a million untracked files."""
    top = work_tree_top(project)
    if own_files is None:
        own_files = saving_prefixes(project, top)
    headers, changed, untracked = parse_status(raw_status)
    if own_files:
        # A file moved into the memory is still gone from where it was: that move is work.
        changed = [entry for entry in changed if not entry[1].startswith(own_files)
                   or entry[2] is not None and not entry[2].startswith(own_files)]
        untracked = [path for path in untracked if not path.startswith(own_files)]
    digest = new_digest()
    digest.update(b"\0".join(headers) + b"\0\0")
    signer = Signer(top, deadline, depth)
    try:
        for code, path, original in changed:
            digest.update(b"%s %s\0%s\0%s\0" % (code.encode("ascii", "replace"), path,
                                                  original or b"-", signer.signature(path)))
        sign_untracked(digest, signer, untracked)
    finally:
        signer.close()
    state = b"head %s\0%s %d %s\n" % (head.encode("ascii", "replace"), STATE_FORMAT,
                                      len(changed) + len(untracked),
                                      digest.hexdigest().encode("ascii"))
    return state, len(changed) + len(untracked), signer.newest_ns


def sign_untracked(digest, signer, untracked):
    """Each untracked file with its size and time while there are at most UNTRACKED_SIGNED;
    past that, reading every file would cost several times what git spends listing them, so
    each is signed by the time of its folder: creating, removing or renaming a file moves it,
    and so does every save by the harness's file tools, which replace the file. A nested
    repository (a path ending in /) is always looked into."""
    digest.update(b"\0\0")
    if len(untracked) <= UNTRACKED_SIGNED:
        for path in untracked:
            digest.update(b"%s\0%s\0" % (path, signer.signature(path)))
        return
    digest.update(b"\0".join(untracked) + b"\0\0")
    for folder in sorted({path.rpartition(b"/")[0] for path in untracked}):
        digest.update(b"%s\0%s\0" % (folder, signer.folder_time(folder)))
    for path in untracked:
        if path.endswith(b"/"):
            digest.update(b"%s\0%s\0" % (path, signer.signature(path)))


def new_digest():
    """A 128-bit BLAKE2b: the C module behind hashlib's, without hashlib's start-up."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(digest_size=16)


def repository_state(project, head, raw_status, deadline=None):
    """What the Stop hook compares with the baseline: HEAD, then the number of changed or
    untracked paths and a digest of them with their signatures and the stash count.
    session-start.py and stop-handoff.py compute it identically."""
    if deadline is None:
        deadline = time.monotonic() + NESTED_SECONDS
    return measured_state(project, head, raw_status, deadline)[0]


def is_current_format(state):
    """Whether a recorded state was written by this version: one from another version never
    equals the current state, and comparing with it would block for no work."""
    head, _, rest = state.partition(b"\0")
    return head.startswith(b"head ") and rest.startswith(STATE_FORMAT + b" ")


def current_state(project, deadline=None):
    """(state, changed or untracked path count, newest time in ns, HEAD's commit time in s),
    or None outside git. Every git call shares the deadline."""
    if deadline is None:
        deadline = time.monotonic() + GIT_SECONDS
    facts = facts_with_time(finish_commands(start_commands(repository_reads(project)),
                                            deadline - time.monotonic()))
    if facts is None:
        return None
    head, _, raw_status, head_time = facts
    state, count, newest_ns = measured_state(project, head, raw_status, deadline)
    return state, count, newest_ns, head_time


# --- the decision ---------------------------------------------------------------------------

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


def decide(project):
    """(exit code, notice for the user or None)."""
    written_ns = handoff_time(project)
    fresh = handoff_is_fresh(written_ns)
    if fresh and handoff_was_taken_in(project, written_ns):
        return LET_STOP, None  # checked before reading stdin: the cheapest way out
    hook_input = read_hook_input()
    if stop_hook_active(hook_input):
        return LET_STOP, None
    path = baseline_path(project, text_field(hook_input, "session_id"))
    deadline = time.monotonic() + GIT_SECONDS  # one budget for every git call of this stop
    measured = current_state(project, deadline)
    if measured is None:
        return LET_STOP, None
    current, count, newest_ns, head_time = measured
    recorded = read_baseline(path)
    if recorded is not None and not is_current_format(recorded):
        recorded = None  # a baseline of another version: as if there were none
    if fresh:
        if not handoff_covers(project, written_ns, recorded, current, newest_ns, head_time,
                              deadline):
            return LET_STOP, None  # work after the handoff: it counts once the window ends
        verdict = LET_STOP  # a handoff the user asked for: what it saw is saved
    elif recorded == current:
        return LET_STOP, None
    elif recorded is None:
        verdict = BLOCK if count else LET_STOP
    elif only_memory_was_committed(project, recorded, current, deadline - time.monotonic()):
        verdict = LET_STOP  # the commits of a /dream: the baseline moves past them
    else:
        verdict = BLOCK
    # Written once the verdict is known, so a hook killed on the way loses no block.
    if write_inside_claude_folder(project, path, current):
        return verdict, None
    # A block that cannot advance the baseline would repeat at every stop: the stop goes
    # through, and the user learns that the guard is blind here.
    blind = verdict == BLOCK or recorded is None and count
    if blind and not already_told(text_field(hook_input, "transcript_path"), deadline):
        return LET_STOP, cannot_record_notice(project, path)
    return LET_STOP, None


def handoff_was_taken_in(project, written_ns):
    """Whether a baseline was written after the handoff, which its folder's time tells without
    reading stdin for the session: the stop that wrote it already weighed the handoff."""
    folder = os.path.dirname(setting_path(project, "MCP_BASELINE", DEFAULT_BASELINE))
    try:
        return os.stat(folder).st_mtime_ns >= written_ns
    except (OSError, ValueError):
        return False


def handoff_covers(project, written_ns, recorded, current, newest_ns, head_time, deadline):
    """Whether a fresh handoff saw everything the current state holds: no changed file, and
    no commit but the memory's, dated after it. Then the baseline moves to the current state,
    and the work the handoff saved is not asked for again once the window ends."""
    if newest_ns > written_ns:
        return False
    if head_time * 10 ** 9 <= written_ns:
        return True
    if recorded is None:
        return False
    old_head, new_head = recorded.partition(b"\0")[0], current.partition(b"\0")[0]
    return old_head == new_head or commits_touch_only_memory(project, old_head, new_head,
                                                             deadline - time.monotonic())


def only_memory_was_committed(project, recorded, current, seconds):
    """Whether the two states differ only in HEAD, by commits that each touch the memory and
    nothing else (an empty commit, or one that also touches code, is work)."""
    old_head, _, old_rest = recorded.partition(b"\0")
    new_head, _, new_rest = current.partition(b"\0")
    return old_rest == new_rest and commits_touch_only_memory(project, old_head, new_head,
                                                              seconds)


def commits_touch_only_memory(project, old_head, new_head, seconds):
    """Whether the commits from one `head <hash>` line to the other are at least one, and each
    touches the memory and nothing else."""
    if not old_head.startswith(b"head ") or len(old_head) <= 5 or old_head == new_head:
        return False
    memory, _ = memory_path(project)
    try:
        relative = os.path.relpath(memory, os.path.realpath(project)).replace(os.sep, "/")
    except ValueError:
        return False
    span = old_head[5:].decode("ascii", "replace") + ".." + new_head[5:].decode("ascii", "replace")
    count = git_command(project, "rev-list", "--count", span)
    if count is None:
        return False
    counts = finish_commands(start_commands([
        count, count + ("--", relative), count + ("--", ":/", ":(exclude)" + relative)]), seconds)
    if not all(result and result[0] == 0 and result[1].strip().isdigit() for result in counts):
        return False  # when in doubt (git failed, or ran out of time), it is work
    every, touching_memory, touching_the_rest = (int(result[1]) for result in counts)
    return every > 0 and touching_memory == every and touching_the_rest == 0


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


def already_told(transcript, deadline):
    """Whether this session's transcript already holds the notice, which the harness records
    with the hook's output: the user is told once per session, not at every stop. Read in
    chunks from the start, where the first notice usually is, until the deadline; a transcript
    that cannot be read counts as not told."""
    mark = NOTICE_MARK.encode("ascii")
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
