"""Links in the memory index, read as CommonMark reads them, the same way at session start and
in the full report.

The hooks are single files that import nothing of the project, so the link reader lives in
hooks/context-budget.py; memory_health.py reads links through that file. One corpus of link
cases, each with the file a Markdown viewer would open, is fed to both: the session-start check
(the hook's memory defects) and the report (its dead pointers) must find the same links dead,
and exactly the ones CommonMark says are links to files that do not exist. Each expectation
comes from the CommonMark rules for link destinations (spec 0.31, "Links"): a destination is
`<...>` or a run without spaces whose parentheses balance; backslash escapes and character
references are read; a title may follow after white space; a viewer then drops the anchor and
the query and decodes `%XX` escapes as UTF-8 to find the file.
"""
import os
import re

import pytest

from conftest import load_hook, make_repo, run_hook
from test_memory_health import HEALTH, write

HOOK = load_hook("context-budget.py")

# (line of the index, files that exist beside it, the targets a viewer finds missing).
LINK_CASES = [
    ("- [Café](caf%C3%A9.md) — a percent-encoded name", ["café.md"], []),
    ("- [Café](caf%C3%A9.md) — its file gone", [], ["café.md"]),
    ("- [Euro](%E2%82%AC.md)", ["€.md"], []),
    ("- [Spaced](my%20notes.md)", ["my notes.md"], []),
    ("- [Spaced](<my notes.md>) — a pointed destination may hold spaces", ["my notes.md"], []),
    ("- [Spaced](<my notes.md>)", [], ["my notes.md"]),
    ("- [Spaced](my notes.md) — not a link: a plain destination has no spaces", [], []),
    ("- [Notes](notes_(2025).md) — balanced parentheses", ["notes_(2025).md"], []),
    ("- [Notes](notes_(2025).md)", [], ["notes_(2025).md"]),
    ("- [Nested](a(b(c)).md)", ["a(b(c)).md"], []),
    ("- [Open](notes_(2025.md) — not a link: a parenthesis never closed", [], []),
    ("- [Escaped](a\\)b.md)", ["a)b.md"], []),
    ("- [Escaped](a\\(b.md)", ["a(b.md"], []),
    ("- [Entity](a&amp;b.md)", ["a&b.md"], []),
    ("- [Entity](a&#40;b.md)", ["a(b.md"], []),
    ("- [Titled](topic.md \"A title\")", ["topic.md"], []),
    ("- [Titled](topic.md 'A title')", ["topic.md"], []),
    ("- [Titled](topic.md (A title))", ["topic.md"], []),
    ("- [Titled](gone.md \"A title\")", [], ["gone.md"]),
    ("- [Titled](<topic.md> \"A title\")", ["topic.md"], []),
    ("- [Glued](topic.md\"title\") — a title needs space: the quotes are the name's", [],
     ["topic.md\"title\""]),
    ("- [Unclosed](topic.md \"title) — not a link", [], []),
    ("- [Extra](topic.md \"t\" more) — not a link", [], []),
    ("- [Anchor](topic.md#section)", ["topic.md"], []),
    ("- [Anchor](gone.md#section)", [], ["gone.md"]),
    ("- [Query](topic.md?plain=1#L3)", ["topic.md"], []),
    ("- [Only an anchor](#topics)", [], []),
    ("- [Encoded hash](a%23b.md) — a name with `#` in it", ["a#b.md"], []),
    ("- [Bad escape](bad%ZZ.md) — kept as written", ["bad%ZZ.md"], []),
    ("- [Spaces around]( topic.md )", ["topic.md"], []),
    ("- [Tab](a\tb.md) — not a link: a tab ends a plain destination", [], []),
    ("- [No-break space](a\u00a0b.md) — a character of the name", ["a\u00a0b.md"], []),
    ("- [Brackets](\\[a\\].md)", ["[a].md"], []),
    ("- [Empty]()", [], []),
    ("- [Empty](<>)", [], []),
    ("- \\[Escaped bracket](gone.md) — not a link", [], []),
    ("- [Escaped close\\](gone.md) — not a link", [], []),
    ("- [Space before] (gone.md) — not a link", [], []),
    ("- [a [nested] title](topic.md)", ["topic.md"], []),
    ("- [a [b](gone.md) — the inner link", [], ["gone.md"]),
    ("- ![An image](pic.png)", [], ["pic.png"]),
    ("| [2026-08-22](2026-08-22.md) | a table row |", ["2026-08-22.md"], []),
    ("- [Two](one.md) and [links](two.md)", ["one.md"], ["two.md"]),
    ("- [Web](https://example.com/gone.md)", [], []),
    ("- [Mail](mailto:owner@example.com)", [], []),
    ("- [Outside](../src/gone.py) — a link that leaves the folder", [], ["../src/gone.py"]),
    ("- [Deeper](deep/topic.md)", ["deep/topic.md"], []),
    ("- [Kept](topic.md) — `[x](gone.md)` in code is text", ["topic.md"], []),
    ("- [Hidden](topic.md) <!-- [y](gone.md) --> in a comment", ["topic.md"], []),
]


def project_with(tmp_path, line, files):
    root = make_repo(tmp_path / "project")
    write(root / "memory" / "MEMORY.md", "# Project Memory Index\n\n## Topics\n%s\n" % line)
    for name in files:
        write(root / "memory" / name, "# Topic\n<!-- Last updated: 2026-10-01 -->\n")
    return root


