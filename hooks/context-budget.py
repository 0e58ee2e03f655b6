#!/usr/bin/env python3
"""context-budget: the context budgets of one project, and the memory defects that mislead a
session the moment it opens, checked where its sessions start.

Why it exists: every file that loads at session start is a standing tax on every request, and a
budget binds only where it is checked. This hook weighs the files that make a session expensive:
the memory index (with the topic folders session start lists under it), the root instruction
file, the live transcript and the agent worktrees. It also
catches three memory defects cheap enough to look for at every start: a pointer to a file that
does not exist, an HTML comment that never closes and hides the rest of the index, and a harness
auto-memory index so long that its newest lines never load.

What it promises:
- Silence while every budget holds and the memory has none of those defects; otherwise a heading
  that counts the points over budget and one for the defects, then one line per point naming
  the file, its measure, the budget and the repair.
- Exit status 0 on every path. It reads no standard input and writes nothing.
- Its cost does not grow with the transcript (one stat call) or with the index (one streaming
  count, and only its first 64 KiB parsed); only the worktree budget walks a tree, only when
  that folder exists, and for at most WALK_SECONDS (1), one of the waits session-start.py adds
  up against the harness's timeout. Nothing here runs git or reads topic files: of the memory
  beside the index it lists only the names in its folder and in the topic folders there, at
  most 2,000 entries a folder, never through a symlink.
- It reads a file's content only when the project may show it to the agent (read_project_text,
  which session-start.py reads the injection through too): a regular file, inside the project
  unless the user named it outside, and covered by none of the harness's `Read(...)` deny
  rules. A path variable a project settings file set is ignored when it leads outside the
  project. Each file or setting refused is one line under its own heading.
- Standard library only; Python 3.8 or newer; runs as `python3 -I -S context-budget.py`.

The full memory-health report (citations checked against git history, the index lint, what
loads before the first turn) lives beside install.py, in memory_health.py, which is never copied
into a project: it loads this file by path for the Markdown reading they share.

Configuration is by environment, with the names and defaults of the bash reference:
MCP_MEM_LINES (80), MCP_CLAUDE_KB (8), MCP_TRANSCRIPT_MB (60), MCP_WORKTREE_MB (100),
MCP_MEMORY_INDEX (memory/MEMORY.md), MCP_CLAUDE_MD (CLAUDE.md), MCP_PROJECTS_DIR
(~/.claude/projects, also where the harness keeps auto memory), MCP_TRANSCRIPT_PATH,
MCP_WORKTREE_DIR (.claude/worktrees). The harness's CLAUDE_CONFIG_DIR,
CLAUDE_CODE_DISABLE_AUTO_MEMORY and CLAUDE_CODE_PROJECT_DIR_NAME are honoured as it honours them,
and so are the autoMemoryEnabled and autoMemoryDirectory keys of its settings files.
A numeric override that is not a whole number falls back to its default.
"""
import os
import stat
import sys
import time

MIB = 1024 * 1024
# How long the worktree budget may walk its folder: part of the session start's time limits.
WALK_SECONDS = 1.0
DEFAULT_INDEX = "memory/MEMORY.md"
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


def number_setting(env, name, default):
    value = (env.get(name) or "").strip()
    if value.isascii() and value.isdigit():
        return int(value)
    return default


def project_path(project, env, name, default):
    return os.path.join(project, env.get(name) or default)


def shown_path(project, path):
    """The path as the reader knows it: relative to the project when it lies inside."""
    try:
        relative = os.path.relpath(path, project)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


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
    found = []
    for entry in first_entries(folder)[0]:
        if entry.name.startswith(".") or not is_real_folder(entry) or \
                os.path.normcase(os.path.normpath(entry.path)) in linked:
            continue
        names, more = notes_in(entry.path)
        names = [name for name in names if os.path.normcase(os.path.normpath(
            os.path.join(entry.path, name + ".md"))) not in linked]
        if names:
            found.append((entry.name, (names, more)))
    found.sort(key=lambda item: (item[0].lower(), item[0]))
    index.folders = (state, found)
    return found


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


def memory_listing(project, env):
    """The lines session start shows under the index: a heading, then one line for each topic
    folder with the names of its notes; [] when there is none."""
    index = read_index(project, env)
    found = topic_folders(index)
    if not found:
        return []
    heading = LISTING_HEADING % shown_path(project, os.path.dirname(index.path))
    return [heading] + ["- [%s/](%s/) — %s" % (name, link_to(name), note_names(notes))
                        for name, notes in found]


