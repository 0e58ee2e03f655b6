#!/usr/bin/env python3
"""context-budget: the context budgets of one project, checked where its sessions start, and the
health of its memory.

Why it exists: every file that loads at session start is a standing tax on every request, and a
budget binds only where it is checked. This hook weighs the files that make a session expensive:
the memory index, the root instruction file, the live transcript and the agent worktrees. It also
catches the memory defects that mislead a session the moment it opens: a pointer to a file that
does not exist, an HTML comment that never closes and hides the rest of the index, and a harness
auto-memory index so long that its newest lines never load.

What it promises:
- Silence while every budget holds; otherwise one heading that counts the points over budget,
  then one line per point naming the file, its measure, the budget and the repair.
- Exit status 0 on every path. It reads no standard input and writes nothing.
- Its cost does not grow with the transcript (one stat call) or with the index (one streaming
  count, and only its first 64 KiB parsed); only the worktree budget walks a tree, and only when
  that folder exists. Nothing at session start runs git or reads topic files.
- Standard library only; Python 3.8 or newer; runs as `python3 -I -S context-budget.py`.

It is also the single home of the full memory-health report, `memory_health(project, env)`, which
`install.py --check` loads from this file by path. That report walks every memory file and git
history once, so it never runs at session start.

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

MIB = 1024 * 1024
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_INSTRUCTION_FILE = "CLAUDE.md"
ALTERNATE_INSTRUCTION_FILE = os.path.join(".claude", "CLAUDE.md")
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
# The harness truncates long encoded folder names and appends a hash it does not document.
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

    def __init__(self, path, newlines=None, head="", complete=True):
        self.path = path
        self.newlines = newlines
        self.head = head
        self.complete = complete


def read_index(project, env):
    path = project_path(project, env, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    if regular_file_size(path) is None:
        return IndexReading(path)
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
    lines = index.newlines
    if lines is None or lines <= budget:
        return None
    return (
        "- %s is %d lines (budget %d). It is an index and loads at every session start: one "
        "pointer line per topic, the detail in topic files. Repair it with /dream."
        % (shown_path(project, index.path), lines, budget)
    )


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
    """The harness's folder name for a project: every character but ASCII letters and digits is '-'."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


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
    folders = [os.path.join(root, name) for name in spellings]
    if any(len(name) > ENCODED_NAME_LIMIT for name in spellings):
        folders.extend(truncated_name_folders(root, spellings))
    return folders


