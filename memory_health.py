#!/usr/bin/env python3
"""memory_health: the full health report of a project's memory, for `install.py --check`.

Why it exists: the budgets weigh the memory; this report reads it. It checks the paths a memory
cites against the branch's git history (one pass), lints the index and the topic files, and lays
out everything that loads before the first turn. It is judged on memories people really keep:
a finding a reasonable owner would dismiss is a bug, so a path is missing only when git knew it,
a memory in Claude Code's own format is valid, and the protocol's stricter conventions are advice. That costs a walk through every memory
file and a git log, so it never runs at session start, and it is never copied into a project:
it lives beside install.py, which loads it by path.

What it promises:
- `memory_health(project, env)` returns the report as a JSON-able dict, `format_health(report)`
  the text for a person. Neither writes anything; git runs read-only, with a time limit.
- One reading of Markdown for the whole protocol: the scanner of comments, code spans and links
  is the session-start hook's (hooks/context-budget.py), loaded by its path, so a memory is never
  read one way at session start and another way here.
- Standard library only; Python 3.8 or newer.
"""
import os
import sys

ROOT = os.path.dirname(os.path.realpath(os.path.abspath(__file__)))
HOOKS = os.path.join(ROOT, "hooks")


def load_hook(file_name, module_name):
    """A hook file beside this one (hooks/<file_name>), imported by its path, writing no
    bytecode beside the hooks, which are the project's files once installed."""
    return load_by_path(os.path.join(HOOKS, file_name), module_name)


def load_by_path(path, module_name):
    """The Python file at path, imported as a module of that name, writing no bytecode."""
    from importlib.machinery import SourceFileLoader
    module = type(sys)(module_name)
    module.__file__ = path
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        SourceFileLoader(module.__name__, path).exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


BUDGET = load_hook("context-budget.py", "mcp_context_budget_for_health")
# The installer's one way to run git, hardened against what a repository's configuration could
# make it start (its fsmonitor, hooks, pager, diff programs): the memory is checked in
# repositories nobody has trusted yet.
GIT = load_by_path(os.path.join(ROOT, "installer", "git.py"), "mcp_git_for_health")

# Every finding names a file and a line; a finding about a whole file names its line 1. A line
# that carries the hook's ignore marker silences every finding at that line; a file that carries
# FILE_IGNORE_MARKER anywhere is silenced whole.

SEVERITY = {
    "dead-pointer": "broken",          # the agent is sent to a memory that is not there
    "unclosed-comment": "broken",      # the rest of the index is hidden from readers
    "auto-memory-overflow": "broken",  # part of the harness's memory never loads
    "missing-path": "broken",          # a path git knew is gone, and the memory still cites it
    "injection-cut": "over",           # the session-start injection hit the hook limit
    "oversized-topic": "warning",      # a topic file too long to open whole without cost
    "possibly-stale": "warning",       # the cited file changed after the fact was dated
    "hidden-history": "warning",       # history filed as comments: paid for, never seen
    "not-a-pointer": "warning",        # content in the index that belongs in a topic file
    "duplicate-pointer": "warning",
    "orphan": "warning",               # a topic file nothing in the memory leads to
    "machine-local-path": "warning",   # a path on one person's machine, in shared memory
    "missing-date": "advice",          # the protocol's conventions: advice, never an error
    "feedback-parts": "advice",
}
SEVERITIES = ("broken", "over", "warning", "advice")
FILE_IGNORE_MARKER = "mcp-health: ignore-file"
# A topic file is read whole when a task calls for it. Past this estimate each opening costs
# 5% of a 200,000-token context window (and past 25,000 the harness's Read tool refuses to
# open it whole at all). Fires at TOPIC_TOKENS * 4 + 1 characters: 40,001 by default.
TOPIC_TOKENS = 10000
# A cited path that at least this share of the branch's commits changed tells nothing by
# changing again (a version manifest, a folder everything lives in); only for histories of
# at least CHURN_MIN_COMMITS commits.
CHURN_SHARE = 0.5
CHURN_MIN_COMMITS = 10
MAX_IMPORT_HOPS = 4
CHARACTERS_PER_TOKEN = 4
INJECTION_LIMIT = 10000
GIT_SECONDS = 60
# Words by which a line says the path it names is gone on purpose: such a line is true as is.
GONE_WORDS = ("removed", "deleted", "dropped", "renamed", "moved", "replaced", "gone",
              "retired", "deprecated", "no longer", "formerly", "former ", "used to",
              "obsolete", "superseded", "migrated", "deleting", "removing", "renaming")
# Headings of sections that talk about the index rather than hold memory.
GUIDANCE_HEADINGS = ("usage", "how to use", "how this works", "conventions", "rules", "format",
                     "about", "meta", "guidelines", "instructions", "legend", "maintenance")
DATE_KEYS = ("date", "updated", "last_updated", "last-updated", "lastupdated", "modified",
             "created", "last_verified", "verified")