def note_names(listed):
    """'3 notes: a, b, c', cut with 'and N more' before it grows past one screen line; 'at least'
    for a folder too large to read whole at a start."""
    notes, more = listed
    shown = []
    length = 0
    for name in notes:
        if shown and length + len(name) + 2 > NOTE_NAMES_CHARS:
            break
        shown.append(name)
        length += len(name) + 2
    text = "%s%d note%s: %s" % ("at least " if more else "", len(notes),
                                "" if len(notes) == 1 and not more else "s", ", ".join(shown))
    return text + (" and %d more" % (len(notes) - len(shown)) if len(notes) > len(shown) else "")


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


# --- what the hooks may read: the project's plain files, and none its deny rules cover ------

# The variables that name a file or folder the hooks read or weigh. A repository's committed
# settings can set them (their "env"), so a value a project settings file gave may not lead
# outside the project; one the user set is the user's own choice. HOME is among them: it
# decides whose settings, and so whose deny rules, count.
PATH_SETTINGS = ("MCP_MEMORY_INDEX", "MCP_SESSION_STATE", "MCP_CLAUDE_MD", "MCP_WORKTREE_DIR",
                 "MCP_BASELINE", "MCP_TRANSCRIPT_PATH", "MCP_PROJECTS_DIR", "CLAUDE_CONFIG_DIR",
                 "HOME")
PROJECT_SETTINGS_FILES = (".claude/settings.local.json", ".claude/settings.json")
SETTINGS_LIMIT = MIB


def read_project_text(project, env, path, limit):
    """(text, None) for a file whose content the hooks may show the agent; (None, a refusal
    line naming it) for one they may not: a link whose target lies outside the project, a
    special file, a path a project settings file named outside the project, or a file one of
    the harness's `Read(...)` deny rules covers; (None, None) when there is nothing there.
    At most `limit` bytes are read, decoded as UTF-8."""
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
    """Why the hooks may not show the file at `path` to the agent, or None when they may."""
    named = os.path.normpath(os.path.abspath(path))
    real = os.path.realpath(path)
    if lies_within(named, os.path.abspath(project)):
        if not lies_within(real, os.path.realpath(project)):
            return "it is a symbolic link whose target lies outside the project"
    elif named in paths_project_settings_name(project):
        return ("a project settings file names it, and it lies outside the project; only a "
                "path you set yourself may lead there")
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


def read_plain_file(path, limit):
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


def refused_settings(project, env):
    """[(variable, refusal line)] for each path variable whose value a project settings file
    set and that leads outside the project, through its own spelling or a link on the way.
    The hooks ignore such a variable: its default applies."""
    refused = []
    for name in PATH_SETTINGS:
        value = env.get(name)
        origin = value and project_setting_origin(project, name, value)
        if origin and not leads_inside(project, value):
            refused.append((name, "- %s=%s was ignored: %s sets it, and it leads outside the "
                                  "project; only a path you set yourself may lead there."
                            % (name, value, origin)))
    return refused


def leads_inside(project, value):
    path = os.path.join(project, value)
    return (lies_within(os.path.normpath(os.path.abspath(path)), os.path.abspath(project))
            and lies_within(os.path.realpath(path), os.path.realpath(project)))


def trusted_environment(project, env):
    """(env without the variables refused_settings names, the refusal lines). A HOME refused
    is the account's home folder again, as the system's user database names it, where there
    is one."""
    refused = refused_settings(project, env)
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


def project_setting_origin(project, name, value):
    """The project settings file whose "env" gives `name` this very value (the local file
    before the shared one, as the harness ranks them), or None."""
    for relative in PROJECT_SETTINGS_FILES:
        values = settings_object(os.path.join(project, relative)).get("env")
        if isinstance(values, dict) and values.get(name) == value:
            return relative
    return None


def paths_project_settings_name(project):
    """Every path, relative to the project, that a value in a project settings file's "env"
    spells: whatever the variable, such a path is the repository's choice, not the user's."""
    named = set()
    for relative in PROJECT_SETTINGS_FILES:
        values = settings_object(os.path.join(project, relative)).get("env")
        if isinstance(values, dict):
            named.update(os.path.normpath(os.path.abspath(os.path.join(project, value)))
                         for value in values.values() if isinstance(value, str) and value
                         and "\0" not in value)
    return named


# The last settings read, by the file's identity: one start asks for the same files several
# times (deny rules, "env", auto memory), and reads each once.
SETTINGS_READ = {}


