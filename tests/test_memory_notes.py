"""Memory health on the team format's notes (`memory/<topic>/<what>.md`, spec §2.2): each lint of a
file beside the index reads the notes of the topic folders too, as session start lists them.

A note's cited path that git deleted is missing, a fact dated before its file changed is possibly
stale, a note past the topic budget is oversized, a home folder in a note is one machine's, a
feedback note keeps the labelled parts. A note needs no pointer (session start lists it), and what
it links is reached. A note kept in a folder of records (`logs/`, `sessions/`, `archive/`) is
history, as a session log beside the index is, and in its right place: no advice for it. The
fixtures are shaped like the memories they came from: a team's notes, a folder of daily logs,
an archive of retired pages, a compliance report a remediation was appended to.
"""
from test_memory_citations import delete, rename
from test_memory_health import HEALTH, commit, env, findings, health, repo, with_advice, write  # noqa: F401

LATER = "2026-11-03T09:00:00+00:00"
NOTE = "# Worker retries\n\n- 2026-10-01: `src/worker.py` retries three times.\n"


def note(repo, path, text):
    write(repo / "memory" / path, text)
    commit(repo, "memory: %s" % path)


def on(report, check, shown):
    return [f for f in findings(report, check) if f["file"] == shown]


def test_a_path_a_note_cites_that_git_deleted_is_missing(repo, env):
    note(repo, "worker/retries.md", NOTE)
    assert findings(health(repo, with_advice(env)), "missing-path") == []
    delete(repo, "src/worker.py")
    found = on(health(repo, with_advice(env)), "missing-path", "memory/worker/retries.md")
    assert [f["lines"] for f in found] == [[3]], findings(health(repo, with_advice(env)))


def test_a_path_a_note_links_that_git_renamed_is_missing(repo, env):
    note(repo, "worker/retries.md", "# Worker retries\n\n- 2026-10-01: the loop is in "
                                    "[the worker](../../src/worker.py).\n")
    rename(repo, "src/worker.py", "src/jobs.py")
    found = on(health(repo, with_advice(env)), "missing-path", "memory/worker/retries.md")
    assert len(found) == 1 and "src/jobs.py" in found[0]["message"]


def test_a_fact_in_a_note_dated_before_its_file_changed_is_possibly_stale(repo, env):
    note(repo, "worker/retries.md", NOTE)
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "five retries", LATER)
    found = on(health(repo, with_advice(env)), "possibly-stale", "memory/worker/retries.md")
    assert [f["lines"] for f in found] == [[3]]


