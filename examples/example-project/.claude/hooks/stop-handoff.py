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
  instructions on stderr. The very next stop with no further change passes: it cannot loop.
- If it cannot record the baseline it never blocks, for the same reason. A session whose start
  hook never ran (no baseline) is blocked at most once, and only when the working tree holds
  changes: without a baseline there is no other evidence of work.
- "The repository changed" means HEAD, the status listing (every untracked file, whatever
  status.showUntrackedFiles says), or the size or modification time of a changed or untracked
  file: editing a file that was already modified still counts. The memory folder is not work:
  what /dream writes there, and commits that touch nothing else, are the saving, so answering
  a block never earns another. A session-state file dated in the future is not fresh.
- It writes only the baseline, inside the project's .claude/ folder, atomically, never through
  a symlink. No traceback reaches the user: any failure lets the stop through.

The guard owns the definition of "work": session-start.py loads this file to read the hook
input, run the git reads and record the baseline, so both hooks compute the state one way.

Standard library only; Python 3.8 or newer; runs as `python3 -I -S stop-handoff.py`.
Configuration: CLAUDE_PROJECT_DIR, MCP_SESSION_STATE (.claude/session-state.md), MCP_BASELINE
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
DEFAULT_STATE = ".claude/session-state.md"
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_BASELINE = ".claude/hooks/.session-baseline"
DEFAULT_THROTTLE_MINUTES = 45
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "log.showSignature=false")
LET_STOP, BLOCK = 0, 2


# --- hook input ---------------------------------------------------------------------------

def read_hook_input():
    """The harness's JSON object, or {} for anything else. Never waits longer than STDIN_SECONDS."""
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
        return value.strip().lower() in ("true", "yes", "1")
    return value is True or (isinstance(value, (int, float)) and value != 0)


# --- project and paths --------------------------------------------------------------------

def project_dir():
    try:
        path = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    except OSError:
        return None
    return os.path.abspath(path) if os.path.isdir(path) else None


def setting_path(project, name, default):
    return os.path.join(project, os.environ.get(name) or default)


def throttle_minutes():
    value = (os.environ.get("MCP_THROTTLE_MIN") or "").strip()
    return int(value) if value.isascii() and value.isdigit() else DEFAULT_THROTTLE_MINUTES


def handoff_is_fresh(project):
    """Whether the session-state file was written within the throttle window, and not in the
    future (a skewed clock or a copied file must not silence the guard for good)."""
    try:
        info = os.stat(setting_path(project, "MCP_SESSION_STATE", DEFAULT_STATE))
    except (OSError, ValueError):
        return False
    age_seconds = time.time() - info.st_mtime
    fresh = -60 < age_seconds and age_seconds // 60 < throttle_minutes()
    return stat.S_ISREG(info.st_mode) and fresh


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
    """Atomic write that refuses any target outside <project>/.claude and replaces, never
    follows, a symlink planted at the target. Returns whether the data landed."""
    folder = os.path.dirname(os.path.abspath(path))
    allowed = os.path.join(os.path.realpath(project), ".claude")
    real_folder = os.path.realpath(folder)
    if real_folder != allowed and not real_folder.startswith(allowed + os.sep):
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
    read_end, write_end = os.pipe()
    actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
               (os.POSIX_SPAWN_DUP2, write_end, 1),
               (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
    try:
        return os.posix_spawnp(argv[0], list(argv), os.environ, file_actions=actions), read_end
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
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
            results.append((done.returncode, done.stdout))
        except (OSError, subprocess.SubprocessError):
            results.append(None)
    return results


def repository_reads(project):
    """The two git reads both hooks need: the status listing, every untracked file named (a
    folder listed whole would hide edits inside it), and the last five commits."""
    return (GIT + ("-C", project, "status", "--porcelain", "--untracked-files=all", "-z"),
            GIT + ("-C", project, "log", "-5", "--format=%H %h %s"))


def repository_facts(results):
    """(HEAD, ['abbrev subject', ...], raw status) from the finished reads; None outside git.
    An unborn branch has no HEAD and no commits, which is not an error."""
    status, log = results
    if status is None or status[0] != 0:
        return None
    head, commits = "", []
    if log is not None and log[0] == 0:
        for line in log[1].decode("utf-8", "replace").splitlines():
            full, _, shown = line.partition(" ")
            head = head or full
            commits.append(shown)
    return head, commits, status[1]


def status_entries(raw):
    """`git status --porcelain -z` as (status, path, original path or None); paths are
    relative to the top of the work tree."""
    fields = raw.split(b"\0")
    entries = []
    position = 0
    while position < len(fields):
        field = fields[position]
        position += 1
        if len(field) < 4:
            continue
        code, path = field[:2].decode("ascii", "replace"), field[3:]
        original = None
        # A rename or copy in either column (` R` for an intent-to-add rename) carries its
        # original path as the next field.
        if ("R" in code or "C" in code) and position < len(fields):
            original = fields[position]
            position += 1
        entries.append((code, path, original))
    return entries


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


def saving_prefixes(project, top):
    """Status paths of what saving writes, which is not the session's work: the hooks' state
    file, baselines and bytecode cache, and the memory that /dream edits."""
    real_project = os.path.realpath(project)
    memory, is_folder = memory_path(project)
    own_files = (
        (os.path.join(real_project, os.environ.get("MCP_SESSION_STATE") or DEFAULT_STATE), ""),
        (os.path.join(real_project, os.environ.get("MCP_BASELINE") or DEFAULT_BASELINE), ""),
        (os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(__file__))), "__pycache__"),
         ""),
        (memory, "/" if is_folder else ""),  # "memory/", so memory_utils.py still counts
    )
    prefixes = []
    for path, end in own_files:
        try:
            relative = os.path.relpath(path, top).replace(os.sep, "/")
        except ValueError:  # another drive on Windows: not in this work tree
            continue
        if relative != os.pardir and not relative.startswith(os.pardir + "/"):
            prefixes.append(os.fsencode(relative + end))
    return tuple(prefixes)


