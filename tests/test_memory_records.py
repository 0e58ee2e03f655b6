"""Memory health on what is history among the memory's files: a dated snapshot, a research note's
proposals, what a tool generated, and which of them an index must lead to.

A record (spec §9.4.5) is true of its day for good: its paths are not checked against git, and
it needs a pointer only where the index keeps pointers to records of its kind. Each case is
built the way public memories keep them: a setup described "as of" a day under a Claude Code
`type: reference`, named with its date in underscores; a research note whose table says how a
pattern would be implemented; a lint report, an index and an activity log that a tool or a hook
writes at each run; a template for agent briefings. Each is seen to stay silent here and, in
the same repository, the same path cited as a claim is seen to fire.
"""
import pytest

from test_memory_citations import delete, rename
from test_memory_health import (HEALTH, by_default, commit, env, findings, health, index,  # noqa: F401
                                repo, with_advice, write)


def on(report, check, shown):
    return [f for f in findings(report, check) if f["file"] == shown]


def gone_after_writing(repo, env, name, text, claim="memory/claim.md"):
    """The memory holds `name` and a claim citing the same path; the path is then deleted."""
    write(repo / "tools" / "gate.sh", "#!/bin/sh\n")
    write(repo / "memory" / name, text)
    write(repo / claim, "# Claim\n\n- 2026-04-01: the gate is `tools/gate.sh`.\n")
    commit(repo, "the memory and the gate", "2026-04-21T09:00:00+00:00")
    delete(repo, "tools/gate.sh")
    return health(repo, with_advice(env))


# --- a dated snapshot: a name or a title that carries its day -----------------------------

SNAPSHOT_BODY = "\n## Hooks\n- `tools/gate.sh` blocks a commit without proof.\n"
REFERENCE = "---\nname: {name}\ndescription: the setup\ntype: reference\n---\n"


@pytest.mark.parametrize("name, head", [
    ("reference_setup_2026_04_21.md", REFERENCE.format(name="setup") + "# Setup\n"),
    ("reference_setup_2026-04-21.md", REFERENCE.format(name="setup") + "# Setup\n"),
    ("reference_setup_20260421.md", REFERENCE.format(name="setup") + "# Setup\n"),
    ("reference_setup_2026.04.21.md", REFERENCE.format(name="setup") + "# Setup\n"),
    ("setup-21.04.2026.md", REFERENCE.format(name="setup") + "# Setup\n"),
    ("reference_setup.md", REFERENCE.format(name="setup") + "# Setup — Stand 2026-04-21\n"),
    ("reference_setup.md", REFERENCE.format(name="setup") + "# Setup — as of 2026/04/21\n"),
    ("reference_setup.md", REFERENCE.format(name="Setup 2026-04-21 (slice 85)") + "# Setup\n"),
    ("reference_setup.md", REFERENCE.format(name="setup") + "# 配置快照 2026年4月21日\n"),
])
def test_a_dated_snapshot_is_history_whatever_its_type(repo, env, name, head):
    report = gone_after_writing(repo, env, name, head + SNAPSHOT_BODY)
    shown = "memory/" + name
    assert [log["file"] for log in report["session_logs"]] == [shown]
    assert on(report, "missing-path", shown) == []
    assert [f["file"] for f in findings(report, "missing-path")] == ["memory/claim.md"]


@pytest.mark.parametrize("title", [
    "# Notion integration (active since 2026-04-21)",
    "# Notion-Integration (aktiv seit 2026-04-21)",
    "# Setup",
])
def test_a_title_that_says_since_when_or_gives_no_day_is_a_claim(repo, env, title):
    name = "reference_setup.md"
    report = gone_after_writing(repo, env, name, REFERENCE.format(name="setup") + title + "\n" +
                                SNAPSHOT_BODY)
    assert report["session_logs"] == []
    assert [f["lines"] for f in on(report, "missing-path", "memory/" + name)] == [[9]]


# --- a research note: what might be done is no claim of what is ------------------------------

RESEARCH = """\
# Deep research: agent systems (April 2026)

### Pattern 6.1: from errors to rules
| Field | Value |
|------|------|
| **How to implement** | A hook writes each error twice seen to `tools/gate.sh`, then a skill promotes it. |
"""


