#!/usr/bin/env python3
"""context-budget: what the hooks read and show: the project and its paths, the hook input,
the settings as the harness applies them, the environment the user set, the one rule for what
may be shown, Markdown, the budgets and the memory's defects, what the memory's lines cannot
vouch for, and the session-start injection fitted to its limit.

Why it exists: what loads at session start taxes every request, a budget binds only where it is
checked, and a repository is untrusted input, so what the hooks read is decided in one place.
The entries load it through stop-handoff.py's loader, install.py --check and memory_health.py
by path (names in __all__). Run alone, it prints the budget report.

What it promises (spec §5, §6, §8.8):
- Silence while every budget holds and the memory has no defect; else a heading counting the
  points, then a line per point: the file, its measure, the budget, the repair. Exit status 0.
- Its cost does not grow with the transcript, the index (64 KiB parsed, links in bounded work)
  or the notes (the listing cached per folder); the worktree walk stops after WALK_SECONDS.
- It shows the agent only what the repository's reviewer could see and the project's rules
  allow (read_project_text): a regular file reached through no link inside the project, under
  no `Read(...)` deny rule, nothing while a settings file the harness applies is unreadable. A
  path variable the repository sets may not lead out of the project, nor say where the user's
  files are. Each refusal is one line.
- The injection never exceeds INJECTION_LIMIT UTF-8 bytes (no harness's unit is larger): the
  report first, the marks' room next, the rest cut at line boundaries, a fence cut open closed,
  each cut saying where the whole is. Every character is printable and encodes.
- Standard library only; Python 3.8 or newer. Configuration is by environment (spec §7.9, the
  bash reference's names and defaults); a number that is not whole falls back to its default.
"""
import os
import stat
import sys
import time

MIB = 1024 * 1024
WALK_SECONDS = 1.0
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_STATE = ".session-state.md"
OLDER_DEFAULT_STATE = ".claude/session-state.md"  # 0.1.0's, read while no new one exists
DEFAULT_BASELINE = ".claude/hooks/.session-baseline"
DEFAULT_THROTTLE_MINUTES = 45
DEFAULT_INSTRUCTION_FILE = "CLAUDE.md"
ALTERNATE_INSTRUCTION_FILE = os.path.join(".claude", "CLAUDE.md")
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
ENCODED_NAME_LIMIT = 200
# The index's part parsed at start; --check reads it whole.
INDEX_HEAD_BYTES = 64 * 1024
# The harness loads 200 lines or 25 x 1,024 bytes of its auto-memory index.
AUTO_MEMORY_LINES = 200
AUTO_MEMORY_BYTES = 25 * 1024
# A line holding this is never reported by a memory check.
IGNORE_MARKER = "mcp-health: ignore"
NAMED_AT_MOST = 5
STDIN_SECONDS = 2.0
STDIN_LIMIT = 64 * MIB
CACHE_FORMAT = "v1"  # of the hooks' cache entries

# Every name another file takes from this one.
__all__ = (
    "project_dir", "work_tree_top", "project_path", "index_path", "state_path", "state_paths",
    "baseline_path", "throttle_minutes", "handoff_time", "handoff_is_fresh",
    "stop_may_pass_at_once", "shown_path", "lies_within", "strictly_inside", "number_setting",
    "read_hook_input", "Drain", "json_object", "json_string", "text_field", "harness",
    "read_plain_file", "read_text", "regular_file_size", "settings_files", "user_config_dir",
    "managed_instruction_file", "trusted_environment", "refused_settings",
    "project_setting_origin", "read_project_text", "PROJECT_SETTINGS_FILES",
    "hidden_spans", "fenced_blocks", "markdown_links", "link_spans", "is_relative_file_link",
    "frontmatter_end", "visible_lines", "is_silenced", "named_list", "entry_name",
    "first_entries", "notes_in", "NOT_NOTES", "adopt_the_trusted_environment", "is_real_folder",
    "instruction_file", "auto_memory_index",
    "auto_memory_load", "first_lost_entries", "overflow_cause", "home_shown",
    "budget_points", "memory_defects", "format_report", "injection_for",
    "in_the_harness_form", "write_text_to", "keep_the_hook_folder_off_the_import_path",
    "why_not_read", "uses_cache", "account_cache", "new_digest", "cache_name", "is_dated_fact",
    "marker_lines", "facts_side_by_side", "run_of_facts", "title_lines", "file_verdicts",
    "looks_like_repository_path", "without_line_suffix", "paths_in_code", "fate_of",
    "marks_lines", "COMMANDS_OF_CHANGE", "MIB", "INDEX_HEAD_BYTES", "DEFAULT_INDEX",
    "DEFAULT_STATE", "AUTO_MEMORY_LINES", "AUTO_MEMORY_BYTES", "NAMED_AT_MOST", "ENTRIES_AT_MOST")


# --- the project and the files it names ---

def project_dir():
    """The project the harness names, else the work tree around the working folder."""
    try:
        path = (os.environ.get("CLAUDE_PROJECT_DIR") or os.environ.get("GEMINI_PROJECT_DIR")
                or work_tree_top(os.getcwd()))
    except OSError:
        return None
    return os.path.abspath(path) if os.path.isdir(path) else None


def work_tree_top(folder):
    """The nearest folder at or above `folder` holding .git, resolved; else `folder`."""
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
    """MCP_SESSION_STATE, else the default, or the older one while only it exists."""
    if env.get("MCP_SESSION_STATE"):
        return project_path(project, env, "MCP_SESSION_STATE", DEFAULT_STATE)
    path = os.path.join(project, DEFAULT_STATE)
    older = os.path.join(project, OLDER_DEFAULT_STATE)
    return older if not os.path.lexists(path) and os.path.lexists(older) else path


def state_paths(project, env):
    """Every path a handoff may be written to."""
    if env.get("MCP_SESSION_STATE"):
        return [state_path(project, env)]
    return [os.path.join(project, DEFAULT_STATE), os.path.join(project, OLDER_DEFAULT_STATE)]


