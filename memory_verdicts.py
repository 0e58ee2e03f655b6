#!/usr/bin/env python3
"""memory_verdicts: what the memory cannot vouch for, as facts the files and git show.

Why it exists: a memory that merges like code keeps, after a merge, what the team has not yet
settled (two versions of one fact, a fact one branch deleted and another changed, two notes
written under one name, a conflict's markers), and a memory that describes code goes stale when
the code moves (a cited file deleted or renamed). Both load at session start as if true unless
something says otherwise. This module is the one home of those verdicts: the health report
(memory_health.py, `install.py --check`) names them with their reasons, and session start can
mark them in its injection. Every verdict is a fact a reader can check (this line sits next to
that one; git deleted this path in that commit), never a guess about what a line means.

What it promises:
- The readings of text are pure functions of a file's lines: `merge_leftovers(lines, ...)`,
  `cited_paths(lines, folder)`, and `fate_of(path, renamed, removed, exists)` for what became
  of a path, given what git said. Each reads what it is given once, so its cost is linear in it.
- `memory_marks(project, folder, git, cache=None)` reads a memory folder as session start can
  afford: a stat per memory file, a read only of the files that changed since the cached run,
  an existence check per distinct cited path, and git only when a cited path is missing (one
  log limited to the missing paths, one tree diff per deleting commit, a few rounds for chains
  of renames) or when a file holds what could be a merge's leftover (one `git check-attr`).
  Without a cache it reads every file once; with one (a folder only this user can write, chosen
  by the caller) the next start reads only what changed. It writes nothing but that cache.
- `format_marks(marks, at_most)` gives the short lines an injection shows.
- git is the caller's: a callable that runs git, hardened as the caller's git runner is, with a
  time limit, and returns stdout as bytes or None. Nothing here runs anything else.
- Standard library only; Python 3.8 or newer.
"""
import json
import os
import re
import stat

# --- the format's lines ---------------------------------------------------------------------------

# A fact deleted on purpose: its line kept where it stands, `(deleted) ` written after its list
# mark (`- (deleted) 2026-11-02: the cache is in-process`). Two branches that delete one fact
# write the same line, which merges as one; a deletion against a correction of the fact keeps
# both lines side by side (spec §4.5.3). The reason is the commit's message; git dates it.
TOMBSTONE = "(deleted) "
TOMBSTONE_LINE = re.compile(r"^[-*+] \(deleted\)(\s|$)")
DATED_FACT = re.compile(r"^[-*+] \d{4}-\d{2}-\d{2}\b")
CONFLICT_SIDE = re.compile(r"^(<{7}|>{7}|\|{7})( |$)")
FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
LOOSE_FENCE = re.compile(r"^`{1,2}[A-Za-z][\w+-]*\s*$")
LOOSE_FENCE_END = re.compile(r"^`{1,2}\s*$")
STAMPED = re.compile(r"<!--\s*last[ _-]?(dream|updated)\s*:", re.I)
ISO_DATE = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?!\d)")
CODE_SPAN = re.compile(r"(`+)([^`\n]+?)\1")
RELATIVE_LINK = re.compile(r"\]\((?!<)([^)\s#]+)(?:#[^)\s]*)?\)")
WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
NAME_DATE = re.compile(r"(?<!\d)(?:19|20)\d{2}-\d{2}(?!\d)")

# --- what a path is -------------------------------------------------------------------------------

EXTENSION = re.compile(r"\.[A-Za-z0-9_]{1,10}$")
FILE_NAME = re.compile(r"^(?:[A-Za-z0-9_][A-Za-z0-9_.-]*\.[A-Za-z][A-Za-z0-9]{0,9}"
                       r"|\.[A-Za-z][A-Za-z0-9_.-]{1,40})$")
LINE_SUFFIX = re.compile(r"(:L?\d+(-L?\d+)?(:\d+)?|#L\d+(C\d+)?(-L?\d+(C\d+)?)?)$")
COMMANDS_OF_CHANGE = frozenset("rm mv rmdir unlink del rd ren rename move Remove-Item "
                               "Move-Item Rename-Item".split())
