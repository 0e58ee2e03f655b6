#!/usr/bin/env python3
"""context-budget: what the hooks read and show. The project and the files it names, the hook
input, the harness's settings as the harness applies them, the environment the user set, the
one rule for what may be shown to the agent, the Markdown reading, the context budgets with the
memory defects found at every start, and the session-start injection fitted to its limit.

Why it exists: every file that loads at session start is a standing tax on every request, and a
budget binds only where it is checked; and a repository is untrusted input, so what the hooks
read of it is decided in one place. session-start.py and stop-handoff.py load this file through
stop-handoff.py's load_sibling; install.py --check and memory_health.py load it by its path. The
names they use are listed in __all__. Run alone (`python3 -I -S context-budget.py`, as /dream
and /memory-status run it), it prints the budget report of the project it stands in.

What it promises:
- Silence while every budget holds and the memory has none of the start's defects; otherwise a
  heading that counts the points, then one line per point naming the file, its measure, the
  budget and the repair. Exit status 0 on every path; run alone it reads no standard input.
- Its cost does not grow with the transcript (one stat call) or with the index (one streaming
  count, only its first 64 KiB parsed, the link reading bounded by the characters it reads);
  the worktree budget walks its folder for at most WALK_SECONDS (1). Nothing here runs git.
- It shows the agent only what the repository's reviewer could see and the project's rules
  allow (read_project_text, spec §8.8): a regular file, reached through no symbolic link inside
  the project, covered by none of the harness's `Read(...)` deny rules. Where it cannot read a
  settings file the harness may apply, it shows nothing a rule might cover. A path variable a
  file of the repository sets (a settings "env", an agent's .env) may not lead outside the
  project, nor say where the user's own files are. Each refusal is one line.
- The injection never exceeds INJECTION_LIMIT, counted in UTF-8 bytes, which no harness's unit
  exceeds (Claude Code counts UTF-16 units, Codex CLI bytes): the report and instructions stay
  first, the rest is cut at line boundaries, a fenced block cut open is closed, and the cut
  says which file holds the whole text. Every character in it is printable and encodes.
- Standard library only; Python 3.8 or newer.

Configuration is by environment, with the names and defaults of the bash reference:
MCP_MEM_LINES (80), MCP_CLAUDE_KB (8), MCP_TRANSCRIPT_MB (60), MCP_WORKTREE_MB (100),
MCP_MEMORY_INDEX (memory/MEMORY.md), MCP_SESSION_STATE (.session-state.md, else the older
.claude/session-state.md), MCP_BASELINE (.claude/hooks/.session-baseline), MCP_THROTTLE_MIN (45),
MCP_CLAUDE_MD (CLAUDE.md), MCP_PROJECTS_DIR (~/.claude/projects), MCP_TRANSCRIPT_PATH,
MCP_WORKTREE_DIR (.claude/worktrees), MCP_MANAGED_SETTINGS_DIR (the platform's). The harness's
CLAUDE_PROJECT_DIR (else GEMINI_PROJECT_DIR), CLAUDE_CONFIG_DIR, CLAUDE_CODE_DISABLE_AUTO_MEMORY
and CLAUDE_CODE_PROJECT_DIR_NAME are honoured as it honours them, and so are the
autoMemoryEnabled and autoMemoryDirectory keys of its settings files. A numeric override that
is not a whole number falls back to its default.
"""
import os
import stat
import sys
import time

MIB = 1024 * 1024
# How long the worktree budget may walk its folder: part of the session start's time limits.
WALK_SECONDS = 1.0
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_STATE = ".session-state.md"
OLDER_DEFAULT_STATE = ".claude/session-state.md"  # 0.1.0's default, read while no new one exists
DEFAULT_BASELINE = ".claude/hooks/.session-baseline"
DEFAULT_THROTTLE_MINUTES = 45
DEFAULT_INSTRUCTION_FILE = "CLAUDE.md"
ALTERNATE_INSTRUCTION_FILE = os.path.join(".claude", "CLAUDE.md")
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
# The harness truncates an encoded folder name longer than this and appends a hash of the path.
ENCODED_NAME_LIMIT = 200
# How much of the index the session-start checks parse. An index within its budget is far
# smaller; an index beyond it is already reported, and the full report reads it whole.
INDEX_HEAD_BYTES = 64 * 1024
# The harness loads the first 200 lines or the first 25 KB of its auto-memory index, whichever
# ends first. "25 KB" is taken as 25 x 1,024 bytes.
AUTO_MEMORY_LINES = 200
AUTO_MEMORY_BYTES = 25 * 1024
# A line carrying this text is never reported by any memory check.
IGNORE_MARKER = "mcp-health: ignore"
NAMED_AT_MOST = 5
STDIN_SECONDS = 2.0
STDIN_LIMIT = 64 * MIB
CACHE_FORMAT = "v1"  # of what this file and prune-worktrees.py keep in the account's cache

# The names the other hook files, install.py --check and memory_health.py use; a test fails on
# any name one of them takes from this file that is not here.
__all__ = (
    "project_dir", "work_tree_top", "project_path", "index_path", "state_path", "state_paths",
    "baseline_path", "throttle_minutes", "handoff_time", "handoff_is_fresh",
    "stop_may_pass_at_once", "shown_path", "lies_within", "strictly_inside", "number_setting",
    "read_hook_input", "json_object", "json_string", "text_field", "harness",
    "read_plain_file", "read_text", "regular_file_size", "settings_files", "user_config_dir",
    "managed_instruction_file", "trusted_environment", "refused_settings",
    "project_setting_origin", "read_project_text", "PROJECT_SETTINGS_FILES",
    "hidden_spans", "fenced_blocks", "markdown_links", "link_spans", "is_relative_file_link",
    "frontmatter_end", "visible_lines", "is_silenced", "named_list", "entry_name",
    "first_entries", "notes_in", "is_real_folder", "instruction_file", "auto_memory_index",
    "auto_memory_load", "first_lost_entries", "overflow_cause", "home_shown",
    "budget_points", "memory_defects", "format_report", "refused_reads", "injection_for",
    "in_the_harness_form", "write_text_to", "keep_the_hook_folder_off_the_import_path",
    "why_not_read", "uses_cache", "account_cache", "new_digest", "cache_name", "is_dated_fact",
    "marker_lines", "facts_side_by_side", "run_of_facts", "title_lines", "file_verdicts",
    "looks_like_repository_path", "without_line_suffix", "paths_in_code", "fate_of",
    "marks_lines", "COMMANDS_OF_CHANGE", "MIB", "INDEX_HEAD_BYTES", "DEFAULT_INDEX", "DEFAULT_STATE",
    "AUTO_MEMORY_LINES", "AUTO_MEMORY_BYTES", "NAMED_AT_MOST", "ENTRIES_AT_MOST",
    "INJECTION_LIMIT")


# --- the project and the files it names -------------------------------------------------------

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
    """The nearest folder at or above `folder`, resolved, that holds a .git entry, as git finds
    the top of a work tree; `folder` itself, resolved, outside any."""
    here = real = os.path.realpath(folder)
    while not os.path.lexists(os.path.join(here, ".git")):
        parent = os.path.dirname(here)
        if parent == here:
            return real
        here = parent
    return here


def project_path(project, env, name, default):
    return os.path.join(project, env.get(name) or default)


def index_path(project, env):
    return project_path(project, env, "MCP_MEMORY_INDEX", DEFAULT_INDEX)


def state_path(project, env):
    """The session-state file: MCP_SESSION_STATE when set; else the default at the top of the
    project, or the older default inside .claude/ while only that one exists, so a project not
    yet updated keeps its handoff."""
    if env.get("MCP_SESSION_STATE"):
        return project_path(project, env, "MCP_SESSION_STATE", DEFAULT_STATE)
    path = os.path.join(project, DEFAULT_STATE)
    older = os.path.join(project, OLDER_DEFAULT_STATE)
    return older if not os.path.lexists(path) and os.path.lexists(older) else path


def state_paths(project, env):
    """Every path a handoff may be written to: the one configured, else both defaults."""
    if env.get("MCP_SESSION_STATE"):
        return [state_path(project, env)]
    return [os.path.join(project, DEFAULT_STATE), os.path.join(project, OLDER_DEFAULT_STATE)]


def baseline_path(project, env, session_id):
    """One baseline per session, so sessions sharing a checkout never erase each other's
    evidence of work; the shared file only when the harness gives no session_id."""
    shared = project_path(project, env, "MCP_BASELINE", DEFAULT_BASELINE)
    suffix = "".join(c for c in session_id or "" if c.isascii() and (c.isalnum() or c in "-_"))
    return shared + "." + suffix[:128] if suffix else shared


def throttle_minutes(env):
    return number_setting(env, "MCP_THROTTLE_MIN", DEFAULT_THROTTLE_MINUTES)


def handoff_time(project, env):
    """The session-state file's modification time in ns, or None without such a regular file."""
    try:
        info = os.stat(state_path(project, env))
    except (OSError, ValueError):
        return None
    return info.st_mtime_ns if stat.S_ISREG(info.st_mode) else None


def handoff_is_fresh(written_ns, env):
    """Whether the handoff was written within the throttle window, and not in the future (a
    skewed clock or a copied file must not silence the guard for good)."""
    if written_ns is None:
        return False
    age_seconds = time.time() - written_ns / 1e9
    return -60 < age_seconds and age_seconds // 60 < throttle_minutes(env)


def stop_may_pass_at_once(project, env):
    """The Stop guard's cheapest way out, before anything else is read: a fresh handoff that a
    baseline written after it already took in (the folder of the baselines changed since; both
    times within one tick of the file system's clock tell nothing)."""
    written_ns = handoff_time(project, env)
    if not handoff_is_fresh(written_ns, env):
        return False
    folder = os.path.dirname(project_path(project, env, "MCP_BASELINE", DEFAULT_BASELINE))
    try:
        return os.stat(folder).st_mtime_ns > written_ns
    except (OSError, ValueError):
        return False


def shown_path(project, path):
    """The path as the reader knows it: relative to the project when it lies inside."""
    try:
        relative = os.path.relpath(path, project)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


# --- the account's cache (stop-handoff.py's account_cache, handed over by the hook that loads
# this file: uses_cache) -----------------------------------------------------------------------

CACHE = []


def uses_cache(cache):
    CACHE[:] = [cache]


def account_cache(name, value=None):
    """The value the account's cache keeps under `name`, or None; given a value, keep it. Without
    a cache, or when it fails, nothing is kept and every start reads afresh."""
    try:
        return CACHE[0](name, value) if CACHE else None
    except Exception:
        return None


def new_digest():
    """A 128-bit BLAKE2b: the C module behind hashlib's, without hashlib's start-up."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(digest_size=16)


def cache_name(kind, path):
    """The name of one project's or folder's entry in the account's cache."""
    digest = new_digest()
    digest.update(os.path.abspath(path).encode("utf-8", "surrogateescape"))
    return "%s-%s.%s" % (kind, digest.hexdigest(), CACHE_FORMAT)


# --- the hook input ---------------------------------------------------------------------------

HOOK_INPUT = []  # the harness's input, once read


def read_hook_input():
    """The harness's JSON object, or {} for anything else; never waits longer than
    STDIN_SECONDS. Read once: a later call returns the same object."""
    if not HOOK_INPUT:
        HOOK_INPUT.append(read_stdin_object())
    return HOOK_INPUT[0]


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
        if len(data) <= MIB and data.rstrip().endswith(b"}") and json_object(data):
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
    """The JSON object `data` (bytes) holds, or {} for anything else."""
    value = json_value(data)
    return value if isinstance(value, dict) else {}


