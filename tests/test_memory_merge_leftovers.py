"""What a merge leaves in the memory, found by install.py --check.

Each leftover is made the way teams make it: two branches of one repository, each saving as
/dream says, then a merge. With the team format's .gitattributes rule (union merge), git keeps
both versions where two branches changed the same line; without it (as on a forge), or in a
checkout from before it, a conflict leaves markers. The rules (spec §4.5, §9): markers are
broken; a note's second title, a second stamp or frontmatter key, a line twice in one file and
two dated facts side by side in a union-merged file are warnings."""
import os
import subprocess

import pytest

from conftest import clean_environment, make_repo
from installtools import installer  # noqa: F401  (a fixture)
from test_memory_health import HEALTH, findings, health

with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "templates",
                       "gitattributes"), encoding="utf-8") as template:
    ATTRIBUTES = template.read()  # the block install.py writes
INDEX = "# Project Memory Index\n\n## Topics\n- [Retry policy](retry.md) — how the worker retries\n"
RETRY = "# Retry policy\n\n- 2026-10-01: the worker retries three times.\n"


def git(repo, *args, check=True):
    env = clean_environment(repo.parent / "home")
    done = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True, env=env)
    if check:
        assert done.returncode == 0, done.stderr.decode()
    return done


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def save(repo, branch, files, message):
    """Check out `branch` (from main when new), write `files`, commit them."""
    exists = git(repo, "rev-parse", "--verify", "-q", branch, check=False).returncode == 0
    git(repo, "checkout", "-q", *([branch] if exists else ["-b", branch, "main"]))
    for name, text in files.items():
        write(repo / "memory" / name, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture
def env(tmp_path):
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "projects").mkdir(exist_ok=True)
    return {"HOME": str(tmp_path / "home"), "MCP_PROJECTS_DIR": str(tmp_path / "projects")}


def team_repo(tmp_path, union=True, files=None):
    """A repository with a memory in the team format, committed on main."""
    repo = make_repo(tmp_path / "project")
    if union:
        write(repo / ".gitattributes", ATTRIBUTES)
    write(repo / "memory" / "MEMORY.md", INDEX)
    write(repo / "memory" / "retry.md", RETRY)
    for name, text in (files or {}).items():
        write(repo / "memory" / name, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "memory")
    return repo


def merge(repo, branch):
    git(repo, "checkout", "-q", "main")
    return git(repo, "merge", "-q", "--no-edit", branch, check=False)


def leftovers(report):
    return sorted((f["check"], f["file"], f["lines"]) for f in findings(report)
                  if f["check"] in HEALTH.MERGE_LEFTOVERS)


def test_notes_and_corrections_of_different_facts_merge_with_nothing_left(tmp_path, env):
    facts = "# Caching\n\n- 2026-10-01: keys carry the tenant.\n\n- 2026-10-01: TTL is 900 s.\n"
    repo = team_repo(tmp_path, files={"caching/keys.md": facts})
    save(repo, "alice", {"caching/eviction.md": "# Eviction\n\n- 2026-10-02: LRU.\n",
                         "caching/keys.md": facts.replace("carry the tenant", "carry the region")},
         "memory: alice")
    save(repo, "bob", {"caching/warmup.md": "# Warm-up\n\n- 2026-10-02: on deploy.\n",
                       "caching/keys.md": facts.replace("900 s", "600 s")}, "memory: bob")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    text = (repo / "memory" / "caching" / "keys.md").read_text(encoding="utf-8")
    assert "carry the region" in text and "600 s" in text
    assert leftovers(health(repo, env)) == []


def test_two_branches_changing_one_fact_leave_both_versions_side_by_side(tmp_path, env):
    repo = team_repo(tmp_path)
    save(repo, "alice", {"retry.md": RETRY.replace("2026-10-01: the worker retries three times",
                                                   "2026-10-05: the worker retries five times")},
         "memory: alice")
    save(repo, "bob", {"retry.md": RETRY.replace("2026-10-01: the worker retries three times",
                                                 "2026-10-06: the worker retries twice")},
         "memory: bob")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    assert leftovers(health(repo, env)) == [("diverged-fact", "memory/retry.md", [4])]


def test_a_stamped_memory_kept_without_this_install_is_not_asked_to_move(tmp_path, env):
    repo = team_repo(tmp_path, union=False, files={"MEMORY.md": (
        "# Index\n<!-- Last dream: 2026-10-01 -->\n\n## Active Context\nX.\n")})
    assert findings(health(repo, env), "stamped-format") == []