def file_signature(top, path):
    """Size and modification time: editing an already modified file still changes the state."""
    try:
        info = os.lstat(os.path.join(top, os.fsdecode(path)))
    except (OSError, ValueError):
        return b"-"
    return b"%d:%d" % (info.st_size, info.st_mtime_ns)


def repository_state(project, head, raw_status):
    """What the Stop hook compares with the baseline: HEAD, then each changed or untracked
    path with its signature. session-start.py and stop-handoff.py compute it identically."""
    top = work_tree_top(project)
    own_files = saving_prefixes(project, top)
    parts = [b"head " + head.encode("ascii", "replace")]
    for code, path, original in status_entries(raw_status):
        # A file moved into the memory is still gone from where it was: that move is work.
        if own_files and path.startswith(own_files) and (
                original is None or original.startswith(own_files)):
            continue
        parts.append(b" ".join((code.encode("ascii", "replace"), path, original or b"-",
                                file_signature(top, path))))
    return b"\0".join(parts) + b"\n"


def current_state(project, seconds=GIT_SECONDS):
    """(state, whether anything is changed or untracked), or (None, False) outside git."""
    facts = repository_facts(finish_commands(start_commands(repository_reads(project)), seconds))
    if facts is None:
        return None, False
    head, _, raw_status = facts
    state = repository_state(project, head, raw_status)
    return state, b"\0" in state  # anything past the head line


# --- the decision ---------------------------------------------------------------------------

def instructions(project):
    state = os.environ.get("MCP_SESSION_STATE") or DEFAULT_STATE
    memory = os.path.dirname(os.environ.get("MCP_MEMORY_INDEX") or DEFAULT_INDEX) or "."
    return (
        "[memory-context-protocol] This session changed the repository and its handoff (%s) is "
        "older than %d minutes. Save the session now, without asking the user:\n"
        "1. Run /handoff: rewrite %s with the current state only (replace the file, do not "
        "append).\n"
        "2. Run /dream: merge what this session learned into %s/ (merge, never overwrite).\n"
        "Keep both brief and factual. If both already ran in this turn, just stop.\n"
        % (state, throttle_minutes(), state, memory)
    )


def decide(project):
    if handoff_is_fresh(project):  # checked before reading stdin: the cheapest way out
        return LET_STOP
    hook_input = read_hook_input()
    if stop_hook_active(hook_input):
        return LET_STOP
    deadline = time.monotonic() + GIT_SECONDS  # one budget for every git call of this stop
    current, dirty = current_state(project, GIT_SECONDS)
    if current is None:
        return LET_STOP
    path = baseline_path(project, text_field(hook_input, "session_id"))
    recorded = read_baseline(path)
    if recorded == current:
        return LET_STOP
    if recorded is None:
        verdict = BLOCK if dirty else LET_STOP
    elif only_memory_was_committed(project, recorded, current, deadline - time.monotonic()):
        verdict = LET_STOP  # the commits of a /dream: the baseline moves past them
    else:
        verdict = BLOCK
    # Written once the verdict is known, so a hook killed on the way loses no block.
    if not write_inside_claude_folder(project, path, current):
        return LET_STOP  # a block that cannot advance the baseline would repeat forever
    return verdict


def only_memory_was_committed(project, recorded, current, seconds):
    """Whether the two states differ only in HEAD, by commits that each touch the memory and
    nothing else (an empty commit, or one that also touches code, is work)."""
    old_head, _, old_rest = recorded.rstrip(b"\n").partition(b"\0")
    new_head, _, new_rest = current.rstrip(b"\n").partition(b"\0")
    if old_rest != new_rest or not old_head.startswith(b"head ") or len(old_head) <= 5:
        return False
    memory, _ = memory_path(project)
    try:
        relative = os.path.relpath(memory, os.path.realpath(project)).replace(os.sep, "/")
    except ValueError:
        return False
    if seconds <= 0:
        return False  # no time left to look: it counts as work
    span = old_head[5:].decode("ascii", "replace") + ".." + new_head[5:].decode("ascii", "replace")
    count = GIT + ("-C", project, "rev-list", "--count", span)
    counts = finish_commands(start_commands([
        count, count + ("--", relative), count + ("--", ":/", ":(exclude)" + relative)]), seconds)
    if not all(result and result[0] == 0 and result[1].strip().isdigit() for result in counts):
        return False  # when in doubt, it is work
    every, touching_memory, touching_the_rest = (int(result[1]) for result in counts)
    return every > 0 and touching_memory == every and touching_the_rest == 0


def main():
    project = project_dir()
    if project is None or decide(project) == LET_STOP:
        return LET_STOP
    try:
        sys.stderr.buffer.write(instructions(project).encode("utf-8"))
        sys.stderr.buffer.flush()
    except (OSError, ValueError, AttributeError):
        pass
    return BLOCK


if __name__ == "__main__":
    try:
        code = main()
    except BaseException:  # a failing guard lets the stop through rather than trap the session
        code = LET_STOP
    sys.exit(code)
