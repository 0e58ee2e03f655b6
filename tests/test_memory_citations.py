"""What a memory line says about the paths it cites: session logs and dated records are history,
a line that records or plans a change is true as written, a folder is a place, and citations are
read as developers write them.

Each fixture is shaped like the real memory the case came from: a daily log that lists the files
a session touched, meeting minutes with action items, a migration plan whose table says DELETE,
a progress log inside a living plan, decisions dated in their headings, pytest node ids and
`file:line` references, and a home folder named in the index itself.
"""
import pytest

from test_memory_health import (HEALTH, commit, env, findings, git_here, health, index,  # noqa: F401
                                repo, with_advice, write)

LATER = "2026-11-03T09:00:00+00:00"


def append(repo, name, text):
    with open(str(repo / "memory" / name), "a", encoding="utf-8") as handle:
        handle.write(text)


def rename(repo, old, new, date=LATER):
    (repo / new).parent.mkdir(parents=True, exist_ok=True)
    git_here(repo, "mv", old, new)
    return commit(repo, "Move %s to %s" % (old, new), date)


def delete(repo, path, date=LATER):
    git_here(repo, "rm", "-q", "-r", path)
    return commit(repo, "Remove %s" % path, date)


def checks(report):
    return sorted(set(f["check"] for f in report["findings"]))


# --- session logs and dated records are history -------------------------------------------

DAILY_LOG = """\
## Session Summary
chore: update

## Changes
- `scripts/build.ts` — modified
- `scripts/helpers/scan.ts` — modified
- `docs/adr/` — modified

## Decisions
- None
"""


def test_a_daily_log_is_history_one_advice_and_no_finding_per_line(repo, env):
    for path in ("scripts/build.ts", "scripts/helpers/scan.ts", "docs/adr/0001-start.md"):
        write(repo / path, "// first\n")
    write(repo / "memory" / "2026-10-01.md", DAILY_LOG)
    commit(repo, "the day's work and its log")
    rename(repo, "scripts/build.ts", "scripts/make.ts")
    delete(repo, "scripts/helpers/scan.ts")
    write(repo / "docs" / "adr" / "0001-start.md", "// changed\n")
    commit(repo, "Change the ADR", "2026-11-04T09:00:00+00:00")
    report = health(repo, with_advice(env))
    [advice] = findings(report, "session-log")
    assert (advice["file"], advice["line"], advice["severity"]) == (
        "memory/2026-10-01.md", 1, "advice")
    assert "named by its date, 2026-10-01" in advice["message"]
    assert "/dream" in advice["repair"]
    assert checks(report) == ["session-log"]  # no missing path, no stale line, no orphan
    assert report["status"] == "ok"


def test_a_log_a_day_is_one_advice_for_the_folder_and_each_log_is_listed(repo, env):
    for day in ("2026-09-29", "2026-09-30", "2026-10-01"):
        write(repo / "memory" / ("%s.md" % day), DAILY_LOG)
    write(repo / "memory" / "meeting-2026-09-15-kickoff.md", "# Kickoff\n- agreed\n")
    commit(repo, "three logs and minutes")
    report = health(repo, with_advice(env))
    [advice] = findings(report, "session-log")
    assert (advice["file"], advice["line"]) == ("memory/2026-09-29.md", 1)
    assert advice["message"].startswith("2026-09-29.md and 3 more are session logs")
    assert [log["file"] for log in report["session_logs"]] == [
        "memory/2026-09-29.md", "memory/2026-09-30.md", "memory/2026-10-01.md",
        "memory/meeting-2026-09-15-kickoff.md"]