def json_value(data, strict=False):
    """The JSON value of bytes decoded as the harness decodes them (UTF-8, a byte that is not
    replaced, a leading byte-order mark dropped), or None when they hold no JSON. Nested past
    Python's limit: None too, or, with `strict`, the RecursionError."""
    if data.startswith(b"\xef\xbb\xbf"):  # by hand: the utf-8-sig codec is one more import
        data = data[3:]
    try:
        text = data.decode("utf-8", "replace").strip()
        return parse_json(text) if text else None
    except RecursionError:
        if strict:
            raise
        return None
    except Exception:  # malformed or truncated
        return None


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
    start-up time than a hook; the same C scanner does the parsing."""
    try:
        from _json import make_scanner
    except ImportError:
        from json import loads
        return loads(text)
    value, end = make_scanner(JsonOptions)(text, 0)
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


def json_string(text):
    """A JSON string literal, without importing the json package."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"%s"' % "".join(c if c >= " " else "\\u%04x" % ord(c) for c in escaped)


def text_field(hook_input, name):
    value = hook_input.get(name)
    return value if isinstance(value, str) and value and "\0" not in value else None


def harness(hook_input):
    """Which CLI runs the hook, from what it sends: Gemini CLI names its stop AfterAgent and
    gives hooks the session's id in GEMINI_SESSION_ID; Codex CLI alone sends a turn_id and names
    its transcripts rollout-<time>-<session id>.jsonl. Anything else is answered as Claude Code."""
    session = text_field(hook_input, "session_id")
    if (hook_input.get("hook_event_name") == "AfterAgent"
            or session is not None and os.environ.get("GEMINI_SESSION_ID") == session):
        return "gemini"
    transcript = text_field(hook_input, "transcript_path") or ""
    if "turn_id" in hook_input or os.path.basename(transcript).startswith("rollout-"):
        return "codex"
    return "claude"


def number_setting(env, name, default):
    value = (env.get(name) or "").strip()
    if value.isascii() and value.isdigit():
        return int(value)
    return default


def regular_file_size(path):
    """Size of a regular file, or None. Checked before any open: a FIFO must never be read."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def count_newlines(path):
    """Newline characters in a file, the arithmetic of `wc -l`, whatever its encoding."""
    if regular_file_size(path) is None:
        return None
    count = 0
    try:
        with open(path, "rb") as stream:
            for chunk in iter(lambda: stream.read(MIB), b""):
                count += chunk.count(b"\n")
    except OSError:
        return None
    return count


def mib_rounded_up(size):
    return -(-size // MIB)


class IndexReading(object):
    """The memory index, read once for every session-start check: the newline count of the
    whole file, and its first INDEX_HEAD_BYTES as text for the checks that parse it."""

    def __init__(self, path, newlines=None, head="", complete=True, refusal=None):
        self.path = path
        self.newlines = newlines
        self.head = head
        self.complete = complete
        self.folders = None  # (folder mtime, the topic folders beside it and their notes)
        self.listable = False  # whether its folder is the memory's own, not the project's top
        self.refusal = refusal  # why the index was not read (read_project_text's line)


# The last reading, kept so that session-start's two calls (budgets, then defects) read the
# index once: keyed by the file's identity, so a changed file is read again.
LAST_READING = {}


def read_index(project, env):
    path = project_path(project, env, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return IndexReading(path)
    reason = why_not_read(project, env, path)  # a FIFO among others: never opened
    if reason is not None:
        return IndexReading(path, refusal="- %s was not read: %s." % (shown_path(project, path),
                                                                       reason))
    key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in LAST_READING:
        LAST_READING.clear()
        LAST_READING[key] = index_reading(path)
        LAST_READING[key].listable = strictly_inside(os.path.dirname(path), project)
    return LAST_READING[key]


def strictly_inside(folder, project):
    """Whether `folder` lies inside `project` and is not `project` itself."""
    try:
        relative = os.path.relpath(os.path.abspath(folder), os.path.abspath(project))
    except ValueError:  # another drive on Windows
        return False
    return relative != os.curdir and not relative.startswith(os.pardir)


def index_reading(path):
    try:
        with open(path, "rb") as stream:
            head = stream.read(INDEX_HEAD_BYTES)
            newlines = head.count(b"\n")
            complete = True
            for chunk in iter(lambda: stream.read(MIB), b""):
                complete = False
                newlines += chunk.count(b"\n")
    except OSError:
        return IndexReading(path)
    return IndexReading(path, newlines, head.decode("utf-8", "replace"), complete)


def index_point(project, env, index):
    budget = number_setting(env, "MCP_MEM_LINES", 80)
    if index.newlines is None:
        return None
    listed = listed_count(index)
    lines = index.newlines + listed
    if lines <= budget:
        return None
    if not listed:
        return (
            "- %s is %d lines (budget %d). It is an index and loads at every session start: one "
            "pointer line per topic, the detail in topic files. Repair it with /dream."
            % (shown_path(project, index.path), lines, budget)
        )
    return (
        "- %s is %d lines and session start lists its %d topic folder(s) under it: %d lines "
        "(budget %d). It is an index and loads at every session start: one pointer line per "
        "topic file, one listed line per topic folder, the detail in the files. Repair it with "
        "/dream: move notes into the topic folder they belong to."
        % (shown_path(project, index.path), index.newlines, listed, lines, budget)
    )


def listed_count(index):
    """How many lines the listing adds under the index; 0 when it cannot be made, which then
    costs only itself: the index's own lines are still weighed."""
    try:
        return len(topic_folders(index))
    except Exception:
        return 0


# --- the listing: the topic folders beside the index -------------------------------------------
#
# A note is a file of its own in a topic folder beside the index (memory/<topic>/<note>.md). The
# index does not point to notes: session start lists every topic folder under it, one line each
# with the names of its notes. A note added on a branch then needs no index edit, so two branches
# that each add one never touch the same line, and no merge can drop a pointer to it.

LISTING_HEADING = "## Topic folders (listed at session start; a note is %s/<folder>/<note>.md)"
NOTE_NAMES_CHARS = 240
# Entries read from one folder at one start: the listing costs the same however many files a
# folder holds (a log folder of years); past it, a folder's line says "at least".
ENTRIES_AT_MOST = 2000


def topic_folders(index):
    """(folder name, notes_in(folder)) of every topic folder beside the index, sorted: a folder
    directly beside it that holds Markdown notes the index does not link. A folder the index
    links, and a note it links, are reached by that link and not listed again. Never a dot
    folder, never through a symlink (a committed link cannot bring names from outside the
    project), and nothing when the index sits at the project's top, where its folder is the
    whole project. Kept with the reading of the index while the folder's entries stay as they
    were."""
    if not index.path or index.newlines is None or not index.listable:
        return []
    folder = os.path.dirname(index.path)
    try:
        state = os.stat(folder).st_mtime_ns
        if index.folders is not None and index.folders[0] == state:
            return index.folders[1]
    except OSError:
        return []
    linked = linked_paths(index.head, folder)
    holding = set(os.path.dirname(path) for path in linked)
    name = cache_name("listing", folder)
    kept, seen, found = account_cache(name), {}, []
    for entry in first_entries(folder)[0]:
        where = os.path.normcase(os.path.normpath(entry.path))
        if entry.name.startswith(".") or not is_real_folder(entry) or where in linked:
            continue
        names, more = folder_notes(entry, kept if isinstance(kept, dict) else {}, seen)
        if where in holding:
            names = [n for n in names if os.path.join(where, n + ".md") not in linked]
        if names:
            found.append((entry.name, (names, more)))
    if seen != kept:
        account_cache(name, seen)
    found.sort(key=lambda item: (item[0].lower(), item[0]))
    index.folders = (state, found)
    return found


def folder_notes(entry, kept, seen):
    """notes_in() of a topic folder, or what the account's cache kept of it while the folder's
    time is the one kept, so a start reads the names of 5,000 notes no more than of 10. A time
    within two seconds of the moment it is kept is not kept: on a coarse clock a note added in
    the same tick would not move it."""
    try:
        moved = entry.stat(follow_symlinks=False).st_mtime_ns
    except OSError:
        return [], False
    old = kept.get(entry.name)
    listed = tuple(old[1:]) if isinstance(old, tuple) and len(old) == 3 and old[0] == moved \
        else notes_in(entry.path)
    if time.time() * 1e9 - moved > 2e9:
        seen[entry.name] = (moved,) + tuple(listed)
    return listed


def linked_paths(text, folder):
    """The normalised paths the relative links of `text` (outside comments and code) lead to,
    read from `folder`."""
    comments, spans, _ = hidden_spans(text)
    return set(os.path.normcase(os.path.normpath(os.path.join(folder, target)))
               for _, target in markdown_links(text, sorted(comments + spans))
               if is_relative_file_link(target))


def is_real_folder(entry):
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def first_entries(folder):
    """(the folder's entries, at most ENTRIES_AT_MOST of them; whether there are more)."""
    entries = []
    try:
        with os.scandir(folder) as listing:
            for entry in listing:
                if len(entries) == ENTRIES_AT_MOST:
                    return entries, True
                entries.append(entry)
    except OSError:
        pass
    return entries, False


def notes_in(folder):
    """(names, without `.md`, of the Markdown notes directly in a topic folder, sorted; whether
    the folder holds more entries than were read): regular files only, never a README (it
    explains the folder to people) or a dot file."""
    entries, more = first_entries(folder)
    names = []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or name.lower() == "readme.md" or not name.lower().endswith(".md"):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                names.append(name[:-3])
        except OSError:
            continue
    return sorted(names, key=lambda name: (name.lower(), name)), more


def listing_section(project, env):
    """The listing as a section of the injection. Every folder keeps its line and its link
    whatever the room: short of room, the names of the notes share what is left (fitted), and
    a cut names the command that lists every note, never the index, which lacks them."""
    index = read_index(project, env)
    found = topic_folders(index)
    if not found:
        return None
    memory = shown_path(project, os.path.dirname(index.path))
    return Section(LISTING_HEADING % memory, fitted(found, None), memory, 2,
                   rest="`ls %s/*/` lists every note" % memory,
                   fit=lambda room: fitted(found, room))