def test_a_note_past_the_topic_budget_is_oversized_but_a_record_is_not(repo, env):
    limit = HEALTH.TOPIC_TOKENS * 4  # the estimate is a character count over four
    body = "- 2026-10-01: a fact.\n\n" * (limit // 22 + 1)
    note(repo, "deployment/rollout.md", "# Rollout\n\n" + body)
    note(repo, "archive/old-rollout.md", "# Old rollout\n\n" + body)
    note(repo, "deployment/rollback.md", "# Rollback\n\n" + "- 2026-10-01: a fact.\n\n" * 10)
    report = health(repo, with_advice(env))
    assert [f["file"] for f in findings(report, "oversized-topic")] == ["memory/deployment/rollout.md"]


def test_a_home_folder_in_a_committed_note_is_one_machines(repo, env):
    note(repo, "tooling/fixtures.md", "# Fixtures\n\n- 2026-10-01: the fixtures live in "
                                      "`/home/alice/data/fixtures/`.\n")
    found = findings(health(repo, with_advice(env)), "machine-local-path")
    assert [(f["file"], f["lines"]) for f in found] == [("memory/tooling/fixtures.md", [3])]


def test_a_feedback_note_keeps_the_labelled_parts(repo, env):
    note(repo, "feedback/quote-the-gate.md", "# Quote the gate's output\n\n"
                                             "- 2026-10-01: paste what the gate printed.\n")
    note(repo, "feedback/run-the-gate.md", "# Run the gate before saying done\n\n**The lesson.** "
                                           "Run it.\n\n**Why:** 2026-10-01, a red build.\n\n"
                                           "**How to apply:** before every claim.\n")
    note(repo, "gotchas/feedback-loop.md", "# The feedback loop\n\n- 2026-10-01: it settles in 3 s.\n")
    found = findings(health(repo, with_advice(env)), "feedback-parts")
    assert [f["file"] for f in found] == ["memory/feedback/quote-the-gate.md"]


def test_a_note_without_a_date_is_advised_to_date_its_facts_not_to_carry_a_stamp(repo, env):
    note(repo, "gotchas/ipv6.md", "# Dev server binds IPv6\n\n- use 127.0.0.1, not localhost.\n")
    found = findings(health(repo, with_advice(env)), "missing-date")
    assert [f["file"] for f in found] == ["memory/gotchas/ipv6.md"]
    assert "YYYY-MM-DD" in found[0]["repair"] and "Last updated" not in found[0]["repair"]


def test_a_note_needs_no_pointer_and_what_it_links_is_reached(repo, env):
    write(repo / "memory" / "runbook.md", "# Runbook\n\n- 2026-10-01: restart with `make up`.\n")
    note(repo, "deployment/restart.md", "# Restart\n\n- 2026-10-01: see the [runbook](../runbook.md).\n")
    assert findings(health(repo, env), "orphan") == []
    write(repo / "memory" / "deployment" / "restart.md", "# Restart\n\n- 2026-10-01: `make up`.\n")
    commit(repo, "memory: the runbook is no longer linked")
    assert [f["file"] for f in findings(health(repo, env), "orphan")] == ["memory/runbook.md"]


DAILY_LOG = "## Changes\n- `src/worker.py` — modified\n- `scripts/old.sh` — removed\n"


def test_notes_in_a_folder_of_records_are_history_with_no_advice(repo, env):
    note(repo, "logs/2026-10-01.md", DAILY_LOG)
    note(repo, "sprints/ROADMAP.md", "# Sprint 4\n\n- 2026-10-01: `src/worker.py` gets the retries.\n")
    note(repo, "archive/retry-policy.md", "# Retry policy (retired)\n\n"
                                          "- 2026-10-01: `src/worker.py` retried twice.\n")
    delete(repo, "src/worker.py")
    report = health(repo, env)
    assert [f for f in findings(report)
            if f["file"].startswith(("memory/logs/", "memory/archive/", "memory/sprints/"))] == []
    assert sorted(log["file"] for log in report["session_logs"]) == [
        "memory/archive/retry-policy.md", "memory/logs/2026-10-01.md", "memory/sprints/ROADMAP.md"]
    assert findings(report, "session-log") == []


def test_a_note_named_by_its_day_elsewhere_is_a_record_too(repo, env):
    note(repo, "learnings/2026-10-01-devops.md", "# What the deploy taught\n\n"
                                                 "- `src/worker.py` is restarted by systemd.\n")
    delete(repo, "src/worker.py")
    report = health(repo, env)
    assert [f["file"] for f in findings(report, "missing-path")] == ["memory/retry.md"]
    assert findings(report, "session-log") == []
    assert [log["file"] for log in report["session_logs"]] == ["memory/learnings/2026-10-01-devops.md"]


def test_the_report_counts_the_notes(repo, env):
    note(repo, "worker/retries.md", NOTE)
    note(repo, "worker/backoff.md", "# Backoff\n\n- 2026-10-01: doubles each time.\n")
    report = health(repo, env)
    assert (report["topic_files"], report["notes"]) == (2, 2)
    assert "2 note(s) in topic folders" in HEALTH.format_health(dict(report, findings=[
        {"check": "orphan", "severity": "warning", "file": "x", "lines": [1], "message": "m",
         "repair": "r"}]))


def test_the_repairs_lead_to_notes_and_never_ask_for_a_stamp(repo, env):
    """The team format keeps no stamp and writes each new fact as a note that session start
    lists (spec §2.2, §4.5): a repair that asked for a `Last updated` line, or for content to go
    into a topic file behind a new pointer, would undo it."""
    write(repo / "memory" / "MEMORY.md", "# Project Memory Index\n\n## Topics\n"
                                         "- [Retry policy](retry.md) — how the worker retries\n"
                                         "- The deploy runs at 02:00 and takes 20 minutes.\n\n"
                                         "<!-- 2026-09-01: session 12 moved the queue.\n"
                                         "2026-09-02: session 13 fixed the retry. -->\n")
    write(repo / "memory" / "queue.md", "# Queue\n\n- the queue is Redis.\n")
    commit(repo, "memory")
    report = health(repo, env)
    repairs = dict((f["check"], f["repair"]) for f in findings(report))
    for check in ("not-a-pointer", "hidden-history", "orphan"):
        assert "note" in repairs[check] or "topic folder" in repairs[check], (check, repairs[check])
    assert [check for check, repair in repairs.items() if "Last updated" in repair] == []


def test_a_tracker_kept_empty_until_its_first_entry_has_no_date_to_give(repo, env):
    note(repo, "issues/INDEX.md", "# Issues\n\n## Open\n\n| ID | Title | Severity | Detected |\n"
                                  "|----|-------|----------|----------|\n\n## Resolved\n\n"
                                  "| ID | Title | Fix PR | Resolved |\n|----|-------|--------|----------|\n")
    assert findings(health(repo, with_advice(env)), "missing-date") == []
    note(repo, "issues/INDEX.md", "# Issues\n\n## Open\n\n| ID | Title |\n|----|-------|\n"
                                  "| 7 | the digest runs twice |\n")
    assert [f["file"] for f in findings(health(repo, with_advice(env)), "missing-date")] == [
        "memory/issues/INDEX.md"]


ADR = """\
---
type: adr
status: accepted
decided_at: "2026-10-01"
---

# Queue on Redis

## Context

The worker in `src/worker.py` polled the database every second.
"""


def test_an_architecture_decision_record_is_a_record_of_its_day(repo, env):
    """An ADR is not edited once accepted, only superseded: what it cites is what was there when
    it was decided (a public memory keeps 385 of them in `memory/decisions/`). A decision note
    in the team format is a fact, kept true."""
    note(repo, "decisions/0007-queue-on-redis.md", ADR)
    note(repo, "decisions/0008-retries.md", "# ADR 0008 — Retries\n\nThe loop is in `src/worker.py`.\n")
    note(repo, "decisions/queue-is-redis.md", "# The queue is Redis\n\n"
                                              "- 2026-10-01: the consumer is `src/worker.py`.\n")
    delete(repo, "src/worker.py")
    report = health(repo, env)
    assert sorted(f["file"] for f in findings(report, "missing-path")) == [
        "memory/decisions/queue-is-redis.md", "memory/retry.md"]
    assert sorted(log["file"] for log in report["session_logs"]) == [
        "memory/decisions/0007-queue-on-redis.md", "memory/decisions/0008-retries.md"]


def test_a_memory_file_a_note_points_to_makes_nothing_stale_when_it_is_edited(repo, env):
    """A public memory's indexes cite its other files (`memory/reference/_INDEX.md`): each is
    checked on its own, and a bulk edit of their frontmatter says nothing about the pointer."""
    note(repo, "reference/hosts.md", "# Hosts\n\n- 2026-10-01: the staging host is `stage-1`.\n")
    note(repo, "reference/_INDEX.md", "# Servers\n\n- 2026-10-01: `memory/reference/hosts.md` "
                                      "holds the hosts, `src/worker.py` runs on them.\n")
    write(repo / "memory" / "reference" / "hosts.md", "---\nid: hosts\n---\n# Hosts\n\n"
                                                     "- 2026-10-01: the staging host is `stage-1`.\n")
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "frontmatter ids for the reference, five retries", LATER)
    found = on(health(repo, with_advice(env)), "possibly-stale", "memory/reference/_INDEX.md")
    assert [f["message"].split("`")[1] for f in found] == ["src/worker.py"]
