"""memory_verdicts.py: what the memory cannot vouch for, as facts the files and git show.

The rules (spec §2.2.8, §4.5.3, §4.5.7, §9.11): a fact is corrected or deleted where it stands,
facts are kept a blank line apart, so in a file git merges by union two facts that touch are two
branches' versions of one fact, and a `(deleted)` line touching another line is a deletion
against a change; a note with two titles is two notes of one name; conflict markers are a merge
nobody finished; a cited path that is gone, and that git's history shows deleted or renamed
after the fact's date, is stale, with the new path when git followed a rename. Every verdict is
checked in its healthy and its failing state, on known cases and on generated ones (the seeds
run here, more with MCP_VERDICT_SEEDS), and with git merging real branches."""
import os
import random
import stat
import subprocess

import pytest

from conftest import ROOT, clean_environment, make_repo
from test_memory_health import HEALTH

VERDICTS = HEALTH.VERDICTS
SEEDS = int(os.environ.get("MCP_VERDICT_SEEDS", "40"))
with open(os.path.join(ROOT, "templates", "gitattributes"), encoding="utf-8") as template:
    ATTRIBUTES = template.read()


def lines(text):
    return text.split("\n")


def kinds(text, union=True, note=True):
    return [item[:2] for item in VERDICTS.merge_leftovers(lines(text), union, note)]


# --- leftovers, known cases ---------------------------------------------------------------------

def test_facts_a_blank_line_apart_and_a_deletion_in_place_leave_nothing():
    text = ("# Caching\n\n- 2026-10-01: keys carry the tenant.\n\n"
            "- (deleted) 2026-10-01: the TTL is 900 s.\n\n- 2026-10-02: eviction is LRU.\n")
    assert kinds(text) == []


def test_two_facts_that_touch_are_two_versions_named_at_the_second():
    text = "# Retry\n\n- 2026-10-05: retries five times.\n- 2026-10-06: retries twice.\n"
    assert VERDICTS.merge_leftovers(lines(text)) == [(4, "versions", 3, 3, 4)]


def test_a_deletion_touching_a_fact_or_a_paragraph_is_deleted_against_changed():
    fact = "# Retry\n\n- (deleted) 2026-10-01: retries three times.\n- 2026-10-06: retries twice.\n"
    prose = "# Check the lock\n\n- (deleted) 2026-10-01: rule.\n**Why:** it broke.\n"
    assert kinds(fact) == [(4, "deleted-changed")]
    assert kinds(prose) == [(4, "deleted-changed")]


def test_a_deletion_under_a_title_is_nothing_to_mark_and_two_that_touch_are_versions():
    assert kinds("# Retry\n- (deleted) 2026-10-01: three.\n") == []
    assert kinds("# Retry\n\n- (deleted) 2026-10-01: three.\n- (deleted) 2026-10-02: five.\n") \
        == [(4, "versions")]  # two versions deleted, or where two branches' blocks meet


def test_markers_anywhere_and_a_lone_underline_only_beside_them():
    conflict = "# Keys\n<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> bob\n"
    assert kinds(conflict, union=False) == [(2, "markers"), (4, "markers"), (6, "markers")]
    assert kinds("Deployment\n=======\n\n- 2026-10-01: one.\n", union=False) == []
    assert kinds("# Git\n\n```text\n<<<<<<< HEAD\n=======\n>>>>>>> b\n```\n") == []


def test_a_second_title_is_two_notes_in_a_note_only_and_never_in_a_sample():
    two = "# Dev server binds IPv6\n\n- 2026-10-02: a.\n# Dev server port\n\n- 2026-10-03: b.\n"
    assert kinds(two) == [(4, "two-notes")]
    assert kinds(two, note=False) == []
    sample = "# Template\n\n`markdown\n# A note\n`\n"
    assert kinds(sample) == []


def test_without_union_only_markers_count():
    assert kinds("# R\n\n- 2026-10-05: five.\n- 2026-10-06: two.\n", union=False) == []


