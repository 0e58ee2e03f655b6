"""Memory health: every finding seen to fire and seen to stay silent, on memories built here.

Three of the checks also run at every session start (dead pointers, an unclosed comment, the
auto-memory cap), in the context-budget hook, under their own heading; the rest live in
memory_health.py beside install.py and run only in install.py --check.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import clean_environment, load_hook, make_repo, run_hook, write_lines
from installtools import installer  # noqa: F401  (a fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OLD = "2026-10-01T12:00:00+00:00"


HOOK = load_hook("context-budget.py")


def load_health_module():
    """memory_health.py, loaded by path as install.py loads it."""
    spec = importlib.util.spec_from_file_location("memory_health", os.path.join(ROOT, "memory_health.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HEALTH = load_health_module()
HOOK_SESSION_START = load_hook("session-start.py")


from test_hook_context_budget import encoded  # noqa: E402  (the harness's rule, written apart)


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def commit(repo, message, date=OLD):
    """Commit everything in the work tree with a fixed date, and return the short hash."""
    env = clean_environment(repo.parent / "home")
    env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    for args in (["add", "-A"], ["commit", "-q", "--allow-empty", "-m", message]):
        subprocess.run(["git", "-C", str(repo)] + args, check=True, env=env, capture_output=True)
    done = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"], env=env,
                          capture_output=True, check=True)
    return done.stdout.decode().strip()


HEALTHY_INDEX = """\
# Project Memory Index
<!-- Last dream: 2026-10-01 -->
<!-- An index, not a store: one pointer line per topic file. -->

## Active Context
Working on the retry policy; next: the backoff.

## Topics
- [Retry policy](retry.md) — how the worker retries

## Feedback from the owner
- [Verify before claiming done](feedback_verify.md) — run the gate and quote it
"""

HEALTHY_TOPIC = """\
# Retry policy
<!-- Last updated: 2026-10-01 -->

- 2026-10-01: `src/worker.py` retries three times. Check: `grep RETRIES src/worker.py`.
"""

HEALTHY_FEEDBACK = """\
# Verify before claiming done
<!-- Last updated: 2026-10-01 -->

**The lesson.** Run the gate before saying a change is done.

**Why:** 2026-09-30: a change was declared done while a test failed.