def baseline_path(project, env, session_id):
    """One per session: sessions sharing a checkout never erase each other's evidence."""
    shared = project_path(project, env, "MCP_BASELINE", DEFAULT_BASELINE)
    suffix = "".join(c for c in session_id or "" if c.isascii() and (c.isalnum() or c in "-_"))
    return shared + "." + suffix[:128] if suffix else shared


def throttle_minutes(env):
    return number_setting(env, "MCP_THROTTLE_MIN", DEFAULT_THROTTLE_MINUTES)


def handoff_time(project, env):
    """The session-state file's mtime in ns, or None."""
    try:
        info = os.stat(state_path(project, env))
    except (OSError, ValueError):
        return None
    return info.st_mtime_ns if stat.S_ISREG(info.st_mode) else None


def handoff_is_fresh(written_ns, env):
    """Within the throttle window, not in the future (a skewed clock)."""
    if written_ns is None:
        return False
    age_seconds = time.time() - written_ns / 1e9
    return -60 < age_seconds and age_seconds // 60 < throttle_minutes(env)


def stop_may_pass_at_once(project, env):
    """The guard's cheapest way out: a fresh handoff a later baseline took in."""
    written_ns = handoff_time(project, env)
    if not handoff_is_fresh(written_ns, env):
        return False
    folder = os.path.dirname(project_path(project, env, "MCP_BASELINE", DEFAULT_BASELINE))
    try:
        return os.stat(folder).st_mtime_ns > written_ns
    except (OSError, ValueError):
        return False


def shown_path(project, path):
    try:
        relative = os.path.relpath(path, project)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


# --- the account's cache: stop-handoff.py's account_cache, handed over ---

CACHE = []


def uses_cache(cache):
    CACHE[:] = [cache]


def account_cache(name, value=None):
    """The value under `name` in the account's cache, or None; given a value, keep it."""
    try:
        return CACHE[0](name, value) if CACHE else None
    except Exception:
        return None


def new_digest():
    """A 128-bit BLAKE2b by the C module behind hashlib's, without its start-up."""
    try:
        from _blake2 import blake2b
    except ImportError:
        from hashlib import blake2b
    return blake2b(digest_size=16)


def cache_name(kind, path):
    digest = new_digest()
    digest.update(os.path.abspath(path).encode("utf-8", "surrogateescape"))
    return "%s-%s.%s" % (kind, digest.hexdigest(), CACHE_FORMAT)


# --- the hook input ---

HOOK_INPUT = []  # the harness's input, once read


def read_hook_input():
    """The harness's JSON object, or {}; read once, within STDIN_SECONDS."""
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
    return read_pipe_object(fd, time.monotonic() + STDIN_SECONDS)


def read_pipe_object(fd, deadline):
    """The object on `fd` by `deadline`, ending at a complete one (the pipe may stay open)."""
    def complete(data):
        return data.rstrip().endswith(b"}") and json_object(data)

    try:
        drain = Drain(fd, STDIN_LIMIT, complete)
    except Exception:  # no thread to be had (a process or memory limit)
        return {}
    drain.wait(deadline)
    return json_object(drain.data())


class Drain:
    """A pipe read to its end, `limit` bytes or what `enough` accepts (of a first MiB), by a
    built-in `_thread`, the caller waiting with a deadline (`select` loads; no Windows pipe)."""

    def __init__(self, fd, limit, enough=None, closes=False):
        import _thread
        self.chunks, self.finished = [], _thread.allocate_lock()
        self.finished.acquire()
        _thread.start_new_thread(self.read, (fd, limit, enough, closes))

    def read(self, fd, limit, enough, closes):
        try:
            total = 0
            while total < limit:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:  # opened non-blocking: the caller's deadline rules
                    time.sleep(0.005)
                    continue
                if not chunk:
                    break
                self.chunks.append(chunk)
                total += len(chunk)
                if enough is not None and total <= MIB and enough(b"".join(self.chunks)):
                    break
        except BaseException:  # a thread's failure prints nothing: the pipe ends
            pass
        if closes:
            try:
                os.close(fd)
            except OSError:
                pass
        self.finished.release()

    def wait(self, deadline):
        """Whether the reading ended by `deadline` (asked again, the same answer)."""
        ended = self.finished.acquire(timeout=max(0.0, min(deadline - time.monotonic(), 1e6)))
        if ended:
            self.finished.release()
        return ended

    def data(self):
        return b"".join(self.chunks)


def json_object(data):
    value = json_value(data)
    return value if isinstance(value, dict) else {}


def json_value(data, strict=False):
    """The JSON value of bytes as the harness decodes them, or None (`strict`: RecursionError)."""
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
    strict, object_hook, object_pairs_hook, parse_int = True, None, None, int
    parse_float = parse_constant = float


def parse_json(text):
    """json.loads through the same C scanner, without the json package's start-up."""
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
    """gemini (AfterAgent, GEMINI_SESSION_ID), codex (turn_id, rollout-*.jsonl), else claude."""
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
    return int(value) if value.isascii() and value.isdigit() else default


def regular_file_size(path):
    """Size of a regular file, or None: a FIFO is never opened."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def mib_rounded_up(size):
    return -(-size // MIB)


class IndexReading(object):
    """The index, read once per start: its newline count, its first INDEX_HEAD_BYTES."""

    def __init__(self, path, newlines=None, head="", complete=True, refusal=None):
        self.path, self.newlines, self.head, self.complete = path, newlines, head, complete
        self.folders = None  # (folder mtime, topic_folders())
        self.listable = False  # its folder is the memory's own, not the project's top
        self.refusal = refusal  # why the index was not read
        self.links = None

    def relative_links(self):
        """The head's relative links, read once for the listing and the dead pointers alike."""
        if self.links is None:
            self.links = relative_links(self.head or "")
        return self.links


# The last reading, by the file's identity: a start reads the index once.
LAST_READING = {}


def read_index(project, env):
    path = index_path(project, env)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return IndexReading(path)
    reason = why_not_read(project, env, path)  # a FIFO among others: never opened
    if reason is not None:
        return IndexReading(path, refusal=not_read(project, path, reason))
    key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in LAST_READING:
        LAST_READING.clear()
        LAST_READING[key] = index_reading(path)
        LAST_READING[key].listable = strictly_inside(os.path.dirname(path), project)
    return LAST_READING[key]


