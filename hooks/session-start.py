#!/usr/bin/env python3
"""session-start: the read path. Runs at every session start, resume, fork, /clear and compaction.

Why it exists: a fresh context window remembers nothing, and a context problem cannot be seen
from inside the session that has it. Whatever this hook prints is in the agent's context before
the first turn, at no tool call: the budget report, recent git history, the memory index and the
last handoff.

What it promises:
- Exit status 0 on every path, and no traceback, whatever it is given.
- The injection never exceeds the harness's 10,000-character limit: when it would, the budget
  report and instructions stay first, the rest is cut at line boundaries, and the cut says which
  file holds the whole text (and counts as a budget point).
- Its siblings do their own parts in-process, loaded by path: prune-worktrees.py prunes merged
  agent worktrees first (and what it pruned is shown), context-budget.py weighs the budgets,
  and stop-handoff.py reads the hook input, runs the git reads and defines the baseline. A
  sibling that is missing or broken costs only its own part of the injection.
- It records this session's baseline, so the Stop hook can tell whether the session did work.
  The baseline is keyed by session_id, so sessions sharing a checkout never erase each other's
  evidence, and a resume or compaction keeps the baseline of the session it continues.
- It writes only baselines, only inside the project's .claude/ folder of a git repository,
  atomically, and never through a symlink, and it deletes baselines a week old. Python keeps the
  siblings' bytecode in __pycache__ beside the hook files. Git runs without optional locks and
  without the repository's fsmonitor program.

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
# The harness kills this hook after the 15 s install.py writes into settings.json; the slowest
# path must end well before that: stdin held open 2 s, pruning 3 s plus the 2 s a started
# removal may overrun, and the git reads 6 s.
PRUNE_SECONDS = 3.0
GIT_READ_SECONDS = 6.0
READ_LIMIT = 256 * 1024  # far more than 10,000 characters, even after comments are removed
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_STATE = ".claude/session-state.md"
DEFAULT_WORKTREE_DIR = ".claude/worktrees"


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
    """A sibling hook file as a module, loaded by path: under `python -I` the hook folder is
    not on sys.path, and nothing there may shadow the standard library. Its bytecode is cached
    in __pycache__ beside it (git-ignored), which saves compiling it at every start (see
    keep_bytecode_out_of_a_redirected_cache), and a damaged cache entry only costs a compile
    from source."""
    path = os.path.join(HOOK_DIR, file_name)
    name = "mcp_" + file_name[:-len(".py")].replace("-", "_")
    for run in (run_from_bytecode_cache, run_from_source):
        module = type(sys)(name)
        module.__file__ = path
        try:
            run(module, path)
            return vars(module)
        except Exception:
            continue
    return None


def keep_bytecode_out_of_a_redirected_cache():
    """A __pycache__ that is a symlink or a junction is never written through. Decided once,
    before the first sibling loads: each look resolves two paths."""
    if leads_elsewhere(os.path.join(HOOK_DIR, "__pycache__")):
        sys.dont_write_bytecode = True


def leads_elsewhere(path):
    """Whether a path resolves somewhere other than where it stands: a symlink, or on Windows
    a junction, which os.path.islink does not see before Python 3.12."""
    where_it_stands = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
    return os.path.normcase(os.path.realpath(path)) != os.path.normcase(where_it_stands)


def run_from_bytecode_cache(module, path):
    source_file_loader()(module.__name__, path).exec_module(module)


def source_file_loader():
    """The class of the loader Python ran this file with, which caches bytecode in
    __pycache__: it is the one importlib.machinery exports, and importing that module to reach
    it would cost half a millisecond at every start."""
    loader = globals().get("__loader__")
    if type(loader).__name__ == "SourceFileLoader" and hasattr(loader, "exec_module"):
        return type(loader)
    from importlib.machinery import SourceFileLoader
    return SourceFileLoader


def run_from_source(module, path):
    with open(path, "rb") as stream:
        exec(compile(stream.read(), path, "exec"), vars(module))


def prune_worktrees(project, session_dirs):
    """Lines saying what was pruned; the pruner is loaded only when there is a folder to prune."""
    if not os.path.isdir(setting_path(project, "MCP_WORKTREE_DIR", DEFAULT_WORKTREE_DIR)):
        return []
    pruner = load_sibling("prune-worktrees.py")
    if pruner is None:
        return []
    try:
        return pruner["prune"](project, os.environ, session_dirs, PRUNE_SECONDS)
    except Exception:
        return []


def budget_points(budget, project, transcript):
    if budget is None:
        return []
    env = dict(os.environ)
    if transcript:
        env["MCP_TRANSCRIPT_PATH"] = transcript
    try:
        return list(budget["budget_points"](project, env))
    except Exception:
        return []


def memory_defects(budget, project):
    """The memory defects context-budget.py finds at every start; none from a sibling without them."""
    if budget is None or "memory_defects" not in budget:
        return []
    try:
        return list(budget["memory_defects"](project, dict(os.environ)))
    except Exception:
        return []


def format_report(points, defects=()):
    """The headings context-budget.py prints. The injection formats them itself because it may
    add a point of its own, the cut, to the sibling's points; scripts match the wording."""
    lines = []
    if points:
        lines += ["## Context budget — over on %d point(s)" % len(points)] + list(points)
    if defects:
        lines += ["## Memory defects — %d found" % len(defects)] + list(defects)
    return "\n".join(lines)


# --- git ---------------------------------------------------------------------------------

def describe_status_entry(entry):
    code, path, original = entry
    name = path.decode("utf-8", "replace")
    if original is not None:
        name = "%s -> %s" % (original.decode("utf-8", "replace"), name)
    return "%s %s" % (code, name)


# --- the baseline -------------------------------------------------------------------------

