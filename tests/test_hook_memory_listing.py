"""The listing: session start lists the topic folders beside the index, under it.

The rule (spec §3.1, §4.5): a note is a file of its own in a topic folder beside the index,
`memory/<folder>/<note>.md`. Under the index, session start shows one line per topic folder that
holds notes the index does not link, `- [<folder>/](<folder>/) — N notes: <names>`, the names
sorted and cut before the line grows past one screen line; a folder or a note the index links is
reached by that link and not listed again. A dot folder, a folder without notes, anything reached
through a symlink and a README are never listed, and nothing is listed when the index sits at the
project's top. The index budget counts one line per listed folder with the index's own lines."""
import os

import pytest

from conftest import run_hook
from test_hook_session_start import hooks_without, inject

HEADING = "## Topic folders (listed at session start; a note is memory/<folder>/<note>.md)"


def listing(text):
    """The injection's listing lines (after its heading), or [] when it has none."""
    lines = text.split("\n")
    if HEADING not in lines:
        return []
    out = []
    for entry in lines[lines.index(HEADING) + 1:]:
        if not entry.startswith("- "):
            break
        out.append(entry)
    return out


def budget(project, **env):
    done = run_hook("context-budget.py", project, env=env)
    assert done.returncode == 0 and done.stderr == b""
    return done.stdout.decode("utf-8")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_a_memory_without_topic_folders_has_no_listing(project):
    write(project / "memory" / "unlinked.md", "# A file the index does not link\n")
    text = inject(project)
    assert "- [Topic](topic.md) — the pointer" in text
    assert HEADING not in text


def test_a_note_is_reached_through_its_folder_line_under_the_index(project):
    write(project / "memory" / "caching" / "eviction-ttl.md", "# Eviction TTL\n\n- 2026-11-30: 900 s.\n")
    text = inject(project)
    assert listing(text) == ["- [caching/](caching/) — 1 note: eviction-ttl"]
    assert text.index("- [Topic](topic.md) — the pointer") < text.index(HEADING)


def test_a_folder_names_its_notes_sorted_and_counts_them(project):
    for name in ("release-tags", "Rollback", "uploads-bucket"):
        write(project / "memory" / "deployment" / (name + ".md"), "# %s\n" % name)
    write(project / "memory" / "deployment" / "README.md", "# What this folder holds\n")
    write(project / "memory" / "deployment" / ".draft.md", "# Draft\n")
    write(project / "memory" / "deployment" / "diagram.svg", "<svg/>\n")
    write(project / "memory" / "deployment" / "old" / "nested.md", "# Nested\n")
    write(project / "memory" / "gotchas" / "dev-server-ipv6.md", "# IPv6\n")
    assert listing(inject(project)) == [
        "- [deployment/](deployment/) — 3 notes: release-tags, Rollback, uploads-bucket",
        "- [gotchas/](gotchas/) — 1 note: dev-server-ipv6"]


def test_what_the_index_links_is_reached_by_that_link_and_not_listed_again(project):
    for name in ("release-tags", "rollback"):
        write(project / "memory" / "deployment" / (name + ".md"), "# %s\n" % name)
    write(project / "memory" / "curated" / "one.md", "# One\n")
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n- [Topic](topic.md) — x\n- [Tags](deployment/release-tags.md) — how tags work\n"
        "- [Curated](curated/) — a folder the index points to\n"
        "<!-- - [Rollback](deployment/rollback.md) -->\n", encoding="utf-8")
    assert listing(inject(project)) == ["- [deployment/](deployment/) — 1 note: rollback"]
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n- [Topic](topic.md) — x\n- [Tags](deployment/release-tags.md) — tags\n"
        "- [Rollback](deployment/rollback.md) — rolling back\n- [Curated](curated) — one\n",
        encoding="utf-8")
    assert listing(inject(project)) == []