def strictly_inside(folder, project):
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
    try:  # the lines the listing adds under the index
        listed = len(topic_folders(index))
    except Exception:
        listed = 0
    lines = index.newlines + listed
    if lines <= budget:
        return None
    shown, loads = shown_path(project, index.path), "It is an index and loads at every session " \
        "start: one pointer line per topic"
    if not listed:
        return ("- %s is %d lines (budget %d). %s, the detail in topic files. Repair it with "
                "/dream." % (shown, lines, budget, loads))
    return ("- %s is %d lines and session start lists its %d topic folder(s) under it: %d lines "
            "(budget %d). %s file, one listed line per topic folder, the detail in the files. "
            "Repair it with /dream: move notes into the topic folder they belong to."
            % (shown, index.newlines, listed, lines, budget, loads))


# --- the listing: the topic folders beside the index ---
# A note (memory/<topic>/<note>.md) is listed, never pointed to: added on a branch, it needs no
# index edit a merge could lose.

LISTING_HEADING = "## Topic folders (listed at session start; a note is %s/<folder>/<note>.md)"
NOTE_NAMES_CHARS = 240
# Entries read from one folder at a start; past it, its line says "at least".
ENTRIES_AT_MOST = 2000


def topic_folders(index):
    """Sorted (name, notes_in()) of topic folders beside the index with notes it does not link;
    no dot folder or link, none for an index at the top."""
    if not index.path or index.newlines is None or not index.listable:
        return []
    folder = os.path.dirname(index.path)
    try:
        state = os.stat(folder).st_mtime_ns
        if index.folders is not None and index.folders[0] == state:
            return index.folders[1]
    except OSError:
        return []
    linked = linked_paths(index.relative_links(), folder)
    holding = set(os.path.dirname(path) for path in linked)
    name = cache_name("listing", folder)
    kept, seen, found = account_cache(name), {}, []
    for entry in first_entries(folder)[0]:
        where = os.path.normcase(os.path.normpath(entry.path))
        if entry.name.startswith(".") or not is_real_folder(entry) or where in linked:
            continue
        names, more = folder_notes(entry, kept if isinstance(kept, dict) else {}, seen)
        if where in holding:
            names = [n for n in names if os.path.normcase(os.path.join(where, n + ".md")) not in
                     linked]
        if names:
            found.append((entry.name, (names, more)))
    if seen != kept:
        account_cache(name, seen)
    found.sort(key=lambda item: (item[0].lower(), item[0]))
    index.folders = (state, found)
    return found


def folder_notes(entry, kept, seen):
    """notes_in(), or the cache's while the folder's time is as kept: 5,000 notes cost 10's."""
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


def linked_paths(links, folder):
    """The normalised paths relative `links` lead to from `folder`."""
    return set(os.path.normcase(os.path.normpath(os.path.join(folder, target)))
               for _, target in links)


def relative_links(text):
    """(offset, target) of each relative file link outside comments and code."""
    comments, spans, _ = hidden_spans(text)
    return [(offset, target) for offset, target in markdown_links(text, sorted(comments + spans))
            if is_relative_file_link(target)]


def is_real_folder(entry):
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def first_entries(folder):
    """(the folder's entries, at most ENTRIES_AT_MOST; whether it has more)."""
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


# No notes: a README explains the folder to people; an agent's instruction files are its rules.
NOT_NOTES = frozenset(("readme.md", "claude.md", "claude.local.md", "agents.md", "gemini.md"))


def notes_in(folder):
    """(sorted names of its Markdown notes, no NOT_NOTES or dot file; whether it has more)."""
    entries, more = first_entries(folder)
    names = []
    for entry in entries:
        name = entry.name
        if name[:1] == "." or name.lower() in NOT_NOTES or not name.lower().endswith(".md"):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                names.append(name[:-3])
        except OSError:
            continue
    return sorted(names, key=lambda name: (name.lower(), name)), more


def listing_section(project, env):
    """Each folder keeps its line and link, its notes' names share what room is left; cut: `ls`."""
    index = read_index(project, env)
    found = topic_folders(index)
    if not found:
        return None
    memory = shown_path(project, os.path.dirname(index.path))
    return Section(LISTING_HEADING % memory, fitted(found, None), memory, 2,
                   rest="`ls %s/*/` lists every note" % memory,
                   fit=lambda room: fitted(found, room))


def fitted(found, room):
    """The listing's lines, names up to NOTE_NAMES_CHARS each or an equal share of `room`."""
    share = NOTE_NAMES_CHARS
    if room is not None:
        bare = sum(injection_length(folder_line(name, notes, 0)) + 1 for name, notes in found)
        share = min(share, (room - bare) // len(found) - 16)  # ": ", " and N more"
    return [folder_line(name, notes, share if share >= 20 else 0) for name, notes in found]


def folder_line(name, listed, share):
    """`- [name/](name/) — 3 notes: a, b and 1 more`, names within `share`."""
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
    target = "<%s>" % name if any(c in name for c in " ()<>") else name  # that would end it
    return clipped("- [%s/](%s/) — %s" % (name, target, text), REPORT_LINE_CHARS)


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
    """The harness's folder name for a path (non-alphanumerics as '-', hashed past 200)."""
    name = "".join(c if c.isascii() and c.isalnum() else "--" if ord(c) > 0xFFFF else "-"
                   for c in path)
    if len(name) <= ENCODED_NAME_LIMIT:
        return name
    return "%s-%s" % (name[:ENCODED_NAME_LIMIT], base36(abs(string_hash(path))))


def string_hash(text):
    """The harness's 32-bit hash: h = h * 31 + unit over UTF-16 units, signed."""
    value = 0
    for character in text:
        code = ord(character)
        units = (code,) if code <= 0xFFFF else (
            0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF))
        for unit in units:
            value = (value * 31 + unit) & 0xFFFFFFFF
    return value - 0x100000000 if value >= 0x80000000 else value


def base36(number):
    text = ""
    while True:
        number, digit = divmod(number, 36)
        text = "0123456789abcdefghijklmnopqrstuvwxyz"[digit] + text
        if not number:
            return text