@pytest.mark.parametrize("name, text, reason", [
    ("2026-08-15-deploy.md", "# Deploy\n- shipped `scripts/build.ts`\n", "named by its date"),
    ("meeting-2026-08-09-review.md", "# Review\n- Delete `scripts/build.ts`\n",
     "named by its date"),
    ("session-log.md", "# Sessions\n- touched `scripts/build.ts`\n", "named as a log"),
    ("08-handoff.md", "# Handoffs\n- [2026-08-22](handoffs/a.md): `scripts/build.ts` done\n",
     "named as a log"),
    ("queue.md", "---\ntype: handoff\n---\n# Queue\n- `scripts/build.ts` half done\n",
     "`type: handoff`"),
    ("como-pedir-tela-historico.md", "# Como pedir\n- `scripts/build.ts` gerava a tela\n",
     "named as a log"),
    ("_TRIAGEM-IDENTIDADE-2026-06.md", "# Triagem\n- `scripts/build.ts` sem dono\n",
     "named by its month, 2026-06"),
    ("post-mortem-v4-go-live.md", "# Go-live\n- `scripts/build.ts` broke the deploy\n",
     "named as a record of its day"),
    ("_PROPOSTA-protocolo-v2.md", "# Proposta\n- mover `scripts/build.ts`\n",
     "named as a record of its day"),
    ("retro.md", "---\ntype: journal\n---\n# Retro\n- `scripts/build.ts` was slow\n",
     "`type: journal`"),
    ("verification.md", "# Directive 159, verification\n\n**Date:** 2026-03-03\n\n"
                        "### Files verified\n- `scripts/build.ts` — builds the site\n",
     "a document dated once, at its head: 2026-03-03"),
    ("work.md", "# Work\n\n## 2026-08-14 — build\n- `scripts/build.ts` added\n\n"
                "## 2026-08-15 — tidy\n- `scripts/build.ts` cleaned\n",
     "its sections are headed by dates"),
])
def test_logs_are_known_by_name_type_dated_head_or_dated_sections(repo, env, name, text, reason):
    write(repo / "scripts" / "build.ts", "// first\n")
    write(repo / "memory" / name, text)
    commit(repo, "log")
    delete(repo, "scripts/build.ts")
    report = health(repo, with_advice(env))
    [advice] = findings(report, "session-log")
    assert reason in advice["message"]
    assert findings(report, "missing-path") == []


def test_claude_codes_own_types_are_claims_unless_the_name_or_title_gives_a_day(repo, env):
    """`type: project` says what the note is about, not whether it is kept current: a note named
    without a date is a claim about the project now. (A name or a title that gives its day is a
    dated snapshot whatever its type: test_memory_kinds.)"""
    write(repo / "scripts" / "build.ts", "// first\n")
    write(repo / "memory" / "project_build.md",
          "---\nname: build\ndescription: how the site builds\ntype: project\n---\n"
          "The site builds with `scripts/build.ts`.\n")
    commit(repo, "a project memory")
    delete(repo, "scripts/build.ts")
    report = health(repo, with_advice(env))
    assert findings(report, "session-log") == []
    assert [f["file"] for f in findings(report, "missing-path")] == ["memory/project_build.md"]


def test_a_living_file_with_a_last_updated_line_is_not_a_dated_record(repo, env):
    write(repo / "scripts" / "build.ts", "// first\n")
    write(repo / "memory" / "build.md", "# Build\n<!-- Last updated: 2026-10-01 -->\n"
                                        "**Date:** 2026-03-03\n- `scripts/build.ts` builds it.\n")
    commit(repo, "build notes")
    delete(repo, "scripts/build.ts")
    report = health(repo, with_advice(env))
    assert findings(report, "session-log") == []
    assert len(findings(report, "missing-path")) == 1


def test_a_progress_log_inside_a_living_plan_is_history_and_the_plan_is_not(repo, env):
    write(repo / "vignettes" / "features.Rmd", "first\n")
    write(repo / "vignettes" / "poster.Rmd", "first\n")
    write(repo / "memory" / "plan.md", (
        "---\nname: plan\ndescription: the release plan\nmetadata:\n  type: project\n---\n"
        "# Release plan\n\n"
        "The poster lives in `vignettes/poster.Rmd`.\n\n"
        "## Progress log\n\n"
        "**2026-05-29 — Phase 3 done**\n"
        "  fixed the titles of `vignettes/features.Rmd` and `vignettes/poster.Rmd`.\n\n"
        "## Next\n\n"
        "- Rewrite `vignettes/poster.Rmd`.\n"))
    commit(repo, "the plan")
    rename(repo, "vignettes/features.Rmd", "vignettes/features-v2.Rmd")
    rename(repo, "vignettes/poster.Rmd", "vignettes/poster-v2.Rmd")
    found = findings(health(repo, env), "missing-path")
    assert [(f["message"].split("`")[1], f["lines"]) for f in found] == [
        ("vignettes/poster.Rmd", [9, 18])]


