"""What install.py owns is recorded, never guessed: a file, hook, command or rule of the user's is
never taken over, granted or called drift, and an install that stopped half-way is completed by
the next run without losing what was there before it.

The record: `.claude/memory-context-protocol.json` (shared: committed with the settings it
describes, so a teammate's clone can --update and --uninstall) and
`.claude/hooks/.before-install.json` (one person's: what was there before the first install on
this machine, ignored by git)."""

import json
import os
import shutil
import signal
import subprocess

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    expected_settings, fix_line, git, installer, make_repo, path_in, project, read, repo,
    settings_of, template_text, write, SKILL_RULES, TEMPLATE_DENY_RULES,
)
from test_install_faults import run_patched

RECORD = ".claude/memory-context-protocol.json"
LOCAL_RECORD = ".claude/hooks/.before-install.json"


def rules(project, key):
    return settings_of(project).get("permissions", {}).get(key, [])


def record_of(project):
    with open(path_in(project, RECORD), encoding="utf-8") as handle:
        return json.load(handle)


def lines_with(text, needle):
    return [line for line in text.splitlines() if needle in line]


# ------------------------------------------------------------------ the record itself

def test_the_record_is_the_first_change_and_names_what_the_install_wrote(installer, repo):
    done = installer.ok("--project", repo)
    changes = [line for line in done.stdout.splitlines()[1:]
               if line.startswith(("  wrote", "  merged", "  append"))]
    # the repository's .gitignore is written down first, as it was, then the record
    assert changes[0].startswith("  wrote    {} (what --uninstall must leave as it was: "
                                 ".gitignore)".format(LOCAL_RECORD))
    assert changes[1].startswith("  wrote    " + RECORD)
    record = record_of(repo)
    assert sorted(record["files"]) == sorted(
        [".claude/hooks/" + name for name in ("context-budget.py", "prune-worktrees.py",
                                              "session-start.py", "stop-handoff.py")]
        + [".claude/commands/" + name for name in ("catchup.md", "dream.md", "handoff.md",
                                                    "memory-status.md", "update-context.md")]
        + [".claudeignore", "memory/MEMORY.md"])
    assert record["hooks"] == ["SessionStart", "Stop"]
    assert record["allow"] == SKILL_RULES
    assert sorted(record["deny"]) == sorted(TEMPLATE_DENY_RULES)
    assert record["deny"]["Read(./.env)"] == ".env"
    # the repository had a .gitignore, and no .gitattributes
    assert record["created"] == [".claude/settings.json", ".gitattributes"]


def test_a_second_run_leaves_the_record_as_it_is(installer, repo):
    installer.ok("--project", repo)
    before = read(path_in(repo, RECORD))
    for mode in ("--project", "--update"):
        done = installer.ok(mode, repo)
        assert done.stdout.splitlines()[-1].startswith("nothing to do")
    assert read(path_in(repo, RECORD)) == before


def test_the_shared_record_is_shared_and_the_local_one_is_not(installer, repo):
    write(path_in(repo, ".claude/settings.json"), '{"model": "x"}\n')
    installer.ok("--project", repo)
    assert os.path.isfile(path_in(repo, LOCAL_RECORD))
    ignored = subprocess.run(["git", "-C", repo, "check-ignore", "-q", "--", RECORD],
                             env=installer.env)
    assert ignored.returncode == 1  # not ignored: it is committed with the settings
    git(repo, "check-ignore", "-q", "--", LOCAL_RECORD, env=installer.env)
    assert "model" not in read(path_in(repo, RECORD)).decode("utf-8")


def test_a_teammates_clone_updates_and_uninstalls_what_the_committed_settings_share(
        installer, tmp_path):
    """The teammate never ran --project: the committed record tells their clone what is the
    protocol's, and what is not (a rule the first user had before the install)."""
    env = installer.env
    first = make_repo(str(tmp_path / "first"), env, {
        ".claude/settings.json": '{\n  "permissions": {"deny": ["Read(./.env)"]}\n}\n',
        "README.md": "hi\n"})
    installer.ok("--project", first)
    git(first, "add", "-A", env=env)
    git(first, "commit", "-q", "-m", "the protocol", env=env)
    clone = str(tmp_path / "clone")
    git(str(tmp_path), "clone", "-q", first, clone, env=env)
    assert not os.path.exists(path_in(clone, LOCAL_RECORD))
    done = installer.ok("--update", clone)
    assert done.stdout.splitlines()[-1].startswith("nothing to do")
    installer.ok("--uninstall", clone)
    assert json.loads(read(path_in(clone, ".claude/settings.json"))) == {
        "permissions": {"deny": ["Read(./.env)"]}}
    assert not os.path.exists(path_in(clone, ".claude/hooks"))
    assert not os.path.exists(path_in(clone, ".claude/commands"))
    assert not os.path.exists(path_in(clone, RECORD))