def harness_folders(paths, env, pinned=None):
    """The harness's per-project folders of these paths, as given and resolved."""
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
    """The transcript named (maybe not there yet: a fresh start), else the newest."""
    named = env.get("MCP_TRANSCRIPT_PATH")
    if named:
        return named
    for folder in harness_folders([project], env):
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
    """(`du`'s bytes under a folder, all counted?); stops past `enough` or WALK_SECONDS."""
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


# --- the harness's settings, as the harness applies them ---

PROJECT_SETTINGS_FILES = (".claude/settings.local.json", ".claude/settings.json")
SETTINGS_LIMIT = MIB  # far more than any settings file; past it, unread


class Unreadable(dict):
    """Settings the harness may apply that the hooks cannot read: a bar to showing."""


SETTINGS_READ = {}  # by the file's identity: a start asks for a file several times


def settings_object(path):
    """A settings file's JSON object; {} for none; Unreadable when unreadable."""
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
    """(path, may it move auto memory) of each settings file the harness reads, highest first."""
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
    """The managed policy's folder (MCP_MANAGED_SETTINGS_DIR: another)."""
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
    home = user_home(env)
    return home and os.path.join(home, ".claude")


def user_home(env):
    """HOME as set, else the account's; None when neither is known."""
    home = env.get("HOME") or os.path.expanduser("~")
    return None if not home or home == "~" else home


def unreadable_settings(project, env):
    for path, _ in settings_files(project, env):
        if isinstance(settings_object(path), Unreadable):
            return path
    return None


# --- the environment the user set ---

# Where the user's files are: never taken from a repository. A project path it sets stays inside.
USER_PLACES = ("HOME", "CLAUDE_CONFIG_DIR", "MCP_PROJECTS_DIR", "MCP_TRANSCRIPT_PATH",
               "MCP_MANAGED_SETTINGS_DIR")
PROJECT_PLACES = ("MCP_MEMORY_INDEX", "MCP_SESSION_STATE", "MCP_CLAUDE_MD", "MCP_WORKTREE_DIR",
                  "MCP_BASELINE")
# What Gemini CLI loads from its folder and each above it.
AGENT_ENVIRONMENT_FILES = (os.path.join(".gemini", ".env"), ".env")


def repository_names(project, cwd=None):
    """{variable: the repository file that may set it}: settings' "env", .env files."""
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
    """The names a .env file sets: `NAME=value`, `export NAME=value`."""
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
    """[(variable, refusal line)] of the repository-set variables ignored."""
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
    return repository_names(project).get(name)


def leads_inside(project, value):
    """Inside the project as spelt and through links; never with `~` or a variable to expand."""
    if value[:1] == "~" or "$" in value or "%" in value:
        return False
    path = os.path.join(project, value)
    return (lies_within(os.path.normpath(os.path.abspath(path)), os.path.abspath(project))
            and lies_within(os.path.realpath(path), os.path.realpath(project)))


def trusted_environment(project, env, cwd=None):
    """(env without what refused_settings names, the refusals); a refused HOME: the account's."""
    refused = refused_settings(project, env, cwd)
    trusted = dict(env)
    for name, _ in refused:
        trusted.pop(name, None)
    if "HOME" not in trusted and "HOME" in env:
        home = account_home()
        if home:
            trusted["HOME"] = home
    return trusted, [line for _, line in refused]


def adopt_the_trusted_environment(project, cwd=None):
    """Make os.environ trusted_environment's before anything reads it; returns the refusals."""
    trusted, lines = trusted_environment(project, dict(os.environ), cwd)
    for name in [name for name in os.environ if name not in trusted]:
        os.environ.pop(name, None)
    for name, value in trusted.items():
        if os.environ.get(name) != value:
            try:
                os.environ[name] = value
            except ValueError:  # a NUL in it: the variable goes
                os.environ.pop(name, None)
    return lines


def account_home():
    try:
        import pwd
        return pwd.getpwuid(os.getuid()).pw_dir
    except (ImportError, KeyError, AttributeError, OSError):
        return None


# --- what the hooks may show ---

def read_project_text(project, env, path, limit):
    """(text, None) for a file the hooks may show; (None, refusal); (None, None) for none."""
    if not os.path.exists(path):  # a link to nothing is nothing
        return None, None
    reason = why_not_read(project, env, path)
    if reason is None:
        data = read_plain_file(path, limit)
        if data is not None:
            return data.decode("utf-8", "replace"), None
        reason = "it could not be read as a regular file"
    return None, not_read(project, path, reason)


def not_read(project, path, reason):
    return "- %s was not read: %s." % (shown_path(project, path), reason)