@pytest.mark.parametrize("name, text", [
    ("research-agent-systems.md", RESEARCH),
    ("agent-systems.md", RESEARCH.replace("(April 2026)", "\n\n> Recherche-Datum: 2026-04-02")),
    ("proposals.md", RESEARCH),
])
def test_a_research_note_or_a_proposal_is_a_record_of_its_day(repo, env, name, text):
    report = gone_after_writing(repo, env, name, text)
    assert on(report, "missing-path", "memory/" + name) == []
    assert [f["file"] for f in findings(report, "missing-path")] == ["memory/claim.md"]


# --- what a tool generated: a log a hook appends to, a report, an index of a run ------------

@pytest.mark.parametrize("name, head", [
    ("improvement-queue.md", "# Improvement queue\n\nGenerated: 2026-04-14 12:23\n"),
    ("activity.md", "# Activity\n\nAuto-captured by the PostToolUse hook. Pruned to 100 entries.\n"),
    ("wiki-index.md", "# Wiki index (auto-generated 2026-04-14, run #10)\n"),
    ("wissen.md", "# Wissen\n\n> Index aller Dateien. Generiert von AutoDream v3.\n"),
    ("health.md", "# Knowledge health\n> Generated by the weekly audit | score 7.5/10\n"),
    ("deps.md", "# Dependencies\n\n<!-- This file is auto-generated by scripts/deps.py -->\n"),
    ("索引.md", "# 索引\n\n本文件由脚本自动生成。\n"),
])
def test_what_a_tool_generated_is_its_runs_record_and_no_orphan(repo, env, name, head):
    # the index keeps a pointer to one log, so a log it leaves out could be an orphan
    write(repo / "memory" / "session-handoff.md", "# Handoff\n\n**Date:** 2026-04-20\n\n- pick up the gate.\n")
    write(index(repo), index(repo).read_text(encoding="utf-8") +
          "- [Handoff](session-handoff.md) — where the last session stopped\n")
    report = gone_after_writing(repo, env, name, head + SNAPSHOT_BODY)
    shown = "memory/" + name
    assert shown in [log["file"] for log in report["session_logs"]]
    assert on(report, "missing-path", shown) == [] and on(report, "orphan", shown) == []
    assert [f["file"] for f in findings(report, "missing-path")] == ["memory/claim.md"]


@pytest.mark.parametrize("head", [
    "# Embeddings\n\nVectors generated by `tools/embed.py` are kept in `data/`.\n",
    "# Build\n\nThe generated bundle is not committed.\n",
])
def test_a_head_that_speaks_of_generated_things_is_not_generated(repo, env, head):
    report = gone_after_writing(repo, env, "build.md", head + SNAPSHOT_BODY)
    assert report["session_logs"] == []
    assert len(on(report, "missing-path", "memory/build.md")) == 1
    assert len(on(report, "orphan", "memory/build.md")) == 1


# --- which records an index must lead to ----------------------------------------------------

def test_a_log_a_report_or_an_archive_named_as_one_is_no_orphan_where_the_index_keeps_logs(repo, env):
    write(repo / "memory" / "session-handoff.md", "# Handoff\n\n**Date:** 2026-04-20\n\n- next: the gate.\n")
    write(index(repo), index(repo).read_text(encoding="utf-8") +
          "- [Handoff](session-handoff.md) — where the last session stopped\n")
    for name in ("evolution-log.md", "wiki-lint-report.md", "learnings-archive.md"):
        write(repo / "memory" / name, "# Kept\n\n## 2026-04-14 — run 10\n- 12 corrections\n\n"
                                      "## 2026-04-15 — run 11\n- 3 corrections\n")
    write(repo / "memory" / "feedback-queue.md", "# Feedback queue\n\n## 2026-04-14 — from Ana\n"
                                                 "- the login page is slow\n\n## 2026-04-15 — from Bo\n"
                                                 "- the export fails on Safari\n")
    commit(repo, "logs")
    report = health(repo, env)
    assert [f["file"] for f in findings(report, "orphan")] == ["memory/feedback-queue.md"]


