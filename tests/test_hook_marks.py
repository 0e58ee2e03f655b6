"""Session start marks what the memory cannot vouch for: the readings in context-budget.py, git's
part in prune-worktrees.py, and the marks as the injection shows them.

The rules (spec §2.2.8, §4.5.3, §4.5.7): a fact is corrected or deleted where it stands, facts
are kept a blank line apart, so in a file git merges by union two facts that touch are two
branches' versions of one fact, and a `(deleted)` line touching another line is a deletion
against a change; a note with two titles is two notes of one name; conflict markers are a merge
nobody finished; a cited path that is gone, and that git's first-parent history shows deleted or
renamed after the line's date, is stale, with the new path when git followed a rename. Every
verdict is checked in its healthy and its failing state, on known cases and on generated ones
(the seeds run here, more with MCP_VERDICT_SEEDS), with git merging real branches, and in the
injection a session is given."""
import os
import random
import stat
import subprocess
import sys
import time

import pytest

from conftest import ROOT, clean_environment, load_hook, make_repo, run_hook
from test_hook_session_start import inject

SHARED = load_hook("context-budget.py")
SEEDS = int(os.environ.get("MCP_VERDICT_SEEDS", "40"))
with open(os.path.join(ROOT, "templates", "gitattributes"), encoding="utf-8") as template:
    ATTRIBUTES = template.read()
MARKS = "## Memory marks — "


def lines(text):
    return text.split("\n")


def kinds(text, union=True, note=True):
    return [item[:2] for item in SHARED.merge_leftovers(lines(text), union, note,
                                                         SHARED.fenced_numbers(lines(text)))]


# --- leftovers, known cases ---------------------------------------------------------------------

def test_facts_a_blank_line_apart_and_a_deletion_in_place_leave_nothing():
    text = ("# Caching\n\n- 2026-10-01: keys carry the tenant.\n\n"
            "- (deleted) 2026-10-01: the TTL is 900 s.\n\n- 2026-10-02: eviction is LRU.\n")
    assert kinds(text) == []


def test_two_facts_that_touch_are_two_versions_named_at_the_second():
    text = "# Retry\n\n- 2026-10-05: retries five times.\n- 2026-10-06: retries twice.\n"
    assert SHARED.merge_leftovers(lines(text), True, True, set()) == [(4, "versions", 3, 3, 4)]


def test_a_deletion_touching_a_fact_or_a_paragraph_is_deleted_against_changed():
    fact = "# Retry\n\n- (deleted) 2026-10-01: retries three times.\n- 2026-10-06: retries twice.\n"
    prose = "# Check the lock\n\n- (deleted) 2026-10-01: rule.\n**Why:** it broke.\n"
    assert kinds(fact) == [(4, "deleted-changed")]
    assert kinds(prose) == [(4, "deleted-changed")]


def test_a_deletion_under_a_title_is_nothing_to_mark_and_two_that_touch_are_versions():
    assert kinds("# Retry\n- (deleted) 2026-10-01: three.\n") == []
    assert kinds("# Retry\n\n- (deleted) 2026-10-01: three.\n- (deleted) 2026-10-02: five.\n") \
        == [(4, "versions")]


def test_markers_anywhere_and_a_lone_underline_only_beside_them():
    conflict = "# Keys\n<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> bob\n"
    assert kinds(conflict, union=False) == [(2, "markers"), (4, "markers"), (6, "markers")]
    assert kinds("Deployment\n=======\n\n- 2026-10-01: one.\n", union=False) == []
    assert kinds("# Git\n\n```text\n<<<<<<< HEAD\n=======\n>>>>>>> b\n```\n") == []
    assert kinds("<<<<<<<< eight\n", union=False) == []