def why_not_read(project, env, path):
    """Why the hooks may not show `path`: a link in the project, not regular, a deny rule."""
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
    """The first `limit` bytes of a regular file, else None; a FIFO never blocks it."""
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
    """Whether `path` is `folder` or below it, both absolute and normalised alike."""
    path, folder = os.path.normcase(path), os.path.normcase(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


# --- the harness's Read rules, as the hooks apply them ---

def deny_rule_covering(project, env, paths):
    """(rule, settings file) of the first `Read` deny rule covering one of `paths`."""
    memo = {}  # the paths below each anchor, once for all the rules
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
    """Whether a `Read(...)` rule covers one of `paths` as the harness reads it: gitignore
    patterns anchored by `//`, `~/`, `/`, else at any depth."""
    if rule == "Read":
        return True
    if not (rule.startswith("Read(") and rule.endswith(")")):
        return False
    pattern = rule[len("Read("):-1].strip()
    if pattern.startswith("//"):
        anchor, pattern = None, pattern[2:]
    elif pattern.startswith("~/"):
        anchor, pattern = user_home(env), pattern[2:]
        if not anchor:
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
        # The file, or a folder it lies in.
        ends = range(1, len(names)) if folder_only else range(1, len(names) + 1)
        if any(names_match(segments, names[:end]) for end in ends):
            return True
    return False


# Whether the file system compares names without case (Windows, macOS): then so do the rules.
FOLD_CASE = os.path.normcase("A") == "a" or sys.platform == "darwin"


def names_below(paths, anchor, memo):
    """Each list of names from `anchor` (given and resolved; None: root) to one of `paths`."""
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
    """The names from `base` down to `path`, or None; base None: the root (`//c/Users/...`)."""
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
    """Whether glob names match path names, `**` any number; cost grows only with the `**`s."""
    reached = past_any_names(pattern, {0})
    for name in names:
        reached = past_any_names(pattern, {i if pattern[i] == "**" else i + 1 for i in reached
                                           if i < len(pattern) and (pattern[i] == "**"
                                           or name_matches(pattern[i], name))})
    return len(pattern) in reached


def past_any_names(pattern, reached):
    """The positions reached, and those a `**` matching no name leads on to."""
    found = set()
    for position in reached:
        found.add(position)
        while position < len(pattern) and pattern[position] == "**":
            position += 1
            found.add(position)
    return found


def name_matches(pattern, name):
    """gitignore's glob of a name (`*`, `?`, `[...]`, `[!...]`); backtracks only to the last `*`."""
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
    """Pattern characters matching `character` at `p` (literal, `?`, `[...]`), or 0."""
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
    """The (low, high) ranges of a glob set's members: `a-z`, or `x` as (x, x)."""
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


# --- Markdown as the agent sees it (no regular expressions: it runs at every start) ---

def hidden_spans(text):
    """Markdown not read as is: (closed comments, code spans/fences, an unclosed '<!--' or None)."""
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
    """Just past the comment opening at `opening`, or -1 if it never closes."""
    for empty in ("<!-->", "<!--->"):
        if text.startswith(empty, opening):
            return opening + len(empty)
    close = text.find("-->", opening + 4)
    return -1 if close < 0 else close + 3


def fenced_blocks(text):
    """(start, end) of each fenced code block, as fence_after reads fences."""
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
    """The fence open after `line`: 3+ backticks or tildes, closed by the same at least as long."""
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
    """(offset, target) of each inline link outside `hidden` (link_spans)."""
    return [(offset, target) for offset, _, target in link_spans(text, hidden)]


# Characters scanned per character of a text, at most: a hostile line costs no square.
LINK_WORK_PER_CHARACTER = 16


class LinkScan:
    """One text's link reading: the text, the work left, the last line's brackets."""

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
        """The `[` the `]` at `close` closes on its line, or -1."""
        start, end, pairs = self.line
        opening = self.text.rfind("[", start, close)
        if opening >= 0 and self.text.find("]", opening, close) < 0 and \
                "\\" not in self.text[max(opening - 1, start):close + 1]:
            return opening  # the usual `[title](...)`: nothing nested or escaped
        if pairs is None:
            pairs = bracket_pairs(self.text, start, end)
            self.line = (start, end, pairs)
        return pairs.get(close, -1)


def bracket_pairs(text, start, end):
    """{offset of `]`: offset of its `[`} on a line; brackets nest, escapes escape."""
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
    """(start, end, target) of each inline link outside `hidden`, read in its line."""
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
    """(raw destination, end, start) of the CommonMark link whose `](` is at `close`."""
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
    """Just past the `>` closing the `<` at `opening`, or -1."""
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
    """The end of a destination without `<>`: a space, or a `)` closing no `(` of its own."""
    text = scan.text
    close = text.find(")", position, line_end)
    if close >= 0 and scan.spend(close - position) and text[position:close].isprintable() and \
            not any(mark in text[position:close] for mark in " (\\"):
        return close  # the usual `file.md)`: no space, parenthesis or escape
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
    """Just past the title at `opening`, or `opening` if it never closes."""
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
    """The file a destination names: unescaped, no `#` or `?` part, percent-decoded."""
    raw = unescaped(raw)
    for mark in ("#", "?"):
        if mark in raw:
            raw = raw[:raw.index(mark)]
    return percent_decoded(raw)


def unescaped(raw):
    """With its backslash escapes and character references read."""
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
    """`%XX` escapes as UTF-8; kept as written when they make no UTF-8."""
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
    """A link into the file tree (no web, mail, anchor or absolute path)."""
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
    shown = list(items)
    if len(shown) > at_most:
        shown = shown[:at_most] + ["%d more" % (len(shown) - at_most)]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


# --- what the memory cannot vouch for, read from its lines (spec §4.5.7) ---
# Facts sit a blank line apart, changed in place: under union, two that touch are two branches'
# versions. Facts of the lines, never a reading of their meaning.

LIST_MARKS = ("- ", "* ", "+ ")
LOG_NAMES = frozenset("log logs journal diary changelog history sessions devlog worklog".split())
COMMANDS_OF_CHANGE = frozenset("rm mv rmdir unlink del rd ren rename move Remove-Item Move-Item "
                               "Rename-Item".split())


def is_date(text):
    return len(text) == 10 and text[4] == text[7] == "-" and text.isascii() and \
        (text[:4] + text[5:7] + text[8:]).isdigit()


def is_dated_fact(line):
    """`- 2026-11-02: ...`"""
    after = line[12:13]
    return line[:2] in LIST_MARKS and is_date(line[2:12]) and not (after.isalnum() or after == "_")


def is_deletion(line):
    """`- (deleted) 2026-11-02: ...`: a fact deleted on purpose keeps its line (§2.2.8)."""
    return line[:2] in LIST_MARKS and line[2:11] == "(deleted)" and line[11:12] in ("", " ", "\t")


def is_fact_line(line):
    return is_dated_fact(line) or is_deletion(line)


def fenced_numbers(lines):
    """The numbers (from 1) of fenced code blocks' lines, fences included."""
    inside, fence = set(), None
    for number, line in enumerate(lines, 1):
        after = fence_after(fence, line)
        if fence is not None or after is not None:
            inside.add(number)
        fence = after
    return inside


def marker_lines(lines, fenced):
    """A conflict's lines; seven `=` alone (a heading's underline too) only beside the others."""
    sides = [n for n, line in enumerate(lines, 1) if n not in fenced
             and line[:7] in ("<" * 7, ">" * 7, "|" * 7) and line[7:8] in ("", " ")]
    return sorted(sides + [n for n, line in enumerate(lines, 1) if n not in fenced
                           and line.rstrip() == "=" * 7]) if sides else []


def facts_side_by_side(lines, fenced):
    """(line, line, one is a deletion) of two facts that touch, or a deletion and a line."""
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
    """(first, last line) of the facts around two that touch: git merges nearby conflicts as one,
    so the union keeps one branch's block, then the other's."""
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
    """The `# ` lines outside code and a sample fenced by one or two backticks."""
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
    """A log or a day's record by name: `session-log.md`, `findings-2026-07.md`,
    `20260504-103257-brainstorm.md`, `setup_2026_04_21.md`."""
    stem = name.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    words = stem.replace("_", "-").replace(".", "-").replace(" ", "-").split("-")
    return any(word in LOG_NAMES for word in words) or any(
        names_a_month(stem[at - 1:at], stem[at:at + 4], stem[at + 4:]) for at in range(len(stem)))


def names_a_month(before, year, rest):
    """A year and its month: `2026-04`, `2026_04` or digits `202604`, `20260421`."""
    month = rest[1:3] if rest[:1] in ("-", "_", ".") else rest[:2]
    digits = len(rest) - len(rest.lstrip("0123456789"))
    return (not before.isdigit() and year[:2] in ("19", "20") and year.isdigit() and
            year.isascii() and month.isascii() and "01" <= month <= "12" and len(month) == 2
            and (rest[:1] in ("-", "_", ".") or digits in (2, 4)))


def is_stamped(lines):
    """A `Last updated` or `Last dream` stamp: the earlier format, facts on adjacent lines."""
    for line in lines[:40]:
        for piece in line.lower().split("<!--")[1:]:
            rest = piece.lstrip()[4:] if piece.lstrip().startswith("last") else "?"
            rest = rest[1:] if rest[:1] in " _-" else rest
            if any(rest.startswith(w) and rest[len(w):].lstrip().startswith(":")
                   for w in ("dream", "updated")):
                return True
    return False


def merge_leftovers(lines, union, note, fenced):
    """(line, kind, first, start, end): markers; by union versions, deleted-changed, two-notes."""
    marked = marker_lines(lines, fenced)
    found = [(n, "markers", marked[0], n, n) for n in marked]
    for first, second, deletion in facts_side_by_side(lines, fenced) if union else ():
        start, end = run_of_facts(lines, first, second, fenced)
        found.append((second, "deleted-changed" if deletion else "versions", first, start, end))
    titles = title_lines(lines, fenced) if note and union else []
    return found + ([(titles[1], "two-notes", titles[0], titles[0], titles[1])]
                    if len(titles) > 1 else [])


def looks_like_repository_path(text):
    """A path with a folder and an extension or a trailing '/'; no space, shell mark, host, root."""
    extension = text.rpartition("/")[2].rpartition(".")[2] if "." in text.rpartition("/")[2] \
        else ""
    if not text or any(c.isspace() or c in "*?[]{}<>$|;&=\"'(),@!^%" for c in text) or \
            "/" not in text or text.startswith(("/", "~", "-", "\\")) or "://" in text:
        return False
    first = text.split("/")[0]
    if "." in first.strip(".") and first not in (".", ".."):
        return False  # example.com/path: a host, not a folder
    return text.endswith("/") or 0 < len(extension) <= 10 and extension.isascii() and \
        all(c.isalnum() or c == "_" for c in extension)


def without_line_suffix(text):
    """Code naming a file, without `:42`, `#L3C2-L5C1` or a pytest `::test`."""
    text = text.strip().partition("::")[0]
    for at in range(len(text)):
        rest, column = (text[at + 2:], "C") if text[at:at + 2] == "#L" else (text[at + 1:], ":")
        parts = rest.split("-")
        if text[at] in ":#" and len(parts) <= 2 and (column == "C" or text[at] == ":") and all(
                n.isdigit() and n.isascii() and (not mark or c.isdigit() and c.isascii())
                for n, mark, c in (part[part[:1] == "L":].partition(column) for part in parts)):
            return text[:at]
    return text


def paths_in_code(content):
    """Paths with a folder a code span cites: its content, or a command's words if it moves none."""
    whole = without_line_suffix(content)
    words = content.split()
    if looks_like_repository_path(whole):
        return [whole]
    if len(words) < 2 or any(word in COMMANDS_OF_CHANGE for word in words):
        return []
    words = [w.strip("\"'") for w in words]
    words = [without_line_suffix(w.split("=", 1)[1] if w[:1] == "-" and "=" in w else w)
             for w in words if w[:1] != "-" or "=" in w]
    return [w for w in words if looks_like_repository_path(w)]


def dates_in(text):
    """The ISO dates a text holds, none inside a longer run of digits."""
    return [text[at:at + 10] for at in range(len(text) - 9) if is_date(text[at:at + 10])
            and (at == 0 or text[at - 1] not in "0123456789-")
            and not text[at + 10:at + 11].isdigit()]


def cited_paths(text, folder, links=True):
    """[(line, path, date)] a memory file cites: code spans' paths, `links` from `folder`; the
    line's newest date outside code."""
    comments, code, _ = hidden_spans(text)
    fences = set(fenced_blocks(text))
    spans = [span for span in code if span not in fences]
    found = []
    for start, end in spans:
        ticks = len(text[start:end]) - len(text[start:end].lstrip("`"))
        found += [(start, path.rstrip("/")) for path in
                  paths_in_code(text[start + ticks:end - ticks]) if not path.startswith("./")]
    for start, _, target in link_spans(text, sorted(comments + code)) if links else ():
        path = project_relative(folder, target)
        found += [(start, path)] if path else []
    return [(line_number(text, at), path, line_date(text, at, spans)) for at, path in sorted(found)]


def line_date(text, offset, spans):
    from bisect import bisect_left
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset) % (len(text) + 1)
    words, cursor = [], start
    for span_start, span_end in spans[bisect_left(spans, (start,)):]:
        if span_start >= end:
            break
        words.append(text[cursor:span_start])
        cursor = span_end
    dates = dates_in(" ".join(words + [text[cursor:end]]))
    return max(dates) if dates else None