def settings_object(path):
    """The JSON object of a settings file, or {} when there is none, it is no object, or it
    is larger than any settings file (a FIFO is never opened)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return {}
    if not stat.S_ISREG(info.st_mode) or info.st_size > SETTINGS_LIMIT:
        return {}
    key = (path, info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)
    if key not in SETTINGS_READ:
        data = read_plain_file(path, SETTINGS_LIMIT) or b""
        try:
            value = parse_json(data.decode("utf-8-sig") if data.startswith(b"\xef\xbb\xbf")
                               else data.decode("utf-8"))
        except Exception:  # malformed, binary or absurdly nested: the harness ignores it too
            value = {}
        if len(SETTINGS_READ) > 16:
            SETTINGS_READ.clear()
        SETTINGS_READ[key] = value if isinstance(value, dict) else {}
    return SETTINGS_READ[key]


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
    start-up time than this whole hook; the same C scanner does the parsing."""
    try:
        from _json import make_scanner
    except ImportError:
        from json import loads
        return loads(text)
    text = text.strip()
    value, end = make_scanner(JsonOptions)(text, 0)
    if end != len(text):
        raise ValueError("extra data after the JSON value")
    return value


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
    of names, every other entry for exactly one (see name_matches)."""
    if not pattern:
        return not names
    if pattern[0] == "**":
        return any(names_match(pattern[1:], names[skip:]) for skip in range(len(names) + 1))
    return bool(names) and name_matches(pattern[0], names[0]) and names_match(pattern[1:],
                                                                              names[1:])


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
    """(start, end) of each fenced code block: a line opening with three or more backticks or
    tildes, to a line of the same character at least as long and nothing else (or the end of
    the text). A four-backtick fence is not closed by a three-backtick line inside it."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks = []
    opened = None  # (character, length, start)
    position = 0
    length = len(text)
    while position < length:
        end = text.find("\n", position)
        end = length if end < 0 else end + 1
        line = text[position:end].lstrip(" \t")
        mark = line[:1]
        if mark in ("`", "~"):
            run = len(line) - len(line.lstrip(mark))
            rest = line[run:]
            if opened is None:
                if run >= 3 and not (mark == "`" and "`" in rest):
                    opened = (mark, run, position)
            elif mark == opened[0] and run >= opened[1] and not rest.strip():
                blocks.append((opened[2], end))
                opened = None
        position = end
    if opened is not None:
        blocks.append((opened[2], length))
    return blocks


def markdown_links(text, hidden):
    """(offset, target) of every inline link `[text](destination "title")` outside comments and
    code, read as CommonMark reads it (see link_at); `target` is the file part of the
    destination. `hidden` is sorted; links are met in order, so one pointer walks it once."""
    return [(offset, target) for offset, _, target in link_spans(text, hidden)]


def link_spans(text, hidden):
    """(offset of the link's `[`, offset just past its `)`, target) of every inline link outside
    `hidden`, the sorted comments and code. A link is read within its line: a destination or
    title that runs onto the next line is not read (CommonMark allows it; memories do not)."""
    links = []
    at = 0
    position = text.find("](")
    while position != -1:
        while at < len(hidden) and hidden[at][1] <= position:
            at += 1
        inside = at < len(hidden) and hidden[at][0] <= position
        line_end = text.find("\n", position)
        line_end = len(text) if line_end < 0 else line_end
        found = None if inside else link_at(text, position, line_end)
        if found:
            links.append((found[2], found[1], link_target(found[0])))
        position = text.find("](", position + 2)
    return links


def link_at(text, close, line_end):
    """(raw destination, end, start) when the `](` at `close` ends a link's text and opens its
    destination, else None. CommonMark's rules: the `]` is not escaped and closes a `[` earlier
    on the line (brackets nest); the destination is `<...>` (any characters but `<`, `>` and a
    line break) or a run without spaces whose parentheses balance; a title in `"..."`, `'...'`
    or `(...)` may follow, after white space; then `)`."""
    start = -1 if escaped(text, close) else link_text_start(text, close)
    if start < 0:
        return None
    position = skip_spaces(text, close + 2, line_end)
    if position < line_end and text[position] == "<":
        end = pointed_destination_end(text, position, line_end)
        if end < 0:
            return None
        raw = text[position + 1:end - 1]
    else:
        end = plain_destination_end(text, position, line_end)
        raw = text[position:end]
    after = skip_spaces(text, end, line_end)
    if after > end and after < line_end and text[after] in "\"'(":
        after = skip_spaces(text, title_end(text, after, line_end), line_end)
    if after >= line_end or text[after] != ")":
        return None
    return raw, after + 1, start


def escaped(text, position):
    """Whether the character at `position` is escaped by an odd run of backslashes."""
    count = 0
    while position - count - 1 >= 0 and text[position - count - 1] == "\\":
        count += 1
    return count % 2 == 1


