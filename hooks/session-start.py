#!/usr/bin/env python3
"""session-start: the read path. Runs at every session start, resume, fork, /clear and compaction.

Why it exists: a fresh context window remembers nothing, and a context problem cannot be seen
from inside the session that has it. Whatever this hook prints is in the agent's context before
its next turn, at no tool call: the budget report, the memory index (with the topic folders of
notes beside it listed under it) and the last handoff.

What it promises:
- Exit status 0 on every path, and no traceback, whatever it is given.
- The injection fits how the session starts (`source`): a new conversation (startup, clear) is
  told to run /catchup; a compacted one gets the memory back and carries on; a resumed or forked
  one, whose conversation holds its earlier start, gets the budgets, the index and only a handoff
  written since this session's baseline. No git part: the harness sends branch, status and
  recent commits itself.
- The injection never exceeds the harness's 10,000-character limit: when it would, the budget
  report and instructions stay first, the rest is cut at line boundaries, and the cut says which
  file holds the whole text (and counts as a budget point). A cut inside a fenced code block
  closes the block before its notice, and a part that leaves a fence open is closed at its end.
  Its opening tag, closing line and closing tag survive whatever a line holds, outside any code
  block, and every character in it is printable and encodes.
- It ends in time: every wait is bounded, each bound counted from the hook's start (the
  arithmetic is beside PRUNE_SECONDS below), so all of them are over 10 s after it began, well
  inside the 15-second timeout install.py writes into settings.json.
- It serves Claude Code, Codex CLI and Gemini CLI, knowing each by what it sends (see
  stop-handoff.py's `harness`), in its form: Gemini takes the injection only as JSON
  additionalContext; Codex counts the limit in UTF-8 bytes, not UTF-16 units. Codex names no
  project: it is the top of the work tree the hook runs in.
- Its siblings do their own parts in-process, loaded by path: prune-worktrees.py prunes merged
  agent worktrees first (and what it pruned is shown), context-budget.py weighs the budgets and
  reads comments, and stop-handoff.py reads the hook input, runs the git reads and defines the
  baseline. A sibling that is missing, broken or lacks a name costs only its own part, but
  for context-budget.py, which decides what the hooks may read: without it no file is shown
  and nothing is pruned.
- What it shows the agent stays inside the project and respects the project's deny rules: the
  index and the handoff are read through context-budget.py's read_project_text, so a link
  whose target lies outside the project, a special file, or a file a `Read(...)` deny rule
  covers is refused in one line that names it, and the rest goes on; a path variable a
  project settings file set to lead outside the project is ignored, in one line.
- It records this session's baseline, so the Stop hook can tell whether the session did work.
  The baseline is keyed by session_id, so sessions sharing a checkout never erase each other's
  evidence, and a resume or compaction keeps the baseline of the session it continues.
- In the project it writes only baselines, only inside the project's .claude/ folder of a git
  repository, atomically, and never through a symlink, and it deletes baselines a week old.
- It runs only code it can vouch for: the siblings' source as it is now. A __pycache__ beside
  the hooks is never read or written (a repository can commit one whose code is not its
  source); compiled code is kept only in the user's own ~/.cache/memory-context-protocol,
  named by a hash of the source it came from. Git runs without optional locks and without the
  repository's fsmonitor program.

Standard library only; Python 3.8 or newer; runs as `python3 -I -S session-start.py`.
Configuration: CLAUDE_PROJECT_DIR (else GEMINI_PROJECT_DIR), MCP_MEMORY_INDEX (memory/MEMORY.md),
MCP_SESSION_STATE (.session-state.md, else the older .claude/session-state.md), MCP_BASELINE
(.claude/hooks/.session-baseline), MCP_WORKTREE_DIR (.claude/worktrees), and every variable
context-budget.py and prune-worktrees.py read.
"""
import os
import stat
import sys
import time

HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
INJECTION_LIMIT = 10000
STATE_EXCERPT_LINES = 40
DISPLAY_LINE_CHARS = 300  # a handoff line
REPORT_LINE_CHARS = 1000  # a budget point or the pruning note: far longer than any repair needs
STALE_HANDOFF_DAYS = 2
BASELINE_RETENTION_SECONDS = 7 * 86400
STARTED = time.monotonic()  # when this hook began: every deadline below counts from here
# The harness kills this hook after the 15 s install.py writes into settings.json, so every wait
# is bounded and the bounds add up well inside it. From the hook's start: stdin at most 2 s;
# pruning 3 s, plus 2 s a removal under way may overrun (7 s at the latest); the worktree walk of
# context-budget.py 1 s (8 s); and the git reads of the baseline, nested repositories included,
# end 10 s after the start whatever came before (stop-handoff.py's READS_SECONDS, the deadline
# its own reads keep too). 10 s of waiting leaves 5 s for the interpreter to start on a busy
# machine and for the rest, which waits on nothing.
PRUNE_SECONDS = 3.0
READ_LIMIT = 256 * 1024  # far more than 10,000 characters, even after comments are removed
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_STATE = ".session-state.md"
OLDER_DEFAULT_STATE = ".claude/session-state.md"  # 0.1.0's default, read while no new one exists
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
# What stop-handoff.py must define for the baseline to be recorded; without any one of them no
# git read is started, so none is left running.
BASELINE_NAMES = ("repository_reads", "start_commands", "finish_commands", "repository_facts",
                  "reads_deadline", "current_reading", "baseline_path",
                  "write_inside_claude_folder")


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


def work_tree_top(folder):
    """The nearest folder at or above `folder` that holds a .git entry, as git finds the top of
    a work tree; `folder` itself outside any."""
    here = folder
    while not os.path.lexists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            return folder
        here = parent
    return here


def setting_path(project, name, default):
    return os.path.join(project, os.environ.get(name) or default)


def shown_path(project, path):
    try:
        relative = os.path.relpath(path, project)
    except ValueError:
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


def text_field(hook_input, name):
    value = hook_input.get(name)
    return value if isinstance(value, str) and value and "\0" not in value else None


def regular_file_info(path):
    """stat of a regular file, or None: a FIFO, a folder or a dangling link is never opened."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info if stat.S_ISREG(info.st_mode) else None


def injected_text(budget, project, path, refusals):
    """The text of a file the injection shows, read under context-budget.py's rule of what the
    hooks may show the agent (read_project_text: inside the project, a regular file, no deny
    rule covering it): None when nothing is there or it is refused, the refusal then joining
    `refusals`. Without that sibling no file is shown, since nothing else can say which may be."""
    if not os.path.exists(path):
        return None
    answer = sibling_part(None, budget, "read_project_text", project, os.environ, path,
                          READ_LIMIT)
    try:
        text, refusal = answer
    except (TypeError, ValueError):
        text, refusal = None, ("- %s was not read: context-budget.py, which decides what the "
                               "hooks may read, is missing or failed." % shown_path(project, path))
    if isinstance(refusal, str):
        refusals.append(refusal)
    return text if isinstance(text, str) else None


# --- siblings, loaded in-process ----------------------------------------------------------

# Where compiled siblings are kept, under the user's home. Never in the hook folder: whatever a
# repository can hold, a repository can forge, and Python runs a __pycache__ entry without
# comparing its code with the source (an unchecked-hash .pyc is not even compared by hash).
CODE_CACHE = os.path.join(".cache", "memory-context-protocol")
CODE_CACHE_ENTRIES = 64  # a few releases of three siblings for a few interpreters
SOURCE_LIMIT = 1024 * 1024


def load_sibling(file_name):
    """A sibling hook file as a module, run from its own source: under `python -I` the hook
    folder is not on sys.path, and nothing there may shadow the standard library. The code run
    is the source as it is now, compiled here or taken from this user's cache of earlier
    compilations of the same bytes (code_for); a __pycache__ beside the hooks is never read."""
    path = os.path.join(HOOK_DIR, file_name)
    module = type(sys)("mcp_" + file_name[:-len(".py")].replace("-", "_"))
    module.__file__ = path
    try:
        exec(code_for(hook_source(path), path), vars(module))
    except Exception:
        return None
    return vars(module)


def hook_source(path):
    """The bytes of a sibling hook, read whole, or an OSError."""
    data = regular_file_bytes(path, SOURCE_LIMIT + 1)
    if len(data) > SOURCE_LIMIT:
        raise OSError("too large for a hook: %s" % path)
    return data


def regular_file_bytes(path, limit):
    """The first `limit` bytes of a regular file, or an OSError: opened without waiting, so a
    FIFO in its place never holds the session's start."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError("not a regular file: %s" % path)
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, limit - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def code_for(source, path):
    """The code of `source`: compiled earlier from the very same bytes by this interpreter
    version, as kept in this user's cache, or compiled now (about 10 ms a sibling) and kept. An
    entry is named by a hash of the interpreter's version and the source, so a changed source
    never meets an old entry; it is read only from a folder this user alone can write."""
    folder = code_cache_folder()
    if folder is None:
        return compile(source, path, "exec")
    entry = os.path.join(folder, source_digest(source) + ".code")
    code = cached_code(entry)
    if code is None:
        code = compile(source, path, "exec")
        if not sys.dont_write_bytecode:  # a caller that writes no bytecode (install.py --check)
            keep_code(folder, entry, code)
    return code