def test_an_entry_that_opens_with_a_date_outside_a_log_section_is_history(repo, env):
    write(repo / "src" / "loop.py", "first\n")
    write(repo / "memory" / "notes.md", "# Notes\n<!-- Last updated: 2026-10-01 -->\n\n"
                                        "**2026-06-16 — loop bug fixed**\n"
                                        "- the fix went into `src/loop.py`.\n\n"
                                        "## Facts\n- The loop is `src/loop.py`.\n")
    commit(repo, "notes")
    delete(repo, "src/loop.py")
    [found] = findings(health(repo, env), "missing-path")
    assert found["lines"] == [8]


# --- a line that records or plans a change --------------------------------------------------

@pytest.mark.parametrize("line", [
    "- 2026-10-01: merged `src/helpers.py` into `src/utils.py`.",
    "- ported `src/helpers.py` to TypeScript.",
    "- switched from `src/helpers.py` to `src/utils.py` for parsing.",
    "- `src/helpers.py` → `src/utils.py` (one module now).",
    "- `src/helpers.py` is now `src/utils.py`.",
    "- The parser used to live in `src/helpers.py`.",
    "- `src/helpers.py` was removed on purpose.",
    "- No longer needed: `src/helpers.py`.",
    "- Delete `src/helpers.py`, `src/old/`.",
    "- TODO: remove `src/helpers.py` once the port lands.",
    "| `src/helpers.py` | S | DELETE |",
    "| `src/helpers.py` | L | Deprecate → utils facade |",
    "- Run `git mv src/helpers.py src/utils.py` to finish.",
    "- 2026-10-01: `src/helpers.py` 已删除，合并到 `src/utils.py`。",
    "- `src/helpers.py` wurde entfernt.",
    "- Removed the old helpers, such as `src/helpers.py`.",
])
def test_a_line_that_records_or_plans_the_change_is_true_as_written(repo, env, line):
    assert missing_after_helpers_go(repo, env, line) == []


def missing_after_helpers_go(repo, env, line):
    """The missing paths found once `src/helpers.py` and `src/old/` are gone and `src/utils.py`
    stays, with `line` added to a topic file."""
    for path in ("src/helpers.py", "src/old/x.py", "src/utils.py"):
        write(repo / path, "first\n")
    commit(repo, "helpers")
    delete(repo, "src/helpers.py")
    delete(repo, "src/old")
    append(repo, "retry.md", line + "\n")
    return findings(health(repo, env), "missing-path")


@pytest.mark.parametrize("line", [
    "- `src/helpers.py` is used to generate the API docs.",
    "- Used to generate docs: `src/helpers.py`.",
    "- The transformer model lives in `src/helpers.py`.",
    "- The performance layer is `src/helpers.py`.",
    "- `src/helpers.py` handles the move logic.",
    "- Renamed the parser to `src/helpers.py`.",
    "- `src/utils.py` was merged into `src/helpers.py`.",
    "- Parsing is in `src/helpers.py`. The old loop was removed.",
])
def test_a_word_of_change_elsewhere_does_not_excuse_a_stale_path(repo, env, line):
    [found] = missing_after_helpers_go(repo, env, line)
    assert "`src/helpers.py`" in found["message"]


# --- citations as developers write them ------------------------------------------------------

@pytest.mark.parametrize("citation", [
    "`tests/test_client.py::test_retry`",
    "`tests/test_client.py::TestRetry::test_once[slow]`",
    "`tests/test_client.py:42`",
    "`tests/test_client.py:42:7`",
    "`tests/test_client.py:L42-L50`",
    "`tests/test_client.py#L10-L20`",
    "`tests/test_client.py#L10C3-L12C8`",
    "[the tests](../tests/test_client.py#L10)",
    "`pytest tests/test_client.py -k retry`",
    "`python3 -m pytest --rootdir=. tests/test_client.py`",
    "`test_client.py::test_retry`",
])
def test_a_renamed_test_file_is_found_however_it_is_cited(repo, env, citation):
    write(repo / "tests" / "test_client.py", "def test_retry(): pass\n")
    commit(repo, "tests")
    renamed = rename(repo, "tests/test_client.py", "tests/test_http_client.py")
    append(repo, "retry.md", "- The retry test: %s.\n" % citation)
    [found] = findings(health(repo, env), "missing-path")
    assert "renamed to `tests/test_http_client.py` in %s" % renamed in found["message"]