class MemoryFile(object):
    """One memory file, read once: its lines, its comments and code (spans and fenced blocks),
    its frontmatter, and where its lines start."""

    def __init__(self, project, path, text):
        self.path = path
        self.name = os.path.basename(path)
        self.shown = BUDGET.shown_path(project, path)
        self.text = text
        self.lines = text.split("\n")
        self.comments, self.code, self.unclosed = BUDGET.hidden_spans(text)
        self.fences = BUDGET.fenced_blocks(text)
        self.frontmatter = frontmatter_keys(text)
        self.starts = [0]
        newline = text.find("\n")
        while newline != -1:
            self.starts.append(newline + 1)
            newline = text.find("\n", newline + 1)
        self.fenced_lines = set()
        for start, end in self.fences:
            self.fenced_lines.update(range(self.line_of(start), self.line_of(max(start, end - 1)) + 1))
        self.silenced_whole = FILE_IGNORE_MARKER in text

    def line_of(self, offset):
        import bisect
        return bisect.bisect_right(self.starts, offset)

    def silenced(self, line):
        return self.silenced_whole or (
            0 < line <= len(self.lines) and BUDGET.is_silenced(self.lines[line - 1]))

    def in_auto_memory_format(self):
        """Claude Code's own format: frontmatter with a name and a description or a type."""
        keys = self.frontmatter
        return "name" in keys and ("description" in keys or "type" in keys or "metadata.type" in keys)


def frontmatter_keys(text):
    """{key: value} of a leading `---` block, one level of nesting as `parent.key`; {} if none."""
    end = BUDGET.frontmatter_end(text)
    keys = {}
    parent = None
    for line in text[:end].split("\n")[1:-2]:
        if not line.strip() or line.lstrip().startswith("#") or ":" not in line:
            continue
        key, _, value = line.partition(":")
        nested = line[:1] in (" ", "\t")
        key = key.strip().lower()
        if nested and parent:
            keys["%s.%s" % (parent, key)] = value.strip().strip("\"'")
        elif not nested:
            parent = key if not value.strip() else None
            keys[key] = value.strip().strip("\"'")
    return keys


class Findings(object):
    """The findings of one report, folded: one finding per file, check and subject (a cited
    path, a section), whatever the number of lines it is seen on."""

    def __init__(self):
        self.items = []
        self.by_key = {}

    def add(self, check, source, line, message, repair, lines=None, subject=None):
        """Record a finding unless its line or file is silenced. `source` is a MemoryFile, or a
        shown path with the file's `lines` given separately."""
        if isinstance(source, MemoryFile):
            if source.silenced(line):
                return
            shown = source.shown
        else:
            if lines and 0 < line <= len(lines) and BUDGET.is_silenced(lines[line - 1]):
                return
            shown = source
        key = (shown, check, subject)
        if subject is not None and key in self.by_key:
            finding = self.by_key[key]
            if line not in finding["lines"]:
                finding["lines"].append(line)
            return
        finding = {"check": check, "severity": SEVERITY[check], "file": shown, "line": line,
                   "lines": [line], "message": message, "repair": repair,
                   "at_session_start": False}
        self.items.append(finding)
        if subject is not None:
            self.by_key[key] = finding


PATTERNS = {}


def patterns():
    if not PATTERNS:
        import re
        PATTERNS.update({
            "date": re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d])"),
            "last-updated": re.compile(r"last[ _-]?updated\W{0,6}(\d{4}-\d{2}-\d{2})", re.I),
            "date-header": re.compile(r"^\W{0,4}date\W{0,6}(\d{4}-\d{2}-\d{2})", re.I),
            "code-span": re.compile(r"(`+)([^`\n]+?)\1"),
            "import": re.compile(r"(?:^|\s)@(\S+)"),
            "extension": re.compile(r"\.[A-Za-z0-9_]{1,10}$"),
            "file-name": re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z][A-Za-z0-9]{0,9}$"),
            "line-suffix": re.compile(r"(:\d+(-\d+)?(:\d+)?|#L\d+(-L?\d+)?)$"),
            "wiki-link": re.compile(r"\[\[([^\]|#\n]+)"),
            "list-item": re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s"),
            "machine-path": re.compile(
                r"(?<![\w/.~-])(~/[^\s`'\"()<>\[\]]+|/(?:Users|home)/[^\s`'\"()<>\[\]/]+/[^\s`'\"()<>\[\]]*"
                r"|[A-Za-z]:[\\/]Users[\\/][^\s`'\"()<>\[\]\\/]+[\\/]?[^\s`'\"()<>\[\]]*)"),
        })
    return PATTERNS


# --- the files of the memory folder -----------------------------------------------------------

def memory_files(project, folder, index_path):
    """(index, topic files): every Markdown file directly in the memory folder, read once. A
    README there explains the folder to people; it is neither the index nor a topic."""
    index, topics = None, []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return None, []
    for name in names:
        path = os.path.join(folder, name)
        if name.startswith(".") or not name.endswith(".md"):
            continue
        is_index = os.path.normcase(os.path.abspath(path)) == os.path.normcase(
            os.path.abspath(index_path))
        if not is_index and name.lower() == "readme.md":
            continue
        text = BUDGET.read_text(path)
        if text is None:
            continue
        record = MemoryFile(project, path, text)
        if is_index:
            index = record
        else:
            topics.append(record)
    if index is None:  # an index named by MCP_MEMORY_INDEX need not end in .md
        text = BUDGET.read_text(index_path)
        index = MemoryFile(project, index_path, text) if text is not None else None
    return index, topics


# --- index lint -------------------------------------------------------------------------------

def is_pointer_line(text):
    """A line that points: a list item or a table row holding a relative link."""
    stripped = text.strip()
    if not (patterns()["list-item"].match(text) or stripped.startswith("|")):
        return False
    return any(BUDGET.is_relative_file_link(target) for _, target in BUDGET.markdown_links(text, []))


def is_table_rule(text, next_text):
    """A table's separator row, or its header row (the row just above a separator)."""
    def separator(line):
        stripped = line.strip()
        return stripped.startswith("|") and set(stripped) <= set("|-: ") and "-" in stripped
    return separator(text) or (text.strip().startswith("|") and separator(next_text or ""))