def truncated_name_folders(root, spellings):
    prefixes = tuple(name[:ENCODED_NAME_LIMIT] for name in spellings)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [os.path.join(root, name) for name in names if name.startswith(prefixes)]


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
    every worktree at every session start."""
    total = 0
    seen = set()
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            if enough is not None and total > enough:
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


# --- Markdown as the agent sees it (no regular expressions: this part runs at every start) ---

def hidden_spans(text):
    """Where Markdown is not read as written: (closed HTML comments, code spans, unclosed).

    Comments and code spans are (start, end) offsets; `unclosed` is the offset of a '<!--' that
    never closes, or None. A '<!--' inside a code span is text, a backtick inside a comment is
    comment: the same reading the session-start hook applies when it strips comments."""
    comments, spans = [], []
    length = len(text)
    position = 0
    tick = text.find("`")
    opening = text.find("<!--")
    while tick != -1 or opening != -1:
        if tick != -1 and (opening == -1 or tick < opening):
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
            close = text.find("-->", opening + 4)
            if close < 0:
                return comments, spans, opening
            position = close + 3
            comments.append((opening, position))
        if tick != -1 and tick < position:
            tick = text.find("`", position)
        if opening != -1 and opening < position:
            opening = text.find("<!--", position)
    return comments, spans, None


def markdown_links(text, hidden):
    """(offset, target) of every inline link `[text](target)` outside comments and code spans.
    `hidden` is sorted; links are met in order, so one pointer walks it once."""
    links = []
    at = 0
    position = text.find("](")
    while position != -1:
        while at < len(hidden) and hidden[at][1] <= position:
            at += 1
        inside = at < len(hidden) and hidden[at][0] <= position
        end = text.find(")", position + 2)
        line_end = text.find("\n", position + 2)
        if end != -1 and (line_end == -1 or end < line_end) and not inside:
            target = link_target(text[position + 2:end])
            if target:
                links.append((position, target))
        position = text.find("](", position + 2)
    return links


def link_target(raw):
    """The file part of a link target: no title, no anchor, no query, %20 as a space."""
    raw = raw.strip()
    if raw.startswith("<"):
        raw = raw[1:raw.find(">")] if ">" in raw else raw[1:]
    elif raw:
        raw = raw.split()[0]
    for mark in ("#", "?"):
        if mark in raw:
            raw = raw[:raw.index(mark)]
    return raw.replace("%20", " ")


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
    try:
        with open(os.path.join(gitdir, "commondir"), "rb") as stream:
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
    """The settings object of one file, parsed only when it names an auto-memory key: the json
    package costs more than a millisecond, and most settings files never mention them."""
    size = regular_file_size(path)
    if size is None or size > MIB:
        return {}
    try:
        with open(path, "rb") as stream:
            data = stream.read()
    except (OSError, ValueError):
        return {}
    if b"autoMemory" not in data:
        return {}
    try:
        import json
        values = json.loads(data.decode("utf-8-sig"))
    except (ValueError, RecursionError):
        return {}
    return values if isinstance(values, dict) else {}


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


CHECKS = (index_point, instruction_file_point, transcript_point, worktree_point,
          dead_pointer_point, unclosed_comment_point, auto_memory_point)


def budget_points(project, env):
    """Every point over budget, and every memory defect cheap enough to find at each start,
    each a line starting with '- '. The index is read once and shared by the checks."""
    try:
        index = read_index(project, env)
    except Exception:
        index = IndexReading(None)
    points = []
    for check in CHECKS:
        try:
            point = check(project, env, index)
        except Exception:  # one broken measurement must not hide the others
            point = None
        if point:
            points.append(point)
    return points


def format_report(points):
    if not points:
        return ""
    heading = "## Context budget — over on %d point(s)" % len(points)
    return "\n".join([heading] + list(points)) + "\n"


# --- the full memory-health report (install.py --check; never at session start) ---------------
#
# Every finding names a file and a line; a finding about a whole file names its line 1. A line
# that carries IGNORE_MARKER silences every finding at that line.

SEVERITY = {
    "dead-pointer": "broken",          # the agent is sent to a memory that is not there
    "unclosed-comment": "broken",      # the rest of the index is hidden from readers
    "auto-memory-overflow": "broken",  # part of the harness's memory never loads
    "missing-path": "broken",          # a memory names a path that no longer exists
    "injection-cut": "over",           # the session-start injection hit the hook limit
    "possibly-stale": "warning",       # the cited file changed after the fact was dated
    "hidden-history": "warning",       # history filed as comments: paid for, never seen
    "not-a-pointer": "warning",        # content in the index that belongs in a topic file
    "duplicate-pointer": "warning",
    "orphan": "warning",               # a topic file no index line leads to
    "missing-date": "warning",
    "feedback-parts": "warning",
}
MAX_IMPORT_HOPS = 4
CHARACTERS_PER_TOKEN = 4
INJECTION_LIMIT = 10000
HOOK_DIR = os.path.dirname(os.path.abspath(__file__))
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "core.quotepath=off", "-c", "log.showSignature=false")
GIT_SECONDS = 60


class MemoryFile(object):
    """One memory file, read once, with its lines and the comments and code spans in it."""

    def __init__(self, project, path, text):
        self.path = path
        self.shown = shown_path(project, path)
        self.text = text
        self.lines = text.split("\n")
        self.comments, self.spans, self.unclosed = hidden_spans(text)
        self.starts = [0]
        newline = text.find("\n")
        while newline != -1:
            self.starts.append(newline + 1)
            newline = text.find("\n", newline + 1)

    def line_of(self, offset):
        import bisect
        return bisect.bisect_right(self.starts, offset)

    def silenced(self, line):
        return 0 < line <= len(self.lines) and is_silenced(self.lines[line - 1])


class Findings(object):
    def __init__(self):
        self.items = []

    def add(self, check, source, line, message, repair, lines=None):
        """Record a finding unless its line carries the ignore marker. `source` is a MemoryFile,
        or a shown path with the file's `lines` given separately."""
        if isinstance(source, MemoryFile):
            if source.silenced(line):
                return
            shown = source.shown
        else:
            if lines and 0 < line <= len(lines) and is_silenced(lines[line - 1]):
                return
            shown = source
        self.items.append({
            "check": check, "severity": SEVERITY[check], "file": shown, "line": line,
            "message": message, "repair": repair, "at_session_start": False,
        })


PATTERNS = {}


