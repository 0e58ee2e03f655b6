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
import os
import re

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
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
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
    changes or creates. Files that cannot be read as UTF-8 are left alone."""
    files = {}
    for name in memory_file_names(folder):
        try:
            with open(os.path.join(folder, *name.split("/")), encoding="utf-8", newline="") as stream:
                files[name] = stream.read()
        except (OSError, UnicodeDecodeError):
            continue
    moved = migrated(files, index_name, today)
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


def migrated(files, index_name, today):
    """The memory `files` ({name: text}) in the team format: every file, changed or not, plus
    the file that takes the index's Active Context when it had one."""
    out = {}
    for name, text in files.items():
        if name == index_name:
            moved_to = work_in_progress_name(files)
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
    stamps = [STAMP_DATE.search(line) for line in text.split(newline)
              if STAMP.match(line) and "dream" in line.lower()]
    date = next((found.group(1) for found in stamps if found), today)
    lines = [line for line in text.split(newline) if not STAMP.match(line)]
    start = next((n for n, line in enumerate(lines) if ACTIVE_CONTEXT.match(line)), None)
    context = []
    if start is not None:
        end = start + 1
        while end < len(lines) and not SECTION_HEADING.match(lines[end]):
            end += 1
        context = lines[start + 1:end]
        while context and not context[0].strip():
            context.pop(0)
        while context and not context[-1].strip():
            context.pop()
        pointer = ["## Work in progress", POINTER % (date, moved_to), ""] if context else []
        lines = lines[:start] + pointer + lines[end:]
    lines = [GUIDANCE if line.strip() in EARLIER_GUIDANCE else line for line in lines]
    return newline.join(lines), context, date


def work_in_progress_name(files):
    name = WORK_IN_PROGRESS + ".md"
    number = 2
    while name in files:
        name = "%s-%d.md" % (WORK_IN_PROGRESS, number)
        number += 1
    return name


def work_in_progress(context, date):
    return ("# What was in progress on %s\n\n%s\n"
            % (date, "\n".join(line.rstrip() for line in context)))


def without_stamps(text):
    newline = "\r\n" if "\r\n" in text else "\n"
    return newline.join(line for line in text.split(newline) if not STAMP.match(line))


def spaced_facts(text):
    """A blank line between two dated facts on adjacent lines, outside fenced code."""
    newline = "\r\n" if "\r\n" in text else "\n"
    out = []
    fence = None
    for line in text.split(newline):
        opening = FENCE.match(line)
        if opening and fence is None:
            fence = opening.group(1)[0]
        elif opening and line.strip()[:1] == fence:
            fence = None
        elif fence is None and DATED_FACT.match(line) and out and DATED_FACT.match(out[-1]):
            out.append("")
        out.append(line)
    return newline.join(out)