def link_text_start(text, close):
    """The offset of the `[` that the `]` at `close` closes, on the same line, or -1."""
    line_start = text.rfind("\n", 0, close) + 1
    opening = text.rfind("[", line_start, close)
    if opening >= 0 and text.find("]", opening, close) < 0 and \
            "\\" not in text[max(opening - 1, line_start):close]:
        return opening  # the usual `[title](...)`: nothing nested, nothing escaped
    depth = 0
    position = close - 1
    while position >= 0 and text[position] != "\n":
        mark = text[position]
        if mark in "[]" and not escaped(text, position):
            if mark == "]":
                depth += 1
            elif depth == 0:
                return position
            else:
                depth -= 1
        position -= 1
    return -1


def skip_spaces(text, position, line_end):
    while position < line_end and text[position] in " \t":
        position += 1
    return position


def pointed_destination_end(text, opening, line_end):
    """Just past the `>` that closes the `<` at `opening`, or -1."""
    position = opening + 1
    while position < line_end:
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


def plain_destination_end(text, position, line_end):
    """The end of a destination written without `<>`: at white space, or at a `)` that closes
    no `(` of the destination's own."""
    close = text.find(")", position, line_end)
    if close >= 0 and text[position:close].isprintable() and \
            not any(mark in text[position:close] for mark in " (\\"):
        return close  # the usual `file.md)`: no space, no parenthesis, no escape before it
    depth = 0
    while position < line_end:
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


def title_end(text, opening, line_end):
    """Just past the title that opens at `opening`, or `opening` itself when it never closes
    (then the `)` test that follows fails, as the link does)."""
    closing = ")" if text[opening] == "(" else text[opening]
    position = opening + 1
    while position < line_end:
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
        values = auto_memory_keys(path)
        if "autoMemoryEnabled" not in found and isinstance(values.get("autoMemoryEnabled"), bool):
            found["autoMemoryEnabled"] = values["autoMemoryEnabled"]
        if may_move and "autoMemoryDirectory" not in found:
            folder = expanded_folder(values.get("autoMemoryDirectory"), env)
            if folder:
                found["autoMemoryDirectory"] = folder
    return found


def settings_files(project, env):
    """(path, whether it may move auto memory), highest precedence first."""
    user = user_config_dir(env)
    return [(managed_settings_file(), True),
            (os.path.join(project, ".claude", "settings.local.json"), True),
            (os.path.join(project, ".claude", "settings.json"), False)] + (
        [(os.path.join(user, "settings.json"), True)] if user else [])


def managed_settings_file():
    return os.path.join(os.path.dirname(managed_instruction_file()), "managed-settings.json")


def auto_memory_keys(path):
    """The settings object of one file, as every settings read here takes it."""
    return settings_object(path)


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


def format_report(points, defects=(), refusals=()):
    """The budget report, the memory defects, then what was refused, each under its own
    heading; "" when healthy."""
    parts = []
    if points:
        parts += ["## Context budget — over on %d point(s)" % len(points)] + list(points)
    if defects:
        parts += ["## Memory defects — %d found" % len(defects)] + list(defects)
    if refusals:
        parts += ["## Not read — %d refused" % len(refusals)] + list(refusals)
    return "\n".join(parts) + "\n" if parts else ""


def refused_reads(project, env):
    """One line for each path setting ignored and each file refused at this start: the
    settings refused_settings names, then the index when read_project_text would refuse it."""
    trusted, refusals = trusted_environment(project, env)
    index = read_index(project, trusted)
    return refusals + ([index.refusal] if index.refusal else [])


def user_config_dir(env):
    if env.get("CLAUDE_CONFIG_DIR"):
        return env["CLAUDE_CONFIG_DIR"]
    home = env.get("HOME") or os.path.expanduser("~")
    return None if home == "~" else os.path.join(home, ".claude")


def managed_instruction_file():
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode/CLAUDE.md"
    if sys.platform.startswith("win"):
        return "C:\\Program Files\\ClaudeCode\\CLAUDE.md"
    return "/etc/claude-code/CLAUDE.md"


def project_dir():
    try:
        path = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    except OSError:
        return None
    return path if os.path.isdir(path) else None


def write_stdout(text):
    """UTF-8 whatever the locale; a reader that went away is not an error worth a traceback."""
    try:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    except (OSError, ValueError, AttributeError):
        silence_stdout()


def silence_stdout():
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def main():
    project = project_dir()
    if project:
        env = trusted_environment(project, os.environ)[0]
        report = format_report(budget_points(project, env), memory_defects(project, env),
                               refused_reads(project, os.environ))
        if report:
            write_stdout(report)


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