def is_stamp(comment_body):
    lowered = comment_body.strip().lower()
    return lowered.startswith(("last dream", "last updated", "last-updated"))


def index_line_kinds(index):
    """Each line's kind, and the heading of the section it sits in. Kinds: blank, comment
    (nothing visible once comments go), heading, pointer, code (in a fenced block), table (a
    table's header or separator), prose (guidance: a paragraph under the title, in a section
    about the index, or introducing a list; never a list item or a dated line) and content."""
    visible = dict((number, rest) for number, rest, _ in BUDGET.visible_lines(index.text, index.comments))
    kinds = []
    section = ""
    preamble = True  # under the title, before the first section: where an index says what it is
    count = len(index.lines) - (1 if index.lines[-1:] == [""] else 0)
    for number in range(1, count + 1):
        raw = index.lines[number - 1]
        rest = visible.get(number)
        following = visible.get(number + 1, "")
        if rest is None:
            kind = "comment"
        elif number in index.fenced_lines:
            kind = "code"
        elif not rest.strip():
            kind = "blank"
        elif rest.lstrip().startswith("#"):
            kind = "heading"
            section = rest.strip().lstrip("#").strip().lower()
            preamble = preamble and not rest.lstrip().startswith("##")
        elif is_pointer_line(rest):
            kind = "pointer"
        elif is_table_rule(rest, following):
            kind = "table"
        elif patterns()["list-item"].match(rest) or rest.strip().startswith("|") \
                or patterns()["date"].search(rest):
            kind = "content"
        elif preamble or is_guidance_section(section) or rest.rstrip().endswith(":"):
            kind = "prose"  # what the index is, how to use it, the words before a list
        else:
            kind = "content"
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
        if one_line and (is_stamp(body) or BUDGET.is_silenced(body)):
            continue
        if one_line and guidance_allowed:
            guidance_allowed = False
            continue
        blocks.append((first, last, " ".join(body.split())))
    return blocks


def is_guidance_section(section):
    return section == "active context" or any(word in section for word in GUIDANCE_HEADINGS)


def lint_index(project, index, folder, topics, findings):
    kinds = index_line_kinds(index)
    counts = {}
    for number, kind, section, rest in kinds:
        counts[kind] = counts.get(kind, 0) + 1
        unclosed_here = index.unclosed is not None and number == index.line_of(index.unclosed)
        if kind == "content" and not is_guidance_section(section) and not unclosed_here:
            findings.add("not-a-pointer", index, number,
                         "holds content, not pointers, under \"%s\": \"%s\""
                         % (section or "the title", BUDGET.entry_name(rest)),
                         "move it into a topic file and leave one pointer line here (/dream)",
                         subject=("section", section))
    hidden_lines = 0
    for first, last, body in history_comments(index):
        size = last - first + 1
        hidden_lines += size
        findings.add("hidden-history", index, first,
                     "%s an HTML comment that no session sees but every budget pays "
                     "for: \"%s\"" % ("holds" if size == 1 else "lines %d-%d (%d lines) are"
                                      % (first, last, size), BUDGET.entry_name(body)),
                     "consolidate what is still true into topic files with /dream, then delete "
                     "the comment")
    if index.unclosed is not None:
        line = index.line_of(index.unclosed)
        findings.add("unclosed-comment", index, line,
                     "opens an HTML comment that never closes: renderers, and the harness in "
                     "instruction files, drop everything after it (%d line(s) below it)"
                     % (len(kinds) - line),
                     "close it with `-->`, or delete the stray `<!--`")
    index_links(project, index, folder, findings)
    reached = reachable_memory(index, topics, folder)
    for topic in topics:
        if os.path.normcase(os.path.normpath(topic.path)) not in reached:
            findings.add("orphan", topic, 1,
                         "nothing in %s leads to this file, so no session learns it exists"
                         % index.shown,
                         "add a pointer line for it to the index, or fold it into another topic")
    return {
        "file": index.shown,
        "lines": len(kinds),
        "pointer_lines": counts.get("pointer", 0),
        "other_lines": counts.get("content", 0),
        "prose_lines": counts.get("prose", 0),
        "code_lines": counts.get("code", 0),
        "heading_lines": counts.get("heading", 0),
        "blank_lines": counts.get("blank", 0),
        "comment_only_lines": counts.get("comment", 0),
        "hidden_history_lines": hidden_lines,
        "unclosed_comment_line": index.line_of(index.unclosed) if index.unclosed is not None else None,
    }


def memory_links(memory, folder):
    """(offset, normalised path) of the memory file's relative links outside comments and code,
    and of its `[[wiki links]]`, resolved from the file's folder."""
    hidden = sorted(memory.comments + memory.code)
    found = []
    for offset, target in BUDGET.markdown_links(memory.text, hidden):
        if BUDGET.is_relative_file_link(target):
            found.append((offset, os.path.normcase(os.path.normpath(os.path.join(folder, target)))))
    for match in patterns()["wiki-link"].finditer(memory.text):
        name = match.group(1).strip()
        name = name if name.endswith(".md") else name + ".md"
        found.append((match.start(), os.path.normcase(os.path.normpath(os.path.join(folder, name)))))
    return found


def reachable_memory(index, topics, folder):
    """The memory files a session can reach from the index by following links, however deep."""
    by_path = dict((os.path.normcase(os.path.normpath(t.path)), t) for t in topics)
    reached = set()
    pending = [index]
    while pending:
        memory = pending.pop()
        for _, path in memory_links(memory, os.path.dirname(memory.path)):
            if path not in reached:
                reached.add(path)
                if path in by_path:
                    pending.append(by_path[path])
    return reached


