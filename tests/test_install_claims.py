"""The record is a list of claims, each checked before it is believed; a record git merged or left
in conflict still lets every mode work.

The record is committed, so a pull request may change it alone. A claim counts only where the
installer could have made it: a file for a digest of bytes it writes there (this version's, for
the project's interpreter, or a released version's), a deny rule with the .claudeignore line it
makes that rule of, nothing the user had before the first install. So a record-only change can
neither grant a Skill rule, nor make --update replace a file or drop a rule of the user's, nor
make --uninstall remove one."""

import hashlib
import json
import os
import subprocess

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    git, installer, make_repo, path_in, read, repo, settings_of, snapshot, write,
    write_settings,
)

RECORD = ".claude/memory-context-protocol.json"
RELEASE_SCRIPT = ("---\ndescription: cut a release\nallowed-tools: Bash(*)\n---\n"
                  "Run ./scripts/release.sh --publish and push the tag.\n")


def digest(data):
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def record_of(project):
    return json.loads(read(path_in(project, RECORD)).decode("utf-8"))


def write_record(project, record):
    write(path_in(project, RECORD), json.dumps(record, indent=2, sort_keys=True) + "\n")


def rules(project, key):
    return settings_of(project).get("permissions", {}).get(key, [])


def commit_all(repo, env, message):
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", message, env=env)


def contents(root):
    """{path: bytes or None} of everything under root but .git/: what the user sees."""
    return {rel.replace(os.sep, "/"): content for rel, (content, _, _) in snapshot(root).items()}


@pytest.fixture
def clone_of(installer, tmp_path):
    """A teammate's fresh clone of a repository: no local record of what was there before."""
    def clone(repo):
        path = str(tmp_path / "clone")
        git(str(tmp_path), "clone", "-q", repo, path, env=installer.env)
        return path
    return clone


# ------------------------------------------------------------------ a record-only change

@pytest.mark.parametrize("claimed", ["the file's own digest", "the protocol's dream.md's digest"])
def test_a_record_naming_the_projects_own_command_grants_nothing(
        installer, repo, clone_of, claimed):
    write(path_in(repo, ".claude/commands/dream.md"), RELEASE_SCRIPT)
    installer.ok("--project", repo)
    commit_all(repo, installer.env, "the protocol")
    assert "Skill(dream)" not in rules(repo, "allow")
    record = record_of(repo)
    protocols = read(installer.source_file("commands/dream.md"))
    record["files"][".claude/commands/dream.md"] = digest(
        RELEASE_SCRIPT.encode() if claimed == "the file's own digest" else protocols)
    write_record(repo, record)
    commit_all(repo, installer.env, "a change to the record alone")
    clone = clone_of(repo)
    for run in (("--update",), ("--project",), ("--update", "--python", "python3")):
        installer.ok(*(run + (clone,)))
        assert "Skill(dream)" not in rules(clone, "allow"), run
    assert read(path_in(clone, ".claude/commands/dream.md")).decode() == RELEASE_SCRIPT
    checked = installer.run("--check", clone)
    assert checked.returncode == 1 and "Skill(dream)" not in checked.stdout.split("CLASH")[0]


def test_a_claim_the_installer_could_not_have_made_is_named_and_written_out(
        installer, repo, clone_of):
    write(path_in(repo, ".claude/commands/dream.md"), RELEASE_SCRIPT)
    installer.ok("--project", repo)
    record = record_of(repo)
    record["files"][".claude/commands/dream.md"] = digest(RELEASE_SCRIPT.encode())
    write_record(repo, record)
    checked = installer.run("--check", repo)
    assert checked.returncode == 1
    [line] = [line for line in checked.stdout.splitlines() if "could not have" in line]
    assert line.startswith("  DRIFT ") and ".claude/commands/dream.md" in line
    installer.ok("--update", repo)
    assert ".claude/commands/dream.md" not in record_of(repo)["files"]
    assert "could not have" not in installer.run("--check", repo).stdout


USERS_DENY = ["Bash(curl:*)", "Read(./config/credentials.yml)"]


def test_a_record_claiming_the_users_deny_rules_drops_none_of_them(installer, repo, clone_of):
    write_settings(repo, {"permissions": {"deny": USERS_DENY}})
    installer.ok("--project", repo)
    commit_all(repo, installer.env, "the protocol")
    record = record_of(repo)
    record["deny"]["Bash(curl:*)"] = "curl"  # no .claudeignore line makes this rule
    record["deny"]["Read(./config/credentials.yml)"] = "config/credentials.yml"  # Read(/config/...)
    write_record(repo, record)
    commit_all(repo, installer.env, "a change to the record alone")
    clone = clone_of(repo)
    installer.ok("--update", clone)
    assert [rule for rule in USERS_DENY if rule in rules(clone, "deny")] == USERS_DENY
    installer.ok("--uninstall", clone)
    assert settings_of(clone) == {"permissions": {"deny": USERS_DENY}}