**How to apply:** run `python3 -m pytest` and quote its last line.
"""


@pytest.fixture
def env(tmp_path):
    """The variables memory_health reads, pointing into this test's own folders, with the
    checks that read what the memory says turned on (MCP_HEALTH_CHECKS), so that each is seen
    to fire; the advice stays off unless a test asks for it (with_advice), and the checks a
    report runs by default are pinned apart (by_default)."""
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "projects").mkdir(exist_ok=True)
    return {"HOME": str(tmp_path / "home"), "MCP_PROJECTS_DIR": str(tmp_path / "projects"),
            "MCP_HEALTH_CHECKS": JUDGED}


# The opt-in checks that are not advice: each reads what a line says (spec §9.2).
JUDGED = "missing-path,possibly-stale,not-a-pointer,orphan,machine-local-path"


def by_default(env):
    """The environment as a user who asks for no opt-in check has it."""
    return dict((key, value) for key, value in env.items() if key != "MCP_HEALTH_CHECKS")


@pytest.fixture
def repo(tmp_path):
    """A git repository with a healthy memory, all committed on 2026-10-01."""
    root = make_repo(tmp_path / "project")
    write(root / "src" / "worker.py", "RETRIES = 3\n")
    write(root / "memory" / "MEMORY.md", HEALTHY_INDEX)
    write(root / "memory" / "retry.md", HEALTHY_TOPIC)
    write(root / "memory" / "feedback_verify.md", HEALTHY_FEEDBACK)
    commit(root, "memory and worker")
    return root


def health(project, env, **options):
    report = HEALTH.memory_health(str(project), env, preview=options.pop("preview", False),
                                  installed=options.pop("installed", None))
    json.dumps(report)  # the report is for scripts: it must always serialise
    return report


def findings(report, check=None):
    return [f for f in report["findings"] if check is None or f["check"] == check]


def points(project, env):
    return HOOK.budget_points(str(project), env)


def defects(project, env):
    return HOOK.memory_defects(str(project), env)


def index(project):
    return project / "memory" / "MEMORY.md"


# --- healthy memory is silent -------------------------------------------------------------

def test_a_healthy_memory_has_no_findings(repo, env):
    report = health(repo, env)
    assert report["findings"] == [] and report["status"] == "ok"
    assert report["index"]["pointer_lines"] == 2
    assert report["citations"]["git"] == "checked"
    assert defects(repo, env) == []


def test_the_index_template_of_a_fresh_install_is_healthy(repo, env):
    with open(os.path.join(ROOT, "templates", "MEMORY.md"), encoding="utf-8") as handle:
        write(index(repo), handle.read())
    for name in ("retry.md", "feedback_verify.md"):
        (repo / "memory" / name).unlink()
    assert health(repo, env)["findings"] == []


# --- dead pointers --------------------------------------------------------------------------

def test_a_dead_pointer_is_broken_and_named_with_its_line(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — how a release ships\n")
    found = findings(health(repo, env), "dead-pointer")
    assert [(f["file"], f["line"], f["severity"]) for f in found] == [("memory/MEMORY.md", 13, "broken")]
    assert "`deploy.md`" in found[0]["message"] and found[0]["at_session_start"]
    [point] = defects(repo, env)
    assert point.startswith("- memory/MEMORY.md points to 1 file(s) that do not exist")
    assert "line 13 `deploy.md`" in point


def test_a_dead_pointer_past_the_index_budget_is_left_to_the_full_report(repo, env):
    lines = index(repo).read_text(encoding="utf-8").splitlines()
    lines += ["- [Topic %d](retry.md) — filler" % n for n in range(90 - len(lines))]
    lines.append("- [Late](late.md) — a pointer past line 80")
    write(index(repo), "\n".join(lines) + "\n")
    [found] = findings(health(repo, env), "dead-pointer")
    assert found["line"] == 91 and not found["at_session_start"]
    assert not any("do not exist" in p for p in defects(repo, env))
    assert "`late.md`" in HEALTH.format_health(health(repo, env))


def test_links_resolve_from_the_index_folder_and_only_local_links_count(repo, env):
    write(repo / "memory" / "deep" / "notes.md", "# Notes\n<!-- Last updated: 2026-10-01 -->\n")
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Notes](deep/notes.md) — in a sub-folder\n"
                     "- [Worker](../src/worker.py) — the code itself\n"
                     "- [Docs](https://example.com/missing.md) — on the web\n"
                     "- [Mail](mailto:owner@example.com) — the owner\n"
                     "- [Here](#topics) — an anchor\n"
                     "- [Anchored](retry.md#backoff \"title\") — anchor and title\n")
    assert findings(health(repo, env), "dead-pointer") == []
    assert defects(repo, env) == []


def test_a_dead_link_in_a_comment_or_code_span_is_not_a_pointer(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Retry again](retry.md) — uses `[x](gone.md)` <!-- [y](gone.md) -->\n")
    assert findings(health(repo, env), "dead-pointer") == []
    assert defects(repo, env) == []


# --- an unclosed comment --------------------------------------------------------------------

def test_an_unclosed_comment_is_broken_and_its_line_named(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("<!-- a note that never ends\n- [Later](retry.md) — hidden\nmore\n")
    [found] = findings(health(repo, env), "unclosed-comment")
    assert (found["line"], found["severity"]) == (13, "broken")
    assert "2 line(s) below it" in found["message"]
    [point] = defects(repo, env)
    assert point.startswith("- memory/MEMORY.md line 13 opens an HTML comment (`<!--`) that never closes")


def test_closed_comments_and_markers_in_code_spans_are_silent(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Retry](retry.md) — strip `<!--` markers <!-- closed -->\n")
    report = health(repo, env)
    assert findings(report, "unclosed-comment") == []
    assert defects(repo, env) == []


# --- the Paper 002 index: 539 lines, one pointer, history in comments ----------------------

def paper_002_index(project):
    lines = ["# Project Memory Index", "<!-- Last dream: 2026-09-21 -->", "", "## Topics",
             "- [Deployment](deployment.md) — how a release reaches production"]
    for block in range(29):  # 290 lines of session history, filed as comments
        lines.append("<!-- Session %d: summary of the day" % (block + 1))
        lines += ["  worked on item %d.%d" % (block + 1, n) for n in range(8)]
        lines.append("-->")
    while len(lines) < 539:
        lines.append("Session note %d: the deploy needed a retry." % len(lines))
    write(index(project), "\n".join(lines) + "\n")
    for name in ["deployment"] + ["topic-%02d" % n for n in range(16)]:
        write(project / "memory" / (name + ".md"), "# %s\n<!-- Last updated: 2026-09-21 -->\n"
              "- 2026-09-21: what the topic holds.\n" % name)


def test_the_539_line_index_with_one_pointer_line(repo, env):
    for name in ("retry.md", "feedback_verify.md"):
        (repo / "memory" / name).unlink()
    paper_002_index(repo)
    report = health(repo, env)
    summary = report["index"]
    assert (summary["lines"], summary["pointer_lines"], summary["hidden_history_lines"]) == (539, 1, 290)
    assert summary["other_lines"] == 539 - 5 - 290
    assert report["topic_files"] == 17
    history = findings(report, "hidden-history")
    assert len(history) == 29 and all(f["severity"] == "warning" for f in history)
    assert history[0]["line"] == 6 and "lines 6-15 (10 lines)" in history[0]["message"]
    assert "Session 1: summary of the day" in history[0]["message"]
    assert len(findings(report, "orphan")) == 16
    [content] = findings(report, "not-a-pointer")  # one finding per section, every line named
    assert len(content["lines"]) == 539 - 5 - 290 and content["line"] == 296
    assert any("is 539 lines (budget 80)" in point for point in points(repo, env))
    text = HEALTH.format_health(report)
    assert "539 lines: 1 pointer line(s), 244 content line(s), 290 line(s) of history" in text
    assert "    ... and 25 more in this file" in text


def test_stamps_and_one_guidance_comment_are_not_history(repo, env):
    text = HEALTHY_INDEX.replace("## Active Context", "<!-- a second one-line note -->\n## Active Context")
    write(index(repo), text)
    [found] = findings(health(repo, env), "hidden-history")
    assert found["line"] == 5 and "a second one-line note" in found["message"]
    write(index(repo), HEALTHY_INDEX)
    assert findings(health(repo, env), "hidden-history") == []


# --- pointer lines, duplicates and orphans --------------------------------------------------

def test_content_that_is_not_a_pointer_is_a_warning_outside_active_context(repo, env):
    write(index(repo), HEALTHY_INDEX.replace("## Topics\n", "## Topics\nThe worker is slow.\n"))
    [found] = findings(health(repo, env), "not-a-pointer")
    assert (found["line"], found["severity"]) == (9, "warning")
    assert "The worker is slow." in found["message"]
    write(index(repo), HEALTHY_INDEX.replace("next: the backoff.", "next: the backoff.\nAlso: logs."))
    assert findings(health(repo, env), "not-a-pointer") == []


def test_a_duplicate_pointer_is_named_with_the_first(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Retries again](./retry.md) — the same file\n")
    [found] = findings(health(repo, env), "duplicate-pointer")
    assert found["line"] == 13 and "first at line 9" in found["message"]
    write(index(repo), HEALTHY_INDEX)
    assert findings(health(repo, env), "duplicate-pointer") == []


def test_a_topic_file_no_index_line_links_is_an_orphan(repo, env):
    write(repo / "memory" / "lonely.md", "# Lonely\n<!-- Last updated: 2026-10-01 -->\n"
                                         "- 2026-10-01: nothing links this file.\n")
    [found] = findings(health(repo, env), "orphan")
    assert (found["file"], found["line"], found["severity"]) == ("memory/lonely.md", 1, "warning")


def test_a_link_only_inside_a_comment_leaves_the_file_an_orphan(repo, env):
    write(repo / "memory" / "lonely.md", "# Lonely\n<!-- Last updated: 2026-10-01 -->\n"
                                         "- 2026-10-01: nothing links this file.\n")
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("<!-- - [Lonely](lonely.md) — commented out -->\n")
    assert [f["file"] for f in findings(health(repo, env), "orphan")] == ["memory/lonely.md"]


# --- topic and feedback files ---------------------------------------------------------------

def with_advice(env):
    """The environment with the opt-in checks turned on (MCP_HEALTH_CHECKS): a date on each
    fact, logs kept apart from the topic files, and facts whose cited file changed since."""
    return dict(env, MCP_HEALTH_CHECKS="all")


def test_a_topic_file_with_no_date_anywhere_gets_advice_when_the_check_is_asked_for(repo, env):
    write(repo / "memory" / "retry.md", "# Retry policy\n<!-- Last updated: YYYY-MM-DD -->\n\n"
          "The worker retries three times.\n")
    assert findings(health(repo, env), "missing-date") == []  # opt-in: a team's choice to date
    report = health(repo, with_advice(env))
    [found] = findings(report, "missing-date")
    assert (found["file"], found["line"], found["severity"]) == ("memory/retry.md", 1, "advice")
    assert report["status"] == "ok" and report["counts"]["advice"] == 1  # advice, not an error
    assert findings(health(repo, dict(env, MCP_HEALTH_CHECKS="orphan, Missing-Date")),
                    "missing-date") != []


@pytest.mark.parametrize("name, text", [
    ("2026-08-15.md", "# Daily log\n\n- Shipped the retry change.\n"),
    ("2026-08-15-standup.md", "# Stand-up\n\nNothing blocked.\n"),
    ("retry.md", "# Retry\n\n**Date**: 2026-08-15\n\nThree attempts.\n"),
    ("retry.md", "---\ntitle: Retry\ndate: 2026-08-15\n---\nThree attempts.\n"),
    ("retry.md", "---\nmetadata:\n  updated: 2026-08-15\n---\nThree attempts.\n"),
    ("retry.md", "# Retry\n\n- 2026-08-15: three attempts.\n"),
    ("project_retry.md", "---\nname: Retry policy\ndescription: how the worker retries\n"
                         "type: project\n---\n\nThe worker retries three times.\n"),
    ("reference_api.md", "---\nname: API\ndescription: where the API is\nmetadata:\n"
                         "  type: reference\n---\nSee the client module.\n"),
])
def test_files_dated_where_people_date_them_or_in_claude_codes_format_need_no_date(
        repo, env, name, text):
    write(repo / "memory" / "retry.md", HEALTHY_TOPIC)
    write(repo / "memory" / name, text)
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Extra](%s) — fixture\n" % name)
    assert findings(health(repo, with_advice(env)), "missing-date") == []


def test_the_readme_of_the_memory_folder_is_not_a_topic_file(repo, env):
    write(repo / "memory" / "README.md", "# About this folder\n\nHow we keep memory.\n")
    report = health(repo, env)
    assert report["findings"] == [] and report["topic_files"] == 2


def test_a_feedback_file_without_labelled_parts_gets_advice(repo, env):
    write(repo / "memory" / "feedback_verify.md", "# Verify before claiming done\n"
          "<!-- Last updated: 2026-10-01 -->\n\nRun the gate before saying a change is done, "
          "because a change was once declared done while a test failed.\n")
    [found] = findings(health(repo, env), "feedback-parts")
    assert found["severity"] == "advice" and "**Why:**" in found["message"]


@pytest.mark.parametrize("body", [
    # Claude Code's own format: the fact, then why and how to apply it
    "---\nname: Verify\ndescription: run the gate first\ntype: feedback\n---\n\n"
    "Run the gate before saying done.\n\n**Why:** a failing test once slipped.\n\n"
    "**How to apply:** run `python3 -m pytest` and quote its last line.\n",
    # the same, written in German
    "---\nname: Prüfen\ndescription: erst testen\ntype: feedback\n---\n\n"
    "Vor \"fertig\" die Tests laufen lassen.\n\n**Warum:** ein Test schlug einmal fehl.\n\n"
    "**Anwendung:** `python3 -m pytest` ausführen.\n",
    # Claude Code's format in Chinese, a numbered list and no labels at all
    "---\nname: 界面改动要真机验证\ndescription: 不靠编译通过就算完\nmetadata:\n  type: feedback\n---\n\n"
    "# 界面改动要真机验证\n\n改动界面后不能只靠编译或单元测试结束。\n\n1. 先看日志\n2. 再截图\n",
    # the protocol's own format
    HEALTHY_FEEDBACK,
])
def test_feedback_in_any_of_the_formats_people_use_is_valid(repo, env, body):
    write(repo / "memory" / "feedback_verify.md", body)
    report = health(repo, with_advice(env))
    assert findings(report, "feedback-parts") == [] and findings(report, "missing-date") == []


# --- stale references -----------------------------------------------------------------------

def test_a_cited_path_git_knew_and_lost_is_a_warning_with_what_became_of_it(repo, env):
    write(repo / "src" / "old_worker.py", "LOOP = 1\n")
    write(repo / "src" / "gone.py", "X = 1\n")
    commit(repo, "two modules")
    (repo / "src" / "old_worker.py").unlink()
    (repo / "src" / "gone.py").unlink()
    deleted = commit(repo, "Drop the modules", "2026-10-05T09:00:00+00:00")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- The loop lives in `src/old_worker.py:12`.\n"
                     "- See [the worker](../src/gone.py) for the rest.\n"
                     "- And again `src/old_worker.py`.\n")
    found = findings(health(repo, env), "missing-path")
    assert [(f["file"], f["lines"], f["severity"]) for f in found] == [
        ("memory/retry.md", [5, 7], "warning"), ("memory/retry.md", [6], "warning")]
    assert "`src/old_worker.py`" in found[0]["message"]
    assert "deleted in %s on 2026-10-05, \"Drop the modules\"" % deleted in found[0]["message"]
    assert found[1]["message"].startswith("links `../src/gone.py`")
    assert not found[0]["at_session_start"]
    assert defects(repo, env) == []  # never at session start


def test_words_that_only_look_like_paths_are_not_cited(repo, env):
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- Branches `origin/main`; type `application/json`; run `npm test`; "
                     "`https://example.com/x.py`, `~/notes/x.md`, `/etc/hosts.conf`, "
                     "`example.com/a.js`, `src/**/*.py`, `<dir>/file.md`.\n")
    assert findings(health(repo, env), "missing-path") == []


def test_a_fact_dated_before_a_later_commit_to_its_file_is_possibly_stale(repo, env):
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    later = commit(repo, "Retry five times", "2026-11-02T09:00:00+00:00")
    [found] = findings(health(repo, with_advice(env)), "possibly-stale")
    assert (found["file"], found["line"], found["severity"]) == ("memory/retry.md", 4, "warning")
    assert "dated 2026-10-01" in found["message"] and "`src/worker.py`" in found["message"]
    assert ("1 commit(s), the newest %s on 2026-11-02, \"Retry five times\"" % later) in found["message"]


def test_a_fact_without_a_date_on_its_line_takes_the_files_last_updated(repo, env):
    write(repo / "memory" / "retry.md",
          HEALTHY_TOPIC.replace("- 2026-10-01: `src/worker.py`", "- `src/worker.py`"))
    commit(repo, "undated fact")
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "Retry five times", "2026-11-02T09:00:00+00:00")
    [found] = findings(health(repo, with_advice(env)), "possibly-stale")
    assert "dated 2026-10-01" in found["message"]


def test_no_commit_after_the_date_and_a_commit_that_updated_the_memory_are_silent(repo, env):
    assert findings(health(repo, with_advice(env)), "possibly-stale") == []
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    write(repo / "memory" / "retry.md", HEALTHY_TOPIC + "- Reviewed with the change.\n")
    commit(repo, "Retry five times, memory updated with it", "2026-11-02T09:00:00+00:00")
    assert findings(health(repo, with_advice(env)), "possibly-stale") == []


def test_all_dated_facts_cost_one_history_pass(repo, env, monkeypatch):
    lines = "".join("- 2026-10-%02d: `src/mod%d.py` holds part %d.\n" % (n + 1, n, n) for n in range(20))
    for n in range(20):
        write(repo / "src" / ("mod%d.py" % n), "PART = %d\n" % n)
    write(repo / "memory" / "retry.md", HEALTHY_TOPIC + lines)
    commit(repo, "twenty facts")
    for n in range(0, 20, 2):
        write(repo / "src" / ("mod%d.py" % n), "PART = -1\n")
    commit(repo, "Change the even parts", "2026-11-05T09:00:00+00:00")
    calls = []
    real_run = subprocess.run

    def counting_run(command, *args, **kwargs):
        calls.append(command)
        return real_run(command, *args, **kwargs)

    monkeypatch.setattr(subprocess, "run", counting_run)
    report = health(repo, with_advice(env))
    assert len([c for c in calls if "log" in c]) == 1  # ls-files, rev-parse and one log
    assert len(calls) == 3
    assert len(findings(report, "possibly-stale")) == 10  # the ten parts changed since


def test_outside_git_the_dated_facts_are_skipped_not_failed(tmp_path, env):
    project = tmp_path / "plain"
    write(project / "src" / "worker.py", "RETRIES = 3\n")
    write(project / "memory" / "MEMORY.md", HEALTHY_INDEX)
    write(project / "memory" / "retry.md", HEALTHY_TOPIC)
    write(project / "memory" / "feedback_verify.md", HEALTHY_FEEDBACK)
    report = health(project, env)
    assert report["citations"]["git"] == "unavailable" and report["findings"] == []


# --- silencing a false positive -------------------------------------------------------------

def test_the_ignore_marker_silences_the_findings_on_its_line(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — planned <!-- mcp-health: ignore -->\n")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- `src/old_worker.py` was removed. <!-- mcp-health: ignore -->\n")
    write(repo / "memory" / "lonely.md", "# Lonely <!-- mcp-health: ignore -->\n"
                                         "<!-- Last updated: 2026-10-01 -->\n"
                                         "- 2026-10-01: nothing links this file.\n")
    assert health(repo, env)["findings"] == []
    assert defects(repo, env) == []


def test_without_the_marker_the_same_lines_are_reported(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — planned\n")
    write(repo / "memory" / "lonely.md", "# Lonely\n<!-- Last updated: 2026-10-01 -->\n"
                                         "- 2026-10-01: nothing links this file.\n")
    checks = sorted(f["check"] for f in health(repo, env)["findings"])
    assert checks == ["dead-pointer", "orphan"]


# --- the shapes real memories take ------------------------------------------------------------
#
# Each fixture below is written here, shaped like the memories public repositories commit: daily
# logs in a table, Claude Code's frontmatter files, guidance prose, other languages, histories
# with merged branches. Each pins a class of false finding (or of missed one) seen on them.

def git_here(repo, *args, date=OLD):
    env = clean_environment(repo.parent / "home")
    env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    done = subprocess.run(["git", "-C", str(repo)] + list(args), env=env, capture_output=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().strip()


def test_an_index_of_tables_prose_and_fences_has_no_content_findings(repo, env):
    write(repo / "memory" / "2026-08-22.md", "# 2026-08-22\n\n- Shipped the retry change.\n")
    write(index(repo), (
        "# Memory\n\n"
        "Operational memory loaded at session start. One line per topic; the detail lives in\n"
        "the files it links.\n\n"
        "## Topics\n"
        "Read these before touching the worker:\n"
        "- [Retry policy](retry.md) — how the worker retries\n"
        "- [Verify](feedback_verify.md) — run the gate first\n\n"
        "## Daily logs\n"
        "| Date | Summary |\n"
        "|------|---------|\n"
        "| [2026-08-22](2026-08-22.md) | retry change shipped |\n\n"
        "## Usage\n"
        "- Load the retry file before changing `src/worker.py`.\n"
        "- Keep each pointer under 150 characters.\n\n"
        "## Commands\n"
        "```bash\n"
        "python3 -m pytest -q\n"
        "- not a list item, a line of code\n"
        "```\n"))
    report = health(repo, env)
    assert findings(report, "not-a-pointer") == [] and findings(report, "orphan") == []
    assert report["index"]["pointer_lines"] == 3


@pytest.mark.parametrize("stamp, content", [
    ("*Last consolidated: 2026-10-01*", False),
    ("*Atualizado: 2026-10-01*", False),
    ("最后更新：2026-10-01", False),
    ("Deadline: 2026-10-01", True),
    ("Updated: 2026-10-01, the queue stalled overnight", True),
    ("---", False),
    ("**Note:** these files are shared; keep your own preferences in ~/.claude/.", False),
])
def test_a_stamp_a_rule_or_a_note_on_a_line_of_its_own_is_not_content(repo, env, stamp, content):
    write(index(repo), HEALTHY_INDEX.replace("<!-- Last dream: 2026-10-01 -->", stamp))
    assert bool(findings(health(repo, env), "not-a-pointer")) == content


def test_content_in_the_index_is_one_finding_per_section(repo, env):
    write(index(repo), HEALTHY_INDEX + (
        "\n## Known traps\n"
        "- The worker leaks a socket on retry.\n"
        "- Backoff doubles from 2 s.\n"
        "2026-10-03: the queue stalled overnight.\n"
        "The deploy needs a manual step.\n"))
    [found] = findings(health(repo, env), "not-a-pointer")
    assert (found["line"], found["lines"]) == (15, [15, 16, 17, 18])
    assert "under \"known traps\"" in found["message"]


def test_a_link_in_a_topic_file_reaches_what_it_links(repo, env):
    write(repo / "memory" / "logs.md", "# Logs\n<!-- Last updated: 2026-10-01 -->\n"
                                       "- [2026-08-15](2026-08-15.md)\n- [[2026-08-16]]\n")
    write(repo / "memory" / "2026-08-15.md", "# 2026-08-15\n- quiet day\n")
    write(repo / "memory" / "2026-08-16.md", "# 2026-08-16\n- quiet day\n")
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Logs](logs.md) — one file a day\n")
    assert findings(health(repo, env), "orphan") == []


def test_paths_git_never_held_are_not_findings(repo, env):
    write(repo / ".gitignore", ".hive/\n")
    commit(repo, "ignore the runtime folder")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write(
            "- The sibling repository `eez-core-protocol/docs/CAVEATS.md` has the caveats.\n"
            "- At run time the tool writes `.hive/mcp.json`.\n"
            "- Planned: `docs/adr/NNNN-title.md` for each decision, and `src/next/planner.py`.\n"
            "- Translations go in `ko/`; the image is `library/python:3.11`.\n"
            "- See [the design](../docs/designs/2026-08-19-retry.md) once it is written.\n"
            "````markdown\n```\n`src/never/here.py`\n```\n`src/never/there.py`\n````\n")
    assert findings(health(repo, env), "missing-path") == []


def test_a_path_git_knew_but_now_ignores_is_local_not_missing(repo, env):
    write(repo / ".hive" / "mcp.json", "{}\n")
    commit(repo, "runtime file, committed by mistake")
    git_here(repo, "rm", "-q", "--cached", ".hive/mcp.json")
    write(repo / ".gitignore", ".hive/\n")
    (repo / ".hive" / "mcp.json").unlink()
    commit(repo, "stop tracking the runtime file")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- The tool keeps its state in `.hive/mcp.json`.\n")
    assert findings(health(repo, env), "missing-path") == []


def test_a_line_that_says_the_path_is_gone_is_true_as_written(repo, env):
    write(repo / "src" / "legacy.py", "OLD = 1\n")
    commit(repo, "legacy")
    (repo / "src" / "legacy.py").unlink()
    commit(repo, "drop legacy")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- `src/legacy.py` was removed on purpose.\n- `src/legacy.py` holds the loop.\n")
    [found] = findings(health(repo, env), "missing-path")
    assert found["lines"] == [6]


def test_a_renamed_file_is_named_by_what_it_became_even_as_a_bare_name(repo, env):
    write(repo / "web" / "middleware.ts", "export const x = 1\n")
    commit(repo, "middleware")
    git_here(repo, "mv", "web/middleware.ts", "web/proxy.ts")
    renamed = commit(repo, "Rename middleware to proxy", "2026-10-09T09:00:00+00:00")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- Auth runs in `middleware.ts`.\n- Its tests: `web/middleware.ts`.\n")
    found = findings(health(repo, env), "missing-path")
    assert len(found) == 1 and found[0]["lines"] == [5, 6]  # one file, one finding
    assert "renamed to `web/proxy.ts` in %s on 2026-10-09" % renamed in found[0]["message"]
    assert "update the fact to `web/proxy.ts`" in found[0]["repair"]


def test_a_cited_folder_git_knew_and_lost_is_missing(repo, env):
    write(repo / "src" / "legacy" / "loop.py", "OLD = 1\n")
    commit(repo, "legacy loop")
    (repo / "src" / "legacy" / "loop.py").unlink()
    (repo / "src" / "legacy").rmdir()
    gone = commit(repo, "the legacy folder goes", "2026-10-07T09:00:00+00:00")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- Old retry code sits in `src/legacy/`.\n")
    [found] = findings(health(repo, env), "missing-path")
    assert "`src/legacy/`, which git knew as `src/legacy`: deleted in %s on 2026-10-07" % gone \
        in found["message"]


def test_a_bare_name_is_not_checked_when_history_knows_two_such_files(repo, env):
    write(repo / "a" / "config.py", "A = 1\n")
    write(repo / "b" / "config.py", "B = 1\n")
    commit(repo, "two configs")
    for folder in ("a", "b"):
        (repo / folder / "config.py").unlink()
    commit(repo, "drop both")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- Settings live in `config.py`.\n")
    assert findings(health(repo, env), "missing-path") == []


def test_a_path_written_from_another_folder_is_found_where_it_is(repo, env):
    write(repo / "src" / "components" / "Button.tsx", "export {}\n")
    commit(repo, "a component")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- The button is `components/Button.tsx`.\n")
    assert findings(health(repo, env), "missing-path") == []


def test_a_date_inside_the_cited_path_or_a_link_dates_no_fact(repo, env):
    write(repo / "docs" / "designs" / "2026-08-19-retry.md", "# Design\n")
    commit(repo, "design")
    write(repo / "memory" / "retry.md", "# Retry\n\n- The design is `docs/designs/2026-08-19-retry.md`.\n"
                                        "- Next: [2026-08-20](../docs/designs/2026-08-19-retry.md)\n")
    commit(repo, "memory without dates")
    write(repo / "docs" / "designs" / "2026-08-19-retry.md", "# Design, revised\n")
    commit(repo, "Revise the design", "2026-11-02T09:00:00+00:00")
    report = health(repo, with_advice(env))
    assert findings(report, "possibly-stale") == []
    assert report["citations"]["dated_facts"] == 0


def test_a_file_most_commits_change_is_not_a_reason_to_recheck(repo, env):
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- 2026-10-01: the manifest `docs/VERSION_MANIFEST.md` lists 3 parts.\n")
    write(repo / "docs" / "VERSION_MANIFEST.md", "v0\n")
    commit(repo, "manifest")
    for n in range(12):
        write(repo / "docs" / "VERSION_MANIFEST.md", "v%d\n" % (n + 1))
        commit(repo, "release %d" % n, "2026-11-%02dT09:00:00+00:00" % (n + 1))
    report = health(repo, with_advice(env))
    assert [f["message"] for f in findings(report, "possibly-stale")
            if "VERSION_MANIFEST" in f["message"]] == []
    assert report["citations"]["churning"] == ["docs/VERSION_MANIFEST.md"]


def test_a_merged_branch_counts_by_the_day_it_reached_the_branch(repo, env):
    branch = git_here(repo, "rev-parse", "--abbrev-ref", "HEAD")
    git_here(repo, "checkout", "-q", "-b", "feature")
    write(repo / "src" / "worker.py", "RETRIES = 7\n")
    commit(repo, "Seven retries", "2026-09-15T09:00:00+00:00")  # before the fact's date
    git_here(repo, "checkout", "-q", branch)
    git_here(repo, "merge", "-q", "--no-ff", "feature", "-m", "Merge feature",
             date="2026-11-04T09:00:00+00:00")
    [found] = findings(health(repo, with_advice(env)), "possibly-stale")
    assert "on 2026-11-04, \"Merge feature\"" in found["message"]


def test_a_back_dated_commit_on_top_does_not_hide_the_change_below_it(repo, env):
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "Five retries", "2026-11-05T09:00:00+00:00")
    write(repo / "README.md", "# Project\n")
    commit(repo, "Readme, back-dated", "2025-01-01T09:00:00+00:00")
    [found] = findings(health(repo, with_advice(env)), "possibly-stale")
    assert "on 2026-11-05, \"Five retries\"" in found["message"]


def test_a_shallow_clone_says_shallow_not_checked(repo, env, tmp_path):
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "Five retries", "2026-11-05T09:00:00+00:00")
    clone = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", "file://%s" % repo, str(clone)],
                   check=True, env=clean_environment(tmp_path / "home"), capture_output=True)
    report = health(clone, env)
    assert report["citations"]["git"] == "shallow"
    assert "git history is shallow" in HEALTH.format_health(report)


# --- new checks: oversized topics, machine-local paths ----------------------------------------

@pytest.mark.parametrize("characters, fires", [(40000, False), (40001, True)])
def test_a_topic_file_over_ten_thousand_tokens_is_oversized(repo, env, characters, fires):
    head = HEALTHY_TOPIC
    write(repo / "memory" / "retry.md", head + "x" * (characters - len(head) - 1) + "\n")
    found = findings(health(repo, env), "oversized-topic")
    assert bool(found) == fires
    if fires:
        assert "40,001 characters, about 10,001 tokens (budget 10,000 tokens)" in found[0]["message"]


def test_the_topic_budget_is_configurable_and_falls_back_when_not_a_number(repo, env):
    write(repo / "memory" / "retry.md", HEALTHY_TOPIC + "x" * 500 + "\n")
    assert findings(health(repo, dict(env, MCP_TOPIC_TOKENS="100")), "oversized-topic")
    assert not findings(health(repo, dict(env, MCP_TOPIC_TOKENS="lots")), "oversized-topic")


def test_machine_local_paths_in_committed_memory_are_named_once_per_path(repo, env):
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- The script is `~/bin/deploy.sh`; run ~/bin/deploy.sh again after.\n"
                     "- Logs: /Users/alice/logs/worker.log and /home/bob/worker/out.txt.\n"
                     "- On Windows: C:\\Users\\carol\\AppData\\worker.ini\n"
                     "- Every user has `~/.claude/settings.json` and /home/user/example.txt.\n"
                     "- For example C:\\Users\\you\\AppData\\worker.ini on Windows.\n")
    commit(repo, "machine paths")
    found = findings(health(repo, env), "machine-local-path")
    assert sorted(f["message"].split("`")[1] for f in found) == [
        "/Users/alice/logs/worker.log", "/home/bob/worker/out.txt",
        "C:\\Users\\carol\\AppData\\worker.ini", "~/bin/deploy.sh"]
    assert [f["lines"] for f in found if "deploy" in f["message"]] == [[5]]


def test_machine_local_paths_in_an_uncommitted_file_are_its_owners_business(repo, env):
    write(repo / "memory" / "scratch.md", "# Scratch\n<!-- Last updated: 2026-10-01 -->\n"
                                          "- /Users/alice/tmp/x.txt\n")
    assert findings(health(repo, env), "machine-local-path") == []


# --- a report that reads at scale ---------------------------------------------------------------

def test_a_file_can_be_silenced_whole(repo, env):
    write(repo / "memory" / "notes.md", "# Scratch <!-- mcp-health: ignore-file -->\n"
                                        "- /Users/alice/tmp/x.txt\n" + "y" * 50000 + "\n")
    commit(repo, "scratch")
    assert [f for f in health(repo, env)["findings"] if f["file"] == "memory/notes.md"] == []


def test_the_text_report_groups_by_file_with_the_jsons_counts(repo, env):
    write(repo / "memory" / "lonely.md", "# Lonely\n\n- nothing links this file.\n")
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — planned\n")
    report = health(repo, with_advice(env))
    text = HEALTH.format_health(report)
    assert report["counts"] == {"broken": 1, "over": 0, "warning": 1, "advice": 1}
    assert "## Memory health — 1 broken, 1 warning(s), 1 advice" in text
    lines = text.splitlines()
    at = lines.index("  memory/MEMORY.md (1 broken)")
    assert lines[at + 1].startswith("    BROKEN  line 13  links `deploy.md`")
    assert "  memory/lonely.md (1 warning(s), 1 advice)" in lines


def test_the_report_writes_no_bytecode_beside_the_hooks(repo, tmp_path):
    copy = tmp_path / "installer"
    shutil.copytree(os.path.join(ROOT, "hooks"), str(copy / "hooks"))
    shutil.copy(os.path.join(ROOT, "memory_health.py"), str(copy / "memory_health.py"))
    shutil.copy(os.path.join(ROOT, "memory_format.py"), str(copy / "memory_format.py"))
    shutil.copytree(os.path.join(ROOT, "installer"), str(copy / "installer"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    environment = clean_environment(tmp_path / "home")
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    script = ("import json, sys; sys.path.insert(0, sys.argv[1]); import memory_health; "
              "sys.dont_write_bytecode = False; "
              "print(json.dumps(memory_health.memory_health(sys.argv[2], {})['load']['total']))")
    done = subprocess.run([sys.executable, "-c", script, str(copy), str(repo)], env=environment,
                          capture_output=True, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["characters"] > 0  # the injection was previewed
    assert sorted(os.listdir(str(copy / "hooks"))) == sorted(os.listdir(os.path.join(ROOT, "hooks")))
    assert not os.path.exists(str(copy / "installer" / "__pycache__"))


def test_the_load_table_marks_an_injection_the_protocol_would_add(repo, env):
    report = health(repo, env, preview=True)
    [injection] = [p for p in report["load"]["parts"] if p["part"].startswith("session-start")]
    assert "hypothetical: the protocol is not installed here" in injection["part"]
    assert "hypothetical" in HEALTH.format_health(report)


def test_the_load_table_says_where_the_index_was_cut(repo, env):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("".join("- [Retry %d](retry.md) — %s\n" % (n, "w" * 150) for n in range(70)))
    hypothetical = health(repo, env, preview=True)  # not installed here: nothing is cut today
    assert findings(hypothetical, "injection-cut") == []
    assert [p["over"] for p in hypothetical["load"]["parts"] if "hypothetical" in p["part"]] == [True]
    report = health(repo, env, preview=True, installed=True)
    [cut] = findings(report, "injection-cut")
    [injection] = [p for p in report["load"]["parts"] if p["part"].startswith("session-start")]
    shown = HOOK_SESSION_START.preview_injection(str(repo)).split("\n")
    written = index(repo).read_text(encoding="utf-8").split("\n")
    first_left_out = next(n for n, line in enumerate(written, start=1)
                          if line.startswith("- [Retry ") and line not in shown)
    assert injection["note"] == "the index is cut before its line %d" % first_left_out
    assert "(the index is cut before its line %d)" % first_left_out in cut["message"]


# --- the harness's auto-memory cap ----------------------------------------------------------

def auto_memory(env, base, text):
    path = os.path.join(env["MCP_PROJECTS_DIR"], encoded(base), "memory", "MEMORY.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
    return path


def test_auto_memory_of_a_path_outside_the_bmp_is_found_in_the_harness_folder(tmp_path, env):
    project = make_repo(tmp_path / "notes \U0001F9E0")
    write(project / "memory" / "MEMORY.md", "# Index\n")
    auto_memory(env, project, entries(260))
    assert "--" in encoded(project)
    assert "60 line(s) never load" in defects(project, env)[0]


def entries(count, start=1):
    return "".join("- [Entry %d](entry-%d.md) — a note\n" % (n, n) for n in range(start, start + count))


def test_an_auto_memory_of_260_lines_loses_60_and_names_the_first(repo, env):
    auto_memory(env, repo, "# Auto memory\n" + entries(259))
    report = health(repo, env)
    [found] = findings(report, "auto-memory-overflow")
    assert (found["line"], found["severity"]) == (201, "broken")
    assert "60 of its 260 counted lines never load" in found["message"]
    assert "line 201 \"Entry 200\"" in found["message"]
    assert report["auto_memory"]["lost_lines"] == 60
    assert report["auto_memory"]["cut_by"] == "lines"
    assert report["auto_memory"]["first_lost"][0] == "line 201 \"Entry 200\""
    [point] = defects(repo, env)
    assert "holds 260 lines" in point and "60 line(s) never load" in point
    assert "line 201 \"Entry 200\"" in point and "only its first 200 lines" in point


@pytest.mark.parametrize("lines, lost", [(200, 0), (201, 1)])
def test_the_line_cap_boundary(repo, env, lines, lost):
    auto_memory(env, repo, entries(lines))
    assert health(repo, env)["auto_memory"]["lost_lines"] == lost
    assert len(defects(repo, env)) == lost


@pytest.mark.parametrize("size, lost", [(25600, 0), (25601, 1)])
def test_the_byte_cap_boundary_is_25600_bytes(repo, env, size, lost):
    lines = ["x" * 255 + "\n"] * 99  # 99 lines of 256 bytes: 25,344 bytes
    lines.append("y" * (size - 25344 - 1) + "\n")
    text = "".join(lines)
    assert len(text.encode("utf-8")) == size
    auto_memory(env, repo, text)
    report = health(repo, env)["auto_memory"]
    assert (report["lines"], report["lost_lines"]) == (100, lost)
    assert len(defects(repo, env)) == lost


def test_the_byte_cap_fires_before_200_lines_when_lines_are_long(repo, env):
    auto_memory(env, repo, "".join("- Entry %03d %s\n" % (n, "z" * 287) for n in range(120)))
    report = health(repo, env)["auto_memory"]  # 300 bytes a line: 85 fit in 25,600
    assert (report["loaded_lines"], report["lost_lines"], report["cut_by"]) == (85, 35, "bytes")
    [point] = defects(repo, env)
    assert "only its first 25,600 bytes" in point and "35 line(s) never load" in point
    assert "line 86 \"Entry 085" in point


def test_frontmatter_and_comments_do_not_count_against_the_cap(repo, env):
    text = ("---\nname: index\ntype: project\n---\n" + "<!--\n" + "old line\n" * 40 + "-->\n"
            + entries(200))
    auto_memory(env, repo, text)
    report = health(repo, env)["auto_memory"]
    assert (report["lines"], report["lost_lines"]) == (200, 0)
    assert defects(repo, env) == []


def test_auto_memory_is_found_under_the_repository_root(repo, env):
    sub = repo / "services" / "api"
    write(sub / "memory" / "MEMORY.md", "# Index\n")
    auto_memory(env, repo, entries(230))
    assert health(sub, env)["auto_memory"]["lost_lines"] == 30
    assert "30 line(s) never load" in defects(sub, env)[0]


def test_a_linked_worktree_shares_the_main_checkouts_auto_memory(repo, env):
    worktree = repo.parent / "worktree"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", "-b", "side", str(worktree)],
                   check=True, env=clean_environment(repo.parent / "home"), capture_output=True)
    auto_memory(env, repo, entries(210))
    assert health(worktree, env)["auto_memory"]["lost_lines"] == 10


def test_the_marker_on_the_first_lost_line_silences_the_overflow(repo, env):
    auto_memory(env, repo, entries(200) + "- [Kept aside](aside.md) — x <!-- mcp-health: ignore -->\n")
    assert findings(health(repo, env), "auto-memory-overflow") == []
    assert defects(repo, env) == []


def test_disabled_auto_memory_is_not_checked(repo, env):
    auto_memory(env, repo, entries(300))
    env["CLAUDE_CODE_DISABLE_AUTO_MEMORY"] = "1"
    assert health(repo, env)["auto_memory"] is None and defects(repo, env) == []


# --- the harness's settings for auto memory ---------------------------------------------------

def settings(path, values):
    write(path, json.dumps(values, indent=2) + "\n")


def user_settings(env):
    return Path(env["HOME"]) / ".claude" / "settings.json"


@pytest.mark.parametrize("where", ["settings.json", "settings.local.json", "user"])
def test_auto_memory_turned_off_in_any_settings_file_is_not_checked(repo, env, where):
    auto_memory(env, repo, entries(300))
    target = user_settings(env) if where == "user" else repo / ".claude" / where
    settings(target, {"permissions": {"allow": []}, "autoMemoryEnabled": False})
    assert health(repo, env)["auto_memory"] is None and defects(repo, env) == []


def test_the_local_settings_file_outranks_the_user_file(repo, env):
    auto_memory(env, repo, entries(260))
    settings(user_settings(env), {"autoMemoryEnabled": False})
    settings(repo / ".claude" / "settings.local.json", {"autoMemoryEnabled": True})
    assert health(repo, env)["auto_memory"]["lost_lines"] == 60
    assert len(defects(repo, env)) == 1


def test_the_managed_settings_file_outranks_every_other(repo, env, tmp_path, monkeypatch):
    auto_memory(env, repo, entries(260))
    settings(repo / ".claude" / "settings.local.json", {"autoMemoryEnabled": True})
    managed = tmp_path / "managed" / "managed-settings.json"
    settings(managed, {"autoMemoryEnabled": False})
    env["MCP_MANAGED_SETTINGS_DIR"] = str(managed.parent)
    assert health(repo, env)["auto_memory"] is None and defects(repo, env) == []


@pytest.mark.parametrize("where, value", [("user", "~/notes/auto"), ("settings.local.json", None)])
def test_a_moved_auto_memory_is_checked_where_it_was_moved(repo, env, tmp_path, where, value):
    moved = tmp_path / "home" / "notes" / "auto"
    write(moved / "MEMORY.md", entries(230))
    auto_memory(env, repo, entries(10))  # the default place: healthy, and no longer read
    target = user_settings(env) if where == "user" else repo / ".claude" / where
    settings(target, {"autoMemoryDirectory": value or str(moved)})
    report = health(repo, env)["auto_memory"]
    assert report["lost_lines"] == 30 and report["file"] == "~/notes/auto/MEMORY.md"
    [point] = defects(repo, env)
    assert "30 line(s) never load" in point


@pytest.mark.parametrize("value", ["relative/folder", "", 7, None])
def test_an_unusable_or_shared_setting_does_not_move_auto_memory(repo, env, tmp_path, value):
    """The shared project file may not move it, and a relative path is no place at all."""
    elsewhere = tmp_path / "elsewhere"
    write(elsewhere / "MEMORY.md", entries(300))
    settings(repo / ".claude" / "settings.json", {"autoMemoryDirectory": str(elsewhere)})
    settings(user_settings(env), {"autoMemoryDirectory": value})
    auto_memory(env, repo, entries(205))
    assert health(repo, env)["auto_memory"]["lost_lines"] == 5


def test_a_moved_auto_memory_without_an_index_is_silent(repo, env, tmp_path):
    auto_memory(env, repo, entries(300))
    settings(user_settings(env), {"autoMemoryDirectory": str(tmp_path / "empty")})
    assert health(repo, env)["auto_memory"] is None and defects(repo, env) == []


@pytest.mark.parametrize("content", [b"{not json autoMemoryEnabled", b"[\"autoMemoryEnabled\"]",
                                     b"\xff\xfe autoMemoryEnabled", b"{\"autoMemoryEnabled\": \"no\"}"])
def test_a_broken_settings_file_changes_nothing(repo, env, content):
    auto_memory(env, repo, entries(260))
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.local.json").write_bytes(content)
    assert health(repo, env)["auto_memory"]["lost_lines"] == 60


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_settings_file_that_is_a_fifo_is_never_opened(repo, env):
    auto_memory(env, repo, entries(260))
    (repo / ".claude").mkdir(exist_ok=True)
    os.mkfifo(str(repo / ".claude" / "settings.local.json"))
    assert len(defects(repo, env)) == 1  # it would hang here if the FIFO were opened


def test_session_start_honours_auto_memory_turned_off(repo, tmp_path):
    projects = tmp_path / "hook-projects"
    auto_memory({"MCP_PROJECTS_DIR": str(projects)}, repo, entries(260))
    settings(repo / ".claude" / "settings.local.json", {"autoMemoryEnabled": False})
    done = run_hook("session-start.py", repo, stdin={"session_id": "s1", "source": "startup"},
                    env={"MCP_PROJECTS_DIR": str(projects)})
    assert done.returncode == 0 and b"never load" not in done.stdout


# --- at session start -----------------------------------------------------------------------

def test_session_start_shows_the_cheap_findings_as_defects_not_budget_points(repo, tmp_path):
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — how a release ships\n<!-- never closed\n")
    projects = tmp_path / "hook-projects"
    auto_memory({"MCP_PROJECTS_DIR": str(projects)}, repo, entries(260))
    done = run_hook("session-start.py", repo, stdin={"session_id": "s1", "source": "startup"},
                    env={"MCP_PROJECTS_DIR": str(projects)})
    text = done.stdout.decode("utf-8")
    assert done.returncode == 0 and done.stderr == b""
    assert "## Context budget" not in text
    assert "## Memory defects — 3 found" in text
    assert "- memory/MEMORY.md points to 1 file(s) that do not exist" in text
    assert "- memory/MEMORY.md line 14 opens an HTML comment" in text
    assert "60 line(s) never load" in text
    standalone = run_hook("context-budget.py", repo, env={"MCP_PROJECTS_DIR": str(projects)})
    assert standalone.stdout.decode("utf-8").startswith("## Memory defects — 3 found\n")


def test_session_start_is_silent_about_a_healthy_memory(repo, tmp_path):
    projects = tmp_path / "hook-projects"
    auto_memory({"MCP_PROJECTS_DIR": str(projects)}, repo, entries(200))
    done = run_hook("session-start.py", repo, stdin={"session_id": "s1", "source": "startup"},
                    env={"MCP_PROJECTS_DIR": str(projects)})
    assert "Context budget" not in done.stdout.decode("utf-8")
    assert "Memory defects" not in done.stdout.decode("utf-8")
    assert run_hook("context-budget.py", repo, env={"MCP_PROJECTS_DIR": str(projects)}).stdout == b""


def test_session_start_parses_only_the_head_of_a_huge_index(repo, env):
    write_lines(index(repo), 20000, "- [Topic {i}](missing-{i}.md) — x")
    [lines] = points(repo, env)
    [dead] = defects(repo, env)
    assert "is 20000 lines" in lines
    assert "that do not exist" in dead and "and " in dead


# --- the start-of-session load table ----------------------------------------------------------

def rows(report):
    return dict((part["file"], part) for part in report["load"]["parts"]
                if not part["file"] or not part["file"].startswith(("/etc/", "/Library/")))


def test_the_load_table_follows_the_harness(repo, env, tmp_path):
    home = tmp_path / "home"
    config = tmp_path / "config"
    env["CLAUDE_CONFIG_DIR"] = str(config)
    write(config / "CLAUDE.md", "# Mine\n@~/shared/style.md\n")
    write(home / ".claude" / "CLAUDE.md", "not read: CLAUDE_CONFIG_DIR moves the user file\n")
    write(home / "shared" / "style.md", "Style.\n@one.md\n")
    for n in range(1, 6):  # a chain of imports five deep: only four hops load
        write(home / "shared" / ("%s.md" % ("one", "two", "three", "four", "five")[n - 1]),
              "hop %d\n@%s.md\n" % (n, ("two", "three", "four", "five", "six")[n - 1]))
    write(home / "shared" / "six.md", "too deep\n")
    write(repo.parent / "CLAUDE.md", "Parent folder instructions.\n")
    write(repo / "CLAUDE.md", "# Project\nUse `@not-an-import.md`.\n```\n@also-not.md\n```\n"
                              "See @docs/guide.md. And @" + str(repo / "docs" / "abs.md") + "\n")
    write(repo / ".claude" / "CLAUDE.md", "More project instructions, @CLAUDE.md again.\n")
    write(repo / "CLAUDE.local.md", "Mine only.\n")
    write(repo / "docs" / "guide.md", "Guide. @../CLAUDE.local.md\n")
    write(repo / "docs" / "abs.md", "Absolute.\n")
    write(repo / "not-an-import.md", "x\n")
    write(repo / "also-not.md", "x\n")
    write(repo / ".claude" / "rules" / "always.md", "Always.\n")
    write(repo / ".claude" / "rules" / "deep" / "nested.md", "Nested.\n")
    write(repo / ".claude" / "rules" / "scoped.md", "---\npaths:\n  - src/**\n---\nScoped.\n")
    write(config / "rules" / "mine.md", "My rule.\n")
    auto_memory(env, repo, entries(250))
    report = health(repo, env)
    table = rows(report)
    assert list(table) == [
        str(config / "CLAUDE.md"), "~/shared/style.md", "~/shared/one.md", "~/shared/two.md",
        "~/shared/three.md", str(repo.parent / "CLAUDE.md"), "CLAUDE.md", "docs/guide.md",
        "CLAUDE.local.md", "docs/abs.md", ".claude/CLAUDE.md", str(config / "rules" / "mine.md"),
        ".claude/rules/always.md", ".claude/rules/deep/nested.md",
        os.path.join(env["MCP_PROJECTS_DIR"], encoded(repo), "memory", "MEMORY.md")]
    assert table["~/shared/three.md"]["note"] == "hop 4, from ~/shared/two.md"
    assert table["docs/guide.md"]["part"] == "import"
    assert table["CLAUDE.md"]["cap"].startswith("protocol budget 8 KB")
    assert not table["CLAUDE.md"]["over"]
    auto = report["load"]["parts"][-1]
    assert auto["over"] and auto["characters"] == len("".join(entries(200)))
    for part in report["load"]["parts"]:
        assert part["tokens"] == -(-part["characters"] // 4)
    total = report["load"]["total"]
    assert total["characters"] == sum(p["characters"] for p in report["load"]["parts"])
    assert total["tokens"] == -(-total["characters"] // 4)
    assert "characters / 4" in report["load"]["estimate"]


def test_the_user_file_is_under_home_without_claude_config_dir(repo, env, tmp_path):
    write(tmp_path / "home" / ".claude" / "CLAUDE.md", "# Mine\n")
    assert rows(health(repo, env))["~/.claude/CLAUDE.md"]["part"] == "user instructions"


def test_an_import_cycle_loads_each_file_once(repo, env):
    write(repo / "CLAUDE.md", "@a.md\n")
    write(repo / "a.md", "@b.md\n")
    write(repo / "b.md", "@a.md @CLAUDE.md\n")
    assert list(rows(health(repo, env))) == ["CLAUDE.md", "a.md", "b.md"]


def test_an_instruction_file_over_the_protocol_budget_is_marked(repo, env):
    write(repo / "CLAUDE.md", "x" * 9216)
    part = rows(health(repo, env))["CLAUDE.md"]
    assert part["over"] and part["characters"] == 9216


# --- install.py --check ------------------------------------------------------------------------

def installed(installer, repo):
    installer.ok("--project", repo)
    return repo


def test_check_is_one_line_when_memory_is_healthy(installer, repo):
    installed(installer, repo)
    done = installer.run("--check", repo)
    assert done.returncode == 0 and len(done.stdout.splitlines()) == 1
    assert done.stdout.startswith("ok: ")


def test_warnings_are_shown_and_exit_0(installer, repo):
    installed(installer, repo)
    write(repo / "memory" / "lonely.md", "# Lonely\n\n- nothing links this file.\n")
    assert installer.run("--check", repo).stdout.startswith("ok: ")  # orphan is asked for
    done = installer.run("--check", repo, env={"MCP_HEALTH_CHECKS": "orphan"})
    assert done.returncode == 0, done.stdout
    assert "WARN     memory health: 1 warning(s) (orphan)" in done.stdout
    # the stamped format's advice (the fixture's memory); a missing date is not asked by default
    assert "## Memory health — 1 warning(s), 1 advice" in done.stdout
    assert "## Loaded before the first turn" in done.stdout
    assert "session-start injection" in done.stdout


def test_a_dead_pointer_is_broken_never_over_budget(installer, repo):
    installed(installer, repo)
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — how a release ships\n")
    with open(str(repo / "memory" / "retry.md"), "a", encoding="utf-8") as handle:
        handle.write("- The old loop lived in `src/old_worker.py`.\n")
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert "BROKEN   memory health: 1 broken (dead-pointer)" in done.stdout
    assert "OVER" not in done.stdout and "Context budget" not in done.stdout
    assert done.stdout.count("deploy.md") == 1


def test_check_json_is_the_whole_report(installer, repo):
    installed(installer, repo)
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    commit(repo, "Retry five times", "2026-11-02T09:00:00+00:00")
    done = installer.run("--check", "--json", repo, env={"MCP_HEALTH_CHECKS": "possibly-stale"})
    report = json.loads(done.stdout)
    assert done.returncode == report["exit"] == 0
    health_report = report["memory_health"]
    # the fixture's memory is in the stamped format, which the install's memory health advises
    # moving (stamped-format): advice, which changes no status
    assert [f["check"] for f in health_report["findings"]] == ["possibly-stale", "stamped-format"]
    assert health_report["load"]["parts"][-1]["part"] == "session-start injection"
    assert health_report["load"]["parts"][-1]["characters"] > 0
    assert report["budget_points"] == [] and report["status"] == "with warnings"


def test_check_json_exits_1_when_broken(installer, repo):
    installed(installer, repo)
    write(index(repo), HEALTHY_INDEX + "<!-- unclosed\n")
    done = installer.run("--check", "--json", repo)
    report = json.loads(done.stdout)
    assert done.returncode == report["exit"] == 1
    assert report["budget_points"] == [] and report["status"] == "broken"
    assert report["memory_health"]["status"] == "broken"
    assert [f["severity"] for f in report["memory_health"]["findings"]
            if f["check"] == "unclosed-comment"] == ["broken"]


def test_an_injection_cut_at_the_hook_limit_is_over_budget(installer, repo):
    installed(installer, repo)
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("".join("- [Retry %d](retry.md) — %s\n" % (n, "w" * 150) for n in range(70)))
    report = json.loads(installer.run("--check", "--json", repo).stdout)
    [cut] = [f for f in report["memory_health"]["findings"] if f["check"] == "injection-cut"]
    assert cut["severity"] == "over" and report["exit"] == 1
    assert report["memory_health"]["load"]["parts"][-1]["over"]


@pytest.mark.parametrize("args", [["--check", "--json", "--recursive"], ["--project", "--json"]])
def test_json_works_only_with_check_of_one_folder(installer, repo, args):
    done = installer.run(*(args + [repo]))
    assert done.returncode == 2 and "--json works only with --check DIR" in done.stderr


# --- the memory alone: install.py --check --memory ----------------------------------------------

def test_check_memory_is_about_the_memory_not_the_installation(installer, repo):
    done = installer.run("--check", repo)  # nothing installed: the full check fails on that
    assert done.returncode == 1 and "protocol not installed" in done.stdout
    alone = installer.run("--check", "--memory", repo)
    assert alone.returncode == 0 and alone.stdout == "ok: %s - memory healthy\n" % repo


def test_check_memory_exits_1_on_broken_memory_and_0_on_warnings(installer, repo):
    write(repo / "memory" / "lonely.md", "# Lonely\n<!-- Last updated: 2026-10-01 -->\n"
                                         "- 2026-10-01: nothing links this file.\n")
    warned = installer.run("--check", "--memory", repo, env={"MCP_HEALTH_CHECKS": "all"})
    assert warned.returncode == 0 and "WARN     memory health: 1 warning(s) (orphan)" in warned.stdout
    with open(str(index(repo)), "a", encoding="utf-8") as handle:
        handle.write("- [Deploy](deploy.md) — how a release ships\n")
    broken = installer.run("--check", "--memory", "--json", repo)
    report = json.loads(broken.stdout)
    assert broken.returncode == report["exit"] == 1 and report["status"] == "broken"
    assert "hypothetical" in report["memory_health"]["load"]["parts"][-1]["part"]


def test_check_memory_works_only_with_check_of_one_folder(installer, repo):
    for args in (["--check", "--memory", "--recursive"], ["--project", "--memory"]):
        done = installer.run(*(args + [repo]))
        assert done.returncode == 2 and "--memory works only with --check DIR" in done.stderr