def test_a_stamped_file_or_a_log_keeps_its_facts_together():
    stamped = ["# D", "<!-- Last updated: 2026-10-02 -->", "- 2026-10-01: one.", "- 2026-10-02: two."]
    assert not VERDICTS.keeps_facts_apart("decisions.md", stamped)
    assert not VERDICTS.keeps_facts_apart("logs/parser-session-log.md", ["# S"])
    assert VERDICTS.keeps_facts_apart("gotchas/dev-server.md", ["# S"])


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
    assert VERDICTS.merge_leftovers(note, union=True, note=True) == []
    facts = [n for n, line in enumerate(note) if VERDICTS.is_fact_line(line)
             and n not in [m - 1 for m in VERDICTS.fenced_lines(note)]]
    if not facts:
        return
    at = rng.choice(facts)
    deleted = bool(VERDICTS.TOMBSTONE_LINE.match(note[at]))
    kind, extra, line = rng.choice((
        ("deleted-changed" if deleted else "versions", ["- 2026-11-02: another version."], at + 2),
        ("deleted-changed", ["- 2026-11-02: a version kept." if deleted else
                             "- (deleted) 2026-10-01: the old version."], at + 2),
        ("markers", ["<<<<<<< HEAD", "=======", ">>>>>>> bob"], at + 2),
        ("two-notes", ["", "# Another note", ""], at + 3)))
    changed = note[:at + 1] + extra + note[at + 1:]
    found = VERDICTS.merge_leftovers(changed, union=True, note=True)
    assert (line, kind) in [item[:2] for item in found], (changed, found)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_any_text_gives_verdicts_without_an_exception(seed):
    rng = random.Random(seed)
    pieces = ["- (deleted)", "- 2026-10-01: x", "```", "~~~", "# t", "`", "<<<<<<< a", "=======",
              "](../../a/b.py)", "`src/a.py:3`", "\ufeff", "\r", "\x00", "[x](", "..", "\t"]
    text = "".join(rng.choice(pieces) + rng.choice(("", "\n", " ")) for _ in range(60))
    VERDICTS.merge_leftovers(lines(text), union=True, note=True)
    VERDICTS.cited_paths(lines(text), "memory/gotchas")


# --- citations ----------------------------------------------------------------------------------

def test_a_cited_path_is_a_code_span_with_a_folder_or_a_relative_link():
    text = ("# Parser\n\n- 2026-10-01: the parser is `src/parse.py:42`.\n\n"
            "- 2026-10-02: run `python3 -m pytest tests/test_parse.py -q`.\n\n"
            "- 2026-10-03: see [the lexer](../../src/lex.py#L3).\n\n"
            "- 2026-10-04: `parse.py` alone is a bare name; `origin/main` is a branch.\n\n"
            "```\n`src/in_a_sample.py`\n```\n"
            "- 2026-10-05: [out](../../../elsewhere.py) and [web](https://x.org/a.py).\n")
    assert VERDICTS.cited_paths(lines(text), "memory/gotchas") == [
        (3, "src/parse.py", "2026-10-01"), (5, "tests/test_parse.py", "2026-10-02"),
        (7, "src/lex.py", "2026-10-03")]


def test_a_line_that_says_its_path_changed_cites_nothing_stale():
    for line in ("- 2026-10-01: `src/old.py` was removed in favour of `src/new.py`.",
                 "- 2026-10-01: `src/old.py` no longer exists.",
                 "- 2026-10-01: TODO: delete `src/old.py`.",
                 "- 2026-10-01: `src/old.py` used to hold the parser."):
        assert VERDICTS.cited_paths([line], "memory") == [], line


