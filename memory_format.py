#!/usr/bin/env python3
"""memory_format: moves a memory kept in the protocol's previous format to the team format.

Why it exists: the previous format had every save rewrite lines every other save rewrites too
(the index's `Last dream` stamp and Active Context, each file's `Last updated` stamp), so two
developers who saved on two branches collided in git at nearly every merge (spec §4.5 gives the
measurement). The team format writes nothing every save changes, keeps what one developer is
doing in their own handoff, and puts each new fact in a note of its own, listed at session
start, so no save edits a line another save edits. A memory written before keeps working as it
is; this module is what `install.py --update` runs to bring it to that format.

What it promises:
- `changes(folder, index_name, today)` reads the memory folder and returns what the move
  writes, as {file name: new text}: nothing for a memory already in the team format.
  `migrated(files, index_name, today)` does the same on texts held in memory, for the tests
  and the team benchmark. Neither writes anything; the installer writes.
- No line of memory is lost. The lines it takes out are the stamps (`<!-- Last dream: ... -->`,
  `<!-- Last updated: ... -->`), whose dates git keeps for every file, and the guidance comment
  an earlier release's index template carried, which it replaces with this release's. A stamp is
  a comment alone on its line that holds a date and nothing more; one that says more stays. The index's
  Active Context moves, line for line, into a file of its own, which the index then links.
- It puts a blank line between dated facts that sit on adjacent lines (outside code blocks), so
  that two branches correcting two neighbouring facts change lines git keeps apart.
- Running it on its own output changes nothing.
- Standard library only; Python 3.8 or newer.
"""
import importlib.util
import os
import re
import sys


def load_budget_hook():
    """hooks/context-budget.py beside this file, imported by its path (writing no bytecode): its
    reading of Markdown's structure (fenced code, comments) is the one the hooks and the memory
    report use, so the move reads a memory as they do."""
    path = os.path.join(os.path.dirname(os.path.realpath(os.path.abspath(__file__))),
                        "hooks", "context-budget.py")
    spec = importlib.util.spec_from_file_location("mcp_context_budget_for_format", path)
    module = importlib.util.module_from_spec(spec)
    written = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        spec.loader.exec_module(module)
    finally:
        sys.dont_write_bytecode = written
    return module


BUDGET = load_budget_hook()

# The lines a committed .gitattributes needs for git's built-in union merge of the memory: no
# driver to register, so plain git honours it in every clone, with no setup (spec §4.5).
GITATTRIBUTES_LINES = "memory/**/*.md merge=union\n"

# A stamp: the comment alone on its line, holding a date (and maybe a time) or the template's
# placeholder, nothing else. A comment that says more (`Last dream: 2026-04-02, session 156: ...`)
# is a note someone wrote, and stays.
STAMP = re.compile(r"^\s*<!--\s*last[ _-]?(dream|updated)\s*:\s*(\d{4}-\d{2}-\d{2}|YYYY-MM-DD)"
                   r"([ T]\d{2}:\d{2}(:\d{2})?)?\s*-->\s*$", re.I)
STAMP_DATE = re.compile(r"(\d{4}-\d{2}-\d{2})")
DATED_FACT = re.compile(r"^[-*+] \d{4}-\d{2}-\d{2}\b")
ACTIVE_CONTEXT = re.compile(r"^##\s+active context\s*$", re.I)
SECTION_HEADING = re.compile(r"^#{1,2}\s")  # what ends a `##` section; its `###` parts are its own
# The guidance comments earlier releases' index template carried, and the one this release's
# carries: only a comment that is exactly one of the earlier ones is replaced.
EARLIER_GUIDANCE = (
    "<!-- An index, not a store: one pointer line per topic file, under 80 lines, rewritten by "
    "/dream. Never session history. -->",
)
GUIDANCE = ("<!-- The team's shared memory: pointers to topic files here; notes in topic folders "
            "beside this file (memory/<topic>/<note>.md), which session start lists under these "
            "lines. A save adds notes and never edits this file. Never session history. -->")
WORK_IN_PROGRESS = "work-in-progress"
POINTER = ("- [What was in progress on %s](%s) — the index's Active Context until the move to the "
           "team format: keep what is still true as a note or in your handoff, then delete the "
           "file and this section")


def is_stamp(line):
    """Whether a line is a stamp the team format has no use for (see STAMP)."""
    return bool(STAMP.match(line))


def changes(folder, index_name, today):
    """{file name (relative to `folder`, with `/`): new text} of every memory file the move
    changes or creates. Files that cannot be read as UTF-8 are left alone, and no new file takes
    the name of anything in the folder, read or not."""
    files = {}
    for name in memory_file_names(folder):
        try:
            with open(os.path.join(folder, *name.split("/")), encoding="utf-8", newline="") as stream:
                files[name] = stream.read()
        except (OSError, UnicodeDecodeError):
            continue
    try:
        taken = os.listdir(folder)
    except OSError:
        return {}
    moved = migrated(files, index_name, today, taken)
    return dict((name, text) for name, text in moved.items() if files.get(name) != text)


