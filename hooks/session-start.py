#!/usr/bin/env python3
"""session-start: the read path. Runs at every session start, resume, /clear and compaction.

Why it exists: a fresh context window remembers nothing, and a context problem cannot be seen
from inside the session that has it. Whatever this hook prints is in the agent's context before
the first turn, at no tool call: the budget report, recent git history, the memory index and the
last handoff.

What it promises:
- Exit status 0 on every path, and no traceback, whatever it is given.
- The injection never exceeds the harness's 10,000-character limit: when it would, the budget
  report and instructions stay first, the rest is cut at line boundaries, and the cut says which
  file holds the whole text (and counts as a budget point).
- It prunes merged agent worktrees first (prune-worktrees.py, loaded in-process) and shows what
  it pruned; it weighs the budgets with context-budget.py, loaded the same way.
- It records this session's baseline, so the Stop hook can tell whether the session did work.
  The baseline is keyed by session_id, so sessions sharing a checkout never erase each other's
  evidence, and a resume or compaction keeps the baseline of the session it continues.
- It writes only that baseline, only inside the project's .claude/ folder of a git repository,
  atomically, and never through a symlink. Git runs without optional locks and without the
  repository's fsmonitor program.

Standard library only; Python 3.8 or newer; runs as `python3 -I -S session-start.py`.
Configuration: CLAUDE_PROJECT_DIR, MCP_MEMORY_INDEX (memory/MEMORY.md), MCP_SESSION_STATE
(.claude/session-state.md), MCP_BASELINE (.claude/hooks/.session-baseline), MCP_WORKTREE_DIR
(.claude/worktrees), and every variable context-budget.py and prune-worktrees.py read.
"""
import os
import stat
import sys
import time

HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
INJECTION_LIMIT = 10000
STATE_EXCERPT_LINES = 40
STATUS_LINES = 15
DISPLAY_LINE_CHARS = 300
STALE_HANDOFF_DAYS = 2
BASELINE_RETENTION_SECONDS = 7 * 86400
STDIN_SECONDS = 2.0
STDIN_LIMIT = 64 * 1024 * 1024
GIT_SECONDS = 10.0
READ_LIMIT = 1024 * 1024
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_STATE = ".claude/session-state.md"
DEFAULT_BASELINE = ".claude/hooks/.session-baseline"
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "log.showSignature=false")


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
        if data.rstrip().endswith(b"}") and json_object(data):
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
    try:
        text = data.decode("utf-8-sig").strip()
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


def text_field(hook_input, name):
    value = hook_input.get(name)
    return value if isinstance(value, str) and value and "\0" not in value else None


# --- project and paths --------------------------------------------------------------------

def project_dir():
    try:
        path = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    except OSError:
        return None
    return os.path.abspath(path) if os.path.isdir(path) else None


def setting_path(project, name, default):
    return os.path.join(project, os.environ.get(name) or default)


def shown_path(project, path):
    try:
        relative = os.path.relpath(path, project)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


def safe_session_id(session_id):
    kept = "".join(c for c in session_id or "" if c.isascii() and (c.isalnum() or c in "-_"))
    return kept[:128]


def baseline_path(project, session_id):
    shared = setting_path(project, "MCP_BASELINE", DEFAULT_BASELINE)
    suffix = safe_session_id(session_id)
    return shared + "." + suffix if suffix else shared