def patterns():
    """The regular expressions of the full report, compiled on first use only: the session-start
    path never pays for the re module."""
    if not PATTERNS:
        import re
        PATTERNS.update({
            "date": re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d])"),
            "last-updated": re.compile(r"last[ _-]?updated\W{0,6}(\d{4}-\d{2}-\d{2})", re.I),
            "code-span": re.compile(r"(`+)([^`\n]+?)\1"),
            "import": re.compile(r"(?:^|\s)@(\S+)"),
            "extension": re.compile(r"\.[A-Za-z0-9_]{1,10}$"),
            "line-suffix": re.compile(r"(:\d+(-\d+)?(:\d+)?|#L\d+(-L?\d+)?)$"),
        })
    return PATTERNS


# --- the files of the memory folder -----------------------------------------------------------

def memory_files(project, folder, index_path):
    """(index, topic files): every Markdown file directly in the memory folder, read once."""
    index, topics = None, []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None, []
    for name in names:
        path = os.path.join(folder, name)
        if name.startswith(".") or not name.endswith(".md"):
            continue
        text = read_text(path)
        if text is None:
            continue
        record = MemoryFile(project, path, text)
        if os.path.normcase(os.path.abspath(path)) == os.path.normcase(os.path.abspath(index_path)):
            index = record
        else:
            topics.append(record)
    if index is None:  # an index named by MCP_MEMORY_INDEX need not end in .md
        text = read_text(index_path)
        index = MemoryFile(project, index_path, text) if text is not None else None
    return index, topics


# --- index lint -------------------------------------------------------------------------------

def is_pointer_line(text):
    """`- [Title](file.md) — clause`: a list item that opens with a link."""
    stripped = text.lstrip()
    return stripped[:3] in ("- [", "* [", "+ [") and "](" in stripped


def is_stamp(comment_body):
    """A one-line dated stamp such as `Last dream: 2026-11-29` or `Last updated: ...`."""
    lowered = comment_body.strip().lower()
    return lowered.startswith(("last dream", "last updated", "last-updated"))


def index_line_kinds(index):
    """Each line's kind: blank, comment (nothing visible once comments go), heading, pointer or
    other; and the heading of the section it sits in."""
    visible = dict((number, rest) for number, rest, _ in visible_lines(index.text, index.comments))
    kinds = []
    section = ""
    for number, raw in enumerate(index.lines, start=1):
        if number == len(index.lines) and raw == "":
            break  # the empty piece after a final newline is no line
        rest = visible.get(number)
        if rest is None:
            kind = "comment"
        elif not rest.strip():
            kind = "blank"
        elif rest.lstrip().startswith("#"):
            kind = "heading"
            section = rest.strip().lstrip("#").strip().lower()
        elif is_pointer_line(rest):
            kind = "pointer"
        else:
            kind = "other"
        kinds.append((number, kind, section, rest if rest is not None else raw))
    return kinds


def history_comments(index):
    """The comments that hide content: all but one-line stamps, the ignore marker, and the one
    short guidance comment the index format allows (the first other one-line comment)."""
    blocks = []
    guidance_allowed = True
    for start, end in index.comments:
        body = index.text[start + 4:end - 3]
        first, last = index.line_of(start), index.line_of(end - 1)
        one_line = first == last
        if one_line and (is_stamp(body) or is_silenced(body)):
            continue
        if one_line and guidance_allowed:
            guidance_allowed = False
            continue
        blocks.append((first, last, " ".join(body.split())))
    return blocks


def lint_index(project, index, folder, topics, findings):
    kinds = index_line_kinds(index)
    counts = {"pointer": 0, "other": 0, "heading": 0, "blank": 0, "comment": 0}
    for number, kind, section, rest in kinds:
        counts[kind] += 1
        unclosed_here = index.unclosed is not None and number == index.line_of(index.unclosed)
        if kind == "other" and section != "active context" and not unclosed_here:
            findings.add("not-a-pointer", index, number,
                         "is content, not a pointer: \"%s\"" % entry_name(rest),
                         "move it into a topic file and leave one pointer line here (/dream)")
    hidden_lines = 0
    for first, last, body in history_comments(index):
        size = last - first + 1
        hidden_lines += size
        findings.add("hidden-history", index, first,
                     "%s an HTML comment that no session sees but every budget pays "
                     "for: \"%s\"" % ("holds" if size == 1 else "lines %d-%d (%d lines) are"
                                      % (first, last, size), entry_name(body)),
                     "consolidate what is still true into topic files with /dream, then delete "
                     "the comment")
    if index.unclosed is not None:
        line = index.line_of(index.unclosed)
        findings.add("unclosed-comment", index, line,
                     "opens an HTML comment that never closes: renderers, and the harness in "
                     "instruction files, drop everything after it (%d line(s) below it)"
                     % (len(kinds) - line),
                     "close it with `-->`, or delete the stray `<!--`")
    linked = index_links(project, index, folder, findings)
    for topic in topics:
        if os.path.normcase(os.path.normpath(topic.path)) not in linked:
            findings.add("orphan", topic, 1,
                         "no line of %s links this file, so no session learns it exists"
                         % index.shown,
                         "add a pointer line for it to the index, or fold it into another topic")
    return {
        "file": index.shown,
        "lines": len(kinds),
        "pointer_lines": counts["pointer"],
        "other_lines": counts["other"],
        "heading_lines": counts["heading"],
        "blank_lines": counts["blank"],
        "comment_only_lines": counts["comment"],
        "hidden_history_lines": hidden_lines,
        "unclosed_comment_line": index.line_of(index.unclosed) if index.unclosed is not None else None,
    }