def test_what_became_of_a_path_follows_renames_and_folders():
    commit = ("abc1234", "2026-11-02", "move")
    later = ("def5678", "2026-11-09", "move again")
    renamed = {"a.py": ("b.py", commit), "b.py": ("c.py", later),
               "old/x.py": ("new/x.py", commit), "old/y.py": ("new/y.py", commit)}
    there = {"c.py", "new"}
    exists = there.__contains__
    assert VERDICTS.fate_of("a.py", renamed, {}, exists) == ("c.py", later)
    assert VERDICTS.fate_of("old", renamed, {}, exists) == ("new", commit)
    assert VERDICTS.fate_of("gone.py", renamed, {"gone.py": commit}, exists) == (None, commit)
    assert VERDICTS.fate_of("never.py", renamed, {}, exists) is None


# --- marks on a repository ------------------------------------------------------------------------

def git(repo, *args):
    done = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True,
                          env=clean_environment(repo.parent / "home"))
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def runner(repo, calls=None):
    def run(*args):
        if calls is not None:
            calls.append(args[0])
        code, out = HEALTH.GIT.git_bytes(str(repo), *args)
        return out if code == 0 else None
    return run


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


def marks_of(repo, cache=None, calls=None):
    return VERDICTS.memory_marks(str(repo), str(repo / "memory"), runner(repo, calls), cache)


def test_a_renamed_and_a_deleted_citation_are_marked_and_nothing_fresh(moved):
    head = git(moved, "log", "--format=%h %cs %s").split("\n")
    marks = marks_of(moved)
    assert [(m["file"], m["line"], m["path"], m["now"]) for m in marks] == [
        ("memory/parser/entry.md", 3, "src/parse.py", "src/parser/main.py"),
        ("memory/parser/lexer.md", 3, "src/lex.py", None)]
    assert "%s %s move the parser" % (marks[0]["commit"], marks[0]["date"]) in head
    assert "%s %s drop the lexer" % (marks[1]["commit"], marks[1]["date"]) in head
    assert VERDICTS.format_marks(marks) == [
        "## Memory marks — 2 line(s) not to take as written (/dream settles them)",
        "- memory/parser/entry.md:3 cites `src/parse.py`, renamed to `src/parser/main.py` in "
        "%s (%s)" % (marks[0]["commit"], marks[0]["date"]),
        "- memory/parser/lexer.md:3 cites `src/lex.py`, deleted in %s (%s)"
        % (marks[1]["commit"], marks[1]["date"])]


def test_a_fact_dated_on_or_after_the_change_knew_of_it(moved):
    date = git(moved, "log", "-1", "--format=%cs").strip()
    write(moved / "memory" / "parser" / "entry.md",
          "# Entry\n\n- %s: the old `src/parse.py` name appears in logs.\n" % date)
    assert [m["path"] for m in marks_of(moved)] == ["src/lex.py"]


