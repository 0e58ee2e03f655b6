"""The listing: what the index does not link is listed under it at every session start.

The rule (spec §3.1, §4.5): every Markdown file directly beside the index that the index does not
link gets one line, `- [Title](file.md) — clause`, its title from its `# ` line (else its
frontmatter name, else its file name) and its clause from the line of prose under that title
(else its frontmatter description); every topic folder beside the index gets one line naming its
notes. A README, a dot entry, the index itself and anything reached through a symlink are never
listed, and nothing is listed when the index sits at the project's top. The index budget counts
the listed lines with the index's own."""
import os
import shutil

import pytest

from conftest import run_hook, write_lines
from test_hook_session_start import hooks_without, inject

HEADING = "## Memory the index does not link"


def listing(text):
    """The injection's listing lines (after its heading), or [] when it has none."""
    lines = text.split("\n")
    for number, line in enumerate(lines):
        if line.startswith(HEADING):
            out = []
            for entry in lines[number + 1:]:
                if not entry.startswith("- "):
                    break
                out.append(entry)
            return out
    return []


def budget(project, **env):
    done = run_hook("context-budget.py", project, env=env)
    assert done.returncode == 0 and done.stderr == b""
    return done.stdout.decode("utf-8")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_memory_the_index_links_whole_has_no_listing(project):
    text = inject(project)
    assert "- [Topic](topic.md) — the pointer" in text
    assert HEADING not in text


def test_a_note_in_a_topic_folder_is_reached_through_its_folder_line(project):
    write(project / "memory" / "caching" / "eviction-ttl.md", "# Eviction TTL\n\n- 2026-11-30: 900 s.\n")
    assert listing(inject(project)) == ["- [caching/](caching/) — 1 note: eviction-ttl"]


def test_a_topic_folder_names_its_notes_sorted_and_counts_them(project):
    for name in ("release-tags", "Rollback", "uploads-bucket"):
        write(project / "memory" / "deployment" / (name + ".md"), "# %s\n" % name)
    write(project / "memory" / "deployment" / "README.md", "# What this folder holds\n")
    write(project / "memory" / "deployment" / "draft.txt", "not a note\n")
    assert listing(inject(project)) == [
        "- [deployment/](deployment/) — 3 notes: release-tags, Rollback, uploads-bucket"]


def test_a_file_the_index_does_not_link_gets_its_title_and_clause(project):
    write(project / "memory" / "cache-choice.md",
          "# Cache choice\nOpen it before adding a cache layer.\n\n- 2026-11-12: in-process.\n")
    assert listing(inject(project)) == [
        "- [Cache choice](cache-choice.md) — Open it before adding a cache layer."]


def test_a_stamp_or_a_fact_under_the_title_is_no_clause(project):
    write(project / "memory" / "gotchas.md",
          "# Gotchas\n<!-- Last updated: 2026-11-21 -->\n\n- 2026-10-14: band limits are inclusive.\n")
    write(project / "memory" / "steps.md", "# Steps\n1. build\n2. ship\n")
    assert listing(inject(project)) == ["- [Gotchas](gotchas.md)", "- [Steps](steps.md)"]


def test_the_harness_format_gives_its_name_and_description(project):
    write(project / "memory" / "feedback_testing.md",
          "---\nname: Run the tests first\ndescription: before saying a change works\ntype: feedback\n"
          "---\n\nRun `make check`.\n")
    assert listing(inject(project)) == [
        "- [Run the tests first](feedback_testing.md) — before saying a change works"]


def test_a_file_without_a_title_is_named_by_its_file_name(project):
    write(project / "memory" / "2026-11-30.md", "Worked on the parser.\n")
    assert listing(inject(project)) == ["- [2026-11-30](2026-11-30.md) — Worked on the parser."]


def test_the_index_a_readme_dot_entries_and_empty_folders_are_not_listed(project):
    write(project / "memory" / "README.md", "# About this folder\n")
    write(project / "memory" / ".draft.md", "# Draft\n")
    write(project / "memory" / ".hidden" / "note.md", "# Hidden\n")
    write(project / "memory" / "assets" / "diagram.svg", "<svg/>\n")
    (project / "memory" / "empty").mkdir()
    assert listing(inject(project)) == []