# How a line says that the path it cites changed, or will: whole words, in the languages
# memories are kept in. Words that say it happened...
CHANGED_WORDS = frozenset("""
removed deleted dropped renamed moved replaced gone retired deprecated obsolete superseded
migrated ported converted merged switched archived relocated extracted consolidated inlined
folded absorbed rewritten rewrote purged eliminated discontinued formerly former
removing deleting dropping renaming moving replacing migrating merging retiring deprecating
removal deletion deprecation
eliminado eliminada borrado borrada renombrado renombrada movido movida reemplazado
reemplazada migrado obsoleto removido removida excluído excluido renomeado renomeada
substituído substituido supprimé supprimée supprimés renommé renommée déplacé déplacée
remplacé remplacée migré obsolète gelöscht entfernt umbenannt verschoben ersetzt migriert
veraltet rimosso rimossa eliminato rinominato spostato sostituito
удалён удален удалена удалено удалены переименован переименована перемещён перемещен заменён
заменен
""".split())
CHANGED_PHRASES = ("no longer", "not anymore", "got rid of", "get rid of", "in favour of",
                   "in favor of")
# ...and words that plan it (`Delete `x/``, `TODO: remove `y``).
PLANNED_WORDS = frozenset("""
delete remove drop rename move replace retire deprecate migrate purge merge consolidate
relocate eliminate
eliminar borrar renombrar mover reemplazar remover excluir renomear substituir supprimer
renommer déplacer remplacer löschen entfernen umbenennen verschieben ersetzen rimuovere
eliminare rinominare spostare удалить переименовать
""".split())

# --- bounds ---------------------------------------------------------------------------------------

FILE_BYTES = 256 * 1024      # of a memory file, read for its verdicts; the rest is not judged
MAX_FILES = 20000            # memory files judged in one run
MAX_CITED = 5000             # distinct cited paths checked for existence
MAX_DELETING_COMMITS = 32    # tree diffs asked of git for renames, per round
MAX_RENAME_HOPS = 4          # rounds that follow a renamed path that is gone in turn
CACHE_VERSION = 3
LOG_NAMES = frozenset("log logs journal diary changelog history sessions session-log devlog "
                      "worklog".split())


# --- merge leftovers ------------------------------------------------------------------------------

def fenced_lines(lines):
    """The numbers (from 1) of the lines inside fenced code blocks, fences included."""
    inside, fence = set(), None
    for number, line in enumerate(lines, start=1):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            inside.add(number)
        elif fence is not None:
            inside.add(number)
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence) \
                    and not line.strip()[len(opening.group(1)):].strip():
                fence = None
    return inside


def marker_lines(lines, fenced=None):
    """The lines git writes around a conflict it could not merge. A line of seven `=` alone is
    also a heading's underline, so it counts only in a file that holds an opening or closing
    marker."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    sides = [n for n, line in enumerate(lines, start=1)
             if n not in fenced and CONFLICT_SIDE.match(line)]
    if not sides:
        return []
    return sorted(sides + [n for n, line in enumerate(lines, start=1)
                           if n not in fenced and line.rstrip() == "=" * 7])


def is_fact_line(line):
    """A dated fact, or the line that stands where a deleted fact stood."""
    return bool(DATED_FACT.match(line) or TOMBSTONE_LINE.match(line))


def versions_side_by_side(lines, fenced=None):
    """(line, line, whether one is a deletion) of each two lines that touch where the team format
    keeps facts a blank line apart: two dated facts or deletions, or a deletion and any line but
    a title. A correction or a deletion replaces its line where it stands, so these are what a
    union merge keeps when two branches changed one fact differently (or neighbouring facts:
    run_of_facts). Whether one is a deletion and the other not is the third item."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    pairs = []
    for number in range(2, len(lines) + 1):
        if number in fenced or number - 1 in fenced:
            continue
        first, second = lines[number - 2], lines[number - 1]
        deletion = bool(TOMBSTONE_LINE.match(first)) != bool(TOMBSTONE_LINE.match(second))
        if is_fact_line(first) and is_fact_line(second):
            pairs.append((number - 1, number, deletion))
        elif deletion and first.strip() and second.strip() \
                and not first.startswith("# ") and not second.startswith("# "):
            pairs.append((number - 1, number, True))
    return pairs