def test_side_by_side_facts_are_no_finding_where_git_does_not_merge_by_union(tmp_path, env):
    repo = team_repo(tmp_path, union=False, files={
        "decisions.md": "# Decisions\n\n- 2026-10-01: one.\n- 2026-10-02: two.\n"})
    assert leftovers(health(repo, env)) == []


def test_a_file_still_in_the_stamped_format_keeps_its_facts_together(tmp_path, env):
    repo = team_repo(tmp_path, files={"decisions.md": "# Decisions\n<!-- Last updated: 2026-10-02 -->\n\n"
                                                      "- 2026-10-01: one.\n- 2026-10-02: two.\n"})
    assert leftovers(health(repo, env)) == [("stamped-format", "memory/MEMORY.md", [1])]


def test_a_memory_in_the_stamped_format_is_advised_to_move_once_on_its_index(tmp_path, env):
    index = ("# Project Memory Index\n<!-- Last dream: 2026-10-01 -->\n\n## Active Context\nX.\n\n"
             "## Topics\n- [Retry policy](retry.md) — how the worker retries\n")
    repo = team_repo(tmp_path, files={"MEMORY.md": index})
    [advice] = findings(health(repo, env), "stamped-format")
    assert (advice["file"], advice["line"], advice["severity"]) == ("memory/MEMORY.md", 2, "advice")
    assert "a `Last dream` line and an Active Context" in advice["message"]
    assert "install.py --update" in advice["repair"]


def test_a_note_with_a_last_updated_stamp_is_counted_in_the_advice_to_move(tmp_path, env):
    stamped = "# Keys\n<!-- Last updated: 2026-10-01 -->\n\n- 2026-10-01: keys carry the tenant.\n"
    repo = team_repo(tmp_path, files={"caching/keys.md": stamped})
    [advice] = findings(health(repo, env), "stamped-format")
    assert "1 file(s) with a `Last updated` line" in advice["message"]


def test_a_session_log_may_keep_its_dated_entries_together(tmp_path, env):
    log = "# Sessions\n\n" + "".join("- 2026-10-%02d: worked on the parser.\n" % day
                                     for day in range(1, 12))
    repo = team_repo(tmp_path, files={"logs/parser-session-log.md": log})
    assert leftovers(health(repo, env)) == []


def test_a_conflict_left_unresolved_is_broken(tmp_path, env):
    repo = team_repo(tmp_path, union=False)
    save(repo, "alice", {"retry.md": RETRY.replace("three", "five")}, "memory: alice")
    save(repo, "bob", {"retry.md": RETRY.replace("three", "two")}, "memory: bob")
    assert merge(repo, "alice").returncode == 0
    assert merge(repo, "bob").returncode != 0
    git(repo, "commit", "-q", "-a", "--no-edit")  # committed with its markers
    report = health(repo, env)
    assert leftovers(report) == [("conflict-markers", "memory/retry.md", [3, 5, 7])]
    assert findings(report, "conflict-markers")[0]["severity"] == "broken"


def test_markers_in_a_note_are_found_too(tmp_path, env):
    repo = team_repo(tmp_path, files={"caching/keys.md": "# Keys\n<<<<<<< HEAD\n- a\n=======\n"
                                                          "- b\n>>>>>>> bob\n"})
    assert leftovers(health(repo, env)) == [("conflict-markers", "memory/caching/keys.md", [2, 4, 6])]


def test_a_heading_underline_or_markers_in_a_code_block_are_no_conflict(tmp_path, env):
    repo = team_repo(tmp_path, files={
        "setext.md": "Deployment\n=======\n\n- 2026-10-01: one instance.\n",
        "git.md": "# Git\n\n```text\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> b\n```\n"})
    assert leftovers(health(repo, env)) == []


def test_two_branches_adding_a_note_of_one_name_leave_two_titles(tmp_path, env):
    repo = team_repo(tmp_path)
    save(repo, "alice", {"gotchas/dev-server.md": "# Dev server binds IPv6\n\n"
                                                  "- 2026-10-02: use 127.0.0.1.\n"}, "memory: alice")
    save(repo, "bob", {"gotchas/dev-server.md": "# Dev server port\n\n"
                                                "- 2026-10-03: it listens on 5173.\n"}, "memory: bob")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    lines = (repo / "memory" / "gotchas" / "dev-server.md").read_text(encoding="utf-8").split("\n")
    titles = [number for number, line in enumerate(lines, start=1) if line.startswith("# ")]
    assert len(titles) == 2  # both notes' titles, in one file
    assert ("doubled-title", "memory/gotchas/dev-server.md", [titles[1]]) in leftovers(health(repo, env))