def index_links(project, index, folder, findings):
    """Check the index's links: dead ones, and pointer lines that repeat another's target."""
    first_pointer_to = {}
    hidden = sorted(index.comments + index.code)
    for offset, target in BUDGET.markdown_links(index.text, hidden):
        if not BUDGET.is_relative_file_link(target):
            continue
        line = index.line_of(offset)
        path = os.path.normcase(os.path.normpath(os.path.join(folder, target)))
        if not os.path.exists(path):
            findings.add("dead-pointer", index, line,
                         "links `%s`, which does not exist in %s/"
                         % (target, BUDGET.shown_path(project, folder)),
                         "correct the link, or drop the line with /dream")
        elif is_pointer_line(index.lines[line - 1]):
            if path in first_pointer_to and first_pointer_to[path] != line:
                findings.add("duplicate-pointer", index, line,
                             "points to `%s` again (first at line %d)"
                             % (target, first_pointer_to[path]),
                             "keep one pointer per topic file and merge the clauses")
            first_pointer_to.setdefault(path, line)


# --- topic and feedback files -----------------------------------------------------------------

def valid_date(text):
    import datetime
    try:
        return datetime.date(int(text[:4]), int(text[5:7]), int(text[8:10])).isoformat()
    except ValueError:
        return None


def file_date(memory):
    """The date a memory file gives itself, wherever people put it: `Last updated`, a date key
    of its frontmatter, a `**Date**:` line near the top, or an ISO date in its name."""
    found = patterns()["last-updated"].search(memory.text)
    if found and valid_date(found.group(1)):
        return valid_date(found.group(1))
    for key in DATE_KEYS + tuple("metadata." + key for key in DATE_KEYS):
        value = memory.frontmatter.get(key, "")
        date = valid_date(value[:10]) if patterns()["date"].match(value) else None
        if date:
            return date
    for line in memory.lines[:30]:
        header = patterns()["date-header"].match(line.strip().replace("*", ""))
        if header and valid_date(header.group(1)):
            return valid_date(header.group(1))
    named = patterns()["date"].search(memory.name)
    return valid_date(named.group(0)) if named else None


def lint_topics(project, topics, findings, tracked, env):
    limit = BUDGET.number_setting(env, "MCP_TOPIC_TOKENS", TOPIC_TOKENS)
    for topic in topics:
        tokens = estimated_tokens(len(topic.text))
        if tokens > limit:
            findings.add("oversized-topic", topic, 1,
                         "is %s characters, about %s tokens (budget %s tokens): every session "
                         "that opens it pays that much" % (format(len(topic.text), ","),
                                                           format(tokens, ","), format(limit, ",")),
                         "split it into topic files a task can open one at a time, and move "
                         "what is history into the git log")
        if not topic.in_auto_memory_format() and file_date(topic) is None \
                and not patterns()["date"].search(topic.text):
            findings.add("missing-date", topic, 1,
                         "gives no date anywhere (no `Last updated`, no date in its name, its "
                         "frontmatter or its facts), so nothing tells a reader how old it is",
                         "add `<!-- Last updated: YYYY-MM-DD -->` as line 2, with the date of "
                         "the last change")
        if topic.name.startswith(("feedback_", "feedback-")) and not topic.in_auto_memory_format() \
                and labelled_parts(topic) < 2:
            findings.add("feedback-parts", topic, 1,
                         "is a feedback file without labelled parts: the lesson, then why "
                         "(**Why:**) and how to apply it (**How to apply:**)",
                         "state the lesson, then add the **Why:** and **How to apply:** parts")
    committed = [t for t in topics if BUDGET.shown_path(project, t.path) in tracked] \
        if tracked is not None else []
    for memory in committed:
        machine_local_paths(memory, findings)


def labelled_parts(topic):
    """Lines that open with a label (`**Why:**`, `Why:`, `## How to apply`), in any language:
    the structure of a feedback file, whatever words it uses."""
    count = 0
    for line in topic.text[BUDGET.frontmatter_end(topic.text):].split("\n"):
        stripped = line.strip().lstrip("-*>_ ")
        if line.lstrip().startswith("#") and len(line.strip()) < 60:
            count += 1
        elif line.strip().startswith(("**", "__")) and ":" in stripped[:40]:
            count += 1
        elif 0 < stripped.find(":") < 25 and stripped[:stripped.find(":")].replace(" ", "").isalpha():
            count += 1
    return count


def machine_local_paths(memory, findings):
    """Absolute paths on one person's machine (a home folder), in a file the team shares."""
    for number, line in enumerate(memory.lines, start=1):
        for match in patterns()["machine-path"].finditer(line):
            path = match.group(1).rstrip(".,;:")
            if is_placeholder_home(path):
                continue
            findings.add("machine-local-path", memory, number,
                         "names `%s`, a path on one machine: it does not exist for anyone else "
                         "who reads this committed memory" % path,
                         "write it relative to the repository, or as a setting each person "
                         "makes (an environment variable), and keep the machine's copy local",
                         subject=("path", path))


def is_placeholder_home(path):
    """`~/.config/...` is every user's; `/home/user/...` and `/Users/<you>/` are examples."""
    if path.startswith("~/"):
        return path.startswith("~/.") or path == "~/"
    parts = path.replace("\\", "/").split("/")  # ['', 'home', name, ...] or ['C:', 'Users', name, ...]
    user = parts[2] if len(parts) > 2 else ""
    return user.lower().strip("<>{}$") in ("user", "username", "you", "me", "name", "yourname",
                                           "your-name", "your_name", "someone", "example", "")