def index_links(project, index, folder, findings):
    """Check the index's links (dead, duplicated) and return the set of files they reach."""
    linked = set()
    first_pointer_to = {}
    hidden = sorted(index.comments + index.spans)
    for offset, target in markdown_links(index.text, hidden):
        if not is_relative_file_link(target):
            continue
        line = index.line_of(offset)
        path = os.path.normcase(os.path.normpath(os.path.join(folder, target)))
        linked.add(path)
        if not os.path.exists(path):
            findings.add("dead-pointer", index, line,
                         "links `%s`, which does not exist in %s/"
                         % (target, shown_path(project, folder)),
                         "correct the link, or drop the line with /dream")
        elif is_pointer_line(index.lines[line - 1]):
            if path in first_pointer_to and first_pointer_to[path] != line:
                findings.add("duplicate-pointer", index, line,
                             "points to `%s` again (first at line %d)"
                             % (target, first_pointer_to[path]),
                             "keep one pointer per topic file and merge the clauses")
            first_pointer_to.setdefault(path, line)
    return linked


# --- topic and feedback files -----------------------------------------------------------------

def last_updated(memory):
    found = patterns()["last-updated"].search(memory.text)
    return valid_date(found.group(1)) if found else None


def valid_date(text):
    import datetime
    try:
        return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10])).isoformat()
    except ValueError:
        return None


FEEDBACK_PARTS = (("the lesson", ("the lesson", "lesson")), ("why", ("why",)),
                  ("how to apply", ("how to apply",)))


def lint_topics(topics, findings):
    for topic in topics:
        if last_updated(topic) is None:
            findings.add("missing-date", topic, 1,
                         "has no `Last updated: YYYY-MM-DD` date, so nothing tells a reader how "
                         "old its facts are",
                         "add `<!-- Last updated: YYYY-MM-DD -->` as line 2, with the date of "
                         "the last change")
        name = os.path.basename(topic.path)
        if name.startswith(("feedback_", "feedback-")):
            missing = missing_feedback_parts(topic)
            if missing:
                findings.add("feedback-parts", topic, 1,
                             "is a feedback file without its %s part(s)" % named_list(
                                 "**%s**" % part.capitalize() for part in missing),
                             "give it the three labelled parts: **The lesson.**, **Why:** and "
                             "**How to apply:**")


def missing_feedback_parts(topic):
    openings = [line.strip().lstrip("-*_#> ").lower() for line in topic.lines]
    return [part for part, labels in FEEDBACK_PARTS
            if not any(opening.startswith(labels) for opening in openings)]


# --- references to repository paths -----------------------------------------------------------

class Citation(object):
    def __init__(self, memory, line, shown, path, date):
        self.memory = memory
        self.line = line
        self.shown = shown  # as written
        self.path = path  # relative to the project, with '/'
        self.date = date


def looks_like_repository_path(text):
    """A code span that names a path: no spaces or shell characters, at least one '/', and a
    last part with an extension or a trailing '/' (so `origin/main` or `application/json` are
    not taken for files). Absolute, home and web paths are not the repository's."""
    if not text or any(c.isspace() for c in text) or "/" not in text:
        return False
    if any(c in text for c in "*?[]{}<>$|;&=\"'(),@!^%"):
        return False
    if text.startswith(("/", "~", "-", "\\")) or "://" in text:
        return False
    first = text.split("/")[0]
    if "." in first.strip(".") and first not in (".", ".."):
        return False  # example.com/path: a host, not a folder
    return text.endswith("/") or bool(patterns()["extension"].search(text))