REPORT_WITH_REMEDIATION = """\
# Phase 2 anchors: statute check

- 2026-10-01: three anchors cite a repealed article.

---

# Remediation applied (2026-10-02)

- 2026-10-02: the three anchors now cite the current article.
"""


def test_a_note_with_two_sections_where_git_does_not_merge_by_union_has_one_title(tmp_path, env):
    """Without the union attribute, two branches adding one note stop with markers; two `# `
    lines are then a document's sections, as a report a remediation was appended to has."""
    files = {"findings/phase2-anchors.md": REPORT_WITH_REMEDIATION}
    assert leftovers(health(team_repo(tmp_path, union=False, files=files), env)) == []


def test_a_topic_file_may_have_several_top_level_headings(tmp_path, env):
    repo = team_repo(tmp_path, files={"deployment.md": "# Deployment\n\ntext\n\n# Rollback\n\ntext\n"})
    assert leftovers(health(repo, env)) == []


def test_stamps_of_the_earlier_format_merged_by_union_are_doubled(tmp_path, env):
    stamped = "# Retry policy\n<!-- Last updated: 2026-10-01 -->\n\n- 2026-10-01: three times.\n"
    repo = team_repo(tmp_path, files={"retry.md": stamped})
    save(repo, "alice", {"retry.md": stamped.replace("Last updated: 2026-10-01",
                                                     "Last updated: 2026-10-05")}, "memory: alice")
    save(repo, "bob", {"retry.md": stamped.replace("Last updated: 2026-10-01",
                                                   "Last updated: 2026-10-06")}, "memory: bob")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    assert leftovers(health(repo, env)) == [("doubled-stamp", "memory/retry.md", [3]),
                                            ("stamped-format", "memory/MEMORY.md", [1])]


def test_a_frontmatter_key_each_branch_rewrote_is_doubled(tmp_path, env):
    note = ("---\nname: Testing\ndescription: run the gate first\nmodified: 2026-10-01T10:00:00Z\n"
            "---\n\nRun `make check`.\n")
    repo = team_repo(tmp_path, files={"feedback/testing.md": note})
    save(repo, "alice", {"feedback/testing.md": note.replace("10-01T10", "10-05T10")}, "memory: a")
    save(repo, "bob", {"feedback/testing.md": note.replace("10-01T10", "10-06T10")}, "memory: b")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    assert leftovers(health(repo, env)) == [("doubled-stamp", "memory/feedback/testing.md", [5])]


def test_the_same_line_twice_in_one_file_is_doubled_but_a_short_one_may_repeat(tmp_path, env):
    repo = team_repo(tmp_path, files={"decisions.md": (
        "# Decisions\n\n- Rates live in quotes/rates.json, reviewed.\n\n- None.\n\n"
        "- 2026-10-02: something else entirely.\n\n-   Rates live in quotes/rates.json,  reviewed.\n"
        "\n- None.\n")})
    assert leftovers(health(repo, env)) == [("doubled-line", "memory/decisions.md", [9])]


GUIDELINES = """\
# Severity guidelines

**Override must include:**
- Justification for the override
- Approver name and date
- Compensating controls in place today

## Adjusting severity

**Decrease severity:**
- Requires authenticated access
- Compensating controls in place today

## Decisions

- 2026-10-01: reports go to the security channel first.

- 2026-10-02: a scanner finding under 4.0 is never paged.
"""


def test_the_same_step_in_two_lists_is_no_doubled_line_but_a_dated_fact_twice_is(tmp_path, env):
    """A union merge doubles a line within one hunk, so within one list; a document may repeat
    a step in two lists. A dated fact is one fact wherever its second copy landed."""
    repo = team_repo(tmp_path, files={"security/report-guidelines.md": GUIDELINES})
    assert leftovers(health(repo, env)) == []
    doubled = GUIDELINES.replace("**Decrease severity:**\n", "**Decrease severity:**\n"
                                 "- 2026-10-01: reports go to the security channel first.\n")
    repo = team_repo(tmp_path / "again", files={"security/report-guidelines.md": doubled})
    assert leftovers(health(repo, env)) == [("doubled-line", "memory/security/report-guidelines.md", [17])]