def regular_file_info(path):
    """stat of a regular file, or None: a FIFO, a folder or a dangling link is never opened."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def read_text_head(path, limit=READ_LIMIT):
    if regular_file_info(path) is None:
        return None
    try:
        with open(path, "rb") as stream:
            return stream.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


# --- siblings, loaded in-process ----------------------------------------------------------

def load_sibling(file_name):
    """Run a sibling hook file as a module. They are loaded by path, not imported: under
    `python -I` the hook folder is not on sys.path, and nothing there may shadow the stdlib."""
    path = os.path.join(HOOK_DIR, file_name)
    try:
        with open(path, "rb") as stream:
            code = compile(stream.read(), path, "exec")
        namespace = {"__name__": "mcp_" + file_name.replace("-", "_")[:-3], "__file__": path}
        exec(code, namespace)
    except Exception:
        return None
    return namespace


def prune_worktrees(project, session_dirs):
    if not os.path.isdir(setting_path(project, "MCP_WORKTREE_DIR", DEFAULT_WORKTREE_DIR)):
        return []
    pruner = load_sibling("prune-worktrees.py")
    if pruner is None:
        return []
    try:
        return pruner["prune"](project, os.environ, session_dirs)
    except Exception:
        return []


def budget_points(project, transcript):
    budget = load_sibling("context-budget.py")
    if budget is None:
        return []
    env = dict(os.environ)
    if transcript:
        env["MCP_TRANSCRIPT_PATH"] = transcript
    try:
        return list(budget["budget_points"](project, env))
    except Exception:
        return []


def format_report(points):
    return "## Context budget — over on %d point(s)\n%s" % (len(points), "\n".join(points))


# --- git, run side by side ----------------------------------------------------------------

def start_commands(commands):
    """Start the commands at once, so they run while this hook weighs the budgets."""
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
        return (os.posix_spawnp(argv[0], list(argv), os.environ, file_actions=actions), read_end)
    except OSError:
        os.close(read_end)
        return None
    finally:
        os.close(write_end)


def finish_commands(started):
    """Each command's (exit code, stdout), or None where it could not run."""
    try:
        if hasattr(os, "posix_spawnp"):
            return collect_spawned(started)
        return run_with_subprocess(started)
    except Exception:
        return [None] * len(started)


def collect_spawned(started):
    import select
    output = {job[1]: [] for job in started if job}
    open_ends = set(output)
    deadline = time.monotonic() + GIT_SECONDS
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


def run_with_subprocess(commands):
    import subprocess
    results = []
    for argv in commands:
        try:
            done = subprocess.run(
                list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL, timeout=GIT_SECONDS,
                creationflags=getattr(subprocess, "CREATE_NO_WINDOW", 0))
            results.append((done.returncode, done.stdout))
        except (OSError, subprocess.SubprocessError):
            results.append(None)
    return results


def git_read_commands(project):
    return (GIT + ("-C", project, "status", "--porcelain", "-z"),
            GIT + ("-C", project, "log", "-5", "--format=%H %h %s"))


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
        if code[0] in "RC" and position < len(fields):
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


def hook_file_prefixes(project, top):
    """Status paths of the files the hooks and /handoff write: they are not the session's work."""
    real_project = os.path.realpath(project)
    state = os.path.join(real_project, os.environ.get("MCP_SESSION_STATE") or DEFAULT_STATE)
    baseline = os.path.join(real_project, os.environ.get("MCP_BASELINE") or DEFAULT_BASELINE)
    temporary = os.path.join(os.path.dirname(baseline), "." + os.path.basename(baseline))
    try:
        return tuple(os.fsencode(os.path.relpath(path, top).replace(os.sep, "/"))
                     for path in (state, baseline, temporary))
    except ValueError:  # another drive on Windows: nothing of ours can be in this work tree
        return ()


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
    own_files = hook_file_prefixes(project, top)
    parts = [b"head " + head.encode("ascii", "replace")]
    for code, path, original in status_entries(raw_status):
        if own_files and path.startswith(own_files):
            continue
        parts.append(b" ".join((code.encode("ascii", "replace"), path, original or b"-",
                                file_signature(top, path))))
    return b"\0".join(parts) + b"\n"


def git_facts(project, started):
    """(state for the baseline, log lines, status lines), or None outside a git repository."""
    status, log = finish_commands(started)
    if status is None or status[0] != 0:
        return None
    log_lines = []
    head = ""
    if log is not None and log[0] == 0:
        for line in log[1].decode("utf-8", "replace").splitlines():
            full, _, shown = line.partition(" ")
            head = head or full
            log_lines.append(shown)
    status_lines = [describe_status_entry(entry) for entry in status_entries(status[1])]
    return repository_state(project, head, status[1]), log_lines, status_lines


def describe_status_entry(entry):
    code, path, original = entry
    name = path.decode("utf-8", "replace")
    if original is not None:
        name = "%s -> %s" % (original.decode("utf-8", "replace"), name)
    return "%s %s" % (code, name)