def test_a_dated_snapshot_is_an_orphan_only_where_the_index_lists_dated_records(repo, env):
    write(repo / "memory" / "session-handoff.md", "# Handoff\n\n**Date:** 2026-04-20\n\n- next: the gate.\n")
    write(repo / "memory" / "reference_setup_2026_04_21.md", REFERENCE.format(name="setup") +
          "# Setup\n" + SNAPSHOT_BODY)
    write(index(repo), index(repo).read_text(encoding="utf-8") +
          "- [Handoff](session-handoff.md) — where the last session stopped\n")
    commit(repo, "a handoff and a snapshot")
    assert findings(health(repo, env), "orphan") == []
    write(repo / "memory" / "2026-04-20.md", "# 2026-04-20\n\n- tightened the gate.\n")
    write(index(repo), index(repo).read_text(encoding="utf-8") + "| [2026-04-20](2026-04-20.md) |\n")
    commit(repo, "the index lists the days")
    assert [f["file"] for f in findings(health(repo, env), "orphan")] == [
        "memory/reference_setup_2026_04_21.md"]


def test_a_file_named_as_a_template_states_nothing_of_the_project(repo, env):
    write(repo / "memory" / "agent-briefing-template.md", "# Agent briefing\n\nInclude this in "
          "every dispatch.\n\n## Template\n- Goal: one sentence.\n- Budget: tokens.\n")
    commit(repo, "a template")
    report = health(repo, with_advice(env))
    assert on(report, "orphan", "memory/agent-briefing-template.md") == []
    assert on(report, "missing-date", "memory/agent-briefing-template.md") == []


# --- possibly-stale runs when asked -------------------------------------------------------------

def test_a_fact_whose_file_changed_since_is_reported_only_when_asked(repo, env):
    write(repo / "src" / "worker.py", "RETRIES = 3\n")
    write(repo / "memory" / "worker.md", "# Worker\n\n- 2026-04-01: `src/worker.py` retries three times.\n")
    write(index(repo), index(repo).read_text(encoding="utf-8") + "- [Worker](worker.md) — retries\n")
    commit(repo, "three retries", "2026-04-01T09:00:00+00:00")
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "five retries", "2026-04-21T09:00:00+00:00")
    assert findings(health(repo, by_default(env)), "possibly-stale") == []
    [found] = findings(health(repo, dict(env, MCP_HEALTH_CHECKS="possibly-stale")), "possibly-stale")
    assert (found["file"], found["lines"]) == ("memory/worker.md", [3])


def test_the_checks_that_read_what_a_line_says_run_only_when_asked(repo, env):
    """A path gone from a line, content in the index, a file no link reaches and a home path
    are each found when asked for, by name or with `all`, and none of them by default; a dead
    pointer is broken either way."""
    write(repo / "tools" / "gate.sh", "#!/bin/sh\n")
    write(repo / "memory" / "claim.md", "# Claim\n\n- 2026-04-01: the gate is `tools/gate.sh`, "
                                        "kept in `/home/alice/gate/`.\n")
    commit(repo, "a claim", "2026-04-01T09:00:00+00:00")
    delete(repo, "tools/gate.sh")
    write(index(repo), index(repo).read_text(encoding="utf-8") +
          "\n## Facts\n- the gate blocks a commit without proof\n- [Deploy](deploy.md) — ships\n")
    commit(repo, "content and a dead pointer in the index")
    judged = ["machine-local-path", "missing-path", "not-a-pointer", "orphan"]
    checks = lambda report: sorted(set(f["check"] for f in report["findings"]))
    assert checks(health(repo, by_default(env))) == ["dead-pointer"]
    assert checks(health(repo, dict(env, MCP_HEALTH_CHECKS="all"))) == ["dead-pointer"] + judged
    for check in judged:
        assert checks(health(repo, dict(env, MCP_HEALTH_CHECKS=check))) == ["dead-pointer", check]


# --- work told on its day, decisions, archives and plans are history -------------------------

def renamed_after(repo, env, name, text, folder="memory"):
    """`tools/gate/` holds `run.sh` until it is renamed, after the memory was written."""
    write(repo / "tools" / "gate" / "run.sh", "#!/bin/sh\n")
    write(repo / folder / name, text)
    commit(repo, "the gate and its memory", "2026-08-05T09:00:00+00:00")
    rename(repo, "tools/gate", "tools/keeper", "2026-08-07T09:00:00+00:00")
    return health(repo, with_advice(env))


DECISION = """\
# Decisioni

### Launcher desktop: WebView2, non Electron
- **Data:** 2026-08-05
- **Decisione:** un piccolo progetto .NET (`tools/gate/run.sh`) incorpora l'export statico
- **Impatto:** `tools/gate/run.sh` (nuovo)

### Solo locale, nessun backend
- **Data:** 2026-08-04
- **Decisione:** localStorage, nessuna API

### Open question
- The gate still lives in `tools/gate/run.sh`.
"""