FLOWS = """\
# Release flows

- Hotfix: branch from the release tag
  - Run the full suite before tagging the build
  - Tag it `vX.Y.Z+1`
- Feature release: branch from main
  - Run the full suite before tagging the build
  - Tag it `vX.Y+1.0`
"""


def test_the_same_step_under_two_items_of_one_list_is_no_doubled_line(tmp_path, env):
    """A sub-item belongs to its item's own list: the same step of two flows is the document's
    repetition. Twice under one item, it is what a merge leaves."""
    repo = team_repo(tmp_path, files={"release/flows.md": FLOWS})
    assert leftovers(health(repo, env)) == []
    doubled = FLOWS.replace("  - Tag it `vX.Y.Z+1`\n", "  - Run the full suite before tagging "
                            "the build\n  - Tag it `vX.Y.Z+1`\n")
    repo = team_repo(tmp_path / "again", files={"release/flows.md": doubled})
    assert leftovers(health(repo, env)) == [("doubled-line", "memory/release/flows.md", [5])]


def test_a_pointer_twice_in_the_index_is_duplicate_pointer_alone(tmp_path, env):
    repo = team_repo(tmp_path)
    write(repo / "memory" / "MEMORY.md", INDEX + "- [Retry policy](retry.md) — how the worker retries\n")
    report = health(repo, env)
    assert leftovers(report) == []
    assert [f["line"] for f in findings(report, "duplicate-pointer")] == [5]


def test_a_line_carrying_the_ignore_marker_is_silenced(tmp_path, env):
    repo = team_repo(tmp_path, files={"decisions.md": (
        "# Decisions\n\n- Rates live in quotes/rates.json, reviewed.\n"
        "- Rates live in quotes/rates.json, reviewed. <!-- mcp-health: ignore -->\n")})
    assert leftovers(health(repo, env)) == []


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_notes_are_never_read_through_a_symlink(tmp_path, env):
    outside = tmp_path / "outside"
    write(outside / "x.md", "# A\n<<<<<<< HEAD\n")
    repo = team_repo(tmp_path)
    (repo / "memory" / "linked").symlink_to(outside)
    assert leftovers(health(repo, env)) == []


def test_check_fails_on_conflict_markers_in_the_memory(installer, tmp_path):
    repo = team_repo(tmp_path)
    installer.ok("--project", str(repo))
    write(repo / "memory" / "caching" / "keys.md", "# Keys\n<<<<<<< HEAD\n- a\n=======\n- b\n"
                                                  ">>>>>>> bob\n")
    done = installer.run("--check", str(repo))
    assert done.returncode == 1
    assert "conflict-markers" in done.stdout


def test_git_is_asked_about_attributes_only_when_facts_sit_side_by_side(tmp_path, env, monkeypatch):
    repo = team_repo(tmp_path, files={"caching/keys.md": "# Keys\n\n- 2026-10-01: one.\n\n"
                                                         "- 2026-10-02: two.\n"})
    calls = []
    real_run = subprocess.run

    def counting_run(command, *args, **kwargs):
        calls.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    assert leftovers(health(repo, env)) == []
    assert not [c for c in calls if "check-attr" in c]
    write(repo / "memory" / "caching" / "keys.md", "# Keys\n\n- 2026-10-01: one.\n- 2026-10-02: two.\n")
    assert leftovers(health(repo, env)) == [("diverged-fact", "memory/caching/keys.md", [4])]
    assert len([c for c in calls if "check-attr" in c]) == 1


def test_a_last_dream_comment_that_says_more_is_no_stamp_the_move_could_take_out(tmp_path, env):
    index = ("# Project Memory Index\n<!-- Last dream: 2026-04-02 Session 156: index consolidated -->\n"
             "\n## Topics\n- [Retry policy](retry.md) — how the worker retries\n")
    repo = team_repo(tmp_path, files={"MEMORY.md": index})
    assert findings(health(repo, env), "stamped-format") == []


def test_a_session_log_may_record_the_same_change_twice(tmp_path, env):
    log = ("# 2026-08-15\n\n## 10:00\n- `M CHANGELOG.md` — modified by the release script\n\n"
           "## 16:00\n- `M CHANGELOG.md` — modified by the release script\n")
    repo = team_repo(tmp_path, files={"2026-08-15.md": log})
    assert leftovers(health(repo, env)) == []