@pytest.mark.parametrize("data", [
    '{"hooks": {}, "permissions": {"deny": []}}\n',
    '{\n  "permissions": {\n    "allow": [],\n    "deny": []\n  },\n  "hooks": {\n    "Stop": []\n  }\n}\n',
])
def test_a_teammates_uninstall_keeps_the_empty_objects_and_lists_the_user_had(
        installer, tmp_path, data):
    """What the protocol's entries went into but did not make stays, empty, as it was: the
    record says which of them it made."""
    env = installer.env
    first = make_repo(str(tmp_path / "first"), env, {".claude/settings.json": data})
    installer.ok("--project", first)
    git(first, "add", "-A", env=env)
    git(first, "commit", "-q", "-m", "the protocol", env=env)
    clone = str(tmp_path / "clone")
    git(str(tmp_path), "clone", "-q", first, clone, env=env)
    installer.ok("--uninstall", clone)
    assert read(path_in(clone, ".claude/settings.json")).decode() == data


def test_a_record_of_the_users_under_its_name_stops_the_install(installer, project):
    write(path_in(project, RECORD), '{"mine": true}\n')
    done = installer.run("--project", project)
    assert done.returncode == 1 and done.stdout == ""
    assert RECORD in done.stderr and "nothing was changed" in done.stderr
    assert read(path_in(project, RECORD)) == b'{"mine": true}\n'


# ------------------------------------------------------------ a hook of the user's