def fitted(found, room):
    """The listing's lines: with the names of each folder's notes up to NOTE_NAMES_CHARS, or,
    within `room` bytes, as many as an equal share of it leaves (none below 20)."""
    share = NOTE_NAMES_CHARS
    if room is not None:
        bare = sum(injection_length(folder_line(name, notes, 0)) + 1 for name, notes in found)
        share = min(share, (room - bare) // len(found) - 4)
    return [folder_line(name, notes, share if share >= 20 else 0) for name, notes in found]


def folder_line(name, listed, share):
    """`- [name/](name/) — 3 notes: a, b and 1 more`: the names while they fit in `share`
    characters; 'at least' for a folder too large to read whole at a start."""
    notes, more = listed
    shown, length = [], 0
    for note in notes if share else ():
        if shown and length + len(note) + 2 > share:
            break
        shown.append(note)
        length += len(note) + 2
    text = "%s%d note%s%s" % ("at least " if more else "", len(notes),
                              "" if len(notes) == 1 and not more else "s",
                              ": " + ", ".join(shown) if shown else "")
    text += " and %d more" % (len(notes) - len(shown)) if shown and len(notes) > len(shown) else ""
    return clipped("- [%s/](%s/) — %s" % (name, link_to(name), text), REPORT_LINE_CHARS)


def link_to(name):
    """A link target for a name, in angle brackets where the name would end it early."""
    return "<%s>" % name if any(c in name for c in " ()<>") else name


def instruction_file(project, env):
    named = env.get("MCP_CLAUDE_MD")
    if named:
        return os.path.join(project, named)
    default = os.path.join(project, DEFAULT_INSTRUCTION_FILE)
    if os.path.lexists(default):
        return default
    return os.path.join(project, ALTERNATE_INSTRUCTION_FILE)


def instruction_file_point(project, env, index=None):
    budget = number_setting(env, "MCP_CLAUDE_KB", 8)
    path = instruction_file(project, env)
    size = regular_file_size(path)
    if size is None or size // 1024 <= budget:
        return None
    return (
        "- %s is %d KB (budget %d KB) and loads at every session start. Move reference "
        "material into a skill (.claude/skills/) or into memory/, where it loads on demand."
        % (shown_path(project, path), size // 1024, budget)
    )


def projects_dir(env):
    named = env.get("MCP_PROJECTS_DIR")
    if named:
        return named
    config = env.get("CLAUDE_CONFIG_DIR")
    if config:
        return os.path.join(config, "projects")
    home = os.path.expanduser("~")
    return None if home == "~" else os.path.join(home, ".claude", "projects")


def encoded_name(path):
    """The harness's folder name for a project path, as its JavaScript writes it: every UTF-16
    unit that is not an ASCII letter or digit becomes '-' (so a character outside the BMP, two
    units, becomes '--'); a name over 200 characters keeps its first 200, then '-' and a hash of
    the whole path in base 36."""
    name = "".join(c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-"
                   for c in path)
    if len(name) <= ENCODED_NAME_LIMIT:
        return name
    return "%s-%s" % (name[:ENCODED_NAME_LIMIT], base36(abs(string_hash(path))))


def string_hash(text):
    """The harness's 32-bit string hash: h = h * 31 + unit, over UTF-16 units, as a signed int."""
    value = 0
    for character in text:
        code = ord(character)
        units = (code,) if code <= 0xFFFF else (
            0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF))
        for unit in units:
            value = (value * 31 + unit) & 0xFFFFFFFF
    return value - 0x100000000 if value >= 0x80000000 else value


def base36(number):
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = digits[digit] + text
        if not number:
            return text


def transcript_folders(project, env):
    """Folders that may hold this project's transcripts, most likely first."""
    return harness_folders([project], env)


def harness_folders(paths, env, pinned=None):
    """The harness's per-project folders for these paths, each spelled as given and resolved."""
    root = projects_dir(env)
    if not root:
        return []
    spellings = [pinned] if pinned else []
    for base in paths:
        for path in (os.path.abspath(base), os.path.realpath(base)):
            name = encoded_name(path)
            if name not in spellings:
                spellings.append(name)
    return [os.path.join(root, name) for name in spellings]


def newest_transcript(folder):
    newest = None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue
        try:
            info = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            key = (info.st_mtime_ns, entry.name)
            if newest is None or key > newest[0]:
                newest = (key, entry.path)
    return newest[1] if newest else None


def live_transcript(project, env):
    """The transcript that rides along on every request: the one the harness named, else the newest.

    A named transcript that does not exist yet is a fresh startup: nothing to measure, and
    falling back to an older file would warn about a session that has already ended.
    """
    named = env.get("MCP_TRANSCRIPT_PATH")
    if named:
        return named
    for folder in transcript_folders(project, env):
        found = newest_transcript(folder)
        if found:
            return found
    return None


def transcript_point(project, env, index=None):
    budget = number_setting(env, "MCP_TRANSCRIPT_MB", 60)
    path = live_transcript(project, env)
    size = regular_file_size(path) if path else None
    if size is None or mib_rounded_up(size) <= budget:
        return None
    return (
        "- This project's live transcript is %d MB (budget %d MB). Every request carries the "
        "conversation, so this session now pays its ceiling on every answer. Finish with "
        "/handoff, then /clear: the memory files carry the continuity, the transcript does not."
        % (mib_rounded_up(size), budget)
    )


def disk_usage(folder, enough=None):
    """(bytes allocated under a folder, whether every entry was counted), as `du` counts them:
    blocks, hard links once, links not followed. The walk stops once the total passes
    `enough`: past the budget, the exact figure is not worth a walk through every file of
    every worktree at every session start. It also stops after WALK_SECONDS, whatever it has
    counted: a slow disk or millions of empty files must not cost the session its start."""
    total = 0
    seen = set()
    pending = [folder]
    deadline = time.monotonic() + WALK_SECONDS
    while pending:
        if time.monotonic() > deadline:
            return total, False
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for number, entry in enumerate(entries, 1):
            if enough is not None and total > enough or \
                    number % 256 == 0 and time.monotonic() > deadline:
                return total, False
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) in seen:
                    continue
                seen.add((info.st_dev, info.st_ino))
            total += allocated_bytes(info)
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
    try:
        total += allocated_bytes(os.stat(folder))
    except OSError:
        pass
    return total, True


def allocated_bytes(info):
    blocks = getattr(info, "st_blocks", None)
    return blocks * 512 if blocks is not None else info.st_size


def worktree_point(project, env, index=None):
    budget = number_setting(env, "MCP_WORKTREE_MB", 100)
    folder = project_path(project, env, "MCP_WORKTREE_DIR", DEFAULT_WORKTREE_DIR)
    if not os.path.isdir(folder):
        return None
    total, counted_all = disk_usage(folder, enough=budget * MIB)
    size = mib_rounded_up(total)
    if size <= budget:
        return None
    measure = "is %d MB" % size if counted_all else "is over %d MB" % budget
    return (
        "- %s %s (budget %d MB). Each agent worktree is a full checkout. Merged, clean "
        "ones are pruned at session start, so what is left holds unmerged commits, uncommitted "
        "or ignored files, or a lock: finish that work, then `git worktree remove` it."
        % (shown_path(project, folder), measure, budget)
    )


# --- the harness's settings, as the harness applies them -----------------------------------------

PROJECT_SETTINGS_FILES = (".claude/settings.local.json", ".claude/settings.json")
SETTINGS_LIMIT = MIB  # far more than any settings file; past it, the file counts as unread


class Unreadable(dict):
    """The settings of a file the harness may apply that the hooks cannot read (too large,
    nested past Python's limit, not a regular file): empty to every reader, and where it matters
    (what may be shown, whose environment it is) it counts against showing."""


SETTINGS_READ = {}  # by the file's identity: one start asks for the same files several times


def settings_object(path):
    """The JSON object of a settings file; {} when there is none, or it is not JSON or not an
    object, which the harness skips too; an Unreadable when the harness may read what the hooks
    cannot. Decoded as the harness decodes it (json_value)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return {}
    key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in SETTINGS_READ:
        if len(SETTINGS_READ) > 16:
            SETTINGS_READ.clear()
        SETTINGS_READ[key] = settings_in(read_plain_file(path, SETTINGS_LIMIT + 1)
                                         if stat.S_ISREG(info.st_mode) else None)
    return SETTINGS_READ[key]


def settings_in(data):
    if data is None or len(data) > SETTINGS_LIMIT:
        return Unreadable()
    try:
        value = json_value(data, strict=True)
    except RecursionError:  # the harness's parser goes deeper than Python's
        return Unreadable()
    return value if isinstance(value, dict) else {}


def settings_files(project, env):
    """(path, whether it may move auto memory) of every settings file the harness reads for the
    project, highest precedence first: the managed policy (its file, then its drop-in folder's
    .json files, the last by name first), the project's local and shared files, the user's."""
    folder = managed_settings_folder(env)
    drop_ins = os.path.join(folder, "managed-settings.d")
    try:
        names = sorted((name for name in os.listdir(drop_ins)
                        if name.endswith(".json") and not name.startswith(".")), reverse=True)
    except OSError:
        names = []
    user = user_config_dir(env)
    return ([(os.path.join(drop_ins, name), True) for name in names]
            + [(os.path.join(folder, "managed-settings.json"), True)]
            + [(os.path.join(project, *relative.split("/")), relative.endswith("local.json"))
               for relative in PROJECT_SETTINGS_FILES]
            + ([(os.path.join(user, "settings.json"), True)] if user else []))


def managed_settings_folder(env):
    """Where the platform keeps the managed policy (MCP_MANAGED_SETTINGS_DIR names another
    folder, for tests and unusual machines)."""
    if env.get("MCP_MANAGED_SETTINGS_DIR"):
        return env["MCP_MANAGED_SETTINGS_DIR"]
    return os.path.dirname(managed_instruction_file())


def managed_instruction_file():
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode/CLAUDE.md"
    if sys.platform.startswith("win"):
        return "C:\\Program Files\\ClaudeCode\\CLAUDE.md"
    return "/etc/claude-code/CLAUDE.md"


def user_config_dir(env):
    if env.get("CLAUDE_CONFIG_DIR"):
        return env["CLAUDE_CONFIG_DIR"]
    home = env.get("HOME") or os.path.expanduser("~")
    return None if home == "~" else os.path.join(home, ".claude")


def unreadable_settings(project, env):
    """The first settings file the harness may apply that the hooks cannot read, or None."""
    for path, _ in settings_files(project, env):
        if isinstance(settings_object(path), Unreadable):
            return path
    return None


# --- the environment the user set ---------------------------------------------------------------

# Variables that say where the user's own files are (whose settings, whose transcripts): a value
# a repository gave them is never taken. And variables that name a file or folder of the
# project: a value a repository gave them may not lead outside it.
USER_PLACES = ("HOME", "CLAUDE_CONFIG_DIR", "MCP_PROJECTS_DIR", "MCP_TRANSCRIPT_PATH",
               "MCP_MANAGED_SETTINGS_DIR")
PROJECT_PLACES = ("MCP_MEMORY_INDEX", "MCP_SESSION_STATE", "MCP_CLAUDE_MD", "MCP_WORKTREE_DIR",
                  "MCP_BASELINE")
# The environment files Gemini CLI loads from the folder it starts in and each folder above it.
AGENT_ENVIRONMENT_FILES = (os.path.join(".gemini", ".env"), ".env")


def repository_names(project, cwd=None):
    """{variable: the file of the repository that may set it} for the places above: the
    project settings files' "env" (one the hooks cannot read may set any of them), and the
    .env files an agent loads from the project's folders (its top, and those from the working
    folder up to it). The name decides, whatever the value: the same variable set by the user
    as well cannot be told apart, and counts as the repository's."""
    named = {}
    for relative in reversed(PROJECT_SETTINGS_FILES):
        values = settings_object(os.path.join(project, *relative.split("/")))
        given = values.get("env") if isinstance(values.get("env"), dict) else {}
        for name in USER_PLACES + PROJECT_PLACES:
            if isinstance(values, Unreadable) or name in given:
                named[name] = relative
    for path in agent_environment_files(project, cwd):
        for name in dotenv_names(read_plain_file(path, SETTINGS_LIMIT) or b""):
            if name in USER_PLACES + PROJECT_PLACES:
                named[name] = shown_path(project, path)
    return named


def agent_environment_files(project, cwd=None):
    folders, top = [], os.path.abspath(project)
    here = os.path.abspath(cwd) if cwd and lies_within(os.path.abspath(cwd), top) else top
    while lies_within(here, top):
        folders.append(here)
        if here == top:
            break
        here = os.path.dirname(here)
    return [os.path.join(folder, name) for folder in folders for name in AGENT_ENVIRONMENT_FILES]


def dotenv_names(data):
    """The variable names a .env file sets: `NAME=value`, `export NAME=value`."""
    names = []
    for line in data.splitlines():
        line = line.strip()
        if line.startswith(b"export "):
            line = line[len(b"export "):]
        name = line.partition(b"=")[0].strip() if b"=" in line else b""
        if name and not name.startswith(b"#"):
            names.append(name.decode("ascii", "replace"))
    return names