def record_baseline(guard, project, hook_input, head, raw_status):
    """Snapshot the repository for this session's Stop hook. A resume or a compaction continues
    a session, so its baseline stays: work done before a compaction still counts at the stop."""
    path = guard["baseline_path"](project, text_field(hook_input, "session_id"))
    continues_session = hook_input.get("source") in ("resume", "compact")
    if continues_session and regular_file_info(path) is not None:
        return
    state = guard["repository_state"](project, head, raw_status)
    if guard["write_inside_claude_folder"](project, path, state):
        transcript = text_field(hook_input, "transcript_path")
        forget_stale_baselines(path, guard["baseline_path"](project, None),
                               os.path.dirname(transcript) if transcript else None)


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
    comments = budget["hidden_spans"](text)[0] if budget else []
    pieces = []
    position = 0
    for start, end in comments:
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


def printable(line):
    """Control characters shown as '?': a file name or a note cannot steer the terminal."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in line)


def clipped(line):
    """A git or handoff line, printable and at most DISPLAY_LINE_CHARS long. Index lines are not
    shortened: the index is curated, and a shortened line would hide part of a memory unsaid."""
    line = printable(line)
    return line if len(line) <= DISPLAY_LINE_CHARS else line[:DISPLAY_LINE_CHARS] + "…"


def git_section(commits, status_lines):
    lines = [clipped(line) for line in commits]
    lines += [clipped(line) for line in status_lines[:STATUS_LINES]]
    if len(status_lines) > STATUS_LINES:
        lines.append("… and %d more changed paths (git status)" % (len(status_lines) - STATUS_LINES))
    return Section("## Git", lines, "git log and git status", keep_order=1)


def index_section(project, budget):
    path = setting_path(project, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    text = read_text_head(path)
    if text is None:
        return None
    shown = shown_path(project, path)
    title = "## Memory index (%s — shared, committed; HTML comments omitted)" % shown
    while text.endswith("\n"):
        text = text[:-1]
    lines = without_comments(text, budget, enough=INJECTION_LIMIT)
    return Section(title, [printable(line) for line in lines], shown, keep_order=2)


def handoff_section(project, budget, now):
    path = setting_path(project, "MCP_SESSION_STATE", DEFAULT_STATE)
    info = regular_file_info(path)
    text = read_text_head(path) if info else None
    if text is None:
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
    return Section(title, [clipped(line) for line in lines], shown, keep_order=0, notes=notes)


def harness_length(text):
    """Length as the harness counts it: UTF-16 code units, so characters outside the BMP count twice."""
    if text.isascii():
        return len(text)
    # Each character outside the BMP has exactly one UTF-8 lead byte from F0 to F4; counting
    # them spares importing the UTF-16 codec.
    encoded = text.encode("utf-8", "surrogatepass")
    return len(text) + sum(encoded.count(lead) for lead in b"\xf0\xf1\xf2\xf3\xf4")


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
    index, which is the file that grows and the one the agent can open itself. Room for every
    section's cut notice is set aside first, so no notice is ever lost to a section before it;
    a section that fits whole passes its share on."""
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
        kept = []
        for line, cost in zip(section.lines, costs):
            if cost > room - notice_cost:
                break
            kept.append(line)
            room -= cost
        section.lines = kept + [notice]  # its notes are in the frame the room was measured from
        room -= notice_cost


def injection(points, pruned, sections, defects=()):
    closing = "Start with /catchup before answering the first prompt."
    report_lines = format_report(points, defects).split("\n") if points or defects else []
    text = assemble(report_lines, pruned, sections, closing)
    if harness_length(text) <= INJECTION_LIMIT:
        return text
    points = points + ["- The session-start injection is over the harness's limit of %d characters, "
                       "beyond which the agent sees only a short preview. It was cut as marked "
                       "below; shrink the memory index with /dream." % INJECTION_LIMIT]
    report_lines = format_report(points, defects).split("\n")
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


def read_path(project, guard, hook_input, pruned=(), record=True):
    """The injection for a session starting now; with `record`, also its baseline. `guard` is
    the loaded stop-handoff.py, or None when it is missing: then there is no git section."""
    git_reads = guard["start_commands"](guard["repository_reads"](project)) if guard else None
    budget = load_sibling("context-budget.py")
    points = budget_points(budget, project, text_field(hook_input, "transcript_path"))
    defects = memory_defects(budget, project)
    facts = guard["repository_facts"](guard["finish_commands"](git_reads, GIT_READ_SECONDS)) \
        if guard else None
    sections = []
    if facts is not None:
        head, commits, raw_status = facts
        if record:
            record_baseline(guard, project, hook_input, head, raw_status)
        entries = guard["status_entries"](raw_status)
        sections.append(git_section(commits, [describe_status_entry(e) for e in entries]))
    sections += [s for s in (index_section(project, budget),
                             handoff_section(project, budget, time.time())) if s]
    return injection(points, list(pruned), sections, defects)


def preview_injection(project):
    """What a session starting now would be shown, with nothing pruned or recorded: for
    install.py --check, which weighs everything that loads before the first turn."""
    keep_bytecode_out_of_a_redirected_cache()
    return read_path(project, load_sibling("stop-handoff.py"), {}, record=False)


def main():
    project = project_dir()
    if project is None:
        return
    keep_bytecode_out_of_a_redirected_cache()
    guard = load_sibling("stop-handoff.py")
    hook_input = guard["read_hook_input"]() if guard else {}
    cwd = text_field(hook_input, "cwd")
    pruned = prune_worktrees(project, [cwd] if cwd else [])
    write_stdout(read_path(project, guard, hook_input, pruned))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # the read path must never take the session down
        pass
    sys.exit(0)
