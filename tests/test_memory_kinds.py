"""Memory health on what a memory file is before any check reads it: a note, a record, a rejected
path, a statement.

Each check reads the memory through a few definitions: which file is a note, which is a record
of its day, which cited path the line claims exists, which line says anything at all. A check
that gets one of them wrong is wrong on every memory shaped that way, so each definition is
pinned here on a memory built the way public memories are kept: a folder's rule file beside
the notes, a file of entries each dated on its own `date:` line, the same step under two flows,
a path named only to be rejected, and files that hold no fact yet (an empty journal, an unfilled
form, a placeholder line).
"""
from test_memory_citations import delete, rename
from test_memory_health import (HEALTH, commit, env, findings, health, index, repo,  # noqa: F401
                                with_advice, write)

LATER = "2026-11-03T09:00:00+00:00"


def checks_on(report, shown):
    return sorted(f["check"] for f in report["findings"] if f["file"] == shown)


# --- what a note is: not the folder's rule file ----------------------------------------------

def test_a_folder_rule_file_beside_the_index_or_in_a_topic_folder_is_not_a_note(repo, env):
    """Claude Code loads `memory/CLAUDE.md` whenever the agent works in `memory/` (and Codex CLI
    an `AGENTS.md`, Gemini CLI a `GEMINI.md`): it is the folder's rules, not a topic file, so it is
    neither an orphan (a pointer would not make it apply) nor undated."""
    rules = "# Memory rules\n\nKeep one fact a line. Archive past 500 lines.\n"
    write(repo / "memory" / "CLAUDE.md", rules)
    write(repo / "memory" / "AGENTS.md", rules)
    write(repo / "memory" / "deploy" / "GEMINI.md", rules)
    write(repo / "memory" / "deploy" / "rollout.md", "# Rollout\n\n- 2026-10-01: canary first.\n")
    commit(repo, "memory rules")
    report = health(repo, with_advice(env))
    for shown in ("memory/CLAUDE.md", "memory/AGENTS.md", "memory/deploy/GEMINI.md"):
        assert checks_on(report, shown) == [], report["findings"]
    assert report["topic_files"] == 2 and report["notes"] == 1


def test_a_topic_file_that_is_not_a_rule_file_is_still_an_orphan(repo, env):
    write(repo / "memory" / "claude-notes.md", "# Claude notes\n\n- 2026-10-01: a fact.\n")
    commit(repo, "a topic")
    assert checks_on(health(repo, env), "memory/claude-notes.md") == ["orphan"]


# --- what a record is: not a file whose entries each carry their own date --------------------

ENTRIES = """\
# Decisions

## The queue
date: 2026-09-01
The consumer is `src/worker.py`.

## Retries
date: 2026-10-20
Retries are counted in `src/worker.py` and backed off in `src/backoff.py`.
"""


def test_a_file_whose_entries_each_carry_a_date_is_a_file_of_dated_facts(repo, env):
    """Two `date:` lines are two entries dated apart, not a document dated once at its head: its
    paths are checked, each fact by its own entry's date, and it is not advised to move to
    the logs."""
    write(repo / "src" / "backoff.py", "DELAY = 2\n")
    write(repo / "memory" / "decisions.md", ENTRIES)
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Decisions](decisions.md) — the queue, the retries\n")
    commit(repo, "decisions")
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "five retries", "2026-10-05T09:00:00+00:00")
    delete(repo, "src/backoff.py")
    report = health(repo, with_advice(env))
    assert report["session_logs"] == [] and findings(report, "session-log") == []
    mine = [f for f in report["findings"] if f["file"] == "memory/decisions.md"]
    assert sorted((f["check"], f["lines"], f["message"].split("`")[1]) for f in mine) == [
        ("missing-path", [9], "src/backoff.py"),
        ("possibly-stale", [5], "src/worker.py")]  # the retries' entry is dated after the change


def test_a_document_dated_once_at_its_head_is_still_a_record(repo, env):
    """A date under the title, before the first section, dates the document (minutes, a
    review); a date inside a section dates that section's entry, however many entries the
    file holds so far: one decision recorded is a file of entries, as two are."""
    head = "# Review\n\ndate: 2026-09-01\n\n## The queue\nThe consumer is `src/worker.py`.\n"
    write(repo / "memory" / "review.md", head)
    write(repo / "memory" / "decisions.md", ENTRIES.replace("date: 2026-10-20\n", ""))
    commit(repo, "a review and one decision")
    delete(repo, "src/worker.py")
    report = health(repo, with_advice(env))
    assert [log["file"] for log in report["session_logs"]] == ["memory/review.md"]
    assert checks_on(report, "memory/review.md") == ["session-log"]
    assert "missing-path" in checks_on(report, "memory/decisions.md")