def test_a_second_title_is_two_notes_in_a_note_only_and_never_in_a_sample():
    two = "# Dev server binds IPv6\n\n- 2026-10-02: a.\n# Dev server port\n\n- 2026-10-03: b.\n"
    assert kinds(two) == [(4, "two-notes")]
    assert kinds(two, note=False) == []
    assert kinds("# Template\n\n`markdown\n# A note\n`\n") == []
    assert kinds("# Template\n\n`markdown\n# Never closed\n") == [(4, "two-notes")]


def test_without_union_only_markers_count():
    assert kinds("# R\n\n- 2026-10-05: five.\n- 2026-10-06: two.\n", union=False) == []


def test_a_stamped_file_or_a_log_keeps_its_facts_together():
    stamped = "# D\n<!-- Last updated: 2026-10-02 -->\n- 2026-10-01: one.\n- 2026-10-02: two.\n"
    assert SHARED.file_verdicts("decisions.md", stamped, "memory")[0] == []
    assert SHARED.is_stamped(["<!--last_dream:2026-01-01-->"])
    assert not SHARED.is_stamped(["<!-- last seen: 2026-01-01 -->"])
    for log in ("logs/parser-session-log.md", "2026-08-07.md", "findings/audit-2026-10.md"):
        assert SHARED.is_log_name(log), log
    for note in ("gotchas/dev-server.md", "decisions/port-12026-10.md", "keys.md"):
        assert not SHARED.is_log_name(note), note


# --- leftovers, generated -----------------------------------------------------------------------

PROSE = ("Open it when the worker stalls.", "**Why:** it broke once.", "| a | b |", "> quoted")


def team_note(rng):
    """A note as the team format writes it: a title, then facts, deletions and prose, a blank
    line apart, now and then a fenced sample that may hold anything."""
    out = ["# " + rng.choice(("Retry", "Cache keys", "Deploy"))]
    for number in range(rng.randint(1, 8)):
        kind = rng.random()
        out.append("")
        if kind < 0.5:
            out.append("- 2026-10-%02d: fact %d with `src/a_%d.py`." % (rng.randint(1, 28), number, number))
        elif kind < 0.7:
            out.append("- (deleted) 2026-10-01: fact %d." % number)
        elif kind < 0.85:
            out.append(rng.choice(PROSE))
        else:
            out += ["```text", "<<<<<<< HEAD", "- 2026-10-01: a", "- 2026-10-02: b", "# T", "```"]
    return out


@pytest.mark.parametrize("seed", range(SEEDS))
def test_a_generated_note_in_the_team_format_is_clean_and_each_leftover_put_in_is_found(seed):
    rng = random.Random(seed)
    note = team_note(rng)
    fenced = SHARED.fenced_numbers(note)
    assert SHARED.merge_leftovers(note, True, True, fenced) == []
    facts = [n for n, line in enumerate(note) if SHARED.is_fact_line(line) and n + 1 not in fenced]
    if not facts:
        return
    at = rng.choice(facts)
    deleted = SHARED.is_deletion(note[at])
    kind, extra, line = rng.choice((
        ("deleted-changed" if deleted else "versions", ["- 2026-11-02: another version."], at + 2),
        ("deleted-changed", ["- 2026-11-02: a version kept." if deleted else
                             "- (deleted) 2026-10-01: the old version."], at + 2),
        ("markers", ["<<<<<<< HEAD", "=======", ">>>>>>> bob"], at + 2),
        ("two-notes", ["", "# Another note", ""], at + 3)))
    changed = note[:at + 1] + extra + note[at + 1:]
    found = SHARED.merge_leftovers(changed, True, True, SHARED.fenced_numbers(changed))
    assert (line, kind) in [item[:2] for item in found], (changed, found)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_any_text_gives_verdicts_without_an_exception(seed):
    rng = random.Random(seed)
    pieces = ["- (deleted)", "- 2026-10-01: x", "```", "~~~", "# t", "`", "<<<<<<< a", "=======",
              "](../../a/b.py)", "`src/a.py:3`", "\ufeff", "\r", "\x00", "[x](", "..", "\t",
              "<!-- last dream:", "`rm src/a.py`", "2026-1", "\udc80"]
    text = "".join(rng.choice(pieces) + rng.choice(("", "\n", " ")) for _ in range(60))
    for name in ("keys.md", "notes/2026-10.md", "notes/a.md"):
        leftovers, cited = SHARED.file_verdicts(name, text, "memory", name == "keys.md")
        assert all(0 < item[0] <= len(lines(text)) + 1 for item in leftovers + cited)