def citations_in(project, memory, is_index, fallback_date):
    """Every repository path the file cites, with the date of the fact that cites it: an ISO date
    on the line (the newest, if several), else the file's `Last updated`."""
    found = []
    fenced = False
    if is_index:  # what the injection shows: comments gone, lines of comment only skipped
        numbered = [(number, rest) for number, rest, _ in visible_lines(memory.text, memory.comments)]
    else:
        numbered = list(enumerate(memory.lines, start=1))
    for number, line in numbered:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        dates = [valid_date(m.group(0)) for m in patterns()["date"].finditer(line)]
        dates = [d for d in dates if d]
        date = max(dates) if dates else fallback_date
        for written in code_span_paths(line):
            path = cited_in_tree(project, memory, written, from_root=True)
            if path:
                found.append(Citation(memory, number, written, path, date))
        if is_index:
            continue  # the index's links are pointers, checked as such
        for written in link_paths(line):
            path = cited_in_tree(project, memory, written, from_root=False)
            if path:
                found.append(Citation(memory, number, written, path, date))
    return found


def code_span_paths(line):
    paths = []
    for match in patterns()["code-span"].finditer(line):
        text = patterns()["line-suffix"].sub("", match.group(2).strip())
        if looks_like_repository_path(text):
            paths.append(text)
    return paths


def link_paths(line):
    links = []
    for offset, target in markdown_links(line, []):
        if is_relative_file_link(target):
            links.append(target)
    return links


def cited_in_tree(project, memory, written, from_root):
    """The project-relative path a citation means: code spans are read from the project root,
    or from the memory file's folder when only that resolves; links from the file's folder."""
    folder = os.path.dirname(memory.path)
    cleaned = written.rstrip("/") or written
    bases = [project, folder] if from_root else [folder]
    for base in bases:
        path = os.path.normpath(os.path.join(base, cleaned))
        if os.path.exists(path):
            return inside_project(project, path)
    return inside_project(project, os.path.normpath(os.path.join(bases[0], cleaned)))


def inside_project(project, path):
    try:
        relative = os.path.relpath(path, project)
    except ValueError:
        return None
    if relative == os.curdir or relative.split(os.sep)[0] == os.pardir:
        return None
    return relative.replace(os.sep, "/")


def check_citations(project, citations, findings):
    reported = set()
    for citation in citations:
        key = (citation.memory.path, citation.line, citation.path)
        if key in reported or os.path.exists(os.path.join(project, citation.path)):
            continue
        reported.add(key)
        findings.add("missing-path", citation.memory, citation.line,
                     "cites `%s`, which is not in the working tree" % citation.shown,
                     "update the fact to the current path, or delete it if it no longer holds")


def newest_commits(project, pairs, since):
    """{(cited path, memory file): (hash, date, subject)}: the newest commit that touched the
    path (or anything under it, for a folder) without touching the memory file that cites it.
    A commit that changed both is taken as one whose author had the fact in front of them.
    All from ONE `git log`, bounded by the oldest date any fact needs; None when git or its
    history is not available."""
    import datetime
    import subprocess
    bound = datetime.date(int(since[:4]), int(since[5:7]), int(since[8:10])) - datetime.timedelta(1)
    command = list(GIT) + ["-C", project, "log", "--no-renames", "--relative", "--name-only",
                           "--format=%x1e%h%x1f%cI%x1f%s", "--since=%sT00:00:00" % bound.isoformat()]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=GIT_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    citing = {}
    for cited, memory in pairs:
        citing.setdefault(cited, set()).add(memory)
    newest = {}
    for record in done.stdout.decode("utf-8", "replace").split("\x1e")[1:]:
        header, _, names = record.partition("\n")
        fields = header.split("\x1f")
        if len(fields) < 3:
            continue
        commit = (fields[0], fields[1][:10], fields[2])
        touched = set(name.strip() for name in names.split("\n") if name.strip())
        for name in touched:
            for cited in path_and_folders(name):
                for memory in citing.get(cited, ()):
                    key = (cited, memory)
                    # log order is not date order after a rebase: keep the latest date
                    if memory not in touched and (key not in newest or commit[1] > newest[key][1]):
                        newest[key] = commit
    return newest


def path_and_folders(name):
    """`a/b/c.py` -> `a/b/c.py`, `a/b`, `a`: a commit to a file is a commit to its folders."""
    parts = name.split("/")
    return ["/".join(parts[:end]) for end in range(len(parts), 0, -1)] if name else []