def loose_sample_lines(lines, fenced=None):
    """The lines of samples set off by a fence of one or two backticks (`` `markdown ``, then a
    lone `` ` ``), as a fence of three loses backticks when text is pasted through a chat or a
    web page: their `# ` lines are the sample's title, not a second note's."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    inside, opened = set(), None
    for number, line in enumerate(lines, start=1):
        if number in fenced:
            continue
        if opened is None and LOOSE_FENCE.match(line):
            opened = number
        elif opened is not None and LOOSE_FENCE_END.match(line):
            inside.update(range(opened, number + 1))
            opened = None
    return inside


def title_lines(lines, fenced=None):
    """The numbers of the lines outside code samples that open with a `# ` title."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    samples = loose_sample_lines(lines, fenced)
    return [n for n, line in enumerate(lines, start=1)
            if line.startswith("# ") and n not in fenced and n not in samples]


def is_log_by_name(name):
    """Whether a memory file's name says it is a log or a record of its day (`session-log.md`,
    `2026-08-07.md`, `findings-2026-07.md`): its lines are history, true of their day, and list
    entries line after line."""
    stem = name.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0].lower()
    return any(word in LOG_NAMES for word in re.split(r"[-_. ]+", stem)) or \
        bool(NAME_DATE.search(stem))


def keeps_facts_apart(name, lines):
    """Whether a file is in the format that keeps facts a blank line apart, so that two facts
    that touch are a merge's: not a file still stamped (the earlier format kept facts on
    adjacent lines), not a log."""
    return not is_log_by_name(name) and not any(STAMPED.search(line) for line in lines[:40])


def merge_leftovers(lines, union=True, note=False, fenced=None):
    """[(line, kind, first line, first and last line of the run to compare)] of what a merge
    left in one file: "markers" anywhere; where git merges the file by union, "versions" (two
    versions of one fact) and "deleted-changed" (a fact deleted on one branch and changed on
    another), and in a note "two-notes" (a second title: two branches wrote a note under one
    name)."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    marked = marker_lines(lines, fenced)
    found = [(n, "markers", marked[0], n, n) for n in marked]
    if not union:
        return found
    for first, second, deletion in versions_side_by_side(lines, fenced):
        start, end = run_of_facts(lines, first, second, fenced)
        found.append((second, "deleted-changed" if deletion else "versions", first, start, end))
    titles = title_lines(lines, fenced) if note else []
    if len(titles) > 1:
        found.append((titles[1], "two-notes", titles[0], titles[0], titles[1]))
    return found


def run_of_facts(lines, first, second, fenced):
    """(first, last line) of the facts around two that touch, each a blank line or none from the
    next. Git merges two conflicts three lines apart or less as one, and the union then keeps one
    branch's lines of it all, then the other's: where both branches changed neighbouring facts,
    their versions sit in this run, one block after the other, touching only where the blocks
    meet."""
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


# --- citations ------------------------------------------------------------------------------------

def looks_like_repository_path(text):
    """A path in the repository: no spaces or shell characters, at least one '/', and a last
    part with an extension or a trailing '/' (so `origin/main` or `application/json` are not
    taken for files). Absolute, home and web paths are not the repository's."""
    if not text or any(c.isspace() for c in text) or "/" not in text:
        return False
    if any(c in text for c in "*?[]{}<>$|;&=\"'(),@!^%"):
        return False
    if text.startswith(("/", "~", "-", "\\")) or "://" in text:
        return False
    first = text.split("/")[0]
    if "." in first.strip(".") and first not in (".", ".."):
        return False  # example.com/path: a host, not a folder
    return text.endswith("/") or bool(EXTENSION.search(text))


def cited_path(text):
    """The repository path a piece of code names, as developers write one, or None: a path or a
    bare file name, with what points inside the file dropped (`app.py:42`, `app.py:42:7`,
    `app.py#L42-L50`, a pytest node id `tests/test_app.py::TestRetry::test_once[slow]`)."""
    text = text.strip()
    if "::" in text:
        text = text[:text.index("::")]
    text = LINE_SUFFIX.sub("", text)
    if looks_like_repository_path(text) or FILE_NAME.match(text):
        return text
    return None