def refused_settings(project, env, cwd=None):
    """[(variable, refusal line)] for each variable above a file of the repository may set
    that the hooks ignore: one that says where the user's files are, or names a path that
    leads outside the project. Its default applies."""
    refused = []
    for name, origin in sorted(repository_names(project, cwd).items()):
        value = env.get(name)
        if value and (name in USER_PLACES or not leads_inside(project, value)):
            reason = ("it says where your own files are" if name in USER_PLACES
                      else "it leads outside the project")
            refused.append((name, "- %s=%s was ignored: %s may set it, and %s; only a value "
                                  "you set yourself is taken." % (name, value, origin, reason)))
    return refused


def project_setting_origin(project, name, value=None):
    """The file of the repository that may set `name`, or None."""
    return repository_names(project).get(name)


def leads_inside(project, value):
    path = os.path.join(project, value)
    return (lies_within(os.path.normpath(os.path.abspath(path)), os.path.abspath(project))
            and lies_within(os.path.realpath(path), os.path.realpath(project)))


def trusted_environment(project, env, cwd=None):
    """(env without the variables refused_settings names, the refusal lines). A HOME refused
    is the account's home folder again, as the system's user database names it, where there
    is one."""
    refused = refused_settings(project, env, cwd)
    trusted = dict(env)
    for name, _ in refused:
        trusted.pop(name, None)
    if "HOME" not in trusted and "HOME" in env:
        home = account_home()
        if home:
            trusted["HOME"] = home
    return trusted, [line for _, line in refused]


def account_home():
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError, OSError):
        return None


# --- what the hooks may show: what the repository holds, and no deny rule covers -------------------

def read_project_text(project, env, path, limit):
    """(text, None) for a file whose content the hooks may show the agent; (None, a refusal
    line naming it) for one they may not; (None, None) when there is nothing there. At most
    `limit` bytes are read, decoded as UTF-8."""
    if not os.path.exists(path):  # a link to nothing is nothing
        return None, None
    reason = why_not_read(project, env, path)
    if reason is None:
        data = read_plain_file(path, limit)
        if data is not None:
            return data.decode("utf-8", "replace"), None
        reason = "it could not be read as a regular file"
    return None, "- %s was not read: %s." % (shown_path(project, path), reason)


def why_not_read(project, env, path):
    """Why the hooks may not show the file at `path` to the agent, or None when they may: what
    is shown must be what the repository's reviewer saw (no symbolic link on the way inside the
    project, whatever its target: a committed link is not a file), a regular file, and allowed
    by every deny rule of every settings file the harness may apply."""
    named = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(path)
    top = os.path.abspath(project)
    if lies_within(named, top) and os.path.normcase(real) != os.path.normcase(
            os.path.join(os.path.realpath(project), os.path.relpath(named, top))):
        return "it is reached through a symbolic link; the hooks show only plain files"
    unreadable = unreadable_settings(project, env)
    if unreadable is not None:
        return ("%s cannot be read as the harness may read it, so the hooks cannot tell whether "
                "its deny rules cover the file" % shown_path(project, unreadable))
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return "it cannot be inspected"
    if not stat.S_ISREG(info.st_mode):
        return "it is not a regular file (a FIFO, a device, a socket or a folder)"
    rule = deny_rule_covering(project, env, [named, real])
    if rule is not None:
        return "the deny rule %s in %s covers it" % rule
    return None


def read_plain_file(path, limit=MIB):
    """The first `limit` bytes of a regular file; None for anything else. Opened without
    waiting (a FIFO put in its place since it was inspected never blocks the hook)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except (OSError, ValueError):
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(MIB, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def lies_within(path, folder):
    """Whether `path` is `folder` or below it; both absolute and normalised alike."""
    path, folder = os.path.normcase(path), os.path.normcase(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# --- the harness's Read rules, as the hooks apply them to what they read -------------------

def deny_rule_covering(project, env, paths):
    """(rule, settings file) of the first `Read` deny rule in the harness's settings files that
    covers any of `paths` (absolute: the path as named and where it resolves), or None."""
    memo = {}  # where the paths lie below each anchor, worked out once for all the rules
    for settings_path, _ in settings_files(project, env):
        permissions = settings_object(settings_path).get("permissions")
        rules = permissions.get("deny") if isinstance(permissions, dict) else None
        if not isinstance(rules, list):
            continue
        for rule in rules:
            if isinstance(rule, str) and read_rule_covers(rule.strip(), project, env, paths,
                                                          memo):
                return rule.strip(), shown_path(project, settings_path)
    return None


def read_rule_covers(rule, project, env, paths, memo=None):
    """Whether a permission rule denies reading one of `paths`, read as the harness documents
    its Read rules: a gitignore pattern, `//path` from the filesystem root, `~/path` from the
    home folder, `/path` from the project root, and `path` or `./path` at any depth under the
    project (the harness matches `./docs/**` in any folder named docs). `Read` alone, or
    `Read(*)`, covers every file. A pattern ending in `/` covers what lies under a folder of
    that name; a pattern that matches a folder covers everything in it. `memo` keeps, across
    the rules checked for the same paths, where they lie below each anchor."""
    if rule == "Read":
        return True
    if not (rule.startswith("Read(") and rule.endswith(")")):
        return False
    pattern = rule[len("Read("):-1].strip()
    if pattern.startswith("//"):
        anchor, pattern = None, pattern[2:]
    elif pattern.startswith("~/"):
        anchor, pattern = env.get("HOME") or os.path.expanduser("~"), pattern[2:]
        if not anchor or anchor == "~":
            return False
    elif pattern.startswith("/"):
        anchor, pattern = project, pattern[1:]
    else:
        anchor = project
        pattern = "**/" + (pattern[2:] if pattern.startswith("./") else pattern)
    folder_only = pattern.endswith("/")
    segments = [part for part in pattern.split("/") if part and part != "."]
    if FOLD_CASE:
        segments = [part.casefold() for part in segments]
    for names in names_below(paths, anchor, {} if memo is None else memo):
        # The pattern covers the file, or a folder the file lies in.
        ends = range(1, len(names)) if folder_only else range(1, len(names) + 1)
        if any(names_match(segments, names[:end]) for end in ends):
            return True
    return False


# Whether the file system compares names without case (Windows, macOS): then so do the rules.
FOLD_CASE = os.path.normcase("A") == "a" or sys.platform == "darwin"


def names_below(paths, anchor, memo):
    """Each distinct list of names leading from `anchor` (as given and as it resolves; None
    for the filesystem root) down to one of `paths`, folded where names ignore case."""
    if anchor not in memo:
        bases = [None] if anchor is None else [anchor, os.path.realpath(anchor)]
        found = []
        for path in paths:
            for base in bases:
                names = path_names_below(path, base)
                if names is not None:
                    names = [name.casefold() for name in names] if FOLD_CASE else names
                    if names not in found:
                        found.append(names)
        memo[anchor] = found
    return memo[anchor]


def path_names_below(path, base):
    """The names leading from `base` down to `path` (absolute), or None when `path` does not
    lie below it. Base None is the filesystem root, where a Windows drive becomes the first
    name, as the harness spells `//c/Users/...`."""
    path = os.path.normpath(os.path.abspath(path))
    if base is None:
        drive, rest = os.path.splitdrive(path)
        return ([drive.rstrip(":").lower()] if drive else []) + [
            part for part in rest.replace(os.sep, "/").split("/") if part]
    base = os.path.normpath(os.path.abspath(base))
    if path == base or not lies_within(path, base):
        return None
    return [part for part in path[len(base):].replace(os.sep, "/").split("/") if part]


def names_match(pattern, names):
    """Whether a list of glob names matches a list of path names: `**` stands for any number
    of names, every other entry for exactly one (see name_matches). Read name by name, keeping
    the pattern positions reached, so a rule of many `**` costs no more than their count."""
    reached = past_any_names(pattern, {0})
    for name in names:
        reached = past_any_names(pattern, {i if pattern[i] == "**" else i + 1 for i in reached
                                           if i < len(pattern) and (pattern[i] == "**"
                                           or name_matches(pattern[i], name))})
    return len(pattern) in reached


def past_any_names(pattern, reached):
    """The positions reached, and those a `**` matching no name at all leads on to."""
    found = set()
    for position in reached:
        found.add(position)
        while position < len(pattern) and pattern[position] == "**":
            position += 1
            found.add(position)
    return found


def name_matches(pattern, name):
    """gitignore's glob for one name: `*` any run of characters, `?` one, `[...]` one of a set
    (`[!...]` or `[^...]` none of it). Backtracks only to the last `*`, so the cost stays
    linear in practice whatever the pattern."""
    p = n = 0
    star = mark = -1
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star, mark = p, n
            p += 1
            continue
        width = one_character(pattern, p, name[n])
        if width:
            p += width
            n += 1
        elif star >= 0:
            mark += 1
            p, n = star + 1, mark
        else:
            return False
    return pattern[p:].strip("*") == ""


def one_character(pattern, p, character):
    """How many pattern characters match `character` at pattern[p] (1 for a literal or `?`,
    the whole set for `[...]`), or 0 when it does not match."""
    if p >= len(pattern):
        return 0
    if pattern[p] == "?":
        return 1
    if pattern[p] == "[":
        end = pattern.find("]", p + 2)
        if end > 0:
            members = pattern[p + 1:end]
            negated = members[:1] in ("!", "^")
            if negated:
                members = members[1:]
            found = any(low <= character <= high for low, high in set_ranges(members))
            return end - p + 1 if found != negated else 0
    return 1 if pattern[p] == character else 0


def set_ranges(members):
    """The (low, high) character ranges of a glob set's members: `a-z` is one, `x` is (x, x)."""
    ranges = []
    index = 0
    while index < len(members):
        if index + 2 < len(members) and members[index + 1] == "-":
            ranges.append((members[index], members[index + 2]))
            index += 3
        else:
            ranges.append((members[index], members[index]))
            index += 1
    return ranges


# --- Markdown as the agent sees it (no regular expressions: this part runs at every start) ---

def hidden_spans(text):
    """Where Markdown is not read as written: (closed HTML comments, code, unclosed).

    Comments and code are (start, end) offsets, each list sorted; code is every code span and
    every fenced code block. `unclosed` is the offset of a '<!--' that never closes, or None.
    A '<!--' in code is text, a backtick inside a comment is comment, and `<!-->` and
    `<!--->` are complete empty comments, as HTML and CommonMark read them: the same reading
    the session-start hook applies when it strips comments."""
    comments, spans = [], []
    fences = fenced_blocks(text)
    fence = 0
    length = len(text)
    position = 0
    tick = text.find("`")
    opening = text.find("<!--")
    while tick != -1 or opening != -1:
        first = tick if opening == -1 or (tick != -1 and tick < opening) else opening
        while fence < len(fences) and fences[fence][1] <= first:
            fence += 1
        if fence < len(fences) and fences[fence][0] <= first:
            position = fences[fence][1]  # a fenced block is text, whatever it holds
        elif first == tick:
            run_end = tick
            while run_end < length and text[run_end] == "`":
                run_end += 1
            line_end = text.find("\n", run_end)
            close = text.find(text[tick:run_end], run_end, length if line_end < 0 else line_end)
            if close >= 0:
                position = close + run_end - tick
                spans.append((tick, position))
            else:
                position = run_end
        else:
            close = comment_end(text, opening)
            if close < 0:
                return comments, sorted(spans + fences), opening
            position = close
            comments.append((opening, position))
        if tick != -1 and tick < position:
            tick = text.find("`", position)
        if opening != -1 and opening < position:
            opening = text.find("<!--", position)
    return comments, sorted(spans + fences), None


def comment_end(text, opening):
    """The offset just past the comment that opens at `opening`, or -1 when it never closes."""
    for empty in ("<!-->", "<!--->"):
        if text.startswith(empty, opening):
            return opening + len(empty)
    close = text.find("-->", opening + 4)
    return -1 if close < 0 else close + 3