# --- references to repository paths -----------------------------------------------------------

class Citation(object):
    def __init__(self, memory, line, written, candidates, date, link, bare):
        self.memory = memory
        self.line = line
        self.written = written
        self.candidates = candidates  # project-relative paths it may mean, most likely first
        self.date = date
        self.link = link
        self.bare = bare  # a file name alone, without a folder


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


def words_of(line):
    """A line without its code spans and links: what its sentence says, not what it cites."""
    words = patterns()["code-span"].sub(" ", line)
    for offset, target in reversed(BUDGET.markdown_links(words, [])):
        start = words.rfind("[", 0, offset)
        end = words.find(")", offset)
        words = words[:max(start, 0)] + " " + words[end + 1:]
    return words


def fact_date(line, fallback):
    """The newest ISO date in the words of a line, never one inside a code span or a link (the
    citation itself, or a navigation link, dates nothing); else the file's own date."""
    dates = [valid_date(m.group(0)) for m in patterns()["date"].finditer(words_of(line))]
    dates = [d for d in dates if d]
    return max(dates) if dates else fallback


def citations_in(project, memory, is_index):
    """Every repository path the file cites, outside comments and fenced blocks, with the date
    of the fact that cites it."""
    found = []
    fallback = file_date(memory)
    if is_index:  # what the injection shows: comments gone, lines of comment only skipped
        numbered = [(n, rest) for n, rest, _ in BUDGET.visible_lines(memory.text, memory.comments)]
    else:
        numbered = list(enumerate(memory.lines, start=1))
    folder = os.path.dirname(memory.path)
    for number, line in numbered:
        if number in memory.fenced_lines:
            continue
        date = fact_date(line, fallback)
        for written in code_span_paths(line):
            bare = "/" not in written
            bases = [folder] if bare else [project, folder]
            candidates = [inside_project(project, os.path.normpath(os.path.join(base, written.rstrip("/"))))
                          for base in bases]
            candidates = [c for c in candidates if c]
            if candidates:
                found.append(Citation(memory, number, written, candidates, date, False, bare))
        if is_index:
            continue  # the index's links are pointers, checked as such
        for offset, target in BUDGET.markdown_links(line, []):
            if BUDGET.is_relative_file_link(target):
                path = inside_project(project, os.path.normpath(os.path.join(folder, target)))
                if path:
                    found.append(Citation(memory, number, target, [path], date, True, False))
    return found


def code_span_paths(line):
    paths = []
    for match in patterns()["code-span"].finditer(line):
        text = patterns()["line-suffix"].sub("", match.group(2).strip())
        if looks_like_repository_path(text) or patterns()["file-name"].match(text):
            paths.append(text)
    return paths


def inside_project(project, path):
    try:
        relative = os.path.relpath(path, project)
    except ValueError:
        return None
    if relative == os.curdir or relative.split(os.sep)[0] == os.pardir:
        return None
    return relative.replace(os.sep, "/")


# --- what git knows ---------------------------------------------------------------------------

class History(object):
    """One pass over the checked branch's first-parent history (merges by the date they landed),
    with renames: every path it ever held, what became of each, and the commits to cited paths."""

    def __init__(self):
        self.state = "unavailable"  # checked, shallow or unavailable
        self.commits = 0
        self.seen = set()
        self.folders = set()  # every folder of a path in `seen`
        self.names = {}  # file name -> set of paths that had it
        self.renamed = {}  # old path -> (new path, commit)
        self.removed = {}  # path -> commit that deleted it (the newest)
        self.touches = {}  # cited path or folder -> [commit, ...], newest first
        self.tracked = None  # files in the index now, relative to the project
        self.tracked_names = {}  # file name -> tracked paths with it


def git_output(project, *args):
    """git's stdout in project, or None when it fails or gives no answer in time."""
    code, out = GIT.git_bytes(project, *args, timeout=GIT_SECONDS)
    return out if code == 0 else None


def tracked_files(project):
    """The files git tracks here, relative to the project; None outside a repository."""
    listed = git_output(project, "ls-files", "-z")
    if listed is None:
        return None
    return set(n for n in listed.decode("utf-8", "replace").split("\0") if n)


def read_history(project, wanted):
    """History of the branch checked out at `project`, keeping the commits of `wanted` paths."""
    history = History()
    shallow = git_output(project, "rev-parse", "--is-shallow-repository")
    log = git_output(project, "log", "--first-parent", "-m", "-M", "--relative", "--name-status",
                     "-z", "--format=%x1e%h%x1f%cI%x1f%s", *GIT.NO_DIFF_PROGRAMS)
    if log is None:
        return history
    history.state = "shallow" if shallow and shallow.strip() == b"true" else "checked"
    for record in log.decode("utf-8", "replace").split("\x1e")[1:]:
        header, _, body = record.partition("\0")
        fields = header.split("\x1f")
        if len(fields) < 3:
            continue
        history.commits += 1
        commit = (fields[0], fields[1][:10], fields[2])
        parts = body.lstrip("\n").split("\0")
        touched = []
        at = 0
        while at < len(parts) and parts[at]:
            status = parts[at]
            if status[:1] in ("R", "C") and at + 2 < len(parts):
                old, new = parts[at + 1], parts[at + 2]
                if status[:1] == "R":
                    history.renamed.setdefault(old, (new, commit))
                touched += [old, new]
                at += 3
                continue
            path = parts[at + 1] if at + 1 < len(parts) else ""
            if status[:1] == "D":
                history.removed.setdefault(path, commit)
            touched.append(path)
            at += 2
        touched_set = set(touched)
        for path in touched:
            if path and path not in history.seen:
                history.seen.add(path)
                history.folders.update(folders_and_path(path)[1:])
                history.names.setdefault(path.rsplit("/", 1)[-1], set()).add(path)
            for cited in folders_and_path(path):
                if cited in wanted:
                    history.touches.setdefault(cited, []).append((commit, touched_set))
    return history