def test_dot_folders_and_folders_without_notes_are_not_listed(project):
    write(project / "memory" / ".hidden" / "note.md", "# Hidden\n")
    write(project / "memory" / "assets" / "diagram.svg", "<svg/>\n")
    write(project / "memory" / "readme-only" / "README.md", "# About\n")
    (project / "memory" / "empty").mkdir()
    assert listing(inject(project)) == []


def test_a_folder_name_a_link_cannot_hold_is_put_in_angle_brackets(project):
    write(project / "memory" / "release notes (old)" / "v1.md", "# v1\n")
    text = inject(project)
    assert listing(text) == ["- [release notes (old)/](<release notes (old)>/) — 1 note: v1"]
    assert "Memory defects" not in text


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_a_symlink_is_never_followed_so_no_name_from_outside_reaches_the_session(project, tmp_path):
    outside = tmp_path / "elsewhere"
    write(outside / "customer-list.md", "# private\n")
    (project / "memory" / "linked-folder").symlink_to(outside)
    write(project / "memory" / "caching" / "ttl.md", "# TTL\n")
    (project / "memory" / "caching" / "secret-name.md").symlink_to(outside / "customer-list.md")
    text = inject(project)
    assert listing(text) == ["- [caching/](caching/) — 1 note: ttl"]
    assert "customer-list" not in text and "secret-name" not in text


def test_the_heading_names_the_folder_the_index_is_in(project):
    write(project / "docs" / "memory" / "INDEX.md", "# Index\n")
    write(project / "docs" / "memory" / "caching" / "ttl.md", "# TTL\n")
    text = inject(project, MCP_MEMORY_INDEX="docs/memory/INDEX.md")
    assert ("## Topic folders (listed at session start; a note is docs/memory/<folder>/<note>.md)\n"
            "- [caching/](caching/) — 1 note: ttl\n") in text


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
    assert shown == ["gotcha-number-%02d" % n for n in range(len(shown))]
    assert line.endswith(" and %d more" % (60 - len(shown)))
    assert len(line) < 300


def test_listed_folders_count_against_the_index_budget(project):
    (project / "memory" / "MEMORY.md").write_text(
        "".join("- line %d\n" % i for i in range(79)), encoding="utf-8")
    write(project / "memory" / "caching" / "ttl.md", "# TTL\n")
    write(project / "memory" / "caching" / "keys.md", "# Keys\n")
    assert budget(project) == ""  # 79 lines and one folder: 80
    write(project / "memory" / "gotchas" / "ipv6.md", "# IPv6\n")
    assert ("- memory/MEMORY.md is 79 lines and session start lists its 2 topic folder(s) under "
            "it: 81 lines (budget 80).") in budget(project)


@pytest.mark.parametrize("how", ["missing", "raising"])
def test_a_listing_that_cannot_be_made_costs_only_itself(project, tmp_path, how):
    (project / "memory" / "MEMORY.md").write_text("# I\n- [Topic](topic.md) — the pointer\n",
                                                  encoding="utf-8")
    write(project / "memory" / "caching" / "ttl.md", "# TTL\n")
    hooks = hooks_without(tmp_path, "context-budget.py", "topic_folders", how)
    done = run_hook("session-start.py", project, hooks_dir=hooks, env={"MCP_MEM_LINES": "1"},
                    stdin={"session_id": "s1", "source": "startup", "cwd": str(project)})
    text = done.stdout.decode("utf-8")
    assert done.returncode == 0 and done.stderr == b""
    assert "- [Topic](topic.md) — the pointer" in text and HEADING not in text
    assert "memory/MEMORY.md is 2 lines (budget 1)" in text


def test_a_folder_too_large_to_read_at_a_start_says_at_least(project):
    for number in range(2003):
        (project / "memory" / "logs").mkdir(exist_ok=True)
        (project / "memory" / "logs" / ("%04d.md" % number)).write_bytes(b"")
    [line] = listing(inject(project))
    assert line.startswith("- [logs/](logs/) — at least 2000 notes: ")