def test_a_command_that_moves_files_is_a_change_not_a_claim(repo, env):
    write(repo / "src" / "a.py", "first\n")
    commit(repo, "a")
    rename(repo, "src/a.py", "src/b.py")
    append(repo, "retry.md", "- Finish with `git mv src/a.py src/b.py && rm src/a.pyc`.\n")
    assert findings(health(repo, env), "missing-path") == []


# --- folders are places -----------------------------------------------------------------------

def test_a_cited_folder_is_not_stale_when_a_file_under_it_changed(repo, env):
    append(repo, "retry.md", "- 2026-10-01: the decisions are kept in `docs/adr/`.\n")
    write(repo / "docs" / "adr" / "0001-start.md", "first\n")
    commit(repo, "cite the folder")
    write(repo / "docs" / "adr" / "0002-next.md", "second\n")
    write(repo / "docs" / "adr" / "0001-start.md", "changed\n")
    commit(repo, "Add a decision", LATER)
    assert findings(health(repo, with_advice(env)), "possibly-stale") == []


def test_a_cited_folder_that_was_renamed_is_missing(repo, env):
    write(repo / "docs" / "adr" / "0001-start.md", "first\n")
    commit(repo, "adr")
    append(repo, "retry.md", "- 2026-10-01: the decisions are kept in `docs/adr/`.\n")
    rename(repo, "docs/adr", "docs/decisions")
    [found] = findings(health(repo, env), "missing-path")
    assert "`docs/adr/`" in found["message"]


# --- a fact written after its path went --------------------------------------------------------

@pytest.mark.parametrize("heading, reported", [
    ("### Install model (decided 2026-11-03)", False),
    ("### Install model (decided 2026-11-04)", False),
    ("### Install model (decided 2026-11-02)", True),
    ("### Install model", True),
])
def test_a_fact_written_on_or_after_the_day_its_path_went_does_not_name_it(repo, env, heading,
                                                                             reported):
    write(repo / ".agent-loop" / "README.md", "first\n")
    commit(repo, "the scaffold")
    delete(repo, ".agent-loop")  # on 2026-11-03
    append(repo, "retry.md", "\n%s\n- Users copy `.agent-loop/` into their project root.\n" % heading)
    assert bool(findings(health(repo, env), "missing-path")) == reported


# --- home folders in the index -----------------------------------------------------------------

def test_a_home_folder_path_in_the_index_is_found(repo, env):
    append(repo, "MEMORY.md", "- [Cluster](retry.md) — manifests in ~/k3s-manifests/apps\n")
    commit(repo, "index names a home folder")
    [found] = findings(health(repo, env), "machine-local-path")
    assert (found["file"], found["line"]) == ("memory/MEMORY.md", 13)
    assert "`~/k3s-manifests/apps`" in found["message"]


def test_a_log_the_index_leaves_out_is_an_orphan_only_where_the_index_keeps_its_logs(repo, env):
    write(repo / "memory" / "2026-10-01.md", DAILY_LOG)
    write(repo / "memory" / "meeting-2026-10-02-review.md", "# Review\n- agreed\n")
    commit(repo, "a log and minutes, linked from nowhere")
    assert findings(health(repo, env), "orphan") == []
    append(repo, "MEMORY.md", "\n## Meetings\n| [2026-10-02](meeting-2026-10-02-review.md) |\n")
    [found] = findings(health(repo, env), "orphan")
    assert found["file"] == "memory/2026-10-01.md"


def test_a_heading_that_only_mentions_sessions_is_not_a_log(repo, env):
    write(repo / "scripts" / "start.sh", "first\n")
    write(repo / "memory" / "start.md", "# Start\n<!-- Last updated: 2026-10-01 -->\n\n"
                                        "## Session start checklist\n- Run `scripts/start.sh`.\n")
    commit(repo, "checklist")
    delete(repo, "scripts/start.sh")
    assert len(findings(health(repo, env), "missing-path")) == 1


# --- home folders that are not one person's machine --------------------------------------------