def folders_and_path(name):
    parts = name.split("/")
    return ["/".join(parts[:end]) for end in range(len(parts), 0, -1)] if name else []


def ignored_paths(project, paths):
    """The paths git ignores here: local files, never the repository's to miss."""
    if not paths:
        return set()
    _, out = GIT.git_bytes(project, "check-ignore", "--no-index", "-z", "--stdin",
                           stdin="\0".join(paths).encode("utf-8"), timeout=GIT_SECONDS)
    return set(n for n in out.decode("utf-8", "replace").split("\0") if n)


def resolve(project, citation, history):
    """(project-relative path that exists now, or None; path git knew, or None). Lookups go by
    file name, so the cost does not grow with the number of files times the citations."""
    for candidate in citation.candidates:
        if os.path.exists(os.path.join(project, candidate)):
            return candidate, None
    written = citation.written.rstrip("/")
    name = written.rsplit("/", 1)[-1]
    ending = "/" + written
    now = [p for p in history.tracked_names.get(name, ()) if citation.bare or ("/" + p).endswith(ending)]
    if now:  # a bare name, or a path written relative to another folder, that git tracks now
        return (now[0] if len(now) == 1 else None), None
    if citation.bare:
        known = history.names.get(name, set())
        return None, (next(iter(known)) if len(known) == 1 else None)
    for candidate in citation.candidates:
        if candidate in history.seen or candidate in history.folders:
            return None, candidate
    known = [p for p in history.names.get(name, ()) if ("/" + p).endswith(ending)]
    return None, (known[0] if len(known) == 1 else None)


def what_became_of(project, path, history):
    """`renamed to X in <commit>` or `deleted in <commit>`, following renames to the end."""
    current, last, hops = path, None, 0
    while current in history.renamed and hops < 50:
        current, last = history.renamed[current][0], history.renamed[current][1]
        hops += 1
    if last and os.path.exists(os.path.join(project, current)):
        return "renamed to `%s` in %s on %s" % (current, last[0], last[1]), current
    commit = history.removed.get(current) or history.removed.get(path) or last
    if commit is None:  # a folder: the last of its files to go
        under = [c for gone, c in history.removed.items() if gone.startswith(path + "/")]
        commit = max(under, key=lambda c: c[1]) if under else None
    if commit:
        return "deleted in %s on %s, \"%s\"" % (commit[0], commit[1], commit[2]), None
    return "gone from the working tree", None


def says_it_is_gone(line):
    lowered = words_of(line).lower()
    return any(word in lowered for word in GONE_WORDS)


def check_citations(project, citations, history, findings):
    """Missing paths: cited, known to git, and gone. Returns {citation: existing path}."""
    existing = {}
    gone = []
    for citation in citations:
        now, known = resolve(project, citation, history)
        if now:
            existing[citation] = now
        elif known and not says_it_is_gone(citation.memory.lines[citation.line - 1]):
            gone.append((citation, known))
    ignored = ignored_paths(project, sorted(set(known for _, known in gone)))
    for citation, known in gone:
        if known in ignored:
            continue
        became, new_path = what_became_of(project, known, history)
        findings.add("missing-path", citation.memory, citation.line,
                     "%s `%s`, which git knew as `%s`: %s" % (
                         "links" if citation.link else "cites", citation.written, known, became),
                     "update the fact to `%s`" % new_path if new_path else
                     "update the fact to the current path, or delete it if it no longer holds",
                     subject=("path", known))
    return existing


def check_dated_facts(project, citations, existing, history, findings):
    """Possibly stale: a dated fact whose existing cited path changed on the branch after the
    fact's date, by a commit that did not also touch the memory file citing it."""
    dated = [c for c in citations if c.date and c in existing]
    churning = set()
    for citation in dated:
        path = existing[citation]
        commits = history.touches.get(path, [])
        if history.commits >= CHURN_MIN_COMMITS and len(commits) >= CHURN_SHARE * history.commits:
            churning.add(path)
            continue
        memory = inside_project(project, citation.memory.path)
        later = [commit for commit, touched in commits
                 if commit[1] > citation.date and memory not in touched]
        if not later:
            continue
        newest = max(later, key=lambda commit: commit[1])
        findings.add("possibly-stale", citation.memory, citation.line,
                     "a fact dated %s cites `%s`, which has changed since: %d commit(s), the "
                     "newest %s on %s, \"%s\"" % (citation.date, citation.written, len(later),
                                                 newest[0], newest[1], newest[2]),
                     "check the fact against the file (take numbers from the artefact, not "
                     "from memory), then correct it and its date",
                     subject=("path", path, citation.date))
    return {"dated_facts": len(dated), "churning": sorted(churning)}


# --- the auto-memory cap ------------------------------------------------------------------------