# --- the baseline -------------------------------------------------------------------------

def write_inside_claude_folder(project, path, data):
    """Atomic write that refuses any target outside <project>/.claude and replaces, never
    follows, a symlink planted at the target. Returns whether the data landed."""
    folder = os.path.dirname(os.path.abspath(path))
    allowed = os.path.join(os.path.realpath(project), ".claude")
    real_folder = os.path.realpath(folder)
    if real_folder != allowed and not real_folder.startswith(allowed + os.sep):
        return False
    temporary = os.path.join(folder, ".%s.%d.tmp" % (os.path.basename(path), os.getpid()))
    try:
        os.makedirs(folder, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
        fd = os.open(temporary, flags, 0o600)
        try:
            os.write(fd, data)
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


def record_baseline(project, hook_input, state):
    path = baseline_path(project, text_field(hook_input, "session_id"))
    continues_session = hook_input.get("source") in ("resume", "compact")
    if continues_session and regular_file_info(path) is not None:
        return
    if write_inside_claude_folder(project, path, state):
        forget_stale_baselines(project, path)


def forget_stale_baselines(project, current):
    """Baselines of sessions that ended long ago, and temporary files a crash left behind."""
    folder = os.path.dirname(current)
    shared = os.path.basename(baseline_path(project, None))
    cutoff = time.time() - BASELINE_RETENTION_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        ours = entry.name.startswith(shared + ".") or entry.name.startswith("." + shared)
        if not ours or entry.path == current:
            continue
        try:
            if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                os.unlink(entry.path)
        except OSError:
            pass


# --- the injection ------------------------------------------------------------------------

class Section:
    """A titled block of the injection. When the injection must be cut, sections with a lower
    `keep_order` get their room first."""

    def __init__(self, title, lines, source, keep_order, notes=()):
        self.title = title
        self.lines = lines
        self.source = source
        self.keep_order = keep_order
        self.notes = list(notes)


def strip_html_comments(text):
    """Remove comment text only: an inline comment leaves the rest of its line, a block
    disappears, an unclosed '<!--' is kept as text (it would otherwise hide everything after
    it), and markers inside `code spans` are not comments."""
    kept = []
    position = 0
    length = len(text)
    while position < length:
        char = text[position]
        if char == "`":
            run_end = position
            while run_end < length and text[run_end] == "`":
                run_end += 1
            fence = text[position:run_end]
            line_end = text.find("\n", run_end)
            close = text.find(fence, run_end, length if line_end < 0 else line_end)
            stop = close + len(fence) if close >= 0 else run_end
            kept.append(text[position:stop])
            position = stop
        elif text.startswith("<!--", position):
            close = text.find("-->", position + 4)
            if close < 0:
                kept.append(text[position:])
                break
            kept.append("\0")  # marks a line that held a comment
            position = close + 3
        else:
            kept.append(char)
            position += 1
    lines = []
    for line in "".join(kept).split("\n"):
        if "\0" in line:
            line = line.replace("\0", "")
            if not line.strip():
                continue
        lines.append(line.rstrip())
    return lines


def clipped(line):
    printable = "".join(c if c >= " " or c == "\t" else "?" for c in line)
    return printable if len(printable) <= DISPLAY_LINE_CHARS else printable[:DISPLAY_LINE_CHARS] + "…"


def git_section(facts):
    _, log_lines, status_lines = facts
    lines = [clipped(line) for line in log_lines]
    lines += [clipped(line) for line in status_lines[:STATUS_LINES]]
    if len(status_lines) > STATUS_LINES:
        lines.append("… and %d more changed paths (git status)" % (len(status_lines) - STATUS_LINES))
    return Section("## Git", lines, "git log and git status", keep_order=1)


def index_section(project):
    path = setting_path(project, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    text = read_text_head(path)
    if text is None:
        return None
    shown = shown_path(project, path)
    title = "## Memory index (%s — shared, committed; HTML comments omitted)" % shown
    while text.endswith("\n"):
        text = text[:-1]
    return Section(title, strip_html_comments(text), shown, keep_order=2)


def handoff_section(project, now):
    path = setting_path(project, "MCP_SESSION_STATE", DEFAULT_STATE)
    info = regular_file_info(path)
    text = read_text_head(path) if info else None
    if text is None:
        return None
    shown = shown_path(project, path)
    title = "## Last handoff (%s — local to this machine, first %d lines)" % (shown, STATE_EXCERPT_LINES)
    lines = strip_html_comments(text)[:STATE_EXCERPT_LINES]
    while lines and not lines[-1].strip():
        lines.pop()
    age_days = int((now - info.st_mtime) // 86400)
    notes = []
    if age_days >= STALE_HANDOFF_DAYS:
        notes.append("WARNING: the handoff above is %d days old. Commits made since then are not "
                     "in it: where it and `git log` disagree, trust git log." % age_days)
    return Section(title, [clipped(line) for line in lines], shown, keep_order=0, notes=notes)


def harness_length(text):
    """Length as the harness counts it: UTF-16 code units, so characters outside the BMP count twice."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def assemble(report_lines, pruned, sections, closing):
    lines = ["<project-memory source=\"SessionStart hook\">"]
    if report_lines:
        lines += report_lines + ["", "Tell the user about the budget report above in one line "
                                     "before the first answer: a context problem is invisible from "
                                     "inside the session that has it.", ""]
    lines += pruned
    for section in sections:
        if lines[-1:] != [""] and len(lines) > 1:
            lines.append("")
        lines += [section.title] + section.lines + ([""] + section.notes if section.notes else [])
    lines += ["", closing, "</project-memory>"]
    return "\n".join(lines) + "\n"


def cut_to_fit(sections, room):
    """Give each section whole lines while room lasts: the handoff first, then git, then the
    index, which is the file that grows and the one the agent can open itself."""
    for section in sorted(sections, key=lambda s: s.keep_order):
        notice = "[cut here: the injection limit is %d characters; read %s in full]" % (
            INJECTION_LIMIT, section.source)
        kept = []
        for line in section.lines:
            cost = harness_length(line) + 1
            if cost > room - harness_length(notice) - 1:
                kept.append(notice)
                room -= harness_length(notice) + 1
                break
            kept.append(line)
            room -= cost
        section.lines = kept
        room -= sum(harness_length(note) + 1 for note in section.notes)


def injection(points, pruned, sections):
    closing = "Start with /catchup before answering the first prompt."
    text = assemble(points and format_report(points).split("\n"), pruned, sections, closing)
    if harness_length(text) <= INJECTION_LIMIT:
        return text
    points = points + ["- The session-start injection would be %d characters, over the harness's "
                       "limit of %d, beyond which the agent sees only a short preview. It was cut "
                       "as marked below; shrink the memory index with /dream."
                       % (harness_length(text), INJECTION_LIMIT)]
    report_lines = format_report(points).split("\n")
    frame = assemble(report_lines, pruned,
                     [Section(s.title, [], s.source, s.keep_order, s.notes) for s in sections], closing)
    cut_to_fit(sections, INJECTION_LIMIT - harness_length(frame))
    text = assemble(report_lines, pruned, sections, closing)
    while harness_length(text) > INJECTION_LIMIT:  # a last resort the sections above never reach
        text = text[:text.rstrip("\n").rfind("\n") + 1]
    return text


# --- main -----------------------------------------------------------------------------------

def write_stdout(text):
    try:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    except (OSError, ValueError, AttributeError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        except OSError:
            pass


def main():
    project = project_dir()
    if project is None:
        return
    hook_input = read_hook_input()
    session_dirs = [project] + [d for d in [text_field(hook_input, "cwd")] if d]
    pruned = prune_worktrees(project, session_dirs)
    git_reads = start_commands(git_read_commands(project))
    points = budget_points(project, text_field(hook_input, "transcript_path"))
    facts = git_facts(project, git_reads)
    if facts is not None:
        record_baseline(project, hook_input, facts[0])
    sections = [git_section(facts)] if facts is not None else []
    sections += [s for s in (index_section(project), handoff_section(project, time.time())) if s]
    write_stdout(injection(points, pruned, sections))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # the read path must never take the session down
        pass
    sys.exit(0)