# --- citations ----------------------------------------------------------------------------------

def test_a_cited_path_is_a_code_span_with_a_folder_or_a_relative_link():
    text = ("# Parser\n\n- 2026-10-01: the parser is `src/parse.py:42`.\n\n"
            "- 2026-10-02: run `python3 -m pytest tests/test_parse.py::test_one -q`.\n\n"
            "- 2026-10-03: see [the lexer](../../src/lex.py#L3).\n\n"
            "- 2026-10-04: `parse.py` alone is a bare name; `origin/main` is a branch.\n\n"
            "```\n`src/in_a_sample.py`\n```\n"
            "- 2026-10-05: [out](../../../elsewhere.py) and [web](https://x.org/a.py).\n\n"
            "- 2026-10-06: `git mv src/a.py src/b.py` moved it; `src/c.py#L3C2-L5C1`.\n\n"
            "Undated `src/d.py:L4-L9` in prose, `example.com/a.js` a host.\n")
    assert SHARED.cited_paths(text, "memory/gotchas") == [
        (3, "src/parse.py", "2026-10-01"), (5, "tests/test_parse.py", "2026-10-02"),
        (7, "src/lex.py", "2026-10-03"), (16, "src/c.py", "2026-10-06"), (18, "src/d.py", None)]


def test_a_lines_date_is_its_newest_outside_its_code():
    text = "- 2026-10-01: `src/a-2027-01-01.py` moved on 2026-11-02; 12026-12-30.\n"
    assert SHARED.cited_paths(text, "memory") == [(1, "src/a-2027-01-01.py", "2026-11-02")]


def test_the_index_links_a_log_and_a_note_named_by_a_note_cite_nothing():
    cites = "# I\n\n- 2026-10-01: [p](../src/p.py), `memory/old.md`, `src/q.py`.\n"
    assert [c[1] for c in SHARED.file_verdicts("MEMORY.md", cites, "memory", True)[1]] == ["src/q.py"]
    assert [c[1] for c in SHARED.file_verdicts("keys.md", cites, "memory")[1]] == ["src/p.py", "src/q.py"]
    assert SHARED.file_verdicts("session-log.md", cites, "memory")[1] == []


def test_what_became_of_a_path_follows_renames_and_folders():
    commit = ("abc1234", "2026-11-02")
    later = ("def5678", "2026-11-09")
    renamed = {"a.py": ("b.py", commit), "b.py": ("c.py", later),
               "old/x.py": ("new/x.py", commit), "old/y.py": ("new/y.py", commit)}
    exists = {"c.py", "new"}.__contains__
    assert SHARED.fate_of("a.py", renamed, {}, exists) == ("c.py", later)
    assert SHARED.fate_of("old", renamed, {}, exists) == ("new", commit)
    assert SHARED.fate_of("gone.py", renamed, {"gone.py": commit}, exists) == (None, commit)
    assert SHARED.fate_of("never.py", renamed, {}, exists) is None


# --- marks on a repository ----------------------------------------------------------------------

def git(repo, *args):
    done = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True,
                          env=clean_environment(repo.parent / "home"))
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


class Cache(dict):
    """The account's cache as the hooks call it (stop-handoff.py's account_cache), in memory."""

    def __call__(self, name, value=None):
        if value is None:
            return self.get(name)
        self[name] = value