def test_a_folder_the_index_links_is_not_listed_again(project):
    write(project / "memory" / "deployment" / "tags.md", "# Tags\n")
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n- [Topic](topic.md) — x\n- [Deployment](deployment/) — how releases go out\n",
        encoding="utf-8")
    assert listing(inject(project)) == []


def test_a_link_inside_a_comment_or_code_does_not_count_as_linked(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n<!-- [Topic](topic.md) -->\n`[Topic](topic.md)`\n", encoding="utf-8")
    assert listing(inject(project)) == ["- [Topic](topic.md)"]


def test_a_name_a_link_cannot_hold_is_put_in_angle_brackets(project):
    write(project / "memory" / "two words (draft).md", "# Two words\n")
    assert listing(inject(project)) == ["- [Two words](<two words (draft).md>)"]
    assert "Memory defects" not in inject(project)


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_symlink_is_never_followed_so_nothing_outside_reaches_the_session(project, tmp_path):
    secret = tmp_path / "secret.md"
    secret.write_text("# sk-live-4242\nthe key itself\n", encoding="utf-8")
    folder = tmp_path / "elsewhere"
    write(folder / "private.md", "# private\n")
    (project / "memory" / "linked.md").symlink_to(secret)
    (project / "memory" / "linked-folder").symlink_to(folder)
    text = inject(project)
    assert listing(text) == [] and "sk-live" not in text and "private" not in text


def test_nothing_is_listed_for_an_index_at_the_project_top(project):
    (project / "MEMORY.md").write_text("# Index\n", encoding="utf-8")
    write(project / "docs" / "guide.md", "# Guide\n")
    text = inject(project, MCP_MEMORY_INDEX="MEMORY.md")
    assert "## Memory index (MEMORY.md" in text and listing(text) == []
    assert budget(project, MCP_MEMORY_INDEX="MEMORY.md", MCP_MEM_LINES="1") == ""


def test_a_folder_of_many_notes_stays_one_short_line(project):
    for number in range(60):
        write(project / "memory" / "gotchas" / ("gotcha-number-%02d.md" % number), "# G\n")
    [line] = listing(inject(project))
    assert line.startswith("- [gotchas/](gotchas/) — 60 notes: gotcha-number-00, gotcha-number-01, ")
    shown = line.split(": ", 1)[1].split(" and ")[0].split(", ")
    assert line.endswith(" and %d more" % (60 - len(shown)))
    assert len(line) < 320


def test_only_the_first_200_files_are_read_and_the_rest_are_counted(project):
    for number in range(203):
        write(project / "memory" / ("note-%03d.md" % number), "# Note %d\n" % number)
    lines = listing(inject(project, MCP_MEM_LINES="1000"))
    assert len(lines) == 201
    assert lines[199] == "- [Note 199](note-199.md)"
    assert lines[200] == "- ... and 3 more files in memory/, not read at session start"


def test_listed_lines_count_against_the_index_budget(project):
    (project / "memory" / "MEMORY.md").write_text(
        "".join("- line %d\n" % i for i in range(78)), encoding="utf-8")
    write(project / "memory" / "caching" / "ttl.md", "# TTL\n")
    assert budget(project) == ""  # 78 + topic.md + caching/ = 80 lines
    write(project / "memory" / "gotchas.md", "# Gotchas\n")
    report = budget(project)
    assert ("- memory/MEMORY.md is 78 lines and session start lists 3 more under it, one for "
            "each memory file and topic folder it does not link: 81 lines (budget 80).") in report


@pytest.mark.parametrize("how", ["missing", "raising"])
def test_a_listing_that_cannot_be_made_costs_only_itself(project, tmp_path, how):
    (project / "memory" / "MEMORY.md").write_text("# I\n- [Topic](topic.md) — the pointer\n",
                                                  encoding="utf-8")
    write(project / "memory" / "caching" / "ttl.md", "# TTL\n")
    hooks = hooks_without(tmp_path, "context-budget.py", "unlinked_memory", how)
    done = run_hook("session-start.py", project, hooks_dir=hooks, env={"MCP_MEM_LINES": "1"},
                    stdin={"session_id": "s1", "source": "startup", "cwd": str(project)})
    text = done.stdout.decode("utf-8")
    assert done.returncode == 0 and done.stderr == b""
    assert "- [Topic](topic.md) — the pointer" in text and HEADING not in text
    assert "memory/MEMORY.md is 2 lines (budget 1)" in text