def fenced_blocks(text):
    """(start, end) of each fenced code block, as fence_after reads fences: to the line that
    closes it, or to the end of the text."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks, fence, opened, position, length = [], None, 0, 0, len(text)
    while position < length:
        end = text.find("\n", position)
        end = length if end < 0 else end + 1
        after = fence_after(fence, text[position:end])
        if fence is None and after is not None:
            opened = position
        elif fence is not None and after is None:
            blocks.append((opened, end))
        fence, position = after, end
    if fence is not None:
        blocks.append((opened, length))
    return blocks


def fence_after(fence, line):
    """The fenced code block open after `line`, as the line that would close it, given the one
    open before it (None: none). A fence is three or more backticks or tildes after any
    indentation (a fence inside a list item is indented), a backtick fence's info string
    holding no backtick; the block ends at a line of the same character, at least as long,
    with nothing else after it."""
    stripped = line.lstrip(" \t")
    mark = stripped[:1]
    if mark not in ("`", "~"):
        return fence
    run = len(stripped) - len(stripped.lstrip(mark))
    rest = stripped[run:]
    if fence is None:
        return mark * run if run >= 3 and not (mark == "`" and "`" in rest) else None
    return None if mark == fence[0] and run >= len(fence) and not rest.strip() else fence


def markdown_links(text, hidden):
    """(offset, target) of every inline link `[text](destination "title")` outside comments and
    code, read as CommonMark reads it (see link_at); `target` is the file part of the
    destination. `hidden` is sorted; links are met in order, so one pointer walks it once."""
    return [(offset, target) for offset, _, target in link_spans(text, hidden)]


# What reading the links of a text may cost, in characters scanned per character of the text:
# a usual text scans each character about once; a line built to make every `](` scan to its end
# stops being read for links once this is spent, instead of costing the square of its length.
LINK_WORK_PER_CHARACTER = 16


class LinkScan:
    """The reading of one text's links: the text, the work left, and the brackets of the line
    read last, matched once (bracket_pairs)."""

    def __init__(self, text):
        self.text = text
        self.work = LINK_WORK_PER_CHARACTER * len(text) + 4096
        self.line = (-1, -1, {})  # (start, end, pairs)

    def spend(self, characters):
        self.work -= characters
        return self.work > 0

    def line_around(self, position):
        start, end, _ = self.line
        if not start <= position < end:
            start = self.text.rfind("\n", 0, position) + 1
            end = self.text.find("\n", position)
            self.line = (start, len(self.text) if end < 0 else end, None)
        return self.line[0], self.line[1]

    def opening_of(self, close):
        """The offset of the `[` that the `]` at `close` closes on its line, or -1."""
        start, end, pairs = self.line
        opening = self.text.rfind("[", start, close)
        if opening >= 0 and self.text.find("]", opening, close) < 0 and \
                "\\" not in self.text[max(opening - 1, start):close + 1]:
            return opening  # the usual `[title](...)`: nothing nested, nothing escaped
        if pairs is None:
            pairs = bracket_pairs(self.text, start, end)
            self.line = (start, end, pairs)
        return pairs.get(close, -1)


def bracket_pairs(text, start, end):
    """{offset of each `]` between start and end: offset of the `[` it closes}, as brackets
    nest; a bracket after an odd run of backslashes is text. One pass over the line."""
    pairs, stack, backslashes = {}, [], 0
    for offset in range(start, end):
        mark = text[offset]
        if mark == "\\":
            backslashes += 1
            continue
        if backslashes % 2 == 0:
            if mark == "[":
                stack.append(offset)
            elif mark == "]" and stack:
                pairs[offset] = stack.pop()
        backslashes = 0
    return pairs


def link_spans(text, hidden):
    """(offset of the link's `[`, offset just past its `)`, target) of every inline link outside
    `hidden`, the sorted comments and code. A link is read within its line: a destination or
    title that runs onto the next line is not read (CommonMark allows it; memories do not)."""
    links = []
    at = 0
    scan = LinkScan(text)
    position = text.find("](")
    while position != -1 and scan.work > 0:
        while at < len(hidden) and hidden[at][1] <= position:
            at += 1
        if not (at < len(hidden) and hidden[at][0] <= position):
            found = link_at(scan, position)
            if found:
                links.append((found[2], found[1], link_target(found[0])))
        position = text.find("](", position + 2)
    return links


def link_at(scan, close):
    """(raw destination, end, start) when the `](` at `close` ends a link's text and opens its
    destination, else None. CommonMark's rules: the `]` closes a `[` earlier on the line
    (brackets nest, a backslash escapes them); the destination is `<...>` (any characters but
    `<`, `>` and a line break) or a run without spaces whose parentheses balance; a title in
    `"..."`, `'...'` or `(...)` may follow, after white space; then `)`."""
    text = scan.text
    _, line_end = scan.line_around(close)
    start = scan.opening_of(close)
    if start < 0:
        return None
    position = skip_spaces(text, close + 2, line_end)
    if position < line_end and text[position] == "<":
        end = pointed_destination_end(scan, position, line_end)
        if end < 0:
            return None
        raw = text[position + 1:end - 1]
    else:
        end = plain_destination_end(scan, position, line_end)
        raw = text[position:end]
    after = skip_spaces(text, end, line_end)
    if after > end and after < line_end and text[after] in "\"'(":
        after = skip_spaces(text, title_end(scan, after, line_end), line_end)
    if after >= line_end or text[after] != ")":
        return None
    return raw, after + 1, start


def skip_spaces(text, position, line_end):
    while position < line_end and text[position] in " \t":
        position += 1
    return position


def pointed_destination_end(scan, opening, line_end):
    """Just past the `>` that closes the `<` at `opening`, or -1."""
    text = scan.text
    position = opening + 1
    while position < line_end and scan.spend(1):
        mark = text[position]
        if mark == "\\" and position + 1 < line_end:
            position += 2
            continue
        if mark == "<":
            return -1
        if mark == ">":
            return position + 1
        position += 1
    return -1


def plain_destination_end(scan, position, line_end):
    """The end of a destination written without `<>`: at white space, or at a `)` that closes
    no `(` of the destination's own."""
    text = scan.text
    close = text.find(")", position, line_end)
    if close >= 0 and scan.spend(close - position) and text[position:close].isprintable() and \
            not any(mark in text[position:close] for mark in " (\\"):
        return close  # the usual `file.md)`: no space, no parenthesis, no escape before it
    depth = 0
    while position < line_end and scan.spend(1):
        mark = text[position]
        if mark == "\\" and position + 1 < line_end:
            position += 2
            continue
        if mark in " \t" or ord(mark) < 32:
            break
        if mark == "(":
            depth += 1
        elif mark == ")":
            if depth == 0:
                break
            depth -= 1
        position += 1
    return position


def title_end(scan, opening, line_end):
    """Just past the title that opens at `opening`, or `opening` itself when it never closes
    (then the `)` test that follows fails, as the link does)."""
    text = scan.text
    closing = ")" if text[opening] == "(" else text[opening]
    position = opening + 1
    while position < line_end and scan.spend(1):
        mark = text[position]
        if mark == "\\":
            position += 2
            continue
        if mark == closing:
            return position + 1
        if closing == ")" and mark == "(":
            return opening
        position += 1
    return opening


def link_target(raw):
    """The file a destination names: backslash escapes and character references undone, the
    anchor (`#...`) and query (`?...`) dropped, then percent-escapes decoded as UTF-8, the way
    a viewer turns the link into a file name (`caf%C3%A9.md` is `café.md`)."""
    raw = unescaped(raw)
    for mark in ("#", "?"):
        if mark in raw:
            raw = raw[:raw.index(mark)]
    return percent_decoded(raw)


def unescaped(raw):
    """A destination without its backslash escapes of punctuation and with its character
    references (`&amp;`, `&#40;`) read."""
    if "\\" in raw:
        pieces = []
        position = 0
        while position < len(raw):
            mark = raw[position]
            if mark == "\\" and position + 1 < len(raw) and is_ascii_punctuation(raw[position + 1]):
                pieces.append(raw[position + 1])
                position += 2
                continue
            pieces.append(mark)
            position += 1
        raw = "".join(pieces)
    if "&" in raw and ";" in raw:
        raw = character_references_read(raw)
    return raw


def is_ascii_punctuation(mark):
    return mark in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"


def character_references_read(raw):
    pieces = []
    position = 0
    while position < len(raw):
        end = raw.find(";", position + 1) if raw[position] == "&" else -1
        name = raw[position + 1:end] if end > 0 else ""
        value = character_reference(name) if 0 < len(name) <= 32 else None
        if value is None:
            pieces.append(raw[position])
            position += 1
            continue
        pieces.append(value)
        position = end + 1
    return "".join(pieces)


def character_reference(name):
    """What `&name;` stands for, or None: `#123`, `#x7B`, or a named HTML entity."""
    from html.entities import html5
    if name.startswith("#"):
        digits, base = (name[2:], 16) if name[1:2] in ("x", "X") else (name[1:], 10)
        try:
            code = int(digits, base) if digits and len(digits) <= 7 else None
        except ValueError:
            return None
        if code is None:
            return None
        return chr(code) if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF else "\ufffd"
    return html5.get(name + ";")


def percent_decoded(path):
    """`%XX` escapes read as the bytes of a UTF-8 name; a path whose escapes do not make UTF-8
    is kept as written."""
    if "%" not in path:
        return path
    data = bytearray()
    position = 0
    hexadecimal = "0123456789abcdefABCDEF"
    while position < len(path):
        mark = path[position]
        pair = path[position + 1:position + 3]
        if mark == "%" and len(pair) == 2 and pair[0] in hexadecimal and pair[1] in hexadecimal:
            data.append(int(pair, 16))
            position += 3
            continue
        data.extend(mark.encode("utf-8"))
        position += 1
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return path


def is_relative_file_link(target):
    """A link into the file tree, relative to the linking file. Web links, mail links, anchors
    and absolute paths are not checked: their targets are not ours to resolve."""
    if not target or target.startswith(("/", "\\", "~")):
        return False
    return ":" not in target.split("/")[0]


def first_lines(text, count):
    end = -1
    for _ in range(count):
        end = text.find("\n", end + 1)
        if end < 0:
            return text
    return text[:end + 1]


def line_number(text, offset):
    return text.count("\n", 0, offset) + 1


def line_text(text, offset):
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start:] if end < 0 else text[start:end]


def is_silenced(line):
    return IGNORE_MARKER in line


def named_list(items, at_most=NAMED_AT_MOST):
    """'a, b and c', or 'a, b, c, d, e and 4 more'."""
    items = list(items)
    if len(items) > at_most:
        shown = items[:at_most] + ["%d more" % (len(items) - at_most)]
    else:
        shown = items
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


# --- what the memory cannot vouch for, read from its text (spec §4.5.7) -------------------------
#
# The team format keeps facts a blank line apart and corrects or deletes a fact where it stands
# (`- (deleted) ...`), so where git merges by union two fact lines that touch are two branches'
# versions of one fact. Each reading below is a fact of the lines, never a reading of what a
# line means; prune-worktrees.py adds what git says (memory_marks), memory_health.py the rest.

LIST_MARKS = ("- ", "* ", "+ ")
LOG_NAMES = frozenset("log logs journal diary changelog history sessions devlog worklog".split())
COMMANDS_OF_CHANGE = frozenset("rm mv rmdir unlink del rd ren rename move Remove-Item Move-Item "
                               "Rename-Item".split())


def is_date(text):
    return len(text) == 10 and text[4] == text[7] == "-" and text.isascii() and \
        (text[:4] + text[5:7] + text[8:]).isdigit()