def auto_memory_report(project, env, findings):
    path = BUDGET.auto_memory_index(project, env)
    if path is None:
        return None
    text = BUDGET.read_text(path) or ""
    load = BUDGET.auto_memory_load(text)
    shown = BUDGET.home_shown(path, env)
    if load["lost_lines"]:
        findings.add("auto-memory-overflow", shown, load["lost"][0][0],
                     "%d of its %d counted lines never load (the harness reads %s), from %s"
                     % (load["lost_lines"], load["lines"], BUDGET.overflow_cause(load),
                        BUDGET.named_list(BUDGET.first_lost_entries(load["lost"]), 3)),
                     "move detail into topic files and keep one short line per entry; the lines "
                     "that fall off are usually the newest", lines=text.split("\n"))
    summary = dict((key, value) for key, value in load.items() if key != "lost")
    summary["file"] = shown
    summary["first_lost"] = BUDGET.first_lost_entries(load["lost"])
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
    shown = BUDGET.shown_path(project, path)
    return shown if shown != path else BUDGET.home_shown(path, env)


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
    chain = [("managed policy instructions", BUDGET.managed_instruction_file())]
    config = BUDGET.user_config_dir(env)
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
        if BUDGET.regular_file_size(path) is not None:
            return os.path.normpath(path)
        stripped = candidate.rstrip(".,;:!?)]}\"'")
        if stripped == candidate:
            return None
        candidate = stripped
    return None


def add_with_imports(parts, seen, part, path, env, project, hops=0, via=None, cap=None, over=False):
    """Add a file that loads, then what it imports, to at most MAX_IMPORT_HOPS hops; each file once."""
    key = os.path.normcase(os.path.realpath(path))
    text = None if key in seen else BUDGET.read_text(path)
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
            text = BUDGET.read_text(path) if name.endswith(".md") else None
            if text is not None and not has_paths_frontmatter(text):
                found.append((path, text))
    return found


def has_paths_frontmatter(text):
    end = BUDGET.frontmatter_end(text)
    return any(line.strip().startswith("paths:") for line in text[:end].split("\n")[1:])


def session_start_preview(project):
    """What this project's session-start hook would inject now, from hooks/ beside this file,
    loaded by path; with nothing pruned or recorded, and no bytecode written beside the hooks.
    (None, reason) when it cannot be previewed."""
    path = os.path.join(HOOKS, "session-start.py")
    if not os.path.isfile(path):
        return None, "session-start.py is not in %s" % HOOKS
    # The siblings the preview loads must not write bytecode beside the hooks either.
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        module = load_hook("session-start.py", "mcp_session_start_preview")
        return module.preview_injection(os.path.abspath(project)), None
    except Exception as error:  # a broken sibling costs only its row
        return None, "preview failed: %s" % error
    finally:
        sys.dont_write_bytecode = writes_bytecode


def start_of_session_load(project, env, findings, auto, preview=True, installed=None, index=None):
    parts, seen = [], set()
    budget_kb = BUDGET.number_setting(env, "MCP_CLAUDE_KB", 8)
    measured = os.path.normcase(os.path.realpath(BUDGET.instruction_file(project, env)))
    for part, path in instruction_chain(project, env):
        size = BUDGET.regular_file_size(path)
        if size is None:
            continue
        is_measured = os.path.normcase(os.path.realpath(path)) == measured
        cap = "protocol budget %d KB, fires at %s bytes" % (
            budget_kb, format((budget_kb + 1) * 1024, ",")) if is_measured else None
        add_with_imports(parts, seen, part, path, env, project, cap=cap,
                         over=is_measured and size // 1024 > budget_kb)
    config = BUDGET.user_config_dir(env)
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
            "cap": "harness loads %d lines / %s bytes" % (BUDGET.AUTO_MEMORY_LINES,
                                                        format(BUDGET.AUTO_MEMORY_BYTES, ",")),
            "over": auto["lost_lines"] > 0, "note": None})
    if preview:
        if installed is None:
            installed = os.path.isfile(os.path.join(project, ".claude", "hooks", "session-start.py"))
        parts.append(injection_part(project, env, findings, installed, index))
    total = sum(part["characters"] for part in parts)
    return {
        "estimate": "tokens = characters / %d, rounded up; a rough rule for English text and "
                    "code, not the model's tokenizer" % CHARACTERS_PER_TOKEN,
        "parts": parts,
        "total": {"characters": total, "tokens": estimated_tokens(total)},
    }


def injection_part(project, env, findings, installed=True, index=None):
    text, problem = session_start_preview(project)
    cap = "harness hook limit %s characters" % format(INJECTION_LIMIT, ",")
    part = "session-start injection" if installed else \
        "session-start injection, hypothetical: the protocol is not installed here"
    if text is None:
        return load_part(part, None, "", env, project, cap, note=problem)
    # session-start cuts an injection that would pass the limit and marks the cut this way
    cut = "[cut here: the injection limit is" in text
    note = None
    if cut:
        where = index_cut_line(text, index)
        note = "the index is cut before its line %d" % where if where else None
        findings.add("injection-cut", "session-start injection", 1,
                     "the session-start injection %s pass the harness's %s-character limit, so "
                     "it is cut and the agent sees only part of the memory index%s"
                     % ("would" if installed else "would, once the protocol is installed,",
                        format(INJECTION_LIMIT, ","),
                        " (%s)" % note if note else ""),
                     "shrink the memory index with /dream")
    return load_part(part, None, text, env, project, cap, cut, note)


def index_cut_line(text, index):
    """The index's first line the cut injection leaves out, or None. The injection shows the
    index's visible lines in order under its heading, so the count shown gives the line."""
    if index is None:
        return None
    lines = text.split("\n")
    heading = next((n for n, line in enumerate(lines) if line.startswith("## Memory index (")), None)
    if heading is None:
        return None
    notice = "read %s in full]" % index.shown
    shown = 0
    for line in lines[heading + 1:]:
        if line.startswith("[cut here:") and line.endswith(notice):
            visible = BUDGET.visible_lines(index.text, index.comments)
            return visible[shown][0] if shown < len(visible) else None
        shown += 1
    return None


