"""memory_format.py: a memory written in the previous format moves to the team format without
losing a line. The rules come from spec §2 and §4.5: no stamp a save rewrites, no Active Context
in the shared index (it moves, line for line, into a file session start lists), dated facts kept
a blank line apart; the lines taken out are the stamps and the earlier template's guidance
comment, and nothing else."""
import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_format_module():
    spec = importlib.util.spec_from_file_location("memory_format", os.path.join(ROOT, "memory_format.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORMAT = load_format_module()
EARLIER_GUIDANCE = ("<!-- An index, not a store: one pointer line per topic file, under 80 lines, "
                    "rewritten by /dream. Never session history. -->")

PREVIOUS_INDEX = """\
# Project Memory Index
<!-- Last dream: 2026-11-29 -->
%s

## Active Context
Rate table 2026-10 is live; next: per-customer rates.
Waiting on the carrier for the island list.

## Decisions
- [Decisions](decisions.md) — integer cents, rates in a reviewed JSON file

## Topics
- [Deployment](deployment.md) — one instance behind the gateway
""" % EARLIER_GUIDANCE

PREVIOUS_TOPIC = """\
# Decisions
<!-- Last updated: 2026-11-29 -->

- 2026-09-08: Money is integer cents.
- 2026-09-15: The rate table is `quotes/rates.json` in git.
  Revisit when rates change monthly.
- 2026-11-24: The surcharge is charged once per order.

```text
- 2026-01-01: a dated line inside a code block stays as it is
- 2026-01-02: and so does its neighbour
```
"""

PREVIOUS_FEEDBACK = """\
# Compute prices, never read them
<!-- Last updated: 2026-11-03 -->

**The lesson.** Compute a price before stating it.
"""


def previous_memory():
    return {"MEMORY.md": PREVIOUS_INDEX, "decisions.md": PREVIOUS_TOPIC,
            "feedback_compute-prices.md": PREVIOUS_FEEDBACK}


def is_stamp(line):
    return line.startswith(("<!-- Last dream:", "<!-- Last updated:"))


def test_no_line_of_memory_is_lost_only_stamps_and_the_earlier_guidance_go():
    before = previous_memory()
    after = FORMAT.migrated(before, "MEMORY.md", "2026-12-01")
    kept = [line for text in after.values() for line in text.split("\n") if line.strip()]
    for name, text in before.items():
        for line in text.split("\n"):
            if not line.strip() or line == "## Active Context":  # a heading, now "Work in progress"
                continue
            if is_stamp(line) or line == EARLIER_GUIDANCE:
                assert line not in kept, line
            else:
                assert line in kept, "%s lost %r" % (name, line)


def test_every_file_keeps_its_lines_in_their_order():
    after = FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01")
    for name in ("decisions.md", "feedback_compute-prices.md"):
        before_lines = [l for l in previous_memory()[name].split("\n") if l.strip() and not is_stamp(l)]
        after_lines = [l for l in after[name].split("\n") if l.strip()]
        assert after_lines == before_lines


def test_stamps_go_and_nothing_is_stamped_again():
    after = FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01")
    for text in after.values():
        assert "Last dream" not in text and "Last updated" not in text


def test_active_context_moves_line_for_line_into_a_file_the_index_links():
    after = FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01")
    assert "## Active Context" not in after["MEMORY.md"]
    assert after["work-in-progress.md"] == (
        "# What was in progress on 2026-11-29\n\n"
        "Rate table 2026-10 is live; next: per-customer rates.\n"
        "Waiting on the carrier for the island list.\n")
    assert "\n## Work in progress\n- [What was in progress on 2026-11-29](work-in-progress.md) — " \
        in after["MEMORY.md"]


def test_an_empty_active_context_leaves_no_section_and_no_file():
    index = PREVIOUS_INDEX.replace("Rate table 2026-10 is live; next: per-customer rates.\n"
                                   "Waiting on the carrier for the island list.\n", "")
    after = FORMAT.migrated({"MEMORY.md": index}, "MEMORY.md", "2026-12-01")
    assert list(after) == ["MEMORY.md"]
    assert "## Active Context" not in after["MEMORY.md"] and "Work in progress" not in after["MEMORY.md"]


def test_without_a_last_dream_line_the_moved_context_takes_today():
    index = PREVIOUS_INDEX.replace("<!-- Last dream: 2026-11-29 -->\n", "")
    after = FORMAT.migrated({"MEMORY.md": index}, "MEMORY.md", "2026-12-01")
    assert after["work-in-progress.md"].startswith("# What was in progress on 2026-12-01\n")


def test_an_existing_work_in_progress_file_is_never_overwritten():
    files = dict(previous_memory(), **{"work-in-progress.md": "# Mine\n"})
    after = FORMAT.migrated(files, "MEMORY.md", "2026-12-01")
    assert after["work-in-progress.md"] == "# Mine\n"
    assert "Rate table" in after["work-in-progress-2.md"]
    assert "](work-in-progress-2.md) — " in after["MEMORY.md"]


def test_the_index_keeps_its_pointers_and_gets_this_release_guidance():
    after = FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01")
    assert after["MEMORY.md"] == (
        "# Project Memory Index\n%s\n\n## Work in progress\n%s\n\n## Decisions\n"
        "- [Decisions](decisions.md) — integer cents, rates in a reviewed JSON file\n\n"
        "## Topics\n- [Deployment](deployment.md) — one instance behind the gateway\n"
        % (FORMAT.GUIDANCE, FORMAT.POINTER % ("2026-11-29", "work-in-progress.md")))


def test_a_guidance_comment_of_the_users_own_stays():
    own = "<!-- Our index: keep it short. -->"
    after = FORMAT.migrated({"MEMORY.md": PREVIOUS_INDEX.replace(EARLIER_GUIDANCE, own)},
                            "MEMORY.md", "2026-12-01")
    assert own in after["MEMORY.md"] and FORMAT.GUIDANCE not in after["MEMORY.md"]


def test_dated_facts_on_adjacent_lines_get_a_blank_line_between_them_outside_code():
    after = FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01")["decisions.md"]
    assert "- 2026-09-08: Money is integer cents.\n\n- 2026-09-15:" in after
    # a fact's continuation line keeps it apart from the next fact already
    assert "  Revisit when rates change monthly.\n- 2026-11-24:" in after
    assert ("- 2026-01-01: a dated line inside a code block stays as it is\n"
            "- 2026-01-02: and so does its neighbour\n") in after


def test_the_move_is_idempotent():
    once = FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01")
    twice = FORMAT.migrated(once, "MEMORY.md", "2026-12-01")
    assert twice == once


def test_windows_line_endings_are_kept():
    files = dict((name, text.replace("\n", "\r\n")) for name, text in previous_memory().items())
    after = FORMAT.migrated(files, "MEMORY.md", "2026-12-01")
    for name in files:
        assert "\n" not in after[name].replace("\r\n", ""), name
    assert "Last updated" not in after["decisions.md"]
    assert "- 2026-09-08: Money is integer cents.\r\n\r\n- 2026-09-15:" in after["decisions.md"]


def write_memory(folder, files):
    for name, text in files.items():
        path = os.path.join(str(folder), *name.split("/"))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as stream:
            stream.write(text)


def test_changes_names_only_what_the_move_writes(tmp_path):
    write_memory(tmp_path, previous_memory())
    write_memory(tmp_path, {"deployment.md": "# Deployment\n\n- 2026-09-29: one instance.\n",
                            "caching/eviction.md": "# Eviction\n<!-- Last updated: 2026-11-01 -->\n"})
    found = FORMAT.changes(str(tmp_path), "MEMORY.md", "2026-12-01")
    assert sorted(found) == ["MEMORY.md", "caching/eviction.md", "decisions.md",
                             "feedback_compute-prices.md", "work-in-progress.md"]
    assert found["caching/eviction.md"] == "# Eviction\n"


def test_a_memory_in_the_team_format_needs_no_change(tmp_path):
    write_memory(tmp_path, FORMAT.migrated(previous_memory(), "MEMORY.md", "2026-12-01"))
    assert FORMAT.changes(str(tmp_path), "MEMORY.md", "2026-12-01") == {}


@pytest.mark.skipif(os.name == "nt", reason="symlinks need privileges on Windows")
def test_changes_never_reads_through_a_symlink(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n<!-- Last updated: 2026-11-01 -->\n", encoding="utf-8")
    memory = tmp_path / "memory"
    memory.mkdir()
    (memory / "linked.md").symlink_to(outside)
    (memory / "folder").symlink_to(tmp_path)
    assert FORMAT.changes(str(memory), "MEMORY.md", "2026-12-01") == {}


def test_a_file_that_is_not_utf8_is_left_alone(tmp_path):
    (tmp_path / "latin.md").write_bytes(b"# Caf\xe9\n<!-- Last updated: 2026-11-01 -->\n")
    assert FORMAT.changes(str(tmp_path), "MEMORY.md", "2026-12-01") == {}


def test_a_stamp_that_says_more_than_a_date_is_a_note_and_stays():
    index = ("# Memory\n<!-- Last dream: 2026-04-02 Session 156: index consolidated -->\n"
             "<!-- Last dream: YYYY-MM-DD -->\n<!-- last-updated: 2026-04-02 10:30 -->\n")
    after = FORMAT.migrated({"MEMORY.md": index}, "MEMORY.md", "2026-12-01")["MEMORY.md"]
    assert after == "# Memory\n<!-- Last dream: 2026-04-02 Session 156: index consolidated -->\n"


def test_the_active_context_moves_with_its_own_subsections():
    index = ("# Index\n<!-- Last dream: 2026-11-29 -->\n\n## Active Context\n\n### Current phase\n"
             "Payments.\n\n### Next\n1. Webhooks.\n\n## Topics\n- [A](a.md) — a\n")
    after = FORMAT.migrated({"MEMORY.md": index}, "MEMORY.md", "2026-12-01")
    assert after["work-in-progress.md"] == ("# What was in progress on 2026-11-29\n\n"
                                            "### Current phase\nPayments.\n\n### Next\n1. Webhooks.\n")
    assert "### " not in after["MEMORY.md"] and "## Topics\n- [A](a.md) — a\n" in after["MEMORY.md"]