def is_dated_fact(line):
    """`- 2026-11-02: ...`: a list item that opens with its date."""
    after = line[12:13]
    return line[:2] in LIST_MARKS and is_date(line[2:12]) and not (after.isalnum() or after == "_")


def is_deletion(line):
    """`- (deleted) 2026-11-02: ...`: a fact deleted on purpose, its line kept (spec §2.2.8)."""
    return line[:2] in LIST_MARKS and line[2:11] == "(deleted)" and line[11:12] in ("", " ", "\t")


def is_fact_line(line):
    return is_dated_fact(line) or is_deletion(line)


def fenced_numbers(lines):
    """The numbers (from 1) of the lines of fenced code blocks, fences included."""
    inside, fence = set(), None
    for number, line in enumerate(lines, 1):
        after = fence_after(fence, line)
        if fence is not None or after is not None:
            inside.add(number)
        fence = after
    return inside


def marker_lines(lines, fenced):
    """The lines of a conflict git could not merge; a line of seven `=` alone is a heading's
    underline too, so it counts only beside an opening or closing marker."""
    sides = [n for n, line in enumerate(lines, 1) if n not in fenced
             and line[:7] in ("<" * 7, ">" * 7, "|" * 7) and line[7:8] in ("", " ")]
    return sorted(sides + [n for n, line in enumerate(lines, 1) if n not in fenced
                           and line.rstrip() == "=" * 7]) if sides else []


def facts_side_by_side(lines, fenced):
    """(line, line, whether one is a deletion) of two facts that touch, or a deletion touching
    any line but a title: what the union keeps where two branches changed one fact."""
    pairs = []
    for second in range(2, len(lines) + 1):
        first_line, second_line = lines[second - 2], lines[second - 1]
        deletion = is_deletion(first_line) != is_deletion(second_line)
        if second in fenced or second - 1 in fenced:
            continue
        if is_fact_line(first_line) and is_fact_line(second_line) or deletion and \
                first_line.strip() and second_line.strip() and "# " not in \
                (first_line[:2], second_line[:2]):
            pairs.append((second - 1, second, deletion))
    return pairs


def run_of_facts(lines, first, second, fenced):
    """(first, last line) of the facts around two that touch, each a blank line or none from the
    next: git merges conflicts three lines apart or less as one, so where two branches changed
    neighbouring facts the union keeps one branch's block of them, then the other's."""
    def fact(number):
        return 0 < number <= len(lines) and number not in fenced and is_fact_line(lines[number - 1])

    def blank(number):
        return 0 < number <= len(lines) and number not in fenced and not lines[number - 1].strip()
    start, end = (first if fact(first) else second), (second if fact(second) else first)
    while fact(start - 1) or (blank(start - 1) and fact(start - 2)):
        start -= 1 if fact(start - 1) else 2
    while fact(end + 1) or (blank(end + 1) and fact(end + 2)):
        end += 1 if fact(end + 1) else 2
    return start, end


def title_lines(lines, fenced):
    """The `# ` lines outside code, and outside a sample set off by a fence of one or two
    backticks (`` `markdown ``, then a lone `` ` ``), as pasting through a chat leaves one."""
    titles, pending, opened = [], [], False
    for number, line in enumerate(lines, 1):
        word = line.rstrip().lstrip("`")
        ticks = len(line.rstrip()) - len(word)
        if number in fenced:
            continue
        if 0 < ticks < 3 and not word and opened:
            opened, pending = False, []
        elif 0 < ticks < 3 and not opened and word[:1].isascii() and word[:1].isalpha() and \
                all(c.isalnum() or c in "_+-" for c in word):
            opened = True
        elif line.startswith("# "):
            (pending if opened else titles).append(number)
    return sorted(titles + pending)


def is_log_name(name):
    """A log or a record of its day by its name (`session-log.md`, `findings-2026-07.md`): its
    lines are history, true of their day, entries line after line."""
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    words = stem.replace("_", "-").replace(".", "-").replace(" ", "-").split("-")
    return any(word in LOG_NAMES for word in words) or any(
        stem[at:at + 2] in ("19", "20") and is_date(stem[at:at + 7] + "-01") and
        not stem[at - 1:at].isdigit() and not stem[at + 7:at + 8].isdigit()
        for at in range(len(stem) - 6))


def is_stamped(lines):
    """Whether a file keeps a `<!-- Last updated: -->` or `<!-- Last dream: -->` stamp, as the
    earlier format did, which kept facts on adjacent lines."""
    for line in lines[:40]:
        for piece in line.lower().split("<!--")[1:]:
            rest = piece.lstrip()[4:] if piece.lstrip().startswith("last") else "?"
            rest = rest[1:] if rest[:1] in " _-" else rest
            if any(rest.startswith(w) and rest[len(w):].lstrip().startswith(":")
                   for w in ("dream", "updated")):
                return True
    return False


def merge_leftovers(lines, union, note, fenced):
    """[(line, kind, first line, first and last line to compare)] of what a merge left in one
    file: "markers" anywhere; where git merges the file by union, "versions" and
    "deleted-changed" (facts side by side), and in a note "two-notes" (a second title)."""
    marked = marker_lines(lines, fenced)
    found = [(n, "markers", marked[0], n, n) for n in marked]
    if not union:
        return found
    for first, second, deletion in facts_side_by_side(lines, fenced):
        start, end = run_of_facts(lines, first, second, fenced)
        found.append((second, "deleted-changed" if deletion else "versions", first, start, end))
    titles = title_lines(lines, fenced) if note else []
    if len(titles) > 1:
        found.append((titles[1], "two-notes", titles[0], titles[0], titles[1]))
    return found


def has_extension(text):
    extension = text.rpartition(".")[2] if "." in text else ""
    return 0 < len(extension) <= 10 and extension.isascii() and \
        all(c.isalnum() or c == "_" for c in extension)


def looks_like_repository_path(text):
    """A path in the repository: no spaces or shell characters, a '/', and a last part with an
    extension or a trailing '/' (`origin/main` is no file). Not absolute, home or web paths."""
    if not text or any(c.isspace() or c in "*?[]{}<>$|;&=\"'(),@!^%" for c in text) or \
            "/" not in text or text.startswith(("/", "~", "-", "\\")) or "://" in text:
        return False
    first = text.split("/")[0]
    if "." in first.strip(".") and first not in (".", ".."):
        return False  # example.com/path: a host, not a folder
    return text.endswith("/") or has_extension(text)


def is_line_suffix(rest):
    """What points inside a file: `:42`, `:L42-L50`, `:42:7`, `#L42`, `#L3C2-L5C1`."""
    if rest[:2] == "#L":
        rest, column = rest[2:], "C"
    elif rest[:1] == ":":
        rest, column = rest[1:], ":"
    else:
        return False
    parts = rest.split("-")
    for part in parts:
        number, mark, at = part[part[:1] == "L":].partition(column)
        if not (number.isdigit() and number.isascii() and (not mark or at.isdigit() and at.isascii())):
            return False
    return len(parts) <= 2


def without_line_suffix(text):
    """Code that names a file, without what points inside it (`app.py:42`, `app.py#L42`, a pytest
    id `tests/test_app.py::test_once`)."""
    text = text.strip().partition("::")[0]
    for at in range(len(text)):
        if text[at] in ":#" and is_line_suffix(text[at:]):
            return text[:at]
    return text


def cited_path(text):
    """The repository path a piece of code names, or None."""
    text = without_line_suffix(text)
    return text if looks_like_repository_path(text) else None


def paths_in_code(content):
    """The paths a code span cites: its content when that is a path; else, in a command (`pytest
    tests/test_api.py -k retry`), each word that is a path with a folder, unless the command moves
    or removes files (`git mv a.py b.py`), which records a change."""
    whole = cited_path(content)
    words = content.split()
    if whole or len(words) < 2 or any(word in COMMANDS_OF_CHANGE for word in words):
        return [whole] if whole else []
    found = []
    for word in words:
        word = word.strip("\"'")
        path = cited_path(word.split("=", 1)[1] if word.startswith("-") and "=" in word else word)
        if path and "/" in path and not word.startswith("-"):
            found.append(path)
    return found


def dates_in(text):
    """The ISO dates (YYYY-MM-DD) a text holds, not inside a longer run of digits."""
    return [text[at:at + 10] for at in range(len(text) - 9) if is_date(text[at:at + 10])
            and (at == 0 or text[at - 1] not in "0123456789-") and not text[at + 10:at + 11].isdigit()]


def cited_paths(text, folder, links=True):
    """[(line, path, date)] of the repository paths a memory file cites outside comments and
    fenced code: a code span naming a path with a folder (read from the project's top), and, with
    `links`, a relative link (read from `folder`, the file's folder in the project). The date is
    the newest on the line outside its code spans, or None."""
    comments, code, _ = hidden_spans(text)
    fences = set(fenced_blocks(text))
    spans = [span for span in code if span not in fences]
    found = []
    for start, end in spans:
        ticks = len(text[start:end]) - len(text[start:end].lstrip("`"))
        found += [(start, path.rstrip("/")) for path in paths_in_code(text[start + ticks:end - ticks])
                  if "/" in path and not path.startswith("./")]
    for start, _, target in link_spans(text, sorted(comments + code)) if links else ():
        path = project_relative(folder, target)
        found += [(start, path)] if path else []
    return [(line_number(text, at), path, line_date(text, at, spans)) for at, path in sorted(found)]


def line_date(text, offset, spans):
    """The newest date on the line at `offset`, its code spans left out, or None."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    end = len(text) if end < 0 else end
    words, cursor = [], start
    for span_start, span_end in spans[bisect_left(spans, (start,)):]:
        if span_start >= end:
            break
        words.append(text[cursor:span_start])
        cursor = span_end
    dates = dates_in(" ".join(words + [text[cursor:end]]))
    return max(dates) if dates else None


def bisect_left(items, item):
    from bisect import bisect_left as search
    return search(items, item)


def project_relative(folder, target):
    """The project-relative path a relative link from `folder` leads to; None for a link that
    leaves the project or is no relative file link."""
    if not is_relative_file_link(target):
        return None
    parts = []
    for part in (folder + "/" + target).replace("\\", "/").split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or None


def fate_of(path, renamed, removed, exists):
    """(the path it lives at now or None, the commit (hash, date, ...) that moved or deleted it),
    from what git said: `renamed` {old: (new, commit)}, `removed` {path: commit}; renames are
    followed to the end, and a folder whose files all moved into one other folder moved with
    them. None when git never said the path went. `exists(path)`: whether a path is there now."""
    current, last, hops = path, None, 0
    while current in renamed and hops < 50:
        current, last = renamed[current]
        hops += 1
    if last and exists(current):
        return current, last
    moved = folder_moved_to(path, renamed, exists)
    if moved:
        return moved
    commit = removed.get(current) or removed.get(path) or last
    if commit is None:  # a folder: the last of its files to go
        under = [c for gone, c in removed.items() if gone.startswith(path + "/")]
        commit = max(under, key=lambda c: c[1]) if under else None
    return (None, commit) if commit else None


def folder_moved_to(path, renamed, exists):
    """(the folder there now, the commit) when the files of the folder `path` were renamed into
    one other folder (`assets/icons/*` to `assets/ui/icons/*`), else None."""
    prefix, places = path + "/", {}
    for old, (new, commit) in renamed.items():
        if old.startswith(prefix) and new.endswith("/" + old[len(prefix):]):
            place = new[:len(new) - len(old) + len(prefix) - 1]
            count, newest = places.get(place, (0, commit))
            places[place] = (count + 1, max(newest, commit, key=lambda c: c[1]))
    if not places:
        return None
    place, (_, commit) = max(places.items(), key=lambda item: item[1][0])
    return (place, commit) if exists(place) else None


def file_verdicts(name, text, memory, index=False):
    """(merge leftovers, citations) of one memory file: `name` is its path in the memory folder,
    `memory` that folder's in the project. A log's lines are history and cite nothing; the
    index's links are pointers (§9.3); a path inside the memory is a note naming a note."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    log = is_log_name(name)
    leftovers = merge_leftovers(lines, not log and not is_stamped(lines), "/" in name,
                                fenced_numbers(lines))
    folder = memory + ("/" + name.rsplit("/", 1)[0] if "/" in name else "")
    cited = [] if log else cited_paths("\n".join(lines), folder, links=not index)
    return leftovers, [c for c in cited if not (c[1] + "/").startswith(memory + "/")]