def memory_file_names(folder):
    """The Markdown files of the memory: those beside the index and those one folder down (the
    notes of topic folders), never through a symlink."""
    names = []
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return names
    for entry in entries:
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_file() and entry.name.lower().endswith(".md"):
            names.append(entry.name)
        elif entry.is_dir():
            try:
                inner = sorted(os.scandir(entry.path), key=lambda note: note.name)
            except OSError:
                continue
            names += [entry.name + "/" + note.name for note in inner
                      if note.name.lower().endswith(".md") and not note.name.startswith(".")
                      and note.is_file() and not note.is_symlink()]
    return names


def migrated(files, index_name, today, taken=()):
    """The memory `files` ({name: text}) in the team format: every file, changed or not, plus
    the file that takes the index's Active Context when it had one, under a name neither in
    `files` nor among the `taken` ones (what the folder holds that was not read)."""
    out = {}
    for name, text in files.items():
        if name == index_name:
            moved_to = work_in_progress_name(list(files) + list(taken))
            index, context, date = migrated_index(text, moved_to, today)
            out[name] = index
            if context:
                out[moved_to] = work_in_progress(context, date)
        else:
            out[name] = spaced_facts(without_stamps(text))
    return out


def migrated_index(text, moved_to, today):
    """(the index without its stamps, its Active Context replaced by a pointer to `moved_to`;
    the Active Context's lines; the date they were written: the last consolidation's, else
    `today`)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    read = readable_lines(text, newline)
    stamps = [STAMP_DATE.search(line) for line, shown in zip(text.split(newline), read)
              if shown and STAMP.match(line) and "dream" in line.lower()]
    date = next((found.group(1) for found in stamps if found), today)
    kept = [(line, shown) for line, shown in zip(text.split(newline), read)
            if not (shown and STAMP.match(line))]
    lines = [line for line, _ in kept]
    read = [shown for _, shown in kept]
    start = next((n for n, line in enumerate(lines) if read[n] and ACTIVE_CONTEXT.match(line)),
                 None)
    context = []
    if start is not None:
        end = start + 1
        while end < len(lines) and not (read[end] and SECTION_HEADING.match(lines[end])):
            end += 1
        if not fully_read(newline.join(lines[start:end])):
            start = None  # a fence or comment that never closes: what it holds is not moved
    if start is not None:
        context = lines[start + 1:end]
        while context and not context[0].strip():
            context.pop(0)
        while context and not context[-1].strip():
            context.pop()
        pointer = ["## Work in progress", POINTER % (date, moved_to), ""] if context else []
        lines = lines[:start] + pointer + lines[end:]
    lines = [GUIDANCE if line.strip() in EARLIER_GUIDANCE else line for line in lines]
    return newline.join(lines), context, date


def work_in_progress_name(names):
    """A file name for the Active Context that no name in `names` has, in any case."""
    taken = set(name.lower() for name in names)
    name = WORK_IN_PROGRESS + ".md"
    number = 2
    while name.lower() in taken:
        name = "%s-%d.md" % (WORK_IN_PROGRESS, number)
        number += 1
    return name


def work_in_progress(context, date):
    return ("# What was in progress on %s\n\n%s\n"
            % (date, "\n".join(line.rstrip() for line in context)))


def without_stamps(text):
    """The text without its stamp lines; a line in fenced code or inside a longer comment is a
    sample or a note, never a stamp, and stays."""
    newline = "\r\n" if "\r\n" in text else "\n"
    read = readable_lines(text, newline)
    return newline.join(line for line, shown in zip(text.split(newline), read)
                        if not (shown and STAMP.match(line)))


def spaced_facts(text):
    """A blank line between two dated facts on adjacent lines, outside fenced code and comments."""
    newline = "\r\n" if "\r\n" in text else "\n"
    out = []
    previous_was_fact = False
    for line, shown in zip(text.split(newline), readable_lines(text, newline)):
        fact = shown and bool(DATED_FACT.match(line))
        if fact and previous_was_fact:
            out.append("")
        out.append(line)
        previous_was_fact = fact
    return newline.join(out)


def readable_lines(text, newline="\n"):
    """For each line of text, whether Markdown reads it as written: not in fenced code, and not
    inside a comment opened on an earlier line (nor after one that never closes). A comment
    that starts the line, as a stamp does, is the line's own."""
    comments, _, unclosed = BUDGET.hidden_spans(text)
    fences = BUDGET.fenced_blocks(text)
    states = []
    offset = 0
    for line in text.split(newline):
        inside = any(start <= offset < end for start, end in fences) or \
            any(start < offset < end for start, end in comments) or \
            (unclosed is not None and unclosed < offset)
        states.append(not inside)
        offset += len(line) + len(newline)
    return states


def fully_read(text):
    """Whether every fence and comment the text opens also closes in it."""
    _, _, unclosed = BUDGET.hidden_spans(text)
    if unclosed is not None:
        return False
    for start, end in BUDGET.fenced_blocks(text):
        block = text[start:end].rstrip("\r\n").split("\n")
        opening = block[0].strip()
        mark = opening[:1]
        run = len(opening) - len(opening.lstrip(mark))
        closing = block[-1].strip()
        if len(block) < 2 or not closing or set(closing) != {mark} or len(closing) < run:
            return False
    return True
