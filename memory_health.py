#!/usr/bin/env python3
"""memory_health: the full health report of a project's memory, for `install.py --check`.

Why it exists: the budgets weigh the memory; this report reads it. It checks that the paths a
memory cites still exist (against git history, once), lints the index and the topic files, and
lays out everything that loads before the first turn. That costs a walk through every memory
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


def load_budget_hook():
    """hooks/context-budget.py beside this file, imported by its path, without bytecode."""
    from importlib.machinery import SourceFileLoader
    path = os.path.join(HOOKS, "context-budget.py")
    module = type(sys)("mcp_context_budget_for_health")
    module.__file__ = path
    writes_bytecode, sys.dont_write_bytecode = sys.dont_write_bytecode, True
    try:
        SourceFileLoader(module.__name__, path).exec_module(module)
    finally:
        sys.dont_write_bytecode = writes_bytecode
    return module


BUDGET = load_budget_hook()

# Every finding names a file and a line; a finding about a whole file names its line 1. A line
# that carries BUDGET.IGNORE_MARKER silences every finding at that line.

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
GIT = ("git", "--no-pager", "--no-optional-locks", "-c", "core.fsmonitor=false",
       "-c", "core.quotepath=off", "-c", "log.showSignature=false")
GIT_SECONDS = 60


class MemoryFile(object):
    """One memory file, read once, with its lines and the comments and code spans in it."""

    def __init__(self, project, path, text):
        self.path = path
        self.shown = BUDGET.shown_path(project, path)
        self.text = text
        self.lines = text.split("\n")
        self.comments, self.spans, self.unclosed = BUDGET.hidden_spans(text)
        self.starts = [0]
        newline = text.find("\n")
        while newline != -1:
            self.starts.append(newline + 1)
            newline = text.find("\n", newline + 1)

    def line_of(self, offset):
        import bisect
        return bisect.bisect_right(self.starts, offset)

    def silenced(self, line):
        return 0 < line <= len(self.lines) and BUDGET.is_silenced(self.lines[line - 1])


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
            if lines and 0 < line <= len(lines) and BUDGET.is_silenced(lines[line - 1]):
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
        text = BUDGET.read_text(path)
        if text is None:
            continue
        record = MemoryFile(project, path, text)
        if os.path.normcase(os.path.abspath(path)) == os.path.normcase(os.path.abspath(index_path)):
            index = record
        else:
            topics.append(record)
    if index is None:  # an index named by MCP_MEMORY_INDEX need not end in .md
        text = BUDGET.read_text(index_path)
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
    visible = dict((number, rest) for number, rest, _ in BUDGET.visible_lines(index.text, index.comments))
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
        if one_line and (is_stamp(body) or BUDGET.is_silenced(body)):
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
                         "is content, not a pointer: \"%s\"" % BUDGET.entry_name(rest),
                         "move it into a topic file and leave one pointer line here (/dream)")
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
    for offset, target in BUDGET.markdown_links(index.text, hidden):
        if not BUDGET.is_relative_file_link(target):
            continue
        line = index.line_of(offset)
        path = os.path.normcase(os.path.normpath(os.path.join(folder, target)))
        linked.add(path)
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
                             "is a feedback file without its %s part(s)" % BUDGET.named_list(
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
        numbered = [(number, rest) for number, rest, _ in BUDGET.visible_lines(memory.text, memory.comments)]
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
    for offset, target in BUDGET.markdown_links(line, []):
        if BUDGET.is_relative_file_link(target):
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
    """What this project's session-start hook would inject now, from the sibling file, loaded by
    path; with nothing pruned or recorded. (None, reason) when it cannot be previewed."""
    path = os.path.join(HOOKS, "session-start.py")
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
    index_path = BUDGET.project_path(project, env, "MCP_MEMORY_INDEX", BUDGET.DEFAULT_INDEX)
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
    index_size = BUDGET.regular_file_size(index_path)
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
    """Whether BUDGET.budget_points() shows this finding too, so a report for a person need not repeat
    it. Only when that is certain: the start-time checks read the index's first
    BUDGET.INDEX_HEAD_BYTES, and look for dead pointers only within the index budget's lines."""
    check = finding["check"]
    whole_index_read = index_size is not None and index_size <= BUDGET.INDEX_HEAD_BYTES
    if check == "dead-pointer":
        return whole_index_read and finding["line"] <= BUDGET.number_setting(env, "MCP_MEM_LINES", 80)
    if check == "unclosed-comment":
        return whole_index_read
    return check == "auto-memory-overflow"


SEVERITY_ORDER = {"broken": 0, "over": 1, "warning": 2}


def finding_order(finding):
    return (SEVERITY_ORDER[finding["severity"]], finding["file"], finding["line"], finding["check"])


def format_health(health, at_most=BUDGET.NAMED_AT_MOST):
    """The report for a person: findings grouped by check, at most `at_most` per check, then the
    load table."""
    lines = []
    shown = health["findings"]
    if shown:
        counts = [(s, sum(1 for f in shown if f["severity"] == s))
                  for s in ("broken", "over", "warning")]
        lines.append("## Memory health — %s" % ", ".join(
            "%d %s" % (n, "warning(s)" if s == "warning" else s) for s, n in counts if n))
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