MARK_TEXT = {
    "markers": "conflict markers: a merge stopped here; keep what is true, delete the markers",
    "versions": "two versions of one fact (lines %(first)d-%(line)d), both kept by a merge: "
                "keep the true one",
    "deleted-changed": "deleted on one branch, changed on another (lines %(first)d-%(line)d): "
                       "keep the deletion or the fact",
    "run": "two facts touch (lines %(first)d-%(line)d): a merge put one branch's versions of "
           "lines %(start)d-%(end)d after the other's; keep one version of each fact",
    "two-notes": "two notes under one name (titles on lines %(first)d and %(line)d): split or "
                 "fold them",
}


def mark_line(mark):
    """One short line per mark: where, then what the files or git show; never a line of the
    file or a commit's subject."""
    where = "%s:%d" % (mark["file"], mark["line"])
    if mark["kind"] == "gone":
        fate = ("renamed to `%s`" % mark["now"]) if mark["now"] else "deleted"
        return "- %s cites `%s`, %s in %s (%s)" % (where, mark["path"], fate, mark["commit"],
                                                   mark["date"])
    several = mark["kind"] in ("versions", "deleted-changed") and \
        (mark["start"], mark["end"]) != (mark["first"], mark["line"])
    return "- %s %s" % (where, MARK_TEXT["run" if several else mark["kind"]] % mark)


def marks_lines(marks):
    """A line per mark, a conflict's markers once per file."""
    lines, seen = [], set()
    for mark in marks:
        key = (mark["file"], "markers") if mark["kind"] == "markers" else id(mark)
        if key not in seen:
            seen.add(key)
            lines.append(mark_line(mark))
    return lines


# --- memory defects found at every session start ---------------------------------------------

def dead_links(text, folder):
    """(offset, target) of each relative link whose file does not exist. Links resolve from the
    folder of the file that holds them, as a Markdown viewer resolves them."""
    comments, spans, _ = hidden_spans(text)
    hidden = sorted(comments + spans)
    exists = {}
    dead = []
    for offset, target in markdown_links(text, hidden):
        if not is_relative_file_link(target):
            continue
        if target not in exists:
            exists[target] = os.path.exists(os.path.join(folder, os.path.normpath(target)))
        if not exists[target]:
            dead.append((offset, target))
    return dead


def dead_pointer_point(project, env, index):
    if not index.head:
        return None
    # Only the lines within the index budget: past it, the index is reported already and
    # install.py --check reads it whole, so this check costs the same at every size.
    text = first_lines(index.head, number_setting(env, "MCP_MEM_LINES", 80))
    folder = os.path.dirname(index.path)
    dead = [(line_number(text, offset), target)
            for offset, target in dead_links(text, folder)
            if not is_silenced(line_text(text, offset))]
    if not dead:
        return None
    shown = shown_path(project, index.path)
    return (
        "- %s points to %d file(s) that do not exist (links resolve from %s/): %s. The agent is "
        "told a memory exists that it cannot open: correct each link, or drop the line with /dream."
        % (shown, len(dead), shown_path(project, folder),
           named_list("line %d `%s`" % item for item in dead))
    )


def unclosed_comment_point(project, env, index):
    if not index.head or not index.complete:  # a comment may close beyond the part read here
        return None
    opening = hidden_spans(index.head)[2]
    if opening is None or is_silenced(line_text(index.head, opening)):
        return None
    line = line_number(index.head, opening)
    below = index.head.count("\n", opening) - (1 if index.head.endswith("\n") else 0)
    return (
        "- %s line %d opens an HTML comment (`<!--`) that never closes. Most Markdown renderers, "
        "and the harness when it reads instruction files, drop everything after it (the rest of "
        "that line and %d line(s) below it). Close it with `-->`, or delete the stray `<!--`."
        % (shown_path(project, index.path), line, below)
    )


def repository_root(project):
    """The top of the git repository holding the project, or None. For a linked worktree, the
    main checkout: the harness keys auto memory by repository, so all worktrees share one."""
    folder = os.path.abspath(project)
    while True:
        marker = os.path.join(folder, ".git")
        if os.path.isdir(marker):
            return folder
        if os.path.isfile(marker):
            return main_checkout_of(folder, marker)
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def main_checkout_of(folder, marker):
    """Follow a `.git` file (`gitdir: ...`) to the repository's common folder, when it has one."""
    try:
        with open(marker, "rb") as stream:
            first = stream.read(4096).decode("utf-8", "replace").splitlines()[0]
    except (OSError, IndexError):
        return folder
    if not first.startswith("gitdir:"):
        return folder
    gitdir = os.path.join(folder, first[len("gitdir:"):].strip())
    commondir = os.path.join(gitdir, "commondir")
    if regular_file_size(commondir) is None:  # a FIFO here would hang the session's start
        return folder
    try:
        with open(commondir, "rb") as stream:
            common = stream.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        return folder  # a submodule: its own folder is its project
    common = os.path.normpath(os.path.join(gitdir, common))
    return os.path.dirname(common) if os.path.basename(common) == ".git" else folder