def paths_in_code(content):
    """The paths a code span cites: its whole content when that is a path; else, in a command
    (`pytest tests/test_api.py -k retry`), each word that is a path with a folder, unless the
    command itself moves or removes files (`git mv a.py b.py`), which records a change."""
    whole = cited_path(content)
    if whole:
        return [whole]
    words = content.split()
    if len(words) < 2 or any(word in COMMANDS_OF_CHANGE for word in words):
        return []
    found = []
    for word in words:
        word = word.strip("\"'")
        if word.startswith("-") and "=" in word:
            word = word.split("=", 1)[1]  # --config=conf/app.yml
        path = cited_path(word)
        if path and "/" in path and not word.startswith("-"):
            found.append(path)
    return found


def says_it_changed(words_line):
    """Whether the words of a line (its code taken out) say that what it cites changed, or will:
    then a path that is gone is what the line says, and no verdict of session start's. Coarser
    than the health report's reading of the clause (it errs towards silence)."""
    words = [word.lower() for word in WORD.findall(words_line)]
    joined = " ".join(words)
    return any(word in CHANGED_WORDS or word in PLANNED_WORDS for word in words) or \
        any(phrase in joined for phrase in CHANGED_PHRASES + ("used to",))


def cited_paths(lines, folder, fenced=None):
    """[(line, path, date of the line or None)] of the repository paths a memory file cites: a
    code span that names a path with a folder (read from the project's top), or a relative link
    (read from `folder`, the file's folder relative to the project, `/`-separated), outside
    fenced code, on lines that do not say the path changed."""
    fenced = fenced_lines(lines) if fenced is None else fenced
    found = []
    for number, line in enumerate(lines, start=1):
        if number in fenced or "`" not in line and "](" not in line:
            continue
        words = CODE_SPAN.sub(" ", line)
        if says_it_changed(RELATIVE_LINK.sub(" ", words)):
            continue
        dates = ISO_DATE.findall(words)
        date = max(dates) if dates else None
        for match in CODE_SPAN.finditer(line):
            found += [(number, path.rstrip("/"), date) for path in paths_in_code(match.group(2))
                      if "/" in path and not path.startswith("./")]
        for target in RELATIVE_LINK.findall(words):
            path = project_relative(folder, target)
            if path:
                found.append((number, path, date))
    return found


def project_relative(folder, target):
    """The project-relative path a relative link from `folder` leads to, or None for a link that
    leaves the project, names a scheme, or is absolute."""
    if ":" in target or target.startswith(("/", "\\", "~")):
        return None
    parts = [p for p in (folder + "/" + target).replace("\\", "/").split("/") if p not in ("", ".")]
    out = []
    for part in parts:
        if part == "..":
            if not out:
                return None
            out.pop()
        else:
            out.append(part)
    return "/".join(out) or None


# --- what became of a path ------------------------------------------------------------------------

def fate_of(path, renamed, removed, exists):
    """(the path it lives at now or None, the commit (hash, date, subject) that moved or deleted
    it) from what git said: `renamed` {old: (new, commit)}, `removed` {path: commit}. Renames are
    followed to the end; a folder whose files all moved into one other folder moved with them.
    None when git never said the path went. `exists(path)` says whether a path is there now."""
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
    """(the folder that exists now, the commit) when the files of the folder `path` were renamed
    into one other folder (`assets/icons/*` to `assets/bga/innovation/icons/*`), else None."""
    prefix = path + "/"
    places = {}
    for old, (new, commit) in renamed.items():
        if old.startswith(prefix) and new.endswith("/" + old[len(prefix):]):
            place = new[:len(new) - len(old) + len(prefix) - 1]
            count, newest = places.get(place, (0, commit))
            places[place] = (count + 1, max(newest, commit, key=lambda c: c[1]))
    if not places:
        return None
    place, (_, commit) = max(places.items(), key=lambda item: item[1][0])
    return (place, commit) if exists(place) else None


