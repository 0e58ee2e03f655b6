"""One ownership decision per part, applied to every agent.

A hook of the project's own under one of the protocol's names is theirs: Claude Code's entries
do not run it, and neither do Codex CLI's or Gemini CLI's. Session start and the Stop guard are
wired together or not at all: a guard without the protocol's session start finds no baseline, so
it would block the first stop of every session on a tree that was dirty before it began. A
skill clash's way out keeps the user's skill working."""

import json
import os

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    git, installer, path_in, read, repo, settings_of, snapshot, write,
)

RECORD = ".claude/memory-context-protocol.json"
AGENT_FILES = (".codex/hooks.json", ".gemini/settings.json")
OWN_START = b"import subprocess\nsubprocess.run(['./scripts/bootstrap.sh'])\n"


def json_of(root, rel):
    return json.loads(read(path_in(root, rel)).decode("utf-8"))


def commands_in(root, rel):
    if not os.path.exists(path_in(root, rel)):
        return []
    return [handler.get("command", "") for groups in json_of(root, rel).get("hooks", {}).values()
            for group in groups for handler in group["hooks"]]


def contents(root):
    return {rel.replace(os.sep, "/"): content for rel, (content, _, _) in snapshot(root).items()}


@pytest.fixture
def repo_with_its_own_start(installer, repo):
    write(path_in(repo, ".claude/hooks/session-start.py"), OWN_START)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "our own session start", env=installer.env)
    return repo


@pytest.mark.parametrize("mode", ["--project", "--update"])
def test_no_agent_runs_a_session_start_of_the_projects_own(installer, repo_with_its_own_start,
                                                            mode):
    repo = repo_with_its_own_start
    before = contents(repo)
    if mode == "--update":
        installer.ok("--project", repo)
    installer.ok(mode, repo, "--agents", "claude,codex,gemini,agents-md")
    for rel in (".claude/settings.json",) + AGENT_FILES:
        assert commands_in(repo, rel) == [], rel  # neither session start nor the Stop guard
    assert read(path_in(repo, ".claude/hooks/session-start.py")) == OWN_START
    checked = installer.run("--check", repo)
    assert checked.returncode == 1
    [clash] = [line for line in checked.stdout.splitlines() if "session-start.py" in line]
    assert clash.startswith("  CLASH ") and "Stop guard" in clash and "any agent" in clash
    assert "UNWIRED" not in checked.stdout
    installer.ok("--uninstall", repo)
    assert contents(repo) == before


def test_update_takes_back_the_entries_an_earlier_run_wired_to_the_users_hook(
        installer, repo_with_its_own_start):
    """An earlier version wired the project's own session start for Codex and Gemini, and the
    Stop guard for every agent: --update takes those entries back, as the record says they are
    the protocol's, and leaves nothing of the user's."""
    repo = repo_with_its_own_start
    os.rename(path_in(repo, ".claude/hooks/session-start.py"), path_in(repo, "own"))
    installer.ok("--project", repo, "--agents", "claude,codex,gemini")
    os.replace(path_in(repo, "own"), path_in(repo, ".claude/hooks/session-start.py"))
    record = json_of(repo, RECORD)
    del record["files"][".claude/hooks/session-start.py"]
    record["hooks"] = ["Stop"]
    write(path_in(repo, RECORD), json.dumps(record, indent=2, sort_keys=True) + "\n")
    settings = settings_of(repo)
    del settings["hooks"]["SessionStart"]
    write(path_in(repo, ".claude/settings.json"), json.dumps(settings, indent=2) + "\n")
    assert any("session-start.py" in command for command in commands_in(repo, AGENT_FILES[0]))
    checked = installer.run("--check", repo)
    assert checked.returncode == 1 and "took back" in checked.stdout
    done = installer.ok("--update", repo)
    assert "took back" in done.stdout
    for rel in (".claude/settings.json",) + AGENT_FILES:
        assert commands_in(repo, rel) == [], rel
    record = json_of(repo, RECORD)
    assert record["hooks"] == [] and all(not events for events in record["wired"].values())
    assert read(path_in(repo, ".claude/hooks/session-start.py")) == OWN_START


def test_renaming_the_users_session_start_wires_the_protocols_for_every_agent(
        installer, repo_with_its_own_start):
    repo = repo_with_its_own_start
    installer.ok("--project", repo, "--agents", "claude,codex,gemini")
    git(repo, "mv", ".claude/hooks/session-start.py", ".claude/hooks/bootstrap.py",
        env=installer.env)
    installer.ok("--update", repo)
    assert len(commands_in(repo, ".claude/settings.json")) == 2
    for rel in AGENT_FILES:
        assert len(commands_in(repo, rel)) == 2, rel


def test_a_skill_clash_is_told_to_move_its_folder_and_rename_the_skill(installer, repo):
    """A skill is found by its folder's SKILL.md and called by the name in it: renaming the file
    would kill the user's skill, and a folder moved with the same name would still clash."""
    own = "---\nname: dream\ndescription: our release dream\n---\nDream big.\n"
    write(path_in(repo, ".agents/skills/dream/SKILL.md"), own)
    installer.ok("--project", repo, "--agents", "claude,codex")
    checked = installer.run("--check", repo)
    [clash] = [line for line in checked.stdout.splitlines() if "skills/dream" in line]
    assert "SKILL-own.md" not in clash
    assert ".agents/skills/dream-own/" in clash and "name: dream-own" in clash
    os.renames(path_in(repo, ".agents/skills/dream/SKILL.md"),
               path_in(repo, ".agents/skills/dream-own/SKILL.md"))
    moved = path_in(repo, ".agents/skills/dream-own/SKILL.md")
    write(moved, read(moved).replace(b"name: dream\n", b"name: dream-own\n"))
    installer.ok("--update", repo)
    assert b"name: dream\n" in read(path_in(repo, ".agents/skills/dream/SKILL.md"))
    assert "skills/dream" not in installer.run("--check", repo).stdout