def users_hook_project(project):
    """A project with hooks of its own that share the bash edition's names, none of them that
    edition's: a wired session-start.sh and a context-budget.sh."""
    write(path_in(project, ".claude/hooks/session-start.sh"), "#!/bin/sh\necho 'our notes'\n")
    write(path_in(project, ".claude/hooks/context-budget.sh"), "#!/bin/sh\ndu -sh .\n")
    mine = {"type": "command", "command": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/session-start.sh'}
    write(path_in(project, ".claude/settings.json"),
          json.dumps({"hooks": {"SessionStart": [{"hooks": [mine]}]}}, indent=2) + "\n")
    return mine


def test_a_users_hook_named_like_the_bash_editions_is_not_taken_over(installer, repo):
    mine = users_hook_project(repo)
    done = installer.ok("--project", repo)
    assert "bash edition" not in done.stdout
    groups = settings_of(repo)["hooks"]["SessionStart"]
    assert groups[0] == {"hooks": [mine]}
    assert len(groups) == 2  # the protocol's own entry, beside the user's
    checked = installer.ok("--check", repo)
    assert "bash edition" not in checked.stdout
    done = installer.ok("--uninstall", repo)
    assert "bash edition" not in done.stdout
    assert settings_of(repo) == {"hooks": {"SessionStart": [{"hooks": [mine]}]}}
    assert os.path.isfile(path_in(repo, ".claude/hooks/context-budget.sh"))


# ------------------------------------------------------------ a command of the user's

USERS_DREAM = "---\ndescription: tidy specs\nallowed-tools: Bash(rm:*)\n---\nDelete finished specs.\n"


def test_a_projects_own_command_is_kept_not_granted_and_not_drift(installer, repo):
    write(path_in(repo, ".claude/commands/dream.md"), USERS_DREAM)
    done = installer.ok("--project", repo)
    assert "Skill(dream)" not in rules(repo, "allow")
    assert rules(repo, "allow") == ["Skill(catchup)", "Skill(handoff)"]
    [line] = lines_with(done.stdout, "commands/dream.md")
    assert line.startswith("  keep     .claude/commands/dream.md (") and "edited" not in line
    checked = installer.run("--check", repo)
    assert checked.returncode == 1
    assert "DRIFT" not in checked.stdout and "--force" not in checked.stdout
    [clash] = lines_with(checked.stdout, "dream.md")
    assert clash.startswith("  CLASH ")
    assert "/dream" in clash and "rename" in clash
    installer.ok("--update", repo)
    installer.ok("--update", repo, "--python", "python3")
    installer.ok("--update", "--force", repo)  # --force replaces the protocol's, never theirs
    assert read(path_in(repo, ".claude/commands/dream.md")).decode() == USERS_DREAM
    assert "Skill(dream)" not in rules(repo, "allow")
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/commands/dream.md")).decode() == USERS_DREAM


def test_renaming_the_users_command_lets_the_update_install_the_protocols(installer, repo):
    write(path_in(repo, ".claude/commands/dream.md"), USERS_DREAM)
    installer.ok("--project", repo)
    os.rename(path_in(repo, ".claude/commands/dream.md"),
              path_in(repo, ".claude/commands/tidy-specs.md"))
    installer.ok("--update", repo)
    assert read(path_in(repo, ".claude/commands/dream.md")) == \
        read(installer.source_file("commands/dream.md"))
    assert "Skill(dream)" in rules(repo, "allow")
    installer.ok("--check", repo)


def test_a_grant_left_for_a_command_of_the_users_is_named(installer, repo):
    """An install made before the record granted Skill(dream) whatever /dream was. Whether the
    user means that grant cannot be known, so it stays, and --check says what it does."""
    installer.ok("--project", repo)
    settings = settings_of(repo)
    settings["model"] = "opus"  # a file of the user's too, not one a release wrote whole
    write(path_in(repo, ".claude/settings.json"), json.dumps(settings, indent=2) + "\n")
    os.remove(path_in(repo, RECORD))
    write(path_in(repo, ".claude/commands/dream.md"), USERS_DREAM)
    installer.ok("--update", repo)
    assert "Skill(dream)" in rules(repo, "allow")
    checked = installer.run("--check", repo)
    [clash] = lines_with(checked.stdout, "dream.md")
    assert clash.startswith("  CLASH ") and "Skill(dream)" in clash


def test_an_edited_command_of_the_protocols_stays_the_protocols(installer, repo):
    installer.ok("--project", repo)
    with open(path_in(repo, ".claude/commands/dream.md"), "a", encoding="utf-8") as handle:
        handle.write("One more rule of ours.\n")
    checked = installer.run("--check", repo)
    assert "edited by you" in checked.stdout and "CLASH" not in checked.stdout
    assert "Skill(dream)" in rules(repo, "allow")


# --------------------------------------------------------------- deny rules

def test_the_users_own_secret_deny_rules_stay(installer, repo):
    write(path_in(repo, ".claudeignore"), "build/\ndist/\n")
    users = {"permissions": {"deny": ["Read(./.env)", "Read(./.env.*)"]}}
    write(path_in(repo, ".claude/settings.json"), json.dumps(users) + "\n")
    done = installer.ok("--project", repo)
    assert "dropped" not in done.stdout
    assert rules(repo, "deny") == ["Read(./.env)", "Read(./.env.*)", "Read(./build/)",
                                   "Read(./dist/)"]
    installer.ok("--check", repo)
    installer.ok("--uninstall", repo)
    assert json.loads(read(path_in(repo, ".claude/settings.json"))) == users


def test_a_deny_rule_the_user_adds_after_the_install_is_theirs(installer, repo):
    write(path_in(repo, ".claudeignore"), "build/\n")
    installer.ok("--project", repo)
    path = path_in(repo, ".claude/settings.json")
    settings = settings_of(repo)
    settings["permissions"]["deny"].append("Read(./.env)")
    write(path, json.dumps(settings, indent=2) + "\n")
    done = installer.ok("--update", repo)
    assert done.stdout.splitlines()[-1].startswith("nothing to do")
    assert "Read(./.env)" in rules(repo, "deny")
    installer.ok("--check", repo)
    installer.ok("--uninstall", repo)
    assert settings_of(repo) == {"permissions": {"deny": ["Read(./.env)"]}}


def test_a_deleted_claudeignore_line_takes_its_rule_with_it(installer, repo):
    installer.ok("--project", repo)
    path = path_in(repo, ".claudeignore")
    text = read(path).decode("utf-8")
    write(path, "".join(line for line in text.splitlines(True) if line.strip() != ".env"))
    checked = installer.run("--check", repo)
    assert checked.returncode == 1
    assert lines_with(checked.stdout, "Read(./.env)") and "gone from .claudeignore" in \
        checked.stdout
    installer.ok("--update", repo)
    assert "Read(./.env)" not in rules(repo, "deny")
    assert "Read(./.env.*)" in rules(repo, "deny")
    installer.ok("--check", repo)


def test_a_line_deleted_from_the_users_own_claudeignore_takes_its_rule_with_it(installer, repo):
    write(path_in(repo, ".claudeignore"), "build/\nnotes-private.txt\n")
    installer.ok("--project", repo)
    assert "Read(./notes-private.txt)" in rules(repo, "deny")
    write(path_in(repo, ".claudeignore"), "build/\n")
    checked = installer.run("--check", repo)
    assert checked.returncode == 1 and "Read(./notes-private.txt)" in checked.stdout
    installer.ok("--update", repo)
    assert rules(repo, "deny") == ["Read(./build/)"]
    write(path_in(repo, ".claudeignore"), "")
    installer.ok("--uninstall", repo)
    assert not os.path.exists(path_in(repo, ".claude/settings.json"))


def test_uninstall_takes_the_rule_of_a_deleted_line_out_of_a_file_the_project_did_not_have(
        installer, repo):
    installer.ok("--project", repo)
    path = path_in(repo, ".claudeignore")
    write(path, read(path).decode("utf-8").replace(".env\n", "", 1))
    installer.ok("--uninstall", repo)
    assert not os.path.exists(path_in(repo, ".claude/settings.json"))


# ---------------------------------------------------- a first install that stopped

# How a first install is stopped half-way: a full disk, a kill (a CI timeout), a closed terminal.
STOPS = {"a full disk": ("raise OSError(errno.ENOSPC, 'No space left on device')",
                         1, "No space left on device")}
if os.name != "nt":  # the signals a POSIX system sends
    STOPS.update((name, ("os.kill(os.getpid(), signal.{})".format(name),
                         -getattr(signal, name), "")) for name in ("SIGTERM", "SIGHUP"))


@pytest.mark.parametrize("at", [2, 6, 12])
@pytest.mark.parametrize("stop", sorted(STOPS))
def test_a_failed_first_install_then_a_rerun_keeps_what_was_there_before(installer, repo, stop,
                                                                           at):
    """Something stops the first install after some writes; the next run completes it, and
    --uninstall gives back the user's rule and their empty folder."""
    before = b'{"permissions": {"allow": ["Skill(dream)"]}}\n'
    write(path_in(repo, ".claude/settings.json"), before)
    os.makedirs(path_in(repo, ".claude/commands"))
    action, code, message = STOPS[stop]
    patch = ("import errno, os, signal\n"
             "def patched(path, *args, **kwargs):\n"
             "    calls.append(path)\n"
             "    if len(calls) == {}:\n"
             "        {}\n"
             "    real(path, *args, **kwargs)\n"
             "real = patch('write_atomically', patched)\n").format(at, action)
    failed = run_patched(installer, patch, "--project", repo)
    assert failed.returncode == code and message in failed.stderr, failed.stderr
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")) == before
    assert os.listdir(path_in(repo, ".claude/commands")) == []


# ------------------------------------------------------------- the memory index

def test_uninstall_removes_the_untouched_index_the_install_wrote(installer, repo):
    installer.ok("--project", repo)
    done = installer.ok("--uninstall", repo)
    assert not os.path.exists(path_in(repo, "memory"))
    assert "  removed  memory/MEMORY.md" in done.stdout


def test_uninstall_keeps_an_index_with_anything_of_the_users(installer, repo):
    installer.ok("--project", repo)
    with open(path_in(repo, "memory/MEMORY.md"), "a", encoding="utf-8") as handle:
        handle.write("- [Deploys](deploys.md) - how we ship\n")
    done = installer.ok("--uninstall", repo)
    assert os.path.isfile(path_in(repo, "memory/MEMORY.md"))
    assert "  keep     memory/" in done.stdout


def test_uninstall_keeps_an_index_the_user_had(installer, repo):
    write(path_in(repo, "memory/MEMORY.md"), template_text(installer, "MEMORY.md"))
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, "memory/MEMORY.md")).decode() == template_text(installer, "MEMORY.md")


def test_uninstall_keeps_a_memory_folder_that_holds_more(installer, repo):
    installer.ok("--project", repo)
    write(path_in(repo, "memory/deploys.md"), "# Deploys\n")
    installer.ok("--uninstall", repo)
    assert sorted(os.listdir(path_in(repo, "memory"))) == ["deploys.md"]