# --- what a rejected path is: named only to be turned down -----------------------------------

REJECTING = """\
# Where things go

- 2026-10-01: session notes go under `docs/journal/`, not `docs/logs/`.
- 2026-10-01: 会话日志放在 `docs/journal/`，而不是 `docs/logs/`。
- 2026-10-01: write them to `docs/journal/` rather than `docs/logs/`, never to `tmp/`.
- 2026-10-01: do not edit `docs/logs/today.md` by hand.
- 2026-10-01: the old notes are in `docs/logs/`.
"""


def test_a_path_named_only_to_be_rejected_is_not_missing(repo, env):
    """`under `journal/`, not `logs/``: the line says the path is not the place, so a renamed
    `logs/` proves nothing stale there; a line that still sends the reader to the old path
    (`do not edit `docs/logs/today.md``, `the old notes are in `docs/logs/``) is stale."""
    write(repo / "docs" / "logs" / "today.md", "- a note\n")
    commit(repo, "the logs folder")
    rename(repo, "docs/logs/today.md", "docs/journal/today.md")
    if (repo / "docs" / "logs").is_dir():
        (repo / "docs" / "logs").rmdir()  # a clone has no empty folder
    write(repo / "memory" / "places.md", REJECTING)
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Places](places.md) — where things go\n")
    commit(repo, "where things go", "2026-10-01T12:00:00+00:00")
    found = findings(health(repo, env), "missing-path")
    assert [f["lines"] for f in found] == [[6], [7]], found
    assert "docs/journal" in found[1]["repair"]


# --- what a statement is: files and lines that hold no fact ----------------------------------

def test_placeholder_lines_in_the_index_are_not_content(repo, env):
    write(index(repo), index(repo).read_text(encoding="utf-8") + (
        "\n## Procedures\n_(none yet)_\n\n## Lessons\n[To be filled from lessons learned]\n"
        "- (filled in by experience)\n- TBD\n\n## Known traps\n- The worker leaks a socket.\n"))
    [found] = findings(health(repo, env), "not-a-pointer")
    assert "known traps" in found["message"] and found["lines"] == [23]


SHELLS = {
    # an empty journal: what it is for, and a slot for entries
    "notebook.md": "# Notebook\n\nOne entry a session, newest first. Kept by the save command.\n\n"
                  "## Entries\n\n(empty — will be populated after the first session)\n",
    # an unfilled form, in two languages
    "bug-template.md": "# Bug template\n\n- ID:\n- Symptom:\n- **Cause:**\n- Fix:\n",
    "变更记录模板.md": "# 变更记录模板\n\n- 日期：\n- 模块：\n- 变更摘要：\n",
    # a tracker whose only row is a placeholder, with its how-to
    "gaps.md": "# Capability gaps\n\nAn automatic backlog.\n\n## How to use\n\n"
               "- Read it before planning.\n\n## Gaps\n\n| Date | Need | Status |\n"
               "|------|------|--------|\n| — | — | — |\n",
}


def test_files_that_hold_no_fact_are_neither_undated_nor_orphans(repo, env):
    """An empty journal, an unfilled form and a tracker with a placeholder row state nothing:
    no age to give, nothing for a session to find. A filled form states its facts."""
    for name, text in SHELLS.items():
        write(repo / "memory" / name, text)
    write(repo / "memory" / "bug-7.md", "# Bug 7\n\n- ID: 7\n- Symptom: the digest runs twice\n")
    commit(repo, "shells and a bug")
    report = health(repo, with_advice(env))
    flagged = sorted(set(f["file"] for f in report["findings"]))
    assert flagged == ["memory/bug-7.md"], report["findings"]
    assert checks_on(report, "memory/bug-7.md") == ["missing-date", "orphan"]


ARCHIVE = "# Permission log — archive\n\n" + "".join(
    "- 2026-03-24 16:%02d | ASK | unknown\n" % minute for minute in (36, 36, 36, 37, 37)) + \
    "- see `src/worker.py` for the hook\n"