def gone_from_git(git, paths):
    """({old: (new, commit)}, {path: commit}) for `paths` that are missing: the commit of the
    branch's first-parent history where each went (a log limited to those paths), then, for
    each such commit, whether the path was renamed there and to where. A path renamed to one
    that is gone in turn is followed for MAX_RENAME_HOPS rounds. Empty where git cannot say."""
    renamed, removed = {}, {}
    wanted = sorted(set(paths))
    for _ in range(MAX_RENAME_HOPS):
        went = deleting_commits(git, wanted)
        next_round = []
        for commit in sorted(set(went.values()), key=lambda c: c[1], reverse=True)[
                :MAX_DELETING_COMMITS]:
            for old, new in renames_in(git, commit[0]):
                if any(went[p] == commit and (old == p or old.startswith(p + "/")) for p in went):
                    renamed[old] = (new, commit)  # the path, or a file of the folder cited
                    next_round += [new] if old in went else []
        for path, commit in went.items():
            if path not in renamed:
                removed[path] = commit
        wanted = sorted(set(next_round) - set(renamed) - set(removed))
        if not wanted:
            break
    return renamed, removed


def deleting_commits(git, paths):
    """{path: (hash, date, subject)} of the newest first-parent commit that took each path (or
    a file under it, for a folder) out of the tree."""
    if not paths:
        return {}
    out = git("log", "--first-parent", "-m", "--no-renames", "--diff-filter=D", "--name-only",
              "-z", "--format=%x1e%h%x1f%cs%x1f%s", "--", *paths)
    went = {}
    for record in (out or b"").decode("utf-8", "replace").split("\x1e")[1:]:
        header, _, body = record.partition("\0")
        fields = header.split("\x1f")
        if len(fields) < 3:
            continue
        commit = (fields[0], fields[1], fields[2])
        for name in body.strip("\n").split("\0"):
            name = name.strip("\n")
            for path in paths:
                if name == path or name.startswith(path + "/"):
                    went.setdefault(path, commit)
    return went


def renames_in(git, commit):
    """[(old, new)] that git's rename detection finds in a commit against its first parent."""
    out = git("diff-tree", "-r", "-z", "-M", "--name-status", "--diff-filter=R",
              "--no-ext-diff", "--no-textconv", commit + "~1", commit)
    parts = (out or b"").decode("utf-8", "replace").split("\0")
    found = []
    at = 0
    while at + 2 < len(parts):
        if parts[at].startswith("R"):
            found.append((parts[at + 1], parts[at + 2]))
            at += 3
        else:
            at += 1
    return found


# --- the memory as session start reads it ---------------------------------------------------------

def memory_entries(folder):
    """[(name relative to the memory folder with `/`, path, size, mtime in ns)] of the Markdown
    files directly in it and one folder down (the notes of topic folders), never through a link,
    at most MAX_FILES, in a stable order."""
    entries = []
    for entry in sorted_scan(folder):
        if entry.name.startswith(".") or entry.is_symlink():
            continue
        if entry.is_dir(follow_symlinks=False):
            for note in sorted_scan(entry.path):
                if note.name.lower().endswith(".md") and not note.name.startswith(".") \
                        and note.is_file(follow_symlinks=False):
                    entries.append(described(entry.name + "/" + note.name, note))
        elif entry.name.lower().endswith(".md") and entry.is_file(follow_symlinks=False):
            entries.append(described(entry.name, entry))
        if len(entries) >= MAX_FILES:
            break
    return [e for e in entries[:MAX_FILES] if e]


def sorted_scan(folder):
    try:
        with os.scandir(folder) as listing:
            return sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return []


def described(name, entry):
    try:
        info = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return name, entry.path, info.st_size, info.st_mtime_ns