def project_relative(folder, target):
    """Where a relative link from `folder` leads in the project; None if out."""
    parts = []
    for part in (folder + "/" + target).replace("\\", "/").split("/"):
        if part == ".." and not parts:
            return None
        parts = parts[:-1] if part == ".." else parts + [part] if part not in ("", ".") else parts
    return "/".join(parts) if parts and is_relative_file_link(target) else None


def fate_of(path, renamed, removed, exists):
    """(where the path is now or None, the commit) by git's `renamed` and `removed`, renames and
    whole folders followed; None if it never went."""
    current, last, hops = path, None, 0
    while current in renamed and hops < 50:
        current, last = renamed[current]
        hops += 1
    if last and exists(current):
        return current, last
    prefix, places = path + "/", {}
    for old, (new, commit) in renamed.items():
        if old.startswith(prefix) and new.endswith("/" + old[len(prefix):]):
            place = new[:len(new) - len(old) + len(prefix) - 1]
            count, newest = places.get(place, (0, commit))
            places[place] = (count + 1, max(newest, commit, key=lambda c: c[1]))
    place = max(places.items(), key=lambda item: item[1][0]) if places else None
    if place and exists(place[0]):
        return place[0], place[1][1]
    commit = removed.get(current) or removed.get(path) or last or max(
        [c for gone, c in removed.items() if gone.startswith(prefix)] or [None],
        key=lambda c: c and c[1])  # a folder: the last of its files to go
    return (None, commit) if commit else None