def code_cache_folder():
    """The cache folder under HOME, made if missing; None where it cannot be trusted: HOME unset
    or relative, a project settings file that names HOME (its "env" could move it into a folder
    the repository fills), or a folder that is a link, another user's, or writable by others.
    On Windows, where there is no such ownership to check, siblings are compiled every time."""
    home = os.environ.get("HOME")
    if os.name != "posix" or not home or not os.path.isabs(home) or project_settings_name("HOME"):
        return None
    folder = os.path.join(home, CODE_CACHE)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except (OSError, ValueError):
        return None
    return folder if is_mine_alone(info, stat.S_ISDIR) else None


def is_mine_alone(info, kind):
    """Whether a stat result is of the expected kind, owned by this user and writable by no
    one else."""
    return kind(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o022


def project_settings_name(name):
    """Whether the project's own settings files (.claude/settings.json, settings.local.json)
    mention `name` at all: read as bytes, since parsing JSON costs more than this whole check."""
    project = project_dir()
    if project is None:
        return False
    quoted = ('"%s"' % name).encode("ascii")
    for file_name in ("settings.json", "settings.local.json"):
        try:
            if quoted in regular_file_bytes(os.path.join(project, ".claude", file_name),
                                            SOURCE_LIMIT):
                return True
        except (OSError, ValueError):
            continue
    return False


def source_digest(source):
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    digest = blake2b(sys.version.encode("utf-8", "replace") + b"\0", digest_size=32)
    digest.update(source)
    return digest.hexdigest()


def cached_code(entry):
    """The code kept at `entry`, or None when there is none this user wrote."""
    import marshal
    try:
        fd = os.open(entry, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, ValueError):
        return None
    try:
        if not is_mine_alone(os.fstat(fd), stat.S_ISREG):
            return None
        chunks = []
        while True:
            chunk = os.read(fd, 1024 * 1024)
            if not chunk:
                break
            chunks.append(chunk)
        code = marshal.loads(b"".join(chunks))
    except Exception:  # unreadable, or not a marshalled value: compile instead
        return None
    finally:
        os.close(fd)
    return code if isinstance(code, type(cached_code.__code__)) else None


def keep_code(folder, entry, code):
    """Write the entry atomically, readable by this user alone; past CODE_CACHE_ENTRIES the
    oldest entries go. A failure costs only the next start a compilation."""
    import marshal
    temporary = "%s.%d.tmp" % (entry, os.getpid())
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            data = memoryview(marshal.dumps(code))
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        os.replace(temporary, entry)
        forget_old_code(folder)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass


def forget_old_code(folder):
    entries = []
    for item in os.scandir(folder):
        if item.name.endswith(".code") and item.is_file(follow_symlinks=False):
            entries.append((item.stat(follow_symlinks=False).st_mtime, item.path))
    for _, path in sorted(entries)[:-CODE_CACHE_ENTRIES]:
        os.unlink(path)


def sibling_part(default, sibling, name, *args):
    """What the sibling's function `name` returns for `args`, or `default` when the sibling is
    missing, is a copy from another release that lacks the name, or fails: each sibling call is
    one part of the injection, and a part that fails costs only itself."""
    try:
        return sibling[name](*args)
    except Exception:
        return default


def unique(lines):
    """The lines in order, each once: two settings may name one refused file."""
    seen = set()
    return [line for line in lines if not (line in seen or seen.add(line))]


def text_lines(value):
    """The strings of a sibling's answer; anything else it returned is not shown."""
    try:
        return [line for line in value if isinstance(line, str)]
    except TypeError:
        return []


def prune_worktrees(project, session_dirs):
    """Lines saying what was pruned; the pruner is loaded only when there is a folder to prune."""
    if not os.path.isdir(setting_path(project, "MCP_WORKTREE_DIR", DEFAULT_WORKTREE_DIR)):
        return []
    pruner = load_sibling("prune-worktrees.py")
    return text_lines(sibling_part([], pruner, "prune", project, os.environ, session_dirs,
                                   PRUNE_SECONDS))


def budget_points(budget, project, transcript):
    env = dict(os.environ)
    if transcript:
        env["MCP_TRANSCRIPT_PATH"] = transcript
    return text_lines(sibling_part([], budget, "budget_points", project, env))


def memory_defects(budget, project):
    """The memory defects context-budget.py finds at every start (dead pointers, an unclosed
    comment, an auto-memory index past its cap); none from a sibling without them."""
    return text_lines(sibling_part([], budget, "memory_defects", project, dict(os.environ)))


def format_report(points, defects=(), refusals=()):
    """The headings context-budget.py prints, each followed by one line per point or defect.
    The injection formats them itself because it may add a point of its own, the cut, to the
    sibling's points; scripts match the wording."""
    lines = []
    if points:
        lines += ["## Context budget — over on %d point(s)" % len(points)] + list(points)
    if defects:
        lines += ["## Memory defects — %d found" % len(defects)] + list(defects)
    if refusals:
        lines += ["## Not read — %d refused" % len(refusals)] + list(refusals)
    return lines


# --- the baseline -------------------------------------------------------------------------

def start_git_reads(guard, project):
    """The git reads the baseline needs, started now so that git works while the budgets are
    weighed; None when the guard lacks a name the baseline needs, or outside any guard."""
    if guard is None or not all(callable(guard.get(name)) for name in BASELINE_NAMES):
        return None
    try:
        return guard["start_commands"](guard["repository_reads"](project))
    except Exception:
        return None


def baseline_time(guard, project, hook_input):
    """When this session's baseline was last written, before this start records anything: the
    moment its conversation last took in the memory. None when there is none."""
    path = sibling_part(None, guard, "baseline_path", project, text_field(hook_input, "session_id"))
    info = regular_file_info(path) if isinstance(path, str) else None
    return info.st_mtime if info else None


def record_baseline(guard, project, hook_input, git_reads):
    """Snapshot the repository for this session's Stop hook. The baseline is a part of its own:
    whatever fails in it, the injection is printed."""
    try:
        reading = guard["current_reading"](project, guard["reads_deadline"](STARTED),
                                           reads=git_reads)
        if reading is None:
            return
        path = guard["baseline_path"](project, text_field(hook_input, "session_id"))
        if guard["write_inside_claude_folder"](project, path, reading.recorded()):
            transcript = text_field(hook_input, "transcript_path")
            forget_stale_baselines(path, guard["baseline_path"](project, None),
                                   os.path.dirname(transcript) if transcript else None)
    except Exception:
        pass


def forget_stale_baselines(current, shared_path, transcript_folder):
    """Baselines of sessions that ended over a week ago, and temporary files a crash left
    behind. Only what this hook could have written goes: a file named `<baseline>.<session
    id>` (or its temporary `.<pid>.tmp`) that holds a state or nothing. A session whose
    transcript changed within the week is still going, however old its baseline."""
    folder = os.path.dirname(current)
    prefix = os.path.basename(shared_path) + "."
    cutoff = time.time() - BASELINE_RETENTION_SECONDS
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        if not entry.name.startswith(prefix) or entry.path == current:
            continue
        session, temporary = baseline_name(entry.name[len(prefix):])
        if session is None:
            continue
        try:
            if (entry.stat(follow_symlinks=False).st_mtime < cutoff
                    and holds_a_state(entry, temporary)
                    and not session_is_alive(transcript_folder, session, cutoff)):
                os.unlink(entry.path)
        except OSError:
            pass


def baseline_name(suffix):
    """(session id, whether a temporary file) for `<id>`, `<id>.<pid>.tmp` or, the shared
    baseline's temporary file, `<pid>.tmp` (id ""); (None, False) for any other name."""
    parts = suffix.split(".")
    if len(parts) == 2 and parts[0].isdigit() and parts[1] == "tmp":
        return "", True
    temporary = len(parts) == 3 and parts[1].isdigit() and parts[2] == "tmp"
    session = parts[0] if temporary or len(parts) == 1 else ""
    valid = 0 < len(session) <= 128 and all(c.isascii() and (c.isalnum() or c in "-_")
                                            for c in session)
    return (session, temporary) if valid else (None, False)


def holds_a_state(entry, temporary):
    """A regular file that starts as every baseline does, or an empty temporary file."""
    if not entry.is_file(follow_symlinks=False):
        return False
    with open(entry.path, "rb") as stream:
        head = stream.read(5)
    return head == b"head " or (temporary and head == b"")


def session_is_alive(transcript_folder, session, cutoff):
    if not transcript_folder or not session:
        return False
    try:
        return os.stat(os.path.join(transcript_folder, session + ".jsonl")).st_mtime >= cutoff
    except (OSError, ValueError):
        return False


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


def without_comments(text, budget, enough=None):
    """The lines of a Markdown file as the agent should read them: comment text removed (an
    inline comment leaves the rest of its line, a block disappears). context-budget.py owns the
    reading of comments and code spans, so the injection and its unclosed-comment report agree:
    an unclosed '<!--' hides nothing here, and it is reported there. Without that sibling the
    text goes in as written. Lines stop once they hold more than `enough` characters: more
    could never be shown, and the cut is reported all the same."""
    pieces = []
    position = 0
    for start, end in comment_spans(budget, text):
        pieces.append(text[position:start] + "\0")  # \0 marks a line that held a comment
        position = end
    pieces.append(text[position:])
    lines = []
    characters = 0
    for line in "".join(pieces).split("\n"):
        if "\0" in line:
            line = line.replace("\0", "")
            if not line.strip():
                continue
        lines.append(line.rstrip())
        characters += len(line) + 1
        if enough is not None and characters > enough:
            break
    return lines


def comment_spans(budget, text):
    """(start, end) of each closed comment as context-budget.py reads them, in order; none when
    that sibling cannot say, and then the text goes in as written."""
    spans = sibling_part(None, budget, "hidden_spans", text)
    try:
        return [(int(start), int(end)) for start, end in spans[0]]
    except Exception:
        return []


def clipped(line, limit):
    """A line of at most `limit` characters, marked '…' where it was shortened. Index lines are
    never clipped: the index is curated, and a shortened line would hide part of a memory unsaid."""
    return line if len(line) <= limit else line[:limit] + "…"


def index_section(project, budget, refusals):
    path = setting_path(project, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    text = injected_text(budget, project, path, refusals)
    if text is None:
        return None
    shown = shown_path(project, path)
    title = "## Memory index (%s — shared, committed; HTML comments omitted)" % shown
    while text.endswith("\n"):
        text = text[:-1]
    lines = without_comments(text, budget, enough=INJECTION_LIMIT)
    lines = with_fences_closed(lines)
    listing = text_lines(sibling_part([], budget, "memory_listing", project, dict(os.environ)))
    if listing:
        lines += [""] + [clipped(line, REPORT_LINE_CHARS) for line in listing]
    return Section(title, lines, shown, keep_order=1)


def handoff_path(project):
    """MCP_SESSION_STATE when set; else the default at the project root or, while nothing is
    there, the older default inside .claude/, which a project installed before may still hold."""
    configured = os.environ.get("MCP_SESSION_STATE")
    if configured:
        return os.path.join(project, configured)
    path = os.path.join(project, DEFAULT_STATE)
    older = os.path.join(project, OLDER_DEFAULT_STATE)
    return older if not os.path.lexists(path) and os.path.lexists(older) else path


def handoff_section(project, budget, now, seen_at=None, refusals=None):
    """The first lines of the handoff; None when there is none, or when it was last written
    before `seen_at`, the moment the conversation last took it in."""
    path = handoff_path(project)
    info = regular_file_info(path)
    if info is not None and seen_at is not None and info.st_mtime <= seen_at:
        return None
    text = injected_text(budget, project, path, [] if refusals is None else refusals)
    if text is None or info is None:
        return None
    shown = shown_path(project, path)
    title = "## Last handoff (%s — local to this machine, first %d lines)" % (shown, STATE_EXCERPT_LINES)
    lines = without_comments(text, budget)[:STATE_EXCERPT_LINES]
    while lines and not lines[-1].strip():
        lines.pop()
    age_days = int((now - info.st_mtime) // 86400)
    notes = []
    if age_days >= STALE_HANDOFF_DAYS:
        notes.append("WARNING: the handoff above is %d days old. Commits made since then are not "
                     "in it: where it and `git log` disagree, trust git log." % age_days)
    lines = [clipped(line, DISPLAY_LINE_CHARS) for line in lines]
    return Section(title, with_fences_closed(lines), shown, keep_order=0, notes=notes)


def harness_length(text):
    """Length as the harness counts it: UTF-16 code units, so characters outside the BMP count
    twice; UTF-8 bytes under Codex CLI, which truncates a hook's output past 10,000 of them."""
    if text.isascii():
        return len(text)
    if measured_in_utf8_bytes:
        return len(text.encode("utf-8", "surrogatepass"))
    # Each character outside the BMP has exactly one UTF-8 lead byte from F0 to F4; counting
    # them spares importing the UTF-16 codec.
    encoded = text.encode("utf-8", "surrogatepass")
    return len(text) + sum(encoded.count(lead) for lead in b"\xf0\xf1\xf2\xf3\xf4")


# The unit of INJECTION_LIMIT: UTF-16 code units unless the hook input says Codex CLI runs it.
measured_in_utf8_bytes = False


def measure_as(harness):
    global measured_in_utf8_bytes
    measured_in_utf8_bytes = harness == "codex"


OPENING = "<project-memory source=\"SessionStart hook\">"
CLOSING_TAG = "</project-memory>"
TELL_THE_USER = ("Tell the user about the budget report above in one line before the first answer: "
                 "a context problem is invisible from inside the session that has it.")
CUT_POINT = ("- The session-start injection is over the harness's limit of %d characters, beyond "
             "which the agent sees only a short preview. It was cut as marked below; shrink the "
             "memory index with /dream." % INJECTION_LIMIT)
# The last line, by how the session starts: only a new conversation needs /catchup, which reads
# the memory and git afresh and ends by asking for the task. A compacted, resumed or forked one
# is in the middle of its task, and its conversation (or the compaction's summary) holds it. The
# harness's git snapshot is new after a compaction but as old as the conversation on a resume.
STALE_GIT_SNAPSHOT = ("The git status the harness attached dates from this conversation's start: "
                      "run git status and git log before relying on it.")
CLOSINGS = {
    "compact": "The conversation was just compacted: carry on with the task in hand, with the "
               "memory above for reference. Do not run /catchup.",
    "resume": "This session was resumed and its conversation holds its earlier context: carry on "
              "from there. Do not run /catchup. " + STALE_GIT_SNAPSHOT,
    "fork": "This session was forked from a conversation it still holds: carry on from there. "
            "Do not run /catchup. " + STALE_GIT_SNAPSHOT,
}
NEW_CONVERSATION_CLOSING = "Start with /catchup before answering the first prompt."


def closing_line(source):
    return CLOSINGS.get(source, NEW_CONVERSATION_CLOSING)


def framed(report_lines, pruned, sections, closing):
    """The injection's lines, between its opening tag and its closing line and tag."""
    lines = [OPENING]
    if report_lines:
        lines += report_lines + ["", TELL_THE_USER, ""]
    lines += pruned
    for section in sections:
        if lines[-1:] != [""] and len(lines) > 1:
            lines.append("")
        lines += [section.title] + section.lines + ([""] + section.notes if section.notes else [])
    return lines + ["", closing, CLOSING_TAG]


def printable(line):
    """Every character Python deems unprintable, other than tab, shown as '?': control codes,
    so a file name or a note cannot steer the terminal, and lone surrogates, which is how a name
    that is not UTF-8 arrives and which no encoder accepts."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in line)


def as_text(lines):
    """The one way out for every line of the injection: made printable, so whatever a file,
    a file name or a sibling holds, the text shows as written and encodes as UTF-8."""
    return "\n".join(printable(line) for line in lines) + "\n"


def fence_after(fence, line):
    """The fenced code block open after `line`, as the line that would close it, given the one
    open before it (None: none). Read as CommonMark reads fences: at most three spaces, then
    three or more backticks or tildes (a backtick fence's info string holds no backtick); the
    block ends at a line of the same character, at least as long, with only spaces after it."""
    stripped = line.lstrip(" ")
    mark = stripped[:1]
    if len(line) - len(stripped) > 3 or mark not in ("`", "~"):
        return fence
    run = len(stripped) - len(stripped.lstrip(mark))
    rest = stripped[run:]
    if fence is None:
        return mark * run if run >= 3 and not (mark == "`" and "`" in rest) else None
    return None if mark == fence[0] and run >= len(fence) and not rest.strip() else fence


def fence_left_open(lines):
    fence = None
    for line in lines:
        fence = fence_after(fence, line)
    return fence


def with_fences_closed(lines):
    """A section's lines with a fenced block it leaves open closed at its end, so what follows
    in the injection (the next section, the closing line) is never read as code."""
    fence = fence_left_open(lines)
    return lines + [fence] if fence else lines


def cut_to_fit(sections, room):
    """Give each section whole lines while room lasts: the handoff first, then the index, which
    is the file that grows and the one the agent can open itself. Room for every section's cut
    notice is set aside first, so no notice is ever lost to a section before it; a section that
    fits whole passes its share on. A cut inside a fenced code block closes the block before
    its notice, and the closing line is paid for from the section's room."""
    ordered = sorted(sections, key=lambda s: s.keep_order)
    notices = ["[cut here: the injection limit is %d characters; read %s in full]"
               % (INJECTION_LIMIT, section.source) for section in ordered]
    room -= sum(harness_length(notice) + 1 for notice in notices)
    for section, notice in zip(ordered, notices):
        notice_cost = harness_length(notice) + 1
        room += notice_cost
        costs = [harness_length(line) + 1 for line in section.lines]
        if sum(costs) <= room:
            room -= sum(costs)
            continue
        kept, fence = [], None
        for line, cost in zip(section.lines, costs):
            after = fence_after(fence, line)
            if cost + closing_cost(after) > room - notice_cost:
                break
            kept.append(line)
            room -= cost
            fence = after
        # Its notes are in the frame the room was measured from.
        section.lines = kept + ([fence] if fence else []) + [notice]
        room -= notice_cost + closing_cost(fence)


def within_limit(lines):
    """A last resort the cut above reaches only when the frame alone nearly fills the limit
    (a sibling giving many long points): lines go from just above the closing line until the
    rest fits, so the opening tag, the closing line and the closing tag always stay. The cut
    above has then left each section its notice alone, so no fence is left open."""
    costs = [harness_length(printable(line)) + 1 for line in lines]
    total = sum(costs)
    while total > INJECTION_LIMIT and len(lines) > 4:
        total -= costs.pop(-4)
        del lines[-4]
    return lines


def closing_cost(fence):
    return len(fence) + 1 if fence else 0


def injection(points, pruned, sections, closing, defects=(), refusals=()):
    """The text to print: within the limit, cut as marked when the whole would not fit. No
    budget point, memory defect or pruning note is longer than REPORT_LINE_CHARS, so one
    pathological line (a link to a name thousands of characters long) cannot crowd out the
    memory."""
    points = [clipped(point, REPORT_LINE_CHARS) for point in points]
    defects = [clipped(defect, REPORT_LINE_CHARS) for defect in defects]
    pruned = [clipped(line, REPORT_LINE_CHARS) for line in pruned]
    refusals = [clipped(line, REPORT_LINE_CHARS) for line in unique(refusals)]
    report_lines = format_report(points, defects, refusals)
    text = as_text(framed(report_lines, pruned, sections, closing))
    if harness_length(text) <= INJECTION_LIMIT:
        return text
    report_lines = format_report(points + [CUT_POINT], defects, refusals)
    frame = framed(report_lines, pruned,
                   [Section(s.title, [], s.source, s.keep_order, s.notes) for s in sections],
                   closing)
    cut_to_fit(sections, INJECTION_LIMIT - harness_length(as_text(frame)))
    return as_text(within_limit(framed(report_lines, pruned, sections, closing)))


# --- main -----------------------------------------------------------------------------------

def in_the_harness_form(harness, text):
    """The injection as the harness passes it to the model: Gemini CLI takes only a JSON
    additionalContext (plain output goes to its terminal); Claude Code and Codex CLI take
    plain text."""
    if harness != "gemini":
        return text
    import json  # only under Gemini: the plain path spares its start-up time
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": text}}, ensure_ascii=False) + "\n"


def write_stdout(text):
    try:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    except (OSError, ValueError, AttributeError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        except OSError:
            pass


def read_path(project, guard, hook_input, pruned=(), record=True, budget=None, refusals=()):
    """The injection for a session starting now; with `record`, also its baseline. `guard` is
    the loaded stop-handoff.py, or None when it is missing: then no baseline is recorded.
    `budget` is the loaded context-budget.py (loaded here when not given), and `refusals` the
    lines already written about settings the hooks ignored.

    A resumed or compacted session keeps the baseline it has, so git is run only when one is
    to be written. A resumed or forked conversation already holds the handoff it was started
    with: it is shown again only when written since (fork has no baseline of its own yet, so it
    is shown)."""
    source = text_field(hook_input, "source")  # any other value starts a new conversation
    seen_at = baseline_time(guard, project, hook_input)
    keeps_baseline = source in ("resume", "compact") and seen_at is not None
    git_reads = start_git_reads(guard, project) if record and not keeps_baseline else None
    if budget is None:
        budget = load_sibling("context-budget.py")
    points = budget_points(budget, project, text_field(hook_input, "transcript_path"))
    defects = memory_defects(budget, project)
    if git_reads is not None:
        record_baseline(guard, project, hook_input, git_reads)
    handoff_seen_at = seen_at if source in ("resume", "fork") else None
    refusals = list(refusals)
    sections = [s for s in (index_section(project, budget, refusals),
                            handoff_section(project, budget, time.time(), handoff_seen_at,
                                            refusals)) if s]
    return injection(points, list(pruned), sections, closing_line(source), defects, refusals)


def preview_injection(project):
    """What a session starting now would be shown, with nothing pruned or recorded: for
    install.py --check, which weighs everything that loads before the first turn."""
    return read_path(project, None, {}, record=False)


def main():
    project = project_dir()
    if project is None:
        return
    guard = load_sibling("stop-handoff.py")
    if guard is not None:
        guard["STARTED"] = STARTED  # the guard's waits count from this hook's start (§7.8)
    hook_input = sibling_part({}, guard, "read_hook_input")
    if not isinstance(hook_input, dict):
        hook_input = {}
    harness = sibling_part("claude", guard, "harness", hook_input)
    measure_as(harness)
    budget = load_sibling("context-budget.py")
    refusals = adopt_the_trusted_environment(budget, project)
    cwd = text_field(hook_input, "cwd")
    # Pruning deletes: it runs only where the settings that steer it could be checked.
    pruned = prune_worktrees(project, [cwd] if cwd else []) if budget is not None else []
    write_stdout(in_the_harness_form(harness, read_path(project, guard, hook_input, pruned,
                                                        budget=budget, refusals=refusals)))


def adopt_the_trusted_environment(budget, project):
    """Make this process's environment, before any sibling reads it, the one context-budget.py
    trusts (trusted_environment): without the path variables a project settings file set to
    lead outside the project, since the repository's settings may not point the hooks at the
    user's files. The lines that say what was ignored."""
    answer = sibling_part(None, budget, "trusted_environment", project, dict(os.environ))
    try:
        trusted, lines = answer
        names = [name for name in os.environ if name not in trusted]
    except (TypeError, ValueError):
        return []
    for name in names:
        os.environ.pop(name, None)
    for name, value in trusted.items():
        if isinstance(name, str) and isinstance(value, str) and os.environ.get(name) != value:
            try:
                os.environ[name] = value
            except ValueError:  # a NUL in it: the variable goes
                os.environ.pop(name, None)
    return [line for line in lines if isinstance(line, str)] if isinstance(lines, list) else []


def keep_the_hook_folder_off_the_import_path():
    """Run without -I (`python3 .claude/hooks/session-start.py`, as a user or a command
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
    except BaseException:  # the read path must never take the session down
        pass
    sys.exit(0)