def file_verdicts(path, name, memory_folder, index_name="MEMORY.md"):
    """{"leftovers": [[line, kind, first line]], "cited": [[line, path, date]]} of one memory file,
    read once (at most FILE_BYTES): what its text says without git."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return {"leftovers": [], "cited": []}
            text = stream.read(FILE_BYTES).decode("utf-8", "replace")
    except OSError:
        return {"leftovers": [], "cited": []}
    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    fenced = fenced_lines(lines)
    note = "/" in name
    apart = keeps_facts_apart(name, lines)
    leftovers = merge_leftovers(lines, union=apart, note=note, fenced=fenced)
    folder = memory_folder + ("/" + name.rsplit("/", 1)[0] if note else "")
    cited = [] if is_log_by_name(name) else cited_paths(lines, folder.strip("/"), fenced)
    if name == index_name:  # the index's links are pointers: session start checks them as such
        cited = [c for c in cited if not RELATIVE_LINK.search(lines[c[0] - 1])]
    inside = memory_folder.strip("/") + "/"
    cited = [c for c in cited if not (c[1] + "/").startswith(inside)]  # a note names a note
    return {"leftovers": [list(item) for item in leftovers], "cited": [list(i) for i in cited]}


def memory_marks(project, folder, git, cache=None, may_read=None, state=None):
    """[{"file", "line", "kind", ...}] of what session start should not let the agent take as
    written, in the memory at `folder` (inside `project`): merge leftovers, and citations of
    paths git deleted or renamed. `cache` is a folder only this user writes, or None;
    `may_read(path)`, when given, says which memory files the caller's read rules allow (a file
    it refuses is neither read nor marked). `state`, when given, is text that changes whenever
    the memory or a cited path can have changed (HEAD and `git status --porcelain`): while it
    stays the same, the marks kept with it are the answer, and no file is looked at."""
    kept = read_cache(cache, project, "marks") if state is not None else {}
    if kept.get("state") == state and isinstance(kept.get("marks"), list) \
            and all(isinstance(mark, dict) for mark in kept["marks"]):
        return kept["marks"]
    marks = marks_now(project, folder, git, cache, may_read)
    if state is not None:
        write_cache(cache, project, {"state": state, "marks": marks}, "marks")
    return marks


def marks_now(project, folder, git, cache, may_read):
    """memory_marks() without a state to go by: a stat of every memory file, a reading of those
    that changed since the cached run."""
    shown_folder = os.path.relpath(folder, project).replace(os.sep, "/")
    stored = read_cache(cache, project)
    stored = stored if isinstance(stored.get("files"), dict) and isinstance(stored.get("fates"), dict) \
        else {"files": {}, "fates": {}}
    files, changed = {}, False
    for name, path, size, mtime in memory_entries(folder):
        if may_read is not None and not may_read(path):
            continue
        kept = stored["files"].get(name)
        if isinstance(kept, list) and kept[:2] == [size, mtime] and len(kept) == 3:
            files[name] = kept
        else:
            files[name] = [size, mtime, file_verdicts(path, name, shown_folder)]
            changed = True
    changed = changed or len(files) != len(stored["files"])
    marks = leftover_marks(project, shown_folder, files, git)
    stale, fates = stale_marks(project, shown_folder, files, git, stored["fates"])
    if changed or fates is not stored["fates"]:
        write_cache(cache, project, {"files": files, "fates": fates})
    return sorted(marks + stale, key=lambda mark: (mark["file"], mark["line"]))


def leftover_marks(project, shown_folder, files, git):
    """The marks of merge leftovers; those that hold only where git merges the file by union
    (two versions, a second title) are kept for the files `git check-attr` says it does."""
    candidates = sorted(name for name, kept in files.items()
                        if any(item[1] != "markers" for item in kept[2]["leftovers"]))
    union = union_merged(git, [shown_folder + "/" + name for name in candidates])
    marks = []
    for name, kept in sorted(files.items()):
        shown = shown_folder + "/" + name
        for line, kind, first, start, end in kept[2]["leftovers"]:
            if kind == "markers" or shown in union:
                marks.append({"file": shown, "line": line, "kind": kind, "first": first,
                              "start": start, "end": end})
    return marks


def union_merged(git, shown_paths):
    """The project-relative paths among `shown_paths` that git merges with its union driver."""
    if not shown_paths:
        return set()
    out = git("check-attr", "-z", "merge", "--", *shown_paths)
    fields = (out or b"").decode("utf-8", "replace").split("\0")
    return set(fields[n] for n in range(0, len(fields) - 2, 3) if fields[n + 2] == "union")


def stale_marks(project, shown_folder, files, git, fates):
    """(the marks of citations whose path is gone and that git shows deleted or renamed, the
    fates to cache). Fates are kept per HEAD and set of missing paths; git runs only when a cited
    path is missing and that pair is new."""
    cited = {}
    for name, kept in sorted(files.items()):
        for line, path, date in kept[2]["cited"]:
            if path in cited or len(cited) < MAX_CITED:
                cited.setdefault(path, []).append((shown_folder + "/" + name, line, date))
    exists = lambda path: os.path.lexists(os.path.join(project, *path.split("/")))
    gone = sorted(path for path in cited if not exists(path))
    if not gone:
        return [], fates
    head = (git("rev-parse", "--verify", "-q", "HEAD") or b"").strip().decode("ascii", "replace")
    if fates.get("head") != head or fates.get("gone") != gone:
        renamed, removed = gone_from_git(git, gone)
        fates = {"head": head, "gone": gone,
                 "renamed": dict((k, [v[0], list(v[1])]) for k, v in renamed.items()),
                 "removed": dict((k, list(v)) for k, v in removed.items())}
    renamed = dict((k, (v[0], tuple(v[1]))) for k, v in fates["renamed"].items())
    removed = dict((k, tuple(v)) for k, v in fates["removed"].items())
    marks = []
    for path in gone:
        fate = fate_of(path, renamed, removed, exists)
        for shown, line, date in cited[path] if fate else ():
            if date is None or date < fate[1][1]:  # a line dated after the change knows of it
                marks.append({"file": shown, "line": line, "kind": "gone", "path": path,
                              "now": fate[0], "commit": fate[1][0], "date": fate[1][1]})
    return marks, fates


# --- the cache ------------------------------------------------------------------------------------

def cache_path(cache, project, kind="verdicts"):
    """The cache file of one project: `verdicts-<hash>.json` keeps each file's verdicts and what
    git said of missing paths; `marks-<hash>.json`, small, the last marks and their state."""
    import hashlib
    digest = hashlib.sha256(os.path.abspath(project).encode("utf-8", "surrogateescape"))
    return os.path.join(cache, "%s-%s.json" % (kind, digest.hexdigest()[:32]))


def read_cache(cache, project, kind="verdicts"):
    """What the last run kept for this project, or {}: a cache that cannot be read, is not this
    version's, or is not a regular file costs a full reading, nothing more."""
    if not cache:
        return {}
    try:
        fd = os.open(cache_path(cache, project, kind), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return {}
            stored = json.loads(stream.read().decode("utf-8"))
        return stored if isinstance(stored, dict) and stored.get("version") == CACHE_VERSION else {}
    except (OSError, ValueError, AttributeError):
        return {}


def write_cache(cache, project, store, kind="verdicts"):
    """Keep the store for the next run, atomically, readable by this user alone."""
    if not cache:
        return
    path = cache_path(cache, project, kind)
    temporary = "%s.%d.tmp" % (path, os.getpid())
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as stream:
            stream.write(json.dumps(dict(store, version=CACHE_VERSION)).encode("utf-8"))
        os.replace(temporary, path)
    except (OSError, ValueError):
        try:
            os.unlink(temporary)
        except OSError:
            pass


# --- the lines an injection shows -----------------------------------------------------------------

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
    """One short line per mark: where, then what the files or git show."""
    where = "%s:%d" % (mark["file"], mark["line"])
    if mark["kind"] == "gone":
        fate = ("renamed to `%s`" % mark["now"]) if mark["now"] else "deleted"
        return "- %s cites `%s`, %s in %s (%s)" % (where, mark["path"], fate, mark["commit"],
                                                   mark["date"])
    several = mark["kind"] in ("versions", "deleted-changed") and \
        (mark["start"], mark["end"]) != (mark["first"], mark["line"])
    return "- %s %s" % (where, MARK_TEXT["run" if several else mark["kind"]] % mark)


def format_marks(marks, at_most=20):
    """The injection's section: a heading with the count, at most `at_most` lines (a conflict's
    markers once per file), and how many more there are."""
    shown, seen = [], set()
    for mark in marks:
        key = (mark["file"], "markers") if mark["kind"] == "markers" else id(mark)
        if key not in seen:
            seen.add(key)
            shown.append(mark_line(mark))
    if not shown:
        return []
    lines = ["## Memory marks — %d line(s) not to take as written (/dream settles them)"
             % len(shown)] + shown[:at_most]
    if len(shown) > at_most:
        lines.append("- and %d more: /dream finds them with the rest" % (len(shown) - at_most))
    return lines