def test_the_cache_spares_every_read_and_git_call_until_a_file_changes(moved, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    first = marks_of(moved, str(cache))
    [kept] = os.listdir(str(cache))
    assert stat.S_IMODE(os.stat(str(cache / kept)).st_mode) == 0o600
    calls, reads = [], []
    reading = VERDICTS.file_verdicts
    VERDICTS.file_verdicts = lambda *args: reads.append(args[1]) or reading(*args)
    try:
        assert marks_of(moved, str(cache), calls) == first
        assert (reads, calls) == ([], ["rev-parse"])
        write(moved / "memory" / "parser" / "lexer.md", "# Lexer\n\n- 2026-10-01: gone.\n")
        assert [m["path"] for m in marks_of(moved, str(cache), calls)] == ["src/parse.py"]
        assert reads == ["parser/lexer.md"]
    finally:
        VERDICTS.file_verdicts = reading


def test_a_cache_that_is_not_the_runs_own_costs_a_full_reading_and_nothing_else(moved, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    first = marks_of(moved, str(cache))
    [kept] = os.listdir(str(cache))
    for garbage in (b"not json", b"[1, 2]", b'{"version": 1, "files": [], "fates": {}}'):
        (cache / kept).write_bytes(garbage)
        assert marks_of(moved, str(cache)) == first


def test_leftovers_are_marked_where_git_merges_by_union_and_markers_everywhere(moved):
    touching = "# Retry\n\n- 2026-10-05: five times.\n- 2026-10-06: twice.\n"
    write(moved / "memory" / "retry.md", touching)
    write(moved / "memory" / "keys.md", "# Keys\n<<<<<<< HEAD\n- a\n=======\n- b\n>>>>>>> bob\n")
    found = [(m["file"], m["line"], m["kind"]) for m in marks_of(moved) if m["kind"] != "gone"]
    assert found == [("memory/keys.md", 2, "markers"), ("memory/keys.md", 4, "markers"),
                     ("memory/keys.md", 6, "markers"), ("memory/retry.md", 4, "versions")]
    git(moved, "rm", "-q", ".gitattributes")  # from the index too: git reads it there
    found = [(m["file"], m["kind"]) for m in marks_of(moved) if m["kind"] != "gone"]
    assert found == [("memory/keys.md", "markers")] * 3
    assert VERDICTS.format_marks([m for m in marks_of(moved) if m["kind"] == "markers"])[1] == \
        "- memory/keys.md:2 conflict markers: a merge stopped here; keep what is true, delete the markers"


def test_the_injection_lines_are_capped_with_a_count_of_the_rest():
    marks = [{"file": "memory/n%d.md" % n, "line": 4, "kind": "versions", "first": 3,
              "start": 3, "end": 4 + 2 * (n % 2)} for n in range(30)]
    shown = VERDICTS.format_marks(marks, at_most=20)
    assert len(shown) == 22 and shown[0].startswith("## Memory marks — 30 line(s)")
    assert shown[-1] == "- and 10 more: /dream finds them with the rest"
    assert shown[1] == ("- memory/n0.md:4 two versions of one fact (lines 3-4), both kept by a "
                        "merge: keep the true one")
    assert shown[2] == ("- memory/n1.md:4 two facts touch (lines 3-4): a merge put one branch's "
                        "versions of lines 3-6 after the other's; keep one version of each fact")
    assert max(len(line) for line in shown) <= 160


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
    """Two branches each correct or delete facts of one note, the team format's way; merged by
    union, a fact only one side changed takes that change (a deletion stays deleted), and every
    fact both changed differently is within the lines a mark tells /dream to compare. Git merges
    conflicts three lines apart or less as one, so two branches that changed neighbouring facts
    leave one block of versions after the other: the mark names the run of facts around the
    place the blocks touch."""
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
        marked.update(range(mark["start"], mark["end"] + 1))  # the lines /dream is to compare
    for number in range(count):
        changes = set(side[at[number]] for side in sides if at[number] in side)
        holding = [n for n, line in enumerate(merged, start=1) if "fact %d " % number in line]
        if len(changes) == 1:
            # taken, a deletion too; two branches' same deletion may stay twice, deleted either way
            assert set(merged[n - 1] for n in holding) == changes
            assert len(holding) == 1 or "(deleted)" in list(changes)[0]
            assert not named & set(holding)
        elif len(changes) == 2:
            assert len(holding) == 2 and set(holding) <= marked, (merged, sides)
        else:
            assert [merged[n - 1] for n in holding] == [base[at[number]]]


def test_a_fact_taken_out_comes_back_silently_against_a_correction_and_a_marked_one_does_not(tmp_path):
    """The class the format closes: the union keeps what either side has, and a line taken out
    has nothing, so the other branch's version returns with no sign of the deletion."""
    (tmp_path / "home").mkdir()
    repo = make_repo(tmp_path / "project")
    write(repo / ".gitattributes", ATTRIBUTES)
    base = ["# Facts", "", "- 2026-10-01: the cache is in-process.", "",
            "- 2026-10-01: releases are cut from main.", ""]
    write(repo / "memory" / "facts.md", "\n".join(base))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    corrected = "- 2026-10-03: the cache is Redis."
    for deletion, expected in ((None, [corrected]),
                               ("- (deleted) 2026-10-01: the cache is in-process.", None)):
        git(repo, "checkout", "-q", "-B", "alice", "main")
        text = base[:2] + base[4:] if deletion is None else base[:2] + [deletion] + base[3:]
        write(repo / "memory" / "facts.md", "\n".join(text))
        git(repo, "commit", "-q", "-am", "alice deletes")
        branch_edit(repo, "bob-%s" % (deletion is None), base, {2: corrected})
        git(repo, "checkout", "-q", "alice")
        git(repo, "merge", "-q", "--no-edit", "bob-%s" % (deletion is None))
        merged = (repo / "memory" / "facts.md").read_text(encoding="utf-8")
        facts = [line for line in merged.split("\n") if "cache" in line]
        if expected:
            assert facts == expected and marks_of(repo) == []  # back, and nothing says so
        else:
            assert facts == [deletion, corrected]
            assert [m["kind"] for m in marks_of(repo)] == ["deleted-changed"]


def test_a_file_the_callers_rules_refuse_or_a_link_is_neither_read_nor_marked(moved, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Out\n\n- 2026-10-05: five.\n- 2026-10-06: two.\n", encoding="utf-8")
    os.symlink(str(outside), str(moved / "memory" / "linked.md"))
    refused = str(moved / "memory" / "parser" / "entry.md")
    marks = VERDICTS.memory_marks(str(moved), str(moved / "memory"), runner(moved),
                                  may_read=lambda path: path != refused)
    assert [m["file"] for m in marks] == ["memory/parser/lexer.md"]


def test_a_record_of_its_day_the_indexs_links_and_a_note_named_by_a_note_are_no_stale_citation(moved):
    write(moved / "memory" / "2026-10-01.md", "# Session\n\n- 2026-10-01: edited `src/parse.py`.\n")
    write(moved / "memory" / "findings" / "audit-2026-10.md", "# Audit\n\n- 2026-10-01: `src/lex.py`.\n")
    write(moved / "memory" / "MEMORY.md", "# Index\n\n- [Parser](../src/parse.py) — where it starts\n")
    write(moved / "memory" / "old.md", "# Old\n\n- 2026-10-01: x.\n")
    git(moved, "add", "-A")
    git(moved, "commit", "-q", "-m", "memory")
    git(moved, "rm", "-q", "memory/old.md")
    git(moved, "commit", "-q", "-m", "drop a note")
    write(moved / "memory" / "keep.md", "# Keep\n\n- 2026-10-01: see `memory/old.md`.\n")
    assert [(m["file"], m["path"]) for m in marks_of(moved)] == [
        ("memory/parser/entry.md", "src/parse.py"), ("memory/parser/lexer.md", "src/lex.py")]


def test_while_the_state_is_the_same_the_kept_marks_are_the_answer_and_no_file_is_looked_at(moved, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    state = git(moved, "rev-parse", "HEAD") + git(moved, "status", "--porcelain")
    first = VERDICTS.memory_marks(str(moved), str(moved / "memory"), runner(moved), str(cache),
                                  state=state)
    calls, looked = [], []
    listing = VERDICTS.memory_entries
    VERDICTS.memory_entries = lambda folder: looked.append(folder) or listing(folder)
    try:
        again = VERDICTS.memory_marks(str(moved), str(moved / "memory"), runner(moved, calls),
                                      str(cache), state=state)
        assert (again, calls, looked) == (first, [], [])
        write(moved / "memory" / "parser" / "lexer.md", "# Lexer\n\n- 2026-10-01: gone.\n")
        state = git(moved, "rev-parse", "HEAD") + git(moved, "status", "--porcelain")
        changed = VERDICTS.memory_marks(str(moved), str(moved / "memory"), runner(moved),
                                        str(cache), state=state)
        assert [m["path"] for m in changed] == ["src/parse.py"] and len(looked) == 1
    finally:
        VERDICTS.memory_entries = listing