@pytest.mark.parametrize("name, line, found", [
    ("data.md", "- Put the raster at `~/path/to/GEBCO_2025.nc`.", []),
    ("data.md", "- The old hardcoded `~/Documents/...` paths.", []),
    ("data.md", "- Save it under `~/Downloads` first.", []),
    ("data.md", "- LaunchAgent `~/Library/LaunchAgents/com.lab.display.plist` pins it.", []),
    ("data.md", "- It probes `~/Applications/LibreOffice.app` then `/Applications`.", []),
    ("data.md", "- Removed the stray copy at `C:\\Users\\adam\\.codex\\skills\\grill`.", []),
    ("data.md", "- Deployment (migrated off docker), manifest `~/k8s/apps/app.yaml`.",
     ["~/k8s/apps/app.yaml"]),
    ("data.md", "- Snapshots: `~/ops/backups/{pre,post}-upgrade.rsc`.",
     ["~/ops/backups/{pre,post}-upgrade.rsc"]),
    ("data.md", "- Per person: `~/work/{name}/notes.md`.", []),
    ("data.md", "- Cached data: `~/Documents/LargeData`.", ["~/Documents/LargeData"]),
    ("data.md", "- App at `/home/app/current` on the VM at 10.0.0.5.", []),
    ("data.md", "- App at `/home/alice/current`, built by hand.", ["/home/alice/current"]),
    ("data.md", "- Source `~/Projects/app` is deployed to the VM.", ["~/Projects/app"]),
    ("app_server.md", "- Deployment source = `~/app`, rebuilt by cron.", []),
    ("app_server.md", "- Backup `~/backups/db.sql` on laptop.", ["~/backups/db.sql"]),
    ("app_on_vm120.md", "- Code at `/home/app/code` (rsynced from local `~/Projects/app`).",
     ["~/Projects/app"]),
    ("proxmox_vm_bot.md", "- Source: `~/Projects/vm-bot/main.go`.", ["~/Projects/vm-bot/main.go"]),
    ("data.md", "- Run it from the checkout: `cd ~/project && make`.", []),
    ("data.md", "- Over ssh it fails: `FileNotFoundError: ~/config.yaml`.", []),
    ("wordpress-fix.md", "- Plugins: `~/domains/example.com/public_html/wp-content/plugins`.", []),
    ("wordpress-fix.md", "- Docroot `/home/u906587222/domains/example.com/public_html/ajuda/`.", []),
    ("hosting.md", "- The site lives in `~/domains/example.com/`.", []),
    ("hosting.md", "- The dumps go to `~/domains/backups/`.", ["~/domains/backups/"]),
])
def test_a_home_folder_is_one_persons_only_where_the_memory_puts_it_there(repo, env, name, line,
                                                                           found):
    write(repo / "memory" / name, "# Notes\n<!-- Last updated: 2026-10-01 -->\n" + line + "\n")
    commit(repo, "notes")
    paths = [f["message"].split("`")[1] for f in findings(health(repo, env), "machine-local-path")]
    assert paths == found


@pytest.mark.parametrize("line, reported", [
    ("- The app lives in `~/Projects/other-app`; `install.sh` builds it.", True),
    ("- The app lives in `~/Projects/other-app`, and `install.sh` builds it.", False),
    ("- `install.sh` builds the site.", True),
])
def test_a_bare_name_beside_another_place_is_that_places_file(repo, env, line, reported):
    write(repo / "scripts" / "install.sh", "echo first\n")
    commit(repo, "installer")
    delete(repo, "scripts/install.sh")
    append(repo, "retry.md", line + "\n")
    assert bool(findings(health(repo, env), "missing-path")) == reported


# --- a dated line that tells history, points to a document, or names the change --------------

@pytest.mark.parametrize("line, stale", [
    ("- 2026-10-01: `src/worker.py` retries three times.", True),
    ("- 2026-10-01: fixed the retry in `src/worker.py`.", False),
    ("- 2026-10-01: `src/worker.py` was the slow part.", False),
    ("- 2026-10-01: threshold in `src/worker.py` 9.0→7.0.", False),
    ("1. **Phase 1 DONE (2026-10-01):** `src/worker.py` hook — 5 layers.", False),
    ("- 2026-10-01: moved the retry loop into `src/worker.py`.", True),
    ("- 2026-10-01: the design: see `docs/design.md`.", False),
    ("- 2026-10-01: the open items are recorded in `docs/design.md`.", False),
    ("- 2026-10-01: `docs/design.md` says retries are capped at three.", True),
    ("- 2026-10-01: every sync is written to `docs/SYNC_LOG.md`.", False),
    ("### 2026-10-01 notes on `src/worker.py`", False),
    ("- 2026-10-01: `src/worker.py` retries three times (PR #42).", False),
    ("- 2026-10-01: `src/worker.py` retries three times (PR #4).", True),
])
def test_a_dated_line_is_stale_only_when_it_says_how_the_file_is(repo, env, line, stale):
    write(repo / "docs" / "design.md", "# Design\n")
    write(repo / "docs" / "SYNC_LOG.md", "# Syncs\n")
    append(repo, "retry.md", line + "\n")
    commit(repo, "the fact")
    write(repo / "src" / "worker.py", "RETRIES = 5\n")
    write(repo / "docs" / "design.md", "# Design, revised\n")
    write(repo / "docs" / "SYNC_LOG.md", "# Syncs\n- 2026-11-02: one more\n")
    commit(repo, "Merge pull request #42 from team/retries", LATER)
    lines = [f["lines"] for f in findings(health(repo, with_advice(env)), "possibly-stale")]
    assert any(5 in numbers for numbers in lines) == stale  # line 5 is the one added


