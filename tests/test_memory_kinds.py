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
                                with_dates, write)

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
    report = health(repo, with_dates(env))
    for shown in ("memory/CLAUDE.md", "memory/AGENTS.md", "memory/deploy/GEMINI.md"):
        assert checks_on(report, shown) == [], report["findings"]
    assert report["topic_files"] == 2 and report["notes"] == 1


def test_a_topic_file_that_is_not_a_rule_file_is_still_an_orphan(repo, env):
    write(repo / "memory" / "claude-notes.md", "# Claude notes\n\n- 2026-10-01: a fact.\n")
    commit(repo, "a topic")
    assert checks_on(health(repo, env), "memory/claude-notes.md") == ["orphan"]