# --- the report ---------------------------------------------------------------------------------

def memory_health(project, env, preview=True, installed=None):
    """The full health report of a project's memory, as a JSON-able dict. `preview=False` leaves
    out the session-start injection (which runs git) from the load table; `installed=False`
    marks that injection as what the protocol would add, not what loads today."""
    project = os.path.abspath(project)
    index_path = BUDGET.project_path(project, env, "MCP_MEMORY_INDEX", BUDGET.DEFAULT_INDEX)
    folder = os.path.dirname(index_path)
    findings = Findings()
    index, topics = memory_files(project, folder, index_path)
    index_summary = lint_index(project, index, folder, topics, findings) if index else None
    citations = []
    for memory in ([index] if index else []) + topics:
        citations += citations_in(project, memory, memory is index)
    history = history_for(project, citations)
    lint_topics(project, topics, findings, history.tracked, env)
    existing = check_citations(project, citations, history, findings)
    facts = check_dated_facts(project, citations, existing, history, findings)
    auto = auto_memory_report(project, env, findings)
    load = start_of_session_load(project, env, findings, auto, preview, installed, index)
    index_size = BUDGET.regular_file_size(index_path)
    for finding in findings.items:
        finding["at_session_start"] = reported_at_session_start(finding, index_size, env)
    items = sorted(findings.items, key=finding_order)
    counts = dict((severity, sum(1 for f in items if f["severity"] == severity))
                  for severity in SEVERITIES)
    status = next((s for s in ("broken", "over", "warning") if counts[s]), "ok")
    return {
        "project": project,
        "status": status,
        "counts": counts,
        "findings": items,
        "index": index_summary,
        "topic_files": len(topics),
        "citations": {"paths": len(citations), "dated_facts": facts["dated_facts"],
                      "git": history.state if citations else "not needed",
                      "commits": history.commits, "churning": facts["churning"]},
        "auto_memory": auto,
        "load": load,
    }


def history_for(project, citations):
    """The one history pass, keeping commits for every path a citation may mean: as written,
    or a tracked file it names relative to another folder."""
    tracked = tracked_files(project)
    names = {}
    for path in tracked or ():
        names.setdefault(path.rsplit("/", 1)[-1], []).append(path)
    wanted = set()
    for citation in citations:
        wanted.update(citation.candidates)
        written = citation.written.rstrip("/")
        wanted.update(p for p in names.get(written.rsplit("/", 1)[-1], ())
                      if ("/" + p).endswith("/" + written))
    history = read_history(project, wanted)
    history.tracked, history.tracked_names = tracked, names
    return history


def reported_at_session_start(finding, index_size, env):
    """Whether the hook's memory_defects() shows this finding too, at every session start. The
    start-time checks read the index's first INDEX_HEAD_BYTES, and look for dead pointers only
    within the index budget's lines."""
    check = finding["check"]
    whole_index_read = index_size is not None and index_size <= BUDGET.INDEX_HEAD_BYTES
    if check == "dead-pointer":
        return whole_index_read and finding["line"] <= BUDGET.number_setting(env, "MCP_MEM_LINES", 80)
    if check == "unclosed-comment":
        return whole_index_read
    return check == "auto-memory-overflow"


SEVERITY_ORDER = dict((severity, rank) for rank, severity in enumerate(SEVERITIES))


def finding_order(finding):
    return (SEVERITY_ORDER[finding["severity"]], finding["file"], finding["line"], finding["check"])


def format_health(health, at_most=BUDGET.NAMED_AT_MOST):
    """The report for a person: a heading with the same counts as the JSON, then the findings
    grouped by file (worst file first), at most `at_most` per file, then the load table."""
    lines = []
    shown = health["findings"]
    if shown:
        lines.append("## Memory health — %s" % describe_counts(health["counts"]))
        if health["index"]:
            lines.append("  %s" % describe_index(health["index"], health["topic_files"]))
        by_file = {}
        for finding in shown:
            by_file.setdefault(finding["file"], []).append(finding)
        for name, group in by_file.items():
            lines.append("  %s (%s)" % (name, describe_counts(dict(
                (s, sum(1 for f in group if f["severity"] == s)) for s in SEVERITIES))))
            for finding in group[:at_most]:
                lines.append("    %-7s line %s  %s; %s" % (
                    finding["severity"].upper(), describe_lines(finding["lines"]),
                    finding["message"], finding["repair"]))
            if len(group) > at_most:
                lines.append("    ... and %d more in this file (--json lists them all; "
                             "`mcp-health: ignore-file` in a file silences it whole)"
                             % (len(group) - at_most))
    if health["citations"]["git"] == "shallow":
        lines.append("## Memory health: git history is shallow, so paths and changes older than "
                     "its first commit are not known (`git fetch --unshallow` to check them)")
    lines += format_load(health["load"])
    return "\n".join(lines) + "\n"


def describe_counts(counts):
    words = {"broken": "broken", "over": "over", "warning": "warning(s)", "advice": "advice"}
    return ", ".join("%d %s" % (counts[s], words[s]) for s in SEVERITIES if counts.get(s))


def describe_lines(numbers):
    if len(numbers) <= 4:
        return ", ".join(str(n) for n in numbers)
    return "%s and %d more" % (", ".join(str(n) for n in numbers[:3]), len(numbers) - 3)


def describe_index(index, topic_files):
    return ("%s: %d lines: %d pointer line(s), %d content line(s), %d line(s) of history "
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