def test_records_named_by_a_compact_date_or_as_an_archive_or_dated_in_their_title(repo, env):
    """A task card named `20260622-cleanup.md`, a `*-archive.md` of generated entries (which
    repeat by design) and a report whose title holds its day are records of their day: their
    paths are history, their repeats are no merge's."""
    write(repo / "memory" / "20260622-cleanup.md", "# Cleanup\n\nWork only in "
                                                   "`/Users/rhett/app`; removed `src/worker.py`.\n")
    write(repo / "memory" / "permission-log-archive.md", ARCHIVE)
    write(repo / "memory" / "audit.md", "# Dependency audit — 2026-10-01\n\n- `src/worker.py` "
                                        "pins nothing.\n")
    commit(repo, "records", "2026-10-01T12:00:00+00:00")
    delete(repo, "src/worker.py")
    report = health(repo, with_advice(env))
    assert sorted(log["file"] for log in report["session_logs"]) == [
        "memory/20260622-cleanup.md", "memory/audit.md", "memory/permission-log-archive.md"]
    for shown in ("memory/20260622-cleanup.md", "memory/audit.md", "memory/permission-log-archive.md"):
        assert [c for c in checks_on(report, shown) if c != "session-log"] == [], report["findings"]


def test_a_home_path_ends_at_cjk_punctuation_and_one_leading_to_a_placeholder_is_a_pattern(repo, env):
    write(repo / "memory" / "where.md", "# Where\n\n- 2026-10-01: 一切改动落在 /Users/rhett/app，不碰 worktree\n"
                                        "- 2026-10-01: auto memory lives in `C:\\Users\\stock\\.claude\\"
                                        "projects\\<path>\\memory\\`\n")
    commit(repo, "where")
    found = findings(health(repo, env), "machine-local-path")
    assert [f["message"].split("`")[1] for f in found] == ["/Users/rhett/app"]


def test_how_to_use_the_index_in_any_language_and_in_sub_sections_is_not_content(repo, env):
    write(index(repo), index(repo).read_text(encoding="utf-8") + (
        "\n## 使用說明\n\n### 新增記憶體\n1. 在 `memory/` 目錄下創建新檔案\n2. 更新本索引檔案\n\n"
        "## Usage\n\n### Adding a memory\n- Create the file, then a pointer here.\n\n"
        "## Known traps\n- The worker leaks a socket.\n"))
    [found] = findings(health(repo, env), "not-a-pointer")
    assert "known traps" in found["message"], found


def test_a_note_named_by_its_day_is_that_days_record_whatever_its_type(repo, env):
    """Claude Code files a session's summary as `type: project`, and a snapshot of a setup as
    `type: reference`: the type says what the note is about. A name that carries its day says
    what it holds: what was so on that day (`project_2026-08-15_build.md` is the build as it
    stood then, not a claim kept current; its author files the next state under the next day).
    Its paths are history, like a session's."""
    head = "---\nname: {0}\ndescription: {0}\ntype: project\n---\n"
    write(repo / "memory" / "project_session_2026-08-15.md", head.format("session") +
          "- `src/worker.py` now retries.\n")
    write(repo / "memory" / "project_2026-08-15_build.md", head.format("build") +
          "The worker is `src/worker.py`.\n")
    commit(repo, "two project notes")
    delete(repo, "src/worker.py")
    report = health(repo, env)
    assert [log["file"] for log in report["session_logs"]] == [
        "memory/project_2026-08-15_build.md", "memory/project_session_2026-08-15.md"]
    assert [f["file"] for f in findings(report, "missing-path")] == ["memory/retry.md"]


def test_an_image_accounts_home_and_a_path_into_a_bracketed_name_are_no_ones_machine(repo, env):
    write(repo / "memory" / "devcontainer.md", "# Devcontainer\n\n- 2026-10-01: history goes to "
          "`/home/node/.bash_history`.\n- 2026-10-01: logs in `~/ws/app/change-logs/LOG-[branch].md`.\n"
          "- 2026-10-01: the notes vault is `/home/alice/vault/`.\n")
    commit(repo, "devcontainer")
    found = findings(health(repo, env), "machine-local-path")
    assert [f["message"].split("`")[1] for f in found] == ["/home/alice/vault/"]


def test_a_record_among_the_topic_files_is_advised_only_when_asked(repo, env):
    """Most records kept beside the index are a decisions log kept there on purpose: the advice
    to move them is opt-in; reading them as history is not."""
    write(repo / "memory" / "2026-08-15.md", "# 2026-08-15\n\n- removed `src/worker.py`.\n")
    commit(repo, "a day's log")
    report = health(repo, env)
    assert findings(report, "session-log") == [] and report["session_logs"] != []
    assert findings(health(repo, with_advice(env)), "session-log") != []