def auto_memory_disabled(env):
    return (env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY") or "").strip().lower() in ("1", "true", "yes")


def auto_memory_index(project, env):
    """The harness's machine-local MEMORY.md for this project, or None. The harness names the
    folder after the git repository's root (the project folder outside git), so both are tried,
    unless a settings file turns auto memory off or moves it."""
    if auto_memory_disabled(env):
        return None
    settings = auto_memory_settings(project, env)
    if settings.get("autoMemoryEnabled") is False:
        return None
    moved = settings.get("autoMemoryDirectory")
    if moved is not None:
        path = os.path.join(moved, "MEMORY.md")
        return path if regular_file_size(path) is not None else None
    pinned = env.get("CLAUDE_CODE_PROJECT_DIR_NAME") if env.get("CLAUDE_CONFIG_DIR") else None
    bases = [base for base in (repository_root(project), project) if base]
    for folder in harness_folders(bases, env, pinned):
        path = os.path.join(folder, "memory", "MEMORY.md")
        if regular_file_size(path) is not None:
            return path
    return None


def auto_memory_settings(project, env):
    """autoMemoryEnabled and autoMemoryDirectory as the harness's settings files set them, the
    file of highest precedence winning. The shared project file cannot move auto memory: the
    harness does not take that key from a file every clone of the repository carries."""
    found = {}
    for path, may_move in settings_files(project, env):
        values = settings_object(path)
        if "autoMemoryEnabled" not in found and isinstance(values.get("autoMemoryEnabled"), bool):
            found["autoMemoryEnabled"] = values["autoMemoryEnabled"]
        if may_move and "autoMemoryDirectory" not in found:
            folder = expanded_folder(values.get("autoMemoryDirectory"), env)
            if folder:
                found["autoMemoryDirectory"] = folder
    return found


def expanded_folder(value, env):
    """An autoMemoryDirectory value as the harness accepts it, absolute or starting `~/`; else None."""
    if not isinstance(value, str) or "\0" in value:
        return None
    if value.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        value = os.path.join(home, value[2:])
    return os.path.normpath(value) if os.path.isabs(value) else None


def read_text(path, limit=8 * MIB):
    if regular_file_size(path) is None:
        return None
    try:
        with open(path, "rb") as stream:
            return stream.read(limit).decode("utf-8", "replace")
    except OSError:
        return None


def frontmatter_end(text):
    """Offset just past a leading `---` ... `---` block, or 0 when the file has none."""
    if not text.startswith("---"):
        return 0
    first_end = text.find("\n")
    if first_end < 0 or text[:first_end].strip() != "---":
        return 0
    position = first_end + 1
    while position < len(text):
        end = text.find("\n", position)
        end = len(text) if end < 0 else end
        if text[position:end].strip() == "---":
            return min(end + 1, len(text))
        position = end + 1
    return 0


def visible_lines(text, comments, skip_before=0):
    """(line number, text without its comments, bytes including its newline) for each line
    that still holds something once comments are removed. A line that held only comment goes;
    a line that was blank to begin with stays. Lines before `skip_before` are left out."""
    kept = []
    pending = 0
    start = 0
    number = 0
    length = len(text)
    while start < length:
        end = text.find("\n", start)
        has_newline = end >= 0
        end = end if has_newline else length
        number += 1
        while pending < len(comments) and comments[pending][1] <= start:
            pending += 1
        pieces, cursor, touched = [], start, False
        walk = pending
        while walk < len(comments) and comments[walk][0] < end:
            touched = True
            if comments[walk][0] > cursor:
                pieces.append(text[cursor:comments[walk][0]])
            cursor = max(cursor, comments[walk][1])
            walk += 1
        if cursor < end:
            pieces.append(text[cursor:end])
        rest = "".join(pieces)
        if start >= skip_before and not (touched and not rest.strip()):
            kept.append((number, rest, len(rest.encode("utf-8")) + (1 if has_newline else 0)))
        start = end + 1
    return kept


def auto_memory_load(text):
    """How the harness's cap falls on its index: it counts neither frontmatter nor HTML comments
    (since 2.1.211), then loads the first 200 of the remaining lines, or fewer when the first
    25,600 bytes end sooner. A line loads only when all of it, newline included, fits."""
    comments = hidden_spans(text)[0]
    lines = visible_lines(text, comments, frontmatter_end(text))
    loaded = 0
    used = 0
    while loaded < len(lines) and loaded < AUTO_MEMORY_LINES:
        if used + lines[loaded][2] > AUTO_MEMORY_BYTES:
            break
        used += lines[loaded][2]
        loaded += 1
    return {
        "lines": len(lines),
        "bytes": sum(line[2] for line in lines),
        "loaded_lines": loaded,
        "loaded_bytes": used,
        "loaded_characters": sum(len(line[1]) + 1 for line in lines[:loaded]),
        "lost_lines": len(lines) - loaded,
        "cut_by": None if loaded == len(lines) else (
            "lines" if loaded == AUTO_MEMORY_LINES else "bytes"),
        "lost": [(number, rest) for number, rest, _ in lines[loaded:]],
    }


def cannot_overflow(path):
    """True when the file is too small, in bytes and in lines, for the cap to bite: then it is
    not parsed at all, which keeps the check cheap for every healthy session."""
    size = regular_file_size(path)
    if size is None:
        return True
    if size > AUTO_MEMORY_BYTES:
        return False
    return count_newlines(path) < AUTO_MEMORY_LINES


def entry_name(line):
    """A short name for an index line: a pointer's title, a heading's words, else its start."""
    text = line.strip().lstrip("-*+#> ").strip()
    if text.startswith("[") and "](" in text:
        text = text[1:text.index("](")].rstrip("]")
    return text if len(text) <= 60 else text[:57] + "..."


def first_lost_entries(lost, at_most=3):
    named = [(number, entry_name(rest)) for number, rest in lost if rest.strip()]
    return ["line %d \"%s\"" % item for item in named[:at_most]]


def home_shown(path, env):
    home = env.get("HOME") or os.path.expanduser("~")
    if home and home != "~" and path.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + path[len(home.rstrip(os.sep)):].replace(os.sep, "/")
    return path


def overflow_cause(load):
    """Which cap stopped the load, in the words of the reports."""
    if load["cut_by"] == "lines":
        return "its first %d lines" % AUTO_MEMORY_LINES
    return "its first %s bytes" % format(AUTO_MEMORY_BYTES, ",")


def auto_memory_point(project, env, index=None):
    path = auto_memory_index(project, env)
    if path is None or cannot_overflow(path):
        return None
    text = read_text(path) or ""
    load = auto_memory_load(text)
    if not load["lost_lines"] or is_silenced(text.split("\n")[load["lost"][0][0] - 1]):
        return None
    return (
        "- The harness's auto memory for this project, %s, holds %d lines (comments and "
        "frontmatter not counted); each session loads only %s, so %d line(s) never load, from %s. "
        "What falls off the end is usually the newest, often a correction: move the detail into "
        "topic files and keep that index to one short line per entry."
        % (home_shown(path, env), load["lines"], overflow_cause(load), load["lost_lines"],
           named_list(first_lost_entries(load["lost"]), 3))
    )


BUDGETS = (index_point, instruction_file_point, transcript_point, worktree_point)
# Defects, not budgets: nothing here is too big, something is wrong. They are reported under
# their own heading, and install.py --check calls them broken, never over.
DEFECTS = (dead_pointer_point, unclosed_comment_point, auto_memory_point)


def budget_points(project, env):
    """Every point over budget, each a line starting with '- '."""
    return run_checks(BUDGETS, project, env)


def memory_defects(project, env):
    """Every memory defect cheap enough to find at each start, each a line starting with '- '."""
    return run_checks(DEFECTS, project, env)


def run_checks(checks, project, env):
    try:
        index = read_index(project, env)
    except Exception:
        index = IndexReading(None)
    points = []
    for check in checks:
        try:
            point = check(project, env, index)
        except Exception:  # one broken measurement must not hide the others
            point = None
        if point:
            points.append(point)
    return points


def report_lines(points, defects=(), refusals=()):
    """The budget report, the memory defects, then what was refused, each under its own
    heading and each followed by one line per point; [] when healthy. Scripts match the
    wording."""
    lines = []
    if points:
        lines += ["## Context budget — over on %d point(s)" % len(points)] + list(points)
    if defects:
        lines += ["## Memory defects — %d found" % len(defects)] + list(defects)
    if refusals:
        lines += ["## Not read — %d refused" % len(refusals)] + list(refusals)
    return lines


def format_report(points, defects=(), refusals=()):
    lines = report_lines(points, defects, refusals)
    return "\n".join(lines) + "\n" if lines else ""


# --- the session-start injection (spec §5.3, §5.4) ---------------------------------------------

INJECTION_LIMIT = 10000
STATE_EXCERPT_LINES = 40
DISPLAY_LINE_CHARS = 300  # a handoff line
REPORT_LINE_CHARS = 1000  # a budget point or the pruning note: far longer than any repair needs
STALE_HANDOFF_DAYS = 2
READ_LIMIT = 256 * 1024  # far more than the injection can show, even after comments are removed


def injection_for(project, env, hook_input, seen_at=None, pruned=(), refusals=(), marks=None):
    """The injection for a session starting now in `project`, in the environment the hooks
    trust (trusted_environment): the budget report, the index with the topic folders listed
    under it, and the handoff. A resumed or forked conversation already holds the handoff it
    was started with: it is shown again only when written after `seen_at`, the moment its
    conversation last took in the memory (the session's baseline). `refusals`: lines already
    written about settings the hooks ignored. `marks`, called once the rest is read (session
    start's git reads go on meanwhile), gives the marks of what the memory cannot vouch for."""
    source = text_field(hook_input, "source")  # any other value starts a new conversation
    transcript = text_field(hook_input, "transcript_path")
    weighed = dict(env, MCP_TRANSCRIPT_PATH=transcript) if transcript else env
    points, defects = budget_points(project, weighed), memory_defects(project, env)
    refusals = list(refusals)
    handoff_seen_at = seen_at if source in ("resume", "fork") else None
    sections = [index_section(project, env, refusals), part_of(listing_section, project, env),
                handoff_section(project, env, time.time(), handoff_seen_at, refusals)]
    sections.insert(0, part_of(marks_section, project, part_of(marks) if marks else None))
    return injection(points, list(pruned), [s for s in sections if s], closing_line(source),
                     defects, refusals)


def part_of(function, *args):
    """What `function` returns, or None when it fails: the listing and the marks are parts of
    their own, and a part that fails costs only itself."""
    try:
        return function(*args)
    except Exception:
        return None


MARKS_SHOWN = 10
MARK_LINE_CHARS = 240


def marks_section(project, marks):
    """The marks, before the memory they speak of: the first MARKS_SHOWN lines, room for them
    set aside before any other part's (keep_order), and a command for every one."""
    lines = marks_lines(marks or [])
    if not lines:
        return None
    command = "`python3 %s/session-start.py --marks`" % shown_path(
        project, os.path.dirname(os.path.abspath(__file__)))
    shown = [clipped(line, MARK_LINE_CHARS) for line in lines[:MARKS_SHOWN]]
    if len(lines) > MARKS_SHOWN:
        shown.append("- and %d more: %s lists them all" % (len(lines) - MARKS_SHOWN, command))
    return Section("## Memory marks — %d line(s) not to take as written (/dream settles them)"
                   % len(lines), shown, command, -1, rest=command + " lists them all")


class Section:
    """A titled block of the injection. When the injection must be cut, sections with a lower
    `keep_order` get their room first."""

    def __init__(self, title, lines, source, keep_order, notes=(), rest=None, fit=None):
        self.title = title
        self.lines = lines
        self.source = source
        self.keep_order = keep_order
        self.notes = list(notes)
        self.rest = rest or "read %s in full" % source  # where what a cut leaves out is
        self.fit = fit  # the lines that fit a room, for a section that can say less


def without_comments(text, enough=None):
    """The lines of a Markdown file as the agent should read them: comment text removed (an
    inline comment leaves the rest of its line, a block disappears), as hidden_spans reads
    comments, so the injection and the unclosed-comment report agree: an unclosed '<!--' hides
    nothing here, and it is reported there. Lines stop once they hold more than `enough`
    characters: more could never be shown, and the cut is reported all the same."""
    pieces = []
    position = 0
    for start, end in hidden_spans(text)[0]:
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


def clipped(line, limit):
    """A line of at most `limit` characters, marked '…' where it was shortened. Index lines are
    never clipped: the index is curated, and a shortened line would hide part of a memory unsaid."""
    return line if len(line) <= limit else line[:limit] + "…"


def injected_text(project, env, path, refusals):
    """The text of a file the injection shows, read under read_project_text's rule: None when
    nothing is there or it is refused, the refusal then joining `refusals`."""
    text, refusal = read_project_text(project, env, path, READ_LIMIT)
    if refusal is not None:
        refusals.append(refusal)
    return text


def index_section(project, env, refusals):
    path = index_path(project, env)
    text = injected_text(project, env, path, refusals)
    if text is None:
        return None
    shown = shown_path(project, path)
    title = "## Memory index (%s — shared, committed; HTML comments omitted)" % shown
    lines = with_fences_closed(without_comments(text.rstrip("\n"), enough=INJECTION_LIMIT))
    return Section(title, lines, shown, keep_order=1)


def handoff_section(project, env, now, seen_at=None, refusals=None):
    """The first lines of the handoff; None when there is none, or when it was last written
    before `seen_at`, the moment the conversation last took it in."""
    path = state_path(project, env)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if seen_at is not None and info.st_mtime <= seen_at:
        return None
    text = injected_text(project, env, path, [] if refusals is None else refusals)
    if text is None:
        return None
    shown = shown_path(project, path)
    title = "## Last handoff (%s — local to this machine, first %d lines)" % (
        shown, STATE_EXCERPT_LINES)
    lines = without_comments(text)[:STATE_EXCERPT_LINES]
    while lines and not lines[-1].strip():
        lines.pop()
    age_days = int((now - info.st_mtime) // 86400)
    notes = []
    if age_days >= STALE_HANDOFF_DAYS:
        notes.append("WARNING: the handoff above is %d days old. Commits made since then are not "
                     "in it: where it and `git log` disagree, trust git log." % age_days)
    lines = [clipped(line, DISPLAY_LINE_CHARS) for line in lines]
    return Section(title, with_fences_closed(lines), shown, keep_order=0, notes=notes)


def injection_length(text):
    """Length as every harness may count it: UTF-8 bytes, which Codex CLI counts and which are
    never fewer than the UTF-16 units Claude Code counts."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


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
    notices = ["[cut here: the injection limit is %d characters; %s]"
               % (INJECTION_LIMIT, section.rest) for section in ordered]
    room -= sum(injection_length(notice) + 1 for notice in notices)
    for section, notice in zip(ordered, notices):
        notice_cost = injection_length(notice) + 1
        room += notice_cost
        section.lines = section.fit(room) if section.fit else section.lines
        costs = [injection_length(line) + 1 for line in section.lines]
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
    costs = [injection_length(printable(line)) + 1 for line in lines]
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
    points, defects, pruned = ([clipped(line, REPORT_LINE_CHARS) for line in lines]
                               for lines in (points, defects, pruned))
    refusals = [clipped(line, REPORT_LINE_CHARS) for line in sorted(set(refusals),
                                                                     key=refusals.index)]
    report = report_lines(points, defects, refusals)
    text = as_text(framed(report, pruned, sections, closing))
    for section in [s for s in sections if s.fit] if injection_length(text) > INJECTION_LIMIT \
            else ():
        spare = INJECTION_LIMIT - injection_length(text) + injection_length(as_text(section.lines))
        section.lines = section.fit(spare)
        text = as_text(framed(report, pruned, sections, closing))
    if injection_length(text) <= INJECTION_LIMIT:
        return text
    report = report_lines(points + [CUT_POINT], defects, refusals)
    frame = framed(report, pruned,
                   [Section(s.title, [], s.source, s.keep_order, s.notes) for s in sections],
                   closing)
    cut_to_fit(sections, INJECTION_LIMIT - injection_length(as_text(frame)))
    return as_text(within_limit(framed(report, pruned, sections, closing)))


def in_the_harness_form(harness_name, text):
    """The injection as the harness passes it to the model: Gemini CLI takes only a JSON
    additionalContext (plain output goes to its terminal); Claude Code and Codex CLI take
    plain text."""
    if harness_name != "gemini":
        return text
    return ('{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": %s}}\n'
            % json_string(text))


def refused_reads(project, env):
    """One line for each path setting ignored and each file refused at this start: the
    settings refused_settings names, then the index when read_project_text would refuse it."""
    trusted, refusals = trusted_environment(project, env)
    index = read_index(project, trusted)
    return refusals + ([index.refusal] if index.refusal else [])


def write_text_to(stream, text):
    """UTF-8 whatever the locale; a reader that went away is not an error worth a traceback."""
    if not text:
        return
    try:
        stream.buffer.write(text.encode("utf-8"))
        stream.buffer.flush()
    except (OSError, ValueError, AttributeError):
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        except (OSError, ValueError, AttributeError):
            pass


def main():
    project = project_dir()
    if project:
        env = trusted_environment(project, os.environ)[0]
        write_text_to(sys.stdout, format_report(budget_points(project, env),
                                                memory_defects(project, env),
                                                refused_reads(project, os.environ)))


def keep_the_hook_folder_off_the_import_path():
    """Run without -I (`python3 .claude/hooks/context-budget.py`, as a user or a command
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
    except BaseException:  # a budget check must never take the session down
        pass
    sys.exit(0)