TEAM_NOTE = """\
\ufeff# Working as a team of agents

- 2026-03-04: the lead agent hands coding to the coder agent.

### The lead's SOUL.md
`markdown
# SOUL.md - lead
You coordinate the team.
`

### A specialist's SOUL.md
`markdown
# SOUL.md - specialist
You answer the lead.
`
"""


def test_titles_inside_a_sample_set_off_by_single_backticks_are_the_samples(tmp_path, env):
    """A fence of three backticks that lost two (pasted through a chat) still sets off a sample:
    the files shown inside have titles of their own, and the note has one."""
    repo = team_repo(tmp_path, files={"learnings/agent-team.md": TEAM_NOTE})
    assert leftovers(health(repo, env)) == []


def test_a_byte_order_mark_does_not_hide_the_first_title(tmp_path, env):
    """Two notes of one name merged by union, the first saved by an editor that writes a
    byte-order mark: the second title is still found."""
    merged = "\ufeff# Dev server binds IPv6\n\n- 2026-10-02: use 127.0.0.1.\n" \
             "# Dev server port\n\n- 2026-10-03: it listens on 5173.\n"
    repo = team_repo(tmp_path, files={"gotchas/dev-server.md": merged})
    assert ("doubled-title", "memory/gotchas/dev-server.md", [4]) in leftovers(health(repo, env))


DELETED = RETRY.replace("- 2026-10-01", "- (deleted) 2026-10-01")


def test_a_deletion_against_a_correction_keeps_both_lines_named_as_such(tmp_path, env):
    repo = team_repo(tmp_path)
    save(repo, "alice", {"retry.md": DELETED}, "memory: alice deletes the fact")
    save(repo, "bob", {"retry.md": RETRY.replace("2026-10-01: the worker retries three times",
                                                 "2026-10-06: the worker retries twice")},
         "memory: bob corrects it")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    assert (repo / "memory" / "retry.md").read_text(encoding="utf-8").split("\n")[2:4] == [
        "- (deleted) 2026-10-01: the worker retries three times.",
        "- 2026-10-06: the worker retries twice."]
    [finding] = findings(health(repo, env), "diverged-fact")
    assert (finding["file"], finding["lines"]) == ("memory/retry.md", [4])
    assert "deleted the fact while another changed it" in finding["message"]


def test_a_deletion_alone_or_made_on_both_branches_lands_with_nothing_left(tmp_path, env):
    facts = "# Caching\n\n- 2026-10-01: keys carry the tenant.\n\n- 2026-10-01: TTL is 900 s.\n"
    repo = team_repo(tmp_path, files={"caching/keys.md": facts})
    deleted = facts.replace("- 2026-10-01: TTL", "- (deleted) 2026-10-01: TTL")
    save(repo, "alice", {"caching/keys.md": deleted, "retry.md": DELETED}, "memory: alice")
    save(repo, "bob", {"caching/keys.md": deleted.replace("the tenant", "the region")}, "memory: bob")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    assert (repo / "memory" / "caching" / "keys.md").read_text(encoding="utf-8") == \
        deleted.replace("the tenant", "the region")
    assert leftovers(health(repo, env)) == []


def test_two_branches_changing_neighbouring_facts_leave_one_block_after_the_other(tmp_path, env):
    facts = "# Caching\n\n- 2026-10-01: keys carry the tenant.\n\n- 2026-10-01: TTL is 900 s.\n"
    repo = team_repo(tmp_path, files={"caching/keys.md": facts})
    save(repo, "alice", {"caching/keys.md": facts.replace("the tenant", "the region")
                         .replace("900", "600")}, "memory: alice")
    save(repo, "bob", {"caching/keys.md": facts.replace("the tenant", "the user")
                       .replace("900", "300")}, "memory: bob")
    assert merge(repo, "alice").returncode == 0 and merge(repo, "bob").returncode == 0
    lines = (repo / "memory" / "caching" / "keys.md").read_text(encoding="utf-8").split("\n")
    assert lines[2:9] == ["- 2026-10-01: keys carry the region.", "", "- 2026-10-01: TTL is 600 s.",
                          "- 2026-10-01: keys carry the user.", "", "- 2026-10-01: TTL is 300 s.", ""]
    [finding] = findings(health(repo, env), "diverged-fact")
    assert finding["lines"] == [6]
    assert "lines 3-8" in finding["repair"] and "one version of each" in finding["repair"]
