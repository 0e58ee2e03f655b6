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

from test_memory_citations import delete
from test_memory_health import (HEALTH, commit, env, findings, health, index, repo,  # noqa: F401
                                with_advice, write)


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
    assert findings(health(repo, env), "possibly-stale") == []
    [found] = findings(health(repo, dict(env, MCP_HEALTH_CHECKS="possibly-stale")), "possibly-stale")
    assert (found["file"], found["lines"]) == ("memory/worker.md", [3])