def file_verdicts(name, text, memory, index=False):
    """(leftovers, citations) of a memory file. Only what states a truth now cites: the index's
    lines (its links are pointers), elsewhere dated facts; prose, records, logs tell what held."""
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    log = is_log_name(name)
    leftovers = merge_leftovers(lines, not log and not is_stamped(lines), "/" in name,
                                fenced_numbers(lines))
    folder = memory + ("/" + name.rsplit("/", 1)[0] if "/" in name else "")
    cited = [] if log else cited_paths("\n".join(lines), folder, links=not index)
    return leftovers, [c for c in cited if not (c[1] + "/").startswith(memory + "/")
                       and (index or is_dated_fact(lines[c[0] - 1]))]


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


def marks_lines(marks):
    """A line per mark (a file's markers once), quoting no file or commit subject."""
    lines, seen = [], set()
    for mark in marks:
        where, kind = "%s:%d" % (mark["file"], mark["line"]), mark["kind"]
        if kind == "gone":
            lines.append("- %s cites `%s`, %s in %s (%s)" % (where, mark["path"], "renamed to `%s`"
                         % mark["now"] if mark["now"] else "deleted", mark["commit"], mark["date"]))
        elif (mark["file"], kind) not in seen:
            several = kind != "two-notes" and \
                (mark["start"], mark["end"]) != (mark["first"], mark["line"])
            lines.append("- %s %s" % (where, MARK_TEXT["run" if several else kind] % mark))
            seen.update([(mark["file"], "markers")] if kind == "markers" else [])
    return lines


# --- memory defects found at every session start ---

def dead_links(links, folder):
    """(offset, target) of each relative link to no file from `folder`."""
    exists, dead = {}, []
    for offset, target in links:
        if target not in exists:
            exists[target] = os.path.exists(os.path.join(folder, os.path.normpath(target)))
        if not exists[target]:
            dead.append((offset, target))
    return dead