def check_dated_facts(project, citations, findings):
    dated = [c for c in citations if c.date and os.path.exists(os.path.join(project, c.path))]
    if not dated:
        return {"dated_facts": 0, "git": "not needed"}
    memory_of = dict((c, inside_project(project, c.memory.path)) for c in dated)
    pairs = set((c.path, memory_of[c]) for c in dated)
    newest = newest_commits(project, pairs, min(c.date for c in dated))
    if newest is None:
        return {"dated_facts": len(dated), "git": "unavailable"}
    reported = set()
    for citation in dated:
        commit = newest.get((citation.path, memory_of[citation]))
        key = (citation.memory.path, citation.line, citation.path)
        if commit is None or commit[1] <= citation.date or key in reported:
            continue
        reported.add(key)
        findings.add("possibly-stale", citation.memory, citation.line,
                     "a fact dated %s cites `%s`, which has changed since: newest commit %s "
                     "on %s, \"%s\"" % (citation.date, citation.shown, commit[0], commit[1],
                                         commit[2]),
                     "check the fact against the file (take numbers from the artefact, not from "
                     "memory), then correct it and its date")
    return {"dated_facts": len(dated), "git": "checked"}


# --- the auto-memory cap ------------------------------------------------------------------------

def auto_memory_report(project, env, findings):
    path = auto_memory_index(project, env)
    if path is None:
        return None
    text = read_text(path) or ""
    load = auto_memory_load(text)
    shown = home_shown(path, env)
    if load["lost_lines"]:
        findings.add("auto-memory-overflow", shown, load["lost"][0][0],
                     "%d of its %d counted lines never load (the harness reads %s), from %s"
                     % (load["lost_lines"], load["lines"], overflow_cause(load),
                        named_list(first_lost_entries(load["lost"]), 3)),
                     "move detail into topic files and keep one short line per entry; the lines "
                     "that fall off are usually the newest", lines=text.split("\n"))
    summary = dict((key, value) for key, value in load.items() if key != "lost")
    summary["file"] = shown
    summary["first_lost"] = first_lost_entries(load["lost"])
    return summary


# --- what loads before the first turn ----------------------------------------------------------