def test_a_decision_recorded_with_its_date_is_history_and_a_later_section_is_not(repo, env):
    report = renamed_after(repo, env, "decisions.md", DECISION)
    assert [f["lines"] for f in on(report, "missing-path", "memory/decisions.md")] == [[13]]


@pytest.mark.parametrize("heading", ["## Archiviato", "## Archived", "## Done", "## Erledigt",
                                     "## Storico", "## 已完成"])
def test_a_section_of_archived_or_finished_work_is_history(repo, env, heading):
    text = "# Backlog\n\n## Open\n- the gate is `tools/gate/run.sh`.\n\n%s\n" \
           "- **Packaging** — the launcher (`tools/gate/run.sh`) ships the exe.\n" % heading
    report = renamed_after(repo, env, "backlog.md", text)
    assert [f["lines"] for f in on(report, "missing-path", "memory/backlog.md")] == [[4]]


def test_work_told_on_its_day_before_the_path_moved_is_true_of_that_day(repo, env):
    text = ("# Sprint\n\n"
            "- [x] **Maximised window** (2026-08-05, commit a60e456): the splash waits\n"
            "  1.5s; the originals duplicate `tools/gate/run.sh`.\n\n"
            "- 2026-08-05: implementato il launcher in `tools/gate/run.sh`.\n\n"
            "- 2026-08-05: the launcher is `tools/gate/run.sh`.\n\n"
            "- [ ] **Close button** (2026-08-06): check `tools/gate/run.sh` on Windows.\n")
    report = renamed_after(repo, env, "sprint.md", text)
    assert [f["lines"] for f in on(report, "missing-path", "memory/sprint.md")] == [[8, 10]]


def test_a_plan_in_a_folder_of_plans_is_no_claim_of_what_is(repo, env):
    text = "# Module extraction\n\n1. Move `tools/gate/run.sh` into its own package.\n"
    report = renamed_after(repo, env, "extraction.md", text, folder="memory/plans")
    assert on(report, "missing-path", "memory/plans/extraction.md") == []
    assert report["session_logs"] == [{"file": "memory/plans/extraction.md",
                                       "reason": "kept in `plans/`, a folder of records"}]


# --- what an index names it leads to, in whatever form it names it -----------------------------

def test_an_index_that_names_its_files_leads_to_them_and_a_mention_deep_in_a_file_does_not(repo, env):
    for name in ("lessons", "stack", "workflow", "liga", "deep"):
        write(repo / "memory" / (name + ".md"), "# %s\n\n- 2026-04-01: a fact about %s.\n" % (name, name))
    write(repo / "memory" / "stack.md", "# Stack\n\n- 2026-04-01: see `deep.md` for the rest.\n")
    write(index(repo), index(repo).read_text(encoding="utf-8") +
          "\n## Files\nRead `memory/lessons.md` first, then:\n"
          "- `stack.md` - the stack\n- @workflow.md — [[liga]] — the workflow and the league\n")
    commit(repo, "an index that names its files")
    report = health(repo, env)
    assert [f["file"] for f in findings(report, "orphan")] == ["memory/deep.md"]
    assert findings(report, "not-a-pointer") == []


def test_an_index_s_frontmatter_and_a_quoted_note_are_not_content(repo, env):
    text = index(repo).read_text(encoding="utf-8")
    write(index(repo), "---\ntype: memory\nupdated: [2026-08-07]\n---\n" + text +
          "\n## Files\n> `@file.md` = an import · `[[file]]` = a wiki link. Keep both.\n"
          "- [Retry](retry.md) — retries\n")
    commit(repo, "frontmatter and a note")
    assert findings(health(repo, env), "not-a-pointer") == []


# --- a reader's own checkout, under whatever name -------------------------------------------

def test_a_home_path_into_this_repository_under_another_name_is_the_readers_checkout(repo, env):
    write(repo / "templates" / "review.md", "# Review\n")
    write(repo / "memory" / "cron.md", "# Cron\n\n- 2026-02-05: read `~/openclaw/templates/review.md` "
          "first.\n- 2026-02-05: the bot's notes are in `~/openclaw/notes/today.md`.\n")
    commit(repo, "a workspace checked out as ~/openclaw")
    found = findings(health(repo, env), "machine-local-path")
    assert [f["message"].split("`")[1] for f in found] == ["~/openclaw/notes/today.md"]