def dead_at_session_start(project, env):
    """The dead targets the hook names under `## Memory defects`."""
    [defect] = HOOK.memory_defects(str(project), env) or [None]
    if defect is None:
        return []
    return re.findall(r"line \d+ `([^`]*)`", defect)


def dead_in_the_report(project, env):
    report = HEALTH.memory_health(str(project), env, preview=False)
    return [f["message"].split("`")[1] for f in report["findings"] if f["check"] == "dead-pointer"]


@pytest.fixture
def env(tmp_path):
    (tmp_path / "home").mkdir(exist_ok=True)
    return {"HOME": str(tmp_path / "home"), "MCP_PROJECTS_DIR": str(tmp_path / "projects")}


@pytest.mark.parametrize("line, files, dead", LINK_CASES, ids=[c[0][:40] for c in LINK_CASES])
def test_the_hook_and_the_report_read_each_link_as_commonmark_does(tmp_path, env, line, files,
                                                                   dead):
    project = project_with(tmp_path, line, files)
    assert dead_at_session_start(project, env) == dead
    assert dead_in_the_report(project, env) == dead


def test_the_session_start_hook_names_the_same_dead_links_as_the_report(tmp_path, env):
    """The corpus as one index, through the real session-start path (a subprocess, as the harness
    runs it): every dead link the report finds is counted under `## Memory defects`."""
    lines = [line for line, _, _ in LINK_CASES]
    files = set(name for _, names, dead in LINK_CASES for name in names
                if not any(name == target for _, _, gone in LINK_CASES for target in gone))
    project = project_with(tmp_path, "\n".join(lines), sorted(files))
    expected = []
    for line, _, dead in LINK_CASES:
        expected += [target for target in dead if target not in expected]
    report = dead_in_the_report(project, env)
    assert sorted(set(report)) == sorted(expected)
    done = run_hook("session-start.py", project, stdin={"session_id": "links", "source": "startup"},
                    env={"MCP_MEM_LINES": "200", "MCP_PROJECTS_DIR": env["MCP_PROJECTS_DIR"]})
    text = done.stdout.decode("utf-8")
    assert "points to %d file(s) that do not exist" % len(report) in text


def test_a_comment_the_budgets_last_line_cuts_still_hides_its_links(tmp_path, env):
    """The dead pointers are sought in the budget's lines, read as the whole index reads: a
    comment that closes past the last line still hides the links before that line."""
    lines = ["- [kept](kept.md)", "<!-- retired:", "- [gone](gone.md)", "-->", "- [lost](lost.md)"]
    project = project_with(tmp_path, "\n".join(lines), ["kept.md"])
    lost_at = 8  # the title, a blank line, `## Topics`, then the five lines above
    for budget in range(1, lost_at + 3):
        dead = dead_at_session_start(project, dict(env, MCP_MEM_LINES=str(budget)))
        assert dead == (["lost.md"] if budget >= lost_at else []), budget


@pytest.mark.parametrize("seed", range(int(os.environ.get("MCP_GENERATED_SEEDS", "12"))))
def test_links_in_comments_and_fences_are_never_dead_pointers_wherever_the_budget_cuts(
        tmp_path, env, seed):
    """An index of pointers to notes that exist or not, among comments and code fences that
    close somewhere below, cut by the line budget at every line: by CommonMark a link inside a
    comment or a fence is no link, so the dead pointers are exactly the dead links outside them
    on the budget's lines."""
    import random
    rng = random.Random(seed)
    lines, hidden_by, expected = ["# Project Memory Index", "", "## Topics"], None, []
    for number in range(rng.randint(4, 14)):
        kind = rng.choice(["live", "dead", "dead", "open", "close", "blank"])
        if kind == "open" and hidden_by is None:
            hidden_by = rng.choice(["comment", "fence"])
            lines.append("<!-- retired:" if hidden_by == "comment" else "```")
        elif kind == "close" and hidden_by is not None:
            lines.append("-->" if hidden_by == "comment" else "```")
            hidden_by = None
        elif kind in ("live", "dead"):
            target = "%s-%d.md" % (kind, number)
            lines.append("- [%s](%s)" % (target, target))
            if kind == "dead" and hidden_by is None:
                expected.append((len(lines), target))
        else:
            lines.append("")
    if hidden_by is not None:
        lines.append("-->" if hidden_by == "comment" else "```")
    project = make_repo(tmp_path / "project")
    write(project / "memory" / "MEMORY.md", "\n".join(lines) + "\n")
    for line in lines:
        if line.startswith("- [live-"):
            write(project / "memory" / line[3:line.index("]")], "# Topic\n")
    for budget in range(1, len(lines) + 2):
        [defect] = HOOK.memory_defects(str(project), dict(env, MCP_MEM_LINES=str(budget))) \
            or [""]
        within = [(at, target) for at, target in expected if at <= budget]
        # The defect counts them all and names the first few (NAMED_AT_MOST), each by its line.
        assert ("points to %d file(s)" % len(within) in defect) == bool(within), (budget, lines)
        assert re.findall(r"line (\d+) `([^`]*)`", defect) == \
            [(str(at), target) for at, target in within[:HOOK.NAMED_AT_MOST]], (budget, lines)