def test_a_rule_the_user_had_before_the_install_never_becomes_the_protocols(installer, repo):
    """On the machine of the first install, the local record shows what the user had."""
    write(path_in(repo, ".claudeignore"), "dist/\n")
    write_settings(repo, {"permissions": {"deny": ["Read(./dist/)"], "allow": ["Skill(dream)"]}})
    installer.ok("--project", repo)
    record = record_of(repo)
    record["deny"]["Read(./dist/)"] = "dist/"
    record["allow"] = sorted(set(record["allow"]) | {"Skill(dream)"})
    write_record(repo, record)
    write(path_in(repo, ".claudeignore"), "")  # the line goes: the protocol's rule would go
    installer.ok("--update", repo)
    assert "Read(./dist/)" in rules(repo, "deny")
    installer.ok("--uninstall", repo)
    assert settings_of(repo) == {"permissions": {"deny": ["Read(./dist/)"],
                                                 "allow": ["Skill(dream)"]}}


def test_a_record_claiming_the_users_claudeignore_neither_replaces_it_nor_drops_its_rules(
        installer, repo, clone_of):
    mine = b".env\nconfig/master.key\n"
    write(path_in(repo, ".claudeignore"), mine)
    installer.ok("--project", repo)
    commit_all(repo, installer.env, "the protocol")
    denied = rules(repo, "deny")
    assert "Read(/config/master.key)" in denied
    record = record_of(repo)
    record["files"][".claudeignore"] = digest(mine)
    write_record(repo, record)
    commit_all(repo, installer.env, "a change to the record alone")
    clone = clone_of(repo)
    installer.ok("--update", clone)
    assert read(path_in(clone, ".claudeignore")) == mine
    assert rules(clone, "deny") == denied
    installer.ok("--uninstall", clone)
    assert read(path_in(clone, ".claudeignore")) == mine


def test_a_record_claiming_the_users_memory_index_does_not_make_uninstall_remove_it(
        installer, repo, clone_of):
    index = b"# Our memory\n\n- [Deploys](deploys.md)\n"
    write(path_in(repo, "memory/MEMORY.md"), index)
    installer.ok("--project", repo)
    record = record_of(repo)
    record["files"]["memory/MEMORY.md"] = digest(index)
    write_record(repo, record)
    commit_all(repo, installer.env, "the protocol, and a claim")
    clone = clone_of(repo)
    installer.ok("--uninstall", clone)
    assert read(path_in(clone, "memory/MEMORY.md")) == index


# ------------------------------------------------------------------ merged and conflicted

def branch_install(repo, env, installer, branch, agents):
    git(repo, "checkout", "-q", "-b", branch, "main", env=env)
    installer.ok("--update", repo, "--agents", agents)
    commit_all(repo, env, "agents: " + agents)


def conflicted_merge(repo, env):
    """Merge the gemini branch into the codex branch; the record conflicts. Returns git's
    exit code and whether the record holds conflict markers."""
    git(repo, "checkout", "-q", "codex", env=env)
    done = subprocess.run(["git", "-C", repo, "merge", "-q", "--no-edit", "gemini"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return done.returncode, b"<<<<<<<" in read(path_in(repo, RECORD))


@pytest.fixture
def two_branches(installer, tmp_path):
    """A repository with the protocol installed on main, then Codex CLI wired on one branch and
    Gemini CLI on another, the second merged into the first: the record conflicts. Returns
    (repository, its files before any install)."""
    env = installer.env
    repo = make_repo(str(tmp_path / "team"), env, {"README.md": "# team\n", "src/a.py": "1\n"})
    before = contents(repo)
    installer.ok("--project", repo)
    commit_all(repo, env, "the protocol")
    branch_install(repo, env, installer, "codex", "claude,codex")
    branch_install(repo, env, installer, "gemini", "claude,gemini")
    code, markers = conflicted_merge(repo, env)
    assert code != 0 and markers
    return repo, before


def test_a_conflicted_record_lets_check_update_and_uninstall_work(installer, two_branches):
    repo, before = two_branches
    checked = installer.run("--check", repo)
    assert "not the record the installer writes" not in checked.stdout + checked.stderr
    assert "conflict" in checked.stdout
    installer.ok("--update", repo)
    record = record_of(repo)
    assert sorted(record["wired"]) == [".codex/hooks.json", ".gemini/settings.json"]
    assert b"<<<<<<<" not in read(path_in(repo, RECORD))
    commit_all(repo, installer.env, "merged")
    installer.ok("--check", repo)
    installer.ok("--uninstall", repo)
    assert contents(repo) == before


def test_a_conflicted_record_uninstalls_as_it_is(installer, two_branches):
    repo, before = two_branches
    installer.ok("--uninstall", repo)
    assert contents(repo) == before


@pytest.mark.parametrize("side", ["--ours", "--theirs"])
def test_a_conflict_resolved_by_taking_one_side_still_uninstalls_everything(
        installer, two_branches, side):
    """One side's record lacks the other's agent; that agent's hooks file, exactly as the
    installer writes one, is the protocol's all the same, as in an install made before the
    record."""
    repo, before = two_branches
    git(repo, "checkout", side, "--", RECORD, env=installer.env)
    installer.ok("--check", repo)
    installer.ok("--uninstall", repo)
    assert contents(repo) == before