class Hooks:
    """context-budget.py and prune-worktrees.py as session start loads them, with a cache of
    their own, counting the git commands the marks run (`calls`: the status read the baseline
    shares is not one) and the memory files they read (`reads`)."""

    def __init__(self):
        self.shared = load_hook("context-budget.py")
        self.home = load_hook("prune-worktrees.py")
        self.home.uses(self.shared)
        self.cache = Cache()
        self.shared.uses_cache(self.cache)
        self.calls, self.reads, self.looked = [], [], []
        run, read = self.home.Git.run, self.shared.read_project_text
        entries = self.home.memory_entries
        self.home.memory_entries = lambda folder: self.looked.append(folder) or entries(folder)
        self.home.Git.run = lambda git, commands, deadline=None: self.calls.extend(
            c[c.index("-C") + 2] for c in commands if isinstance(c, tuple)) or run(
            git, commands, deadline)
        self.shared.read_project_text = lambda *args: self.reads.append(args[2]) or read(*args)

    def marks(self, repo):
        guard = self.home.Guard(str(repo), time.monotonic())
        return self.home.memory_marks(guard, guard.start_reads())


def marks_of(repo):
    return Hooks().marks(repo)


@pytest.fixture
def moved(tmp_path):
    """A project whose memory cites five files, then one renamed, one deleted, one changed."""
    (tmp_path / "home").mkdir()
    repo = make_repo(tmp_path / "project")
    for name in ("parse", "lex", "emit", "keep", "later"):
        write(repo / "src" / (name + ".py"), "def %s():\n    return 1\n" % name)
    write(repo / ".gitattributes", ATTRIBUTES)
    write(repo / "memory" / "MEMORY.md", "# Index\n")
    write(repo / "memory" / "parser" / "entry.md",
          "# Entry\n\n- 2026-10-01: the parser starts in `src/parse.py`.\n")
    write(repo / "memory" / "parser" / "lexer.md",
          "# Lexer\n\n- 2026-10-01: tokens come from [the lexer](../../src/lex.py).\n")
    write(repo / "memory" / "emit.md", "# Emit\n\n- 2026-10-01: `src/emit.py` writes the output.\n")
    write(repo / "memory" / "keep.md", "# Keep\n\n- 2026-10-01: `src/keep.py` stays; "
                                       "`src/never_there.py` was only planned.\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    (repo / "src" / "parser").mkdir()
    git(repo, "mv", "src/parse.py", "src/parser/main.py")
    git(repo, "commit", "-q", "-m", "move the parser")
    git(repo, "rm", "-q", "src/lex.py")
    git(repo, "commit", "-q", "-m", "drop the lexer")
    write(repo / "src" / "keep.py", "def keep():\n    return 2\n")
    git(repo, "commit", "-q", "-am", "change keep")
    return repo


def test_a_renamed_and_a_deleted_citation_are_marked_and_nothing_fresh(moved):
    history = git(moved, "log", "--format=%h %cs %s").split("\n")
    marks = marks_of(moved)
    assert [(m["file"], m["line"], m["path"], m["now"]) for m in marks] == [
        ("memory/parser/entry.md", 3, "src/parse.py", "src/parser/main.py"),
        ("memory/parser/lexer.md", 3, "src/lex.py", None)]
    assert "%s %s move the parser" % (marks[0]["commit"], marks[0]["date"]) in history
    assert "%s %s drop the lexer" % (marks[1]["commit"], marks[1]["date"]) in history
    assert SHARED.marks_lines(marks) == [
        "- memory/parser/entry.md:3 cites `src/parse.py`, renamed to `src/parser/main.py` in "
        "%s (%s)" % (marks[0]["commit"], marks[0]["date"]),
        "- memory/parser/lexer.md:3 cites `src/lex.py`, deleted in %s (%s)"
        % (marks[1]["commit"], marks[1]["date"])]


def test_a_line_dated_on_or_after_the_change_knew_of_it_whatever_its_words(moved):
    date = git(moved, "log", "-1", "--format=%cs").strip()
    write(moved / "memory" / "parser" / "entry.md",
          "# Entry\n\n- %s: the parser still lives in `src/parse.py`.\n" % date)
    write(moved / "memory" / "parser" / "lexer.md",
          "# Lexer\n\n- 2026-10-01: `src/lex.py` was removed in favour of nothing.\n")
    assert [m["path"] for m in marks_of(moved)] == ["src/lex.py"]


def test_only_what_the_format_states_as_true_now_is_marked(moved):
    """A mark tells the agent not to take a line as written: so only the lines the format
    states as true now are judged, the index's lines and dated facts. Prose, a record's entry
    (`**Impact:**` under a decision), or any line of a file named as a log or by its day may
    tell what held then, and a mark there would have history rewritten."""
    write(moved / "memory" / "MEMORY.md", "# Index\n- Parsing starts at `src/parse.py`.\n")
    write(moved / "memory" / "decisions.md",
          "# Decisions\n\n### Parser entry\n- **Impact:** `src/parse.py`, `src/lex.py`\n\n"
          "The lexer lived in `src/lex.py` until it went.\n")
    write(moved / "memory" / "sessions" / "20261002-103257-parser.md",
          "# Session\n\n- 2026-10-02: read `src/parse.py` and `src/lex.py`.\n")
    write(moved / "memory" / "setup_2026_10_02.md", "# Setup\n\n- 2026-10-02: `src/lex.py`.\n")
    marked = sorted((m["file"], m["path"]) for m in marks_of(moved))
    assert marked == [("memory/MEMORY.md", "src/parse.py"),
                      ("memory/parser/entry.md", "src/parse.py"),
                      ("memory/parser/lexer.md", "src/lex.py")]


def test_a_project_in_a_subfolder_of_the_repository_follows_its_own_paths(moved):
    app = moved / "app"
    write(app / "lib" / "core.py", "x = 1\n")
    write(app / "memory" / "MEMORY.md", "# Index\n")
    write(app / "memory" / "core.md", "# Core\n\n- 2026-10-01: `lib/core.py` holds it.\n")
    git(moved, "add", "-A")
    git(moved, "commit", "-q", "-m", "an app")
    git(moved, "mv", "app/lib/core.py", "app/lib/heart.py")
    git(moved, "commit", "-q", "-m", "rename")
    assert [(m["file"], m["path"], m["now"]) for m in marks_of(app)] == [
        ("memory/core.md", "lib/core.py", "lib/heart.py")]


def test_leftovers_are_marked_where_git_merges_by_union_and_markers_everywhere(moved):
    write(moved / "memory" / "retry.md", "# Retry\n\n- 2026-10-05: five times.\n- 2026-10-06: twice.\n")
    write(moved / "memory" / "keys.md", "# Keys\n<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> bob\n")
    found = [(m["file"], m["line"], m["kind"]) for m in marks_of(moved) if m["kind"] != "gone"]
    assert found == [("memory/keys.md", 2, "markers"), ("memory/keys.md", 4, "markers"),
                     ("memory/keys.md", 6, "markers"), ("memory/retry.md", 4, "versions")]
    git(moved, "rm", "-q", ".gitattributes")  # from the index too: git reads it there
    found = [(m["file"], m["kind"]) for m in marks_of(moved) if m["kind"] != "gone"]
    assert found == [("memory/keys.md", "markers")] * 3
    assert SHARED.marks_lines([m for m in marks_of(moved) if m["kind"] == "markers"]) == [
        "- memory/keys.md:2 conflict markers: a merge stopped here; keep what is true, delete "
        "the markers"]


def test_while_the_state_is_the_same_the_kept_marks_are_the_answer_and_nothing_is_read(moved):
    hooks = Hooks()
    first = hooks.marks(moved)
    assert hooks.calls and hooks.reads and hooks.looked
    done = lambda: (hooks.calls, hooks.reads, hooks.looked) == ([], [], [])
    del hooks.calls[:], hooks.reads[:], hooks.looked[:]
    assert hooks.marks(moved) == first and done()
    write(moved / "src" / "emit.py", "def emit():\n    return 2\n")  # code, not the memory
    assert hooks.marks(moved) == first and done()
    write(moved / "src" / "lex.py", "def lex():\n    return 3\n")  # a cited path back, untracked
    assert [m["path"] for m in hooks.marks(moved)] == ["src/parse.py"]
    os.unlink(str(moved / "src" / "lex.py"))
    write(moved / "memory" / "parser" / "lexer.md", "# Lexer\n\n- 2026-10-01: gone.\n")
    del hooks.reads[:]
    assert [m["path"] for m in hooks.marks(moved)] == ["src/parse.py"]
    assert [os.path.basename(path) for path in hooks.reads] == ["lexer.md"]
    write(moved / "memory" / "parser" / "lexer.md", "# Lexer\n\n- 2026-10-01: `src/lex.py`.\n")
    assert len(hooks.marks(moved)) == 2  # the same file changed again


def test_a_file_kept_is_not_read_again_nor_git_asked_again_what_it_said(moved):
    hooks = Hooks()
    first = hooks.marks(moved)
    for name in [name for name in hooks.cache if name.startswith("marks-")]:
        del hooks.cache[name]  # the state's entry gone: every file is looked at again
    del hooks.calls[:], hooks.reads[:]
    assert hooks.marks(moved) == first
    assert (hooks.calls, hooks.reads) == ([], [])


def test_a_cache_that_is_not_the_runs_own_costs_a_full_reading_and_nothing_else(moved):
    first = marks_of(moved)
    for garbage in (b"not marshal", ("state", "not a list"), [1, 2], {"files": []}, (1, 2)):
        hooks = Hooks()
        hooks.marks(moved)
        for name in hooks.cache:
            hooks.cache[name] = garbage
        assert hooks.marks(moved) == first


def test_a_file_the_read_rules_refuse_or_a_link_is_neither_read_nor_marked(moved, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Out\n\n- 2026-10-05: five.\n- 2026-10-06: two.\n", encoding="utf-8")
    os.symlink(str(outside), str(moved / "memory" / "linked.md"))
    write(moved / ".claude" / "settings.json",
          '{"permissions": {"deny": ["Read(./memory/parser/entry.md)"]}}')
    assert [m["file"] for m in marks_of(moved)] == ["memory/parser/lexer.md"]


def test_outside_git_or_with_the_memory_at_the_top_there_are_no_marks(moved, tmp_path):
    assert marks_of(tmp_path / "home") is None
    os.environ["MCP_MEMORY_INDEX"] = "MEMORY.md"
    try:
        assert marks_of(moved) is None
    finally:
        del os.environ["MCP_MEMORY_INDEX"]


# --- the format merges: a deletion sticks -------------------------------------------------------

def branch_edit(repo, branch, base_lines, edits):
    git(repo, "checkout", "-q", "-b", branch, "main")
    text = list(base_lines)
    for at, new in edits.items():
        text[at] = new
    write(repo / "memory" / "facts.md", "\n".join(text))
    git(repo, "commit", "-q", "-am", branch)


@pytest.mark.parametrize("seed", range(max(1, SEEDS // 4)))
def test_generated_corrections_and_deletions_merge_by_union_with_every_disagreement_marked(tmp_path, seed):
    """Two branches each correct or delete facts of one note; merged by union, a fact only one
    side changed takes that change, and every fact both changed differently lies within the
    lines a mark tells /dream to compare (where git merged neighbouring conflicts as one, the
    run of facts around the place the blocks touch)."""
    rng = random.Random(seed)
    (tmp_path / "home").mkdir()
    repo = make_repo(tmp_path / "project")
    write(repo / ".gitattributes", ATTRIBUTES)
    count = rng.randint(2, 7)
    base = ["# Facts", ""]
    for number in range(count):
        base += ["- 2026-10-01: fact %d is a." % number, ""]
    write(repo / "memory" / "facts.md", "\n".join(base))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    at = dict((number, 2 + 2 * number) for number in range(count))
    sides = []
    for branch in ("alice", "bob"):
        edits = {}
        for number in rng.sample(range(count), rng.randint(1, count)):
            edits[at[number]] = rng.choice((
                "- (deleted) 2026-10-01: fact %d is a." % number,
                "- 2026-10-0%d: fact %d is %s." % (2 if branch == "alice" else 3, number, branch)))
        branch_edit(repo, branch, base, edits)
        sides.append(edits)
        git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "alice")
    git(repo, "merge", "-q", "--no-edit", "bob")
    merged = (repo / "memory" / "facts.md").read_text(encoding="utf-8").split("\n")
    named, marked = set(), set()
    for mark in marks_of(repo):
        named.update((mark["first"], mark["line"]))
        marked.update(range(mark["start"], mark["end"] + 1))
    for number in range(count):
        changes = set(side[at[number]] for side in sides if at[number] in side)
        holding = [n for n, line in enumerate(merged, start=1) if "fact %d " % number in line]
        if len(changes) == 1:
            assert set(merged[n - 1] for n in holding) == changes
            assert len(holding) == 1 or "(deleted)" in list(changes)[0]
            assert not named & set(holding)
        elif len(changes) == 2:
            assert len(holding) == 2 and set(holding) <= marked, (merged, sides)
        else:
            assert [merged[n - 1] for n in holding] == [base[at[number]]]


# --- the marks in the injection -----------------------------------------------------------------

def marks_section(text):
    lines_ = text.split("\n")
    start = [n for n, line in enumerate(lines_) if line.startswith(MARKS)]
    if not start:
        return []
    end = start[0] + 1
    while end < len(lines_) and lines_[end].startswith("- "):
        end += 1
    return lines_[start[0]:end]


def test_session_start_shows_the_marks_before_the_memory_they_speak_of(moved):
    text = inject(moved)
    section = marks_section(text)
    assert section[0] == MARKS + "2 line(s) not to take as written (/dream settles them)"
    assert section[1].startswith("- memory/parser/entry.md:3 cites `src/parse.py`, renamed to "
                                 "`src/parser/main.py` in ")
    assert text.index(MARKS) < text.index("## Memory index")
    assert marks_section(inject(moved, stdin={"session_id": "s1", "source": "compact"})) == section


def test_the_first_marks_are_shown_and_a_command_lists_them_all(moved):
    for number in range(44):
        write(moved / "memory" / "facts" / ("n%02d.md" % number),
              "# N\n\n- 2026-10-01: `src/lex.py` is here.\n")
    section = marks_section(inject(moved))
    assert section[0].startswith(MARKS + "46 line(s)") and len(section) == 42
    assert section[-1].startswith("- and 6 more: `python3 ")  # the hooks' folder, then:
    assert section[-1].endswith("/session-start.py --marks` lists them all")
    listed = run_hook_marks(moved)
    assert len(listed) == 46 and listed[:40] == section[1:41]


def run_hook_marks(project):
    from conftest import InstalledHooks, clean_environment as environment
    env = environment(project.parent / "home")
    env["CLAUDE_PROJECT_DIR"] = str(project)
    done = subprocess.run([sys.executable, "-I", "-S", str(InstalledHooks.folder() / "session-start.py"),
                           "--marks"], capture_output=True, env=env, cwd=str(project))
    assert done.returncode == 0 and done.stderr == b""
    return done.stdout.decode("utf-8").splitlines()


def test_the_marks_survive_the_cut(moved):
    write(moved / "memory" / "MEMORY.md", "".join("- index line %d %s\n" % (n, "x" * 80)
                                                  for n in range(300)))
    write(moved / ".session-state.md", "".join("handoff line %d %s\n" % (n, "y" * 200)
                                               for n in range(40)))
    text = inject(moved)
    assert "[cut here: the injection limit" in text
    assert len(marks_section(text)) == 3


def test_the_account_cache_is_written_atomically_for_this_user_alone_never_through_a_link(moved, tmp_path):
    hooks = load_hook("stop-handoff.py")
    folder = hooks.code_cache_folder()
    if folder is None:
        pytest.skip("no cache folder the hooks trust on this platform")
    entry = os.path.join(folder, SHARED.cache_name("marks", str(moved)))
    victim = tmp_path / "victim"
    victim.write_text("untouched\n", encoding="utf-8")
    if os.path.lexists(entry):
        os.unlink(entry)
    os.symlink(str(victim), entry)
    assert len(marks_section(inject(moved))) == 3
    info = os.lstat(entry)
    assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
    assert victim.read_text(encoding="utf-8") == "untouched\n"


# --- every note findable ------------------------------------------------------------------------

def many_folders(project, folders, notes):
    for number in range(notes):
        write(project / "memory" / ("topic-%03d" % (number % folders)) /
              ("a-rather-long-note-name-%05d.md" % number), "# N\n")


@pytest.mark.parametrize("folders,notes", [(100, 5000), (30, 1000)])
def test_at_any_size_every_folder_keeps_its_line_and_nothing_is_cut(project, folders, notes):
    many_folders(project, folders, notes)
    text = inject(project)
    for number in range(folders):
        count = len(range(number, notes, folders))
        assert "\n- [topic-%03d/](topic-%03d/) — %d notes" % (number, number, count) in text
    assert "[cut here" not in text and "over the harness's limit" not in text


def test_past_what_fits_the_cut_names_a_command_that_lists_every_note(project):
    many_folders(project, 400, 400)
    text = inject(project)
    notice = [line for line in text.split("\n") if line.startswith("[cut here")]
    assert notice == ["[cut here: the injection limit is 10000 characters; `ls memory/*/` lists "
                      "every note]"]
    assert "read memory/MEMORY.md in full" not in text


def test_a_folder_added_or_emptied_shows_at_the_next_start_whatever_the_cache(project):
    many_folders(project, 3, 6)
    assert "topic-000/](topic-000/) — 2 notes" in inject(project)
    past = time.time() - 60
    for folder in (project / "memory").iterdir():
        if folder.is_dir():
            os.utime(str(folder), (past, past))
    inject(project)  # now kept in the account's cache
    write(project / "memory" / "topic-000" / "z-new.md", "# New\n")
    assert "topic-000/](topic-000/) — 3 notes" in inject(project)
    for note in (project / "memory" / "topic-001").iterdir():
        note.unlink()
    assert "topic-001/" not in inject(project)


# --- what --check says session start shows ------------------------------------------------------

def test_check_says_which_findings_session_starts_marks_show(moved):
    from test_memory_health import HEALTH
    write(moved / "memory" / "retry.md", "# Retry\n\n- 2026-10-05: five times.\n- 2026-10-06: twice.\n")
    write(moved / "memory" / "bare.md", "# Bare\n\n- 2026-10-01: `lex.py` held the lexer.\n")
    git(moved, "add", "-A")
    git(moved, "commit", "-q", "-m", "more memory")
    asked = {"MCP_HEALTH_CHECKS": "missing-path"}  # a check that runs when asked
    findings = HEALTH.memory_health(str(moved), asked)["findings"]
    shown = dict(((f["file"], f["check"]), f["at_session_start"]) for f in findings)
    assert shown[("memory/retry.md", "diverged-fact")] is True
    assert shown[("memory/parser/entry.md", "missing-path")] is True
    assert shown[("memory/bare.md", "missing-path")] is False  # a bare name: --check's alone
    without = HEALTH.memory_health(str(moved), asked, preview=False)["findings"]
    assert not [f for f in without if f["at_session_start"] and f["check"] == "missing-path"]