@pytest.mark.parametrize("heading, stale", [
    ("### Internal Documentation", False),
    ("## References", False),
    ("## Triage", True),
    ("## Design", True),
])
def test_a_document_listed_under_a_heading_of_references_is_where_to_read(repo, env, heading,
                                                                         stale):
    """A list under `### Internal Documentation` says where to read (a public memory's
    `- `memory/security/triage-guidelines.md` - Triage classification rules`), not what the
    document says: a later edit of the document makes nothing stale."""
    write(repo / "docs" / "triage.md", "# Triage\n")
    append(repo, "retry.md", "\n%s\n- 2026-10-01: `docs/triage.md` - triage classification rules\n"
           % heading)
    commit(repo, "the fact")
    write(repo / "docs" / "triage.md", "# Triage, revised\n")
    commit(repo, "Rename the commands", LATER)
    found = [f["lines"] for f in findings(health(repo, with_advice(env)), "possibly-stale")]
    assert any(7 in numbers for numbers in found) == stale, found  # line 7 is the one added


# --- where a path in a list is read from, and what a folder became -----------------------------

def test_a_path_nested_under_a_listed_folder_is_read_from_it(repo, env):
    write(repo / "src" / "tracker" / "innovation" / "card.py", "first\n")
    write(repo / "scripts" / "browse.py", "first\n")
    commit(repo, "tracker")
    renamed = rename(repo, "src/tracker/innovation/card.py", "src/tracker/innovation/cards.py")
    delete(repo, "scripts/browse.py")
    append(repo, "retry.md", "- `src/tracker/` — the package\n"
                             "  - `innovation/card.py` — the Card class\n"
                             "- `themes/` — a repository of its own, with its own `scripts/browse.py`\n")
    [found] = findings(health(repo, env), "missing-path")
    assert "git knew as `src/tracker/innovation/card.py`: renamed to " \
           "`src/tracker/innovation/cards.py` in %s" % renamed in found["message"]


def test_a_folder_whose_files_moved_is_named_by_where_they_went(repo, env):
    for name in ("a.png", "b.png"):
        write(repo / "assets" / "icons" / name, name + "\n")
    commit(repo, "icons")
    (repo / "assets" / "game").mkdir(parents=True)
    moved = rename(repo, "assets/icons", "assets/game/icons")
    append(repo, "retry.md", "- `assets/icons/` — the icons\n")
    [found] = findings(health(repo, env), "missing-path")
    assert "renamed to `assets/game/icons` in %s" % moved in found["message"]


def test_a_folder_git_ignores_now_is_local_even_when_it_is_not_there(repo, env):
    write(repo / "data" / "game.json", "{}\n")
    commit(repo, "data, committed by mistake")
    git_here(repo, "rm", "-q", "-r", "--cached", "data")
    write(repo / ".gitignore", "data/\n")
    (repo / "data" / "game.json").unlink()
    (repo / "data").rmdir()
    commit(repo, "ignore the data folder")
    append(repo, "retry.md", "- `data/` — per-game downloads, not committed\n")
    assert findings(health(repo, env), "missing-path") == []


def test_a_bare_name_that_a_tracked_source_builds_is_not_missing(repo, env):
    write(repo / "extension" / "extract.js", "old\n")
    commit(repo, "extension")
    delete(repo, "extension")
    write(repo / "src" / "extract.ts", "new\n")
    commit(repo, "rewrite in TypeScript", LATER)
    append(repo, "retry.md", "- `extract.js` is injected into every frame.\n")
    assert findings(health(repo, env), "missing-path") == []