def dead_pointer_point(project, env, index):
    if not index.head:
        return None
    # Within the budget's lines: past it the index is reported.
    text = first_lines(index.head, number_setting(env, "MCP_MEM_LINES", 80))
    folder = os.path.dirname(index.path)
    links = [link for link in index.relative_links() if link[0] < len(text)]
    dead = [(line_number(text, offset), target) for offset, target in dead_links(links, folder)
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
    """The repository's top (a linked worktree's main checkout), or None."""
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
    """The common folder a `.git` file (`gitdir: ...`) leads to, if any."""
    first = (read_text(marker, 4096) or "").split("\n")[0]
    if not first.startswith("gitdir:"):
        return folder
    gitdir = os.path.join(folder, first[len("gitdir:"):].strip())
    common = read_text(os.path.join(gitdir, "commondir"), 4096)
    if common is None:
        return folder  # a submodule: its own folder is its project
    common = os.path.normpath(os.path.join(gitdir, common.strip()))
    return os.path.dirname(common) if os.path.basename(common) == ".git" else folder


def auto_memory_index(project, env):
    """The harness's machine-local MEMORY.md for this project, or None."""
    if (env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY") or "").strip().lower() in ("1", "true", "yes"):
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
    """autoMemoryEnabled and autoMemoryDirectory as set (the project file moves nothing)."""
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
    """An autoMemoryDirectory the harness accepts (absolute or `~/`), else None."""
    if not isinstance(value, str) or "\0" in value:
        return None
    if value.startswith("~/"):
        home = user_home(env)
        if not home:
            return None
        value = os.path.join(home, value[2:])
    return os.path.normpath(value) if os.path.isabs(value) else None


def read_text(path, limit=8 * MIB):
    data = read_plain_file(path, limit)
    return None if data is None else data.decode("utf-8", "replace")


def frontmatter_end(text):
    """Just past a leading `---` ... `---` block, or 0."""
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
    """(number, text, bytes) of lines holding more than comments, from `skip_before`."""
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
    """The harness's cap: no frontmatter or comments, 200 lines or 25,600 bytes, whole lines."""
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


def entry_name(line):
    """An index line's short name: a pointer's title, a heading's words, or its start."""
    text = line.strip().lstrip("-*+#> ").strip()
    if text.startswith("[") and "](" in text:
        text = text[1:text.index("](")].rstrip("]")
    return text if len(text) <= 60 else text[:57] + "..."


def first_lost_entries(lost, at_most=3):
    named = [(number, entry_name(rest)) for number, rest in lost if rest.strip()]
    return ["line %d \"%s\"" % item for item in named[:at_most]]


def home_shown(path, env):
    home = user_home(env)
    if home and path.startswith(home.rstrip(os.sep) + os.sep):
        return "~" + path[len(home.rstrip(os.sep)):].replace(os.sep, "/")
    return path


def overflow_cause(load):
    if load["cut_by"] == "lines":
        return "its first %d lines" % AUTO_MEMORY_LINES
    return "its first %s bytes" % format(AUTO_MEMORY_BYTES, ",")


def auto_memory_point(project, env, index=None):
    path = auto_memory_index(project, env)
    size = regular_file_size(path) if path else None
    if size is None or size <= AUTO_MEMORY_BYTES and \
            (read_plain_file(path) or b"").count(b"\n") < AUTO_MEMORY_LINES:
        return None  # too small for the cap to bite: not parsed
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
# Defects, not budgets: something is wrong, not too big (--check: broken).
DEFECTS = (dead_pointer_point, unclosed_comment_point, auto_memory_point)


def budget_points(project, env):
    return run_checks(BUDGETS, project, env)


def memory_defects(project, env):
    """Every memory defect cheap enough to find at each start."""
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
    """The report, defects, refusals, each under its heading; [] when healthy."""
    lines = []
    for heading, items in (("## Context budget — over on %d point(s)", points),
                           ("## Memory defects — %d found", defects),
                           ("## Not read — %d refused", refusals)):
        lines += [heading % len(items)] + list(items) if items else []
    return lines


def format_report(points, defects=(), refusals=()):
    lines = report_lines(points, defects, refusals)
    return "\n".join(lines) + "\n" if lines else ""


# --- the session-start injection (spec §5.3, §5.4) ---

INJECTION_LIMIT = 10000
STATE_EXCERPT_LINES = 40
DISPLAY_LINE_CHARS = 300  # a handoff line
REPORT_LINE_CHARS = 1000  # a budget point or the pruning note
STALE_HANDOFF_DAYS = 2
READ_LIMIT = 256 * 1024  # far more than the injection shows, comments removed


def injection_for(project, env, hook_input, seen_at=None, pruned=(), refusals=(), marks=None):
    """Report, marks, index, listing, handoff (resumed or forked: only if newer than `seen_at`);
    `marks` is called last."""
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
    """What `function` returns, or None: a part that fails costs only itself."""
    try:
        return function(*args)
    except Exception:
        return None


MARKS_SHOWN = 40
MARK_LINE_CHARS = 160


def marks_section(project, marks):
    """The first MARKS_SHOWN marks, their room set aside first, and a command for all."""
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
    """A titled block of the injection; a lower `keep_order` gets room first in a cut."""

    def __init__(self, title, lines, source, keep_order, notes=(), rest=None, fit=None):
        self.title, self.lines, self.source, self.keep_order = title, lines, source, keep_order
        self.notes = list(notes)
        self.rest = rest or "read %s in full" % source  # where what a cut leaves out is
        self.fit = fit  # the lines fitting a room, for a section that can say less


def without_comments(text, enough=None):
    """A Markdown file's lines without comments, stopping past `enough` characters."""
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
    """At most `limit` characters, '…' where shortened (never an index line)."""
    return line if len(line) <= limit else line[:limit] + "…"


def injected_text(project, env, path, refusals):
    """A file's text by read_project_text; None when absent or refused (added to `refusals`)."""
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


def handoff_section(project, env, now, seen_at, refusals):
    """The handoff's first lines; None when absent or written before `seen_at`."""
    path = state_path(project, env)
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    if seen_at is not None and info.st_mtime <= seen_at:
        return None
    text = injected_text(project, env, path, refusals)
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
    """UTF-8 bytes: Codex CLI's count, never fewer than Claude Code's UTF-16 units."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


OPENING = "<project-memory source=\"SessionStart hook\">"
CLOSING_TAG = "</project-memory>"
TELL_THE_USER = ("Tell the user about the budget report above in one line before the first answer: "
                 "a context problem is invisible from inside the session that has it.")
CUT_POINT = ("- The session-start injection is over the harness's limit of %d characters, beyond "
             "which the agent sees only a short preview. It was cut as marked below; shrink the "
             "memory index with /dream." % INJECTION_LIMIT)
# The last line, by source (§5.3.1): only a new conversation runs /catchup; a continued one
# holds its task, and a resumed one's git snapshot is as old as the conversation.
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
    """The injection's lines between its opening tag and its closing line and tag."""
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
    """Each unprintable character but tab as '?' (control codes, lone surrogates)."""
    if line.isprintable():
        return line
    return "".join(c if c.isprintable() or c == "\t" else "?" for c in line)


def as_text(lines):
    """The one way out for the injection's lines: printable, encodable."""
    return "\n".join(printable(line) for line in lines) + "\n"


def with_fences_closed(lines):
    """A fence the lines leave open closed, so the next part is not code."""
    fence = None
    for line in lines:
        fence = fence_after(fence, line)
    return lines + [fence] if fence else lines


def cut_to_fit(sections, room):
    """Whole lines by keep_order while room lasts, notices' room set aside first; a section that
    can say less is fitted; a fence cut open is closed."""
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
    """The last resort: lines go from above the closing line until the rest fits."""
    costs = [injection_length(printable(line)) + 1 for line in lines]
    total = sum(costs)
    while total > INJECTION_LIMIT and len(lines) > 4:
        total -= costs.pop(-4)
        del lines[-4]
    return lines


def closing_cost(fence):
    return len(fence) + 1 if fence else 0


def injection(points, pruned, sections, closing, defects=(), refusals=()):
    """The text to print within the limit: fitted, then cut as marked."""
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
    """Gemini CLI takes a JSON additionalContext; the others plain text."""
    if harness_name != "gemini":
        return text
    return ('{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": %s}}\n'
            % json_string(text))


def refused_reads(project, env):
    trusted, refusals = trusted_environment(project, env)
    index = read_index(project, trusted)
    return refusals + ([index.refusal] if index.refusal else [])


def write_text_to(stream, text):
    """UTF-8 whatever the locale; a reader gone is no error worth a traceback."""
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
    """Without -I, the hook's folder leads sys.path: a committed `_json.py` shadows the stdlib."""
    if sys.flags.isolated:  # -I, as the harness runs the hooks
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