def estimated_tokens(characters):
    return -(-characters // CHARACTERS_PER_TOKEN)


def load_part(part, path, text, env, project, cap=None, over=False, note=None):
    characters = len(text)
    return {"part": part, "file": display_path(path, env, project), "characters": characters,
            "tokens": estimated_tokens(characters), "cap": cap, "over": bool(over), "note": note}


def display_path(path, env, project):
    if path is None:
        return None
    shown = shown_path(project, path)
    return shown if shown != path else home_shown(path, env)


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


def folders_from_root(project):
    """The project folder and every folder above it, the filesystem root first."""
    folders = []
    folder = os.path.abspath(project)
    while True:
        folders.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            return folders[::-1]
        folder = parent


def instruction_chain(project, env):
    """(part, path) of every instruction file that loads at launch, in the harness's order."""
    chain = [("managed policy instructions", managed_instruction_file())]
    config = user_config_dir(env)
    if config:
        chain.append(("user instructions", os.path.join(config, "CLAUDE.md")))
    for folder in folders_from_root(project):
        where = "project" if folder == os.path.abspath(project) else "parent folder"
        chain.append(("%s instructions" % where, os.path.join(folder, "CLAUDE.md")))
        chain.append(("%s instructions" % where, os.path.join(folder, ".claude", "CLAUDE.md")))
        chain.append(("%s local instructions" % where, os.path.join(folder, "CLAUDE.local.md")))
    return chain


def imports_of(path, text, env):
    """Files a CLAUDE.md imports with `@path`: relative to the importing file, `@~/` from home,
    or absolute; never inside a code span or a fenced block. Only files that exist count."""
    found = []
    fenced = False
    home = env.get("HOME") or os.path.expanduser("~")
    for line in text.split("\n"):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        if fenced:
            continue
        line = patterns()["code-span"].sub(" ", line)
        for match in patterns()["import"].finditer(line):
            target = import_target(match.group(1), os.path.dirname(path), home)
            if target:
                found.append(target)
    return found


def import_target(written, folder, home):
    candidate = written
    while candidate:
        if candidate.startswith("~/"):
            path = os.path.join(home, candidate[2:])
        else:
            path = os.path.join(folder, candidate)
        if regular_file_size(path) is not None:
            return os.path.normpath(path)
        stripped = candidate.rstrip(".,;:!?)]}\"'")
        if stripped == candidate:
            return None
        candidate = stripped
    return None


def add_with_imports(parts, seen, part, path, env, project, hops=0, via=None, cap=None, over=False):
    """Add a file that loads, then what it imports, to at most MAX_IMPORT_HOPS hops; each file once."""
    key = os.path.normcase(os.path.realpath(path))
    text = None if key in seen else read_text(path)
    if text is None:
        return
    seen.add(key)
    note = "hop %d, from %s" % (hops, display_path(via, env, project)) if via else None
    parts.append(load_part(part, path, text, env, project, cap, over, note))
    if hops >= MAX_IMPORT_HOPS:
        return
    for target in imports_of(path, text, env):
        add_with_imports(parts, seen, "import", target, env, project, hops + 1, path)


def rules_without_paths(folder):
    """Every `.md` under a rules folder, recursively, whose frontmatter has no `paths:`: those
    load at launch; the others wait for a matching file to be read."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(root, name)
            text = read_text(path) if name.endswith(".md") else None
            if text is not None and not has_paths_frontmatter(text):
                found.append((path, text))
    return found


def has_paths_frontmatter(text):
    end = frontmatter_end(text)
    return any(line.strip().startswith("paths:") for line in text[:end].split("\n")[1:])


def session_start_preview(project):
    """What this project's session-start hook would inject now, from the sibling file, loaded by
    path; with nothing pruned or recorded. (None, reason) when it cannot be previewed."""
    path = os.path.join(HOOK_DIR, "session-start.py")
    if not os.path.isfile(path):
        return None, "session-start.py is not beside this file"
    try:
        from importlib.machinery import SourceFileLoader
        module = type(sys)("mcp_session_start_preview")
        module.__file__ = path
        SourceFileLoader(module.__name__, path).exec_module(module)
        return module.preview_injection(os.path.abspath(project)), None
    except Exception as error:  # a broken sibling costs only its row
        return None, "preview failed: %s" % error


def start_of_session_load(project, env, findings, auto, preview=True):
    parts, seen = [], set()
    budget_kb = number_setting(env, "MCP_CLAUDE_KB", 8)
    measured = os.path.normcase(os.path.realpath(instruction_file(project, env)))
    for part, path in instruction_chain(project, env):
        size = regular_file_size(path)
        if size is None:
            continue
        is_measured = os.path.normcase(os.path.realpath(path)) == measured
        cap = "protocol budget %d KB, fires at %s bytes" % (
            budget_kb, format((budget_kb + 1) * 1024, ",")) if is_measured else None
        add_with_imports(parts, seen, part, path, env, project, cap=cap,
                         over=is_measured and size // 1024 > budget_kb)
    config = user_config_dir(env)
    rule_folders = [("user rule", os.path.join(config, "rules"))] if config else []
    rule_folders.append(("project rule", os.path.join(project, ".claude", "rules")))
    for part, folder in rule_folders:
        for path, text in rules_without_paths(folder):
            key = os.path.normcase(os.path.realpath(path))
            if key not in seen:
                seen.add(key)
                parts.append(load_part(part, path, text, env, project))
    if auto:
        parts.append({
            "part": "auto memory, the part that loads", "file": auto["file"],
            "characters": auto["loaded_characters"],
            "tokens": estimated_tokens(auto["loaded_characters"]),
            "cap": "harness loads %d lines / %s bytes" % (AUTO_MEMORY_LINES,
                                                        format(AUTO_MEMORY_BYTES, ",")),
            "over": auto["lost_lines"] > 0, "note": None})
    if preview:
        parts.append(injection_part(project, env, findings))
    total = sum(part["characters"] for part in parts)
    return {
        "estimate": "tokens = characters / %d, rounded up; a rough rule for English text and "
                    "code, not the model's tokenizer" % CHARACTERS_PER_TOKEN,
        "parts": parts,
        "total": {"characters": total, "tokens": estimated_tokens(total)},
    }


def injection_part(project, env, findings):
    text, problem = session_start_preview(project)
    cap = "harness hook limit %s characters" % format(INJECTION_LIMIT, ",")
    if text is None:
        return load_part("session-start injection", None, "", env, project, cap, note=problem)
    # session-start cuts an injection that would pass the limit and marks the cut this way
    cut = "[cut here: the injection limit is" in text
    if cut:
        findings.add("injection-cut", "session-start injection", 1,
                     "the session-start injection would pass the harness's %s-character limit, so "
                     "it is cut and the agent sees only part of the memory index"
                     % format(INJECTION_LIMIT, ","),
                     "shrink the memory index with /dream")
    return load_part("session-start injection", None, text, env, project, cap, cut)


# --- the report ---------------------------------------------------------------------------------

def memory_health(project, env, preview=True):
    """The full health report of a project's memory, as a JSON-able dict. `preview=False` leaves
    out the session-start injection (which runs git) from the load table."""
    project = os.path.abspath(project)
    index_path = project_path(project, env, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    folder = os.path.dirname(index_path)
    findings = Findings()
    index, topics = memory_files(project, folder, index_path)
    index_summary = lint_index(project, index, folder, topics, findings) if index else None
    lint_topics(topics, findings)
    citations = []
    for memory in ([index] if index else []) + topics:
        citations += citations_in(project, memory, memory is index, last_updated(memory))
    check_citations(project, citations, findings)
    facts = check_dated_facts(project, citations, findings)
    auto = auto_memory_report(project, env, findings)
    load = start_of_session_load(project, env, findings, auto, preview)
    index_size = regular_file_size(index_path)
    for finding in findings.items:
        finding["at_session_start"] = reported_at_session_start(finding, index_size, env)
    items = sorted(findings.items, key=finding_order)
    counts = dict((severity, sum(1 for f in items if f["severity"] == severity))
                  for severity in ("broken", "over", "warning"))
    status = next((s for s in ("broken", "over", "warning") if counts[s]), "ok")
    return {
        "project": project,
        "status": status,
        "counts": counts,
        "findings": items,
        "index": index_summary,
        "topic_files": len(topics),
        "citations": {"paths": len(citations), "dated_facts": facts["dated_facts"],
                      "git": facts["git"]},
        "auto_memory": auto,
        "load": load,
    }


def reported_at_session_start(finding, index_size, env):
    """Whether budget_points() shows this finding too, so a report for a person need not repeat
    it. Only when that is certain: the start-time checks read the index's first
    INDEX_HEAD_BYTES, and look for dead pointers only within the index budget's lines."""
    check = finding["check"]
    whole_index_read = index_size is not None and index_size <= INDEX_HEAD_BYTES
    if check == "dead-pointer":
        return whole_index_read and finding["line"] <= number_setting(env, "MCP_MEM_LINES", 80)
    if check == "unclosed-comment":
        return whole_index_read
    return check == "auto-memory-overflow"


SEVERITY_ORDER = {"broken": 0, "over": 1, "warning": 2}


def finding_order(finding):
    return (SEVERITY_ORDER[finding["severity"]], finding["file"], finding["line"], finding["check"])


def format_health(health, at_most=NAMED_AT_MOST, skip_session_start=True):
    """The report for a person: findings grouped by check, at most `at_most` per check, then the
    load table. Findings that session start already reports as budget points can be left out."""
    lines = []
    shown = [f for f in health["findings"]
             if not (skip_session_start and f["at_session_start"])]
    if shown:
        counts = [(s, sum(1 for f in shown if f["severity"] == s))
                  for s in ("broken", "over", "warning")]
        elsewhere = len(health["findings"]) - len(shown)
        lines.append("## Memory health — %s%s" % (
            ", ".join("%d %s" % (n, "warning(s)" if s == "warning" else s) for s, n in counts if n),
            " (and %d in the budget report above)" % elsewhere if elsewhere else ""))
        if health["index"]:
            lines.append("  %s" % describe_index(health["index"], health["topic_files"]))
        by_check = {}
        for finding in shown:
            by_check.setdefault(finding["check"], []).append(finding)
        for check, group in by_check.items():
            for finding in group[:at_most]:
                lines.append("  %-7s %s:%d  %s; %s" % (
                    finding["severity"].upper(), finding["file"], finding["line"],
                    finding["message"], finding["repair"]))
            if len(group) > at_most:
                lines.append("          ... and %d more %s finding(s) (--json lists them all)"
                             % (len(group) - at_most, check))
    lines += format_load(health["load"])
    return "\n".join(lines) + "\n"


def describe_index(index, topic_files):
    return ("%s: %d lines: %d pointer line(s), %d other content line(s), %d line(s) of history "
            "in comments; %d topic file(s) beside it" % (
                index["file"], index["lines"], index["pointer_lines"], index["other_lines"],
                index["hidden_history_lines"], topic_files))


def format_load(load):
    lines = ["## Loaded before the first turn (%s)" % load["estimate"].split(";")[0],
             "  %10s %8s  %s" % ("characters", "~tokens", "part")]
    for part in load["parts"]:
        label = part["file"] or part["part"]
        extras = [part["part"]] if part["file"] else []
        extras += [part["note"]] if part["note"] else []
        if part["cap"]:
            extras.append(("OVER: " if part["over"] else "cap: ") + part["cap"])
        lines.append("  %10s %8s  %s%s" % (format(part["characters"], ","),
                                           format(part["tokens"], ","), label,
                                           " (%s)" % "; ".join(extras) if extras else ""))
    lines.append("  %10s %8s  total" % (format(load["total"]["characters"], ","),
                                        format(load["total"]["tokens"], ",")))
    return lines


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
        report = format_report(budget_points(project, os.environ))
        if report:
            write_stdout(report)


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # a budget check must never take the session down
        pass
    sys.exit(0)
