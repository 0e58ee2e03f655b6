"""install.py --update, --uninstall and --dry-run."""

import json
import os

import pytest

from installtools import (  # noqa: F401
    entries, fix_line,
    invoked,
    COMMANDS, expected_settings, git, installer, path_in, project, read, release_a_new_version,
    repo, settings_of, snapshot, template_text, write,
)


def change_source_hook(installer, name):
    release_a_new_version(installer, "hooks/" + name, "RELEASED_HOOK_DIGESTS")


# ------------------------------------------------------------------ --update

def test_update_replaces_a_hook_that_changed_at_the_source(installer, repo):
    installer.ok("--project", repo)
    change_source_hook(installer, "stop-handoff.py")
    done = installer.ok("--update", repo)
    installed = path_in(repo, ".claude/hooks/stop-handoff.py")
    assert read(installed) == read(installer.source_file("hooks/stop-handoff.py"))
    assert os.stat(installed).st_mode & 0o777 == 0o755
    assert "  replaced .claude/hooks/stop-handoff.py (was an older version)" in done.stdout
    assert "  keep     .claude/hooks/session-start.py (up to date)" in done.stdout
    assert done.stdout.splitlines()[0] == "updating " + repo
    assert done.stdout.splitlines()[1] == ("  merged   .claude/memory-context-protocol.json "
                                           "(what the protocol added here)")
    assert done.stdout.splitlines()[-1] == "done: 2 change(s)"
    installer.ok("--check", repo)


def test_update_twice_changes_nothing(installer, repo):
    installer.ok("--project", repo)
    change_source_hook(installer, "session-start.py")
    installer.ok("--update", repo)
    before = snapshot(repo)
    done = installer.ok("--update", repo)
    assert snapshot(repo) == before
    assert done.stdout.splitlines()[-1] == "nothing to do: already up to date"


def test_update_restores_missing_hooks_and_commands(installer, project):
    installer.ok("--project", project)
    os.remove(path_in(project, ".claude/hooks/prune-worktrees.py"))
    os.remove(path_in(project, ".claude/commands/memory-status.md"))
    done = installer.ok("--update", project)
    assert "  wrote    .claude/hooks/prune-worktrees.py" in done.stdout
    assert "  wrote    .claude/commands/memory-status.md" in done.stdout


def users_version_of_our_entries():
    """Our entries as a user tuned them, and wired to an older command form."""
    data = expected_settings("py -3")
    data["hooks"]["SessionStart"][0]["matcher"] = "startup"
    stop = data["hooks"]["Stop"][0]["hooks"][0]
    stop.update({"timeout": 60000, "statusMessage": "my wording", "async": True})
    stop["command"] = 'py -3 "$CLAUDE_PROJECT_DIR/.claude/hooks/stop-handoff.py"'
    data["permissions"]["allow"].insert(0, "Bash(make:*)")
    return data


@pytest.mark.parametrize("args", [["--project"], ["--project", "--force"]])
def test_project_leaves_our_entries_as_the_user_left_them(installer, project, args):
    write(path_in(project, ".claude/settings.json"),
          json.dumps(users_version_of_our_entries(), indent=2) + "\n")
    before = read(path_in(project, ".claude/settings.json"))
    done = installer.ok(*(args + [project]))
    assert read(path_in(project, ".claude/settings.json")) == before
    assert "  keep     .claude/settings.json (hooks already wired)" in done.stdout


def test_update_changes_only_the_command_and_keeps_the_interpreter(installer, project):
    old = users_version_of_our_entries()
    write(path_in(project, ".claude/settings.json"), json.dumps(old, indent=2) + "\n")
    write(path_in(project, ".claudeignore"), template_text(installer, "claudeignore"))
    done = installer.ok("--update", project)
    wanted = users_version_of_our_entries()
    wanted["hooks"]["Stop"][0]["hooks"][0]["command"] = \
        expected_settings("py -3")["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert settings_of(project) == wanted
    assert "  merged   .claude/settings.json (wired Stop)" in done.stdout


def test_update_brings_a_matcher_an_earlier_release_wrote_to_this_versions(installer, project):
    old = expected_settings("python3", allow=False, deny=False)
    old["hooks"]["SessionStart"][0]["matcher"] = "startup|resume|clear|compact"  # 0.1.0
    write(path_in(project, ".claude/settings.json"), json.dumps(old, indent=2) + "\n")
    done = installer.ok("--update", project)
    assert settings_of(project) == expected_settings("python3", deny=False)
    assert "fork" in settings_of(project)["hooks"]["SessionStart"][0]["matcher"]
    assert ("  merged   .claude/settings.json (wired SessionStart; allowed Skill(catchup), "
            "Skill(handoff), Skill(dream))") in done.stdout


def test_update_with_python_switches_the_interpreter(installer, project):
    installer.ok("--project", project)
    installer.ok("--update", project, "--python", "python", "--allow-missing-python")
    assert settings_of(project) == expected_settings("python")


def test_update_repairs_the_gitignore_block_but_creates_no_user_files(installer, project):
    installer.ok("--project", project)
    os.remove(path_in(project, "memory/MEMORY.md"))
    os.remove(path_in(project, ".claudeignore"))
    block = template_text(installer, "gitignore")
    write(path_in(project, ".gitignore"), block.replace(".claude/settings.local.json\n", ""))
    done = installer.ok("--update", project)
    assert read(path_in(project, ".gitignore")).decode("utf-8") == block
    assert "  repaired .gitignore" in done.stdout
    assert not os.path.exists(path_in(project, "memory/MEMORY.md"))
    assert not os.path.exists(path_in(project, ".claudeignore"))


def test_update_of_a_project_without_the_protocol_is_refused(installer, project):
    done = installer.run("--update", project)
    assert done.returncode == 1
    assert "not installed" in done.stderr and "--project" in done.stderr
    assert entries(project) == []


def test_update_marks_tracked_hooks_executable_in_the_index(installer, repo):
    env = installer.env
    installer.ok("--project", repo)
    git(repo, "add", "--chmod=-x", ".claude/hooks", env=env)
    installer.ok("--update", repo)
    staged = git(repo, "ls-files", "--stage", ".claude/hooks", env=env)
    assert [line.split()[0] for line in staged.splitlines()] == ["100755"] * 4


# ------------------------------------------------------------------ --uninstall

def make_the_hooks_leave_local_files(project):
    write(path_in(project, ".claude/hooks/.session-baseline"), b"head 1234abcd\0state\n")
    write(path_in(project, ".claude/hooks/.session-baseline.1234-session"), b"head 1234abcd\0state\n")
    write(path_in(project, ".claude/hooks/__pycache__/stop-handoff.cpython-311.pyc"), b"\0\0")
    write(path_in(project, ".claude/session-state.md"), "# Session state\nworking on X\n")


def test_uninstall_round_trip_leaves_tracked_files_as_they_were(installer, repo):
    env = installer.env
    user_settings = {"permissions": {"allow": ["Bash(make:*)"]},
                     "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
                         {"type": "command", "command": "./guard.sh"}]}]}}
    write(path_in(repo, ".claude/settings.json"), json.dumps(user_settings, indent=2) + "\n")
    write(path_in(repo, ".claude/commands/deploy.md"), "Deploy the app.\n")
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "project settings", env=env)
    tracked_before = snapshot(repo)

    installer.ok("--project", repo)
    make_the_hooks_leave_local_files(repo)
    write(path_in(repo, "memory/decisions.md"), "# Decisions\n")
    done = installer.ok("--uninstall", repo)

    assert git(repo, "status", "--porcelain", "--untracked-files=no", env=env) == ""
    untracked = git(repo, "status", "--porcelain", "--untracked-files=all", env=env).splitlines()
    # the memory index the install wrote goes, untouched; the memory written since stays
    assert sorted(untracked) == ["?? .claude/session-state.md", "?? memory/decisions.md"]
    after = snapshot(repo)
    for rel, state in tracked_before.items():
        assert after[rel][:2] == state[:2], rel
    assert read(path_in(repo, ".claude/session-state.md")) == b"# Session state\nworking on X\n"
    assert "  keep     memory/ (your memory; never removed)" in done.stdout
    assert "  keep     .claude/session-state.md (your handoff; never removed)" in done.stdout
    assert "  removed  .claude/hooks (now empty)" in done.stdout
    assert not os.path.exists(path_in(repo, ".claudeignore"))


def test_uninstall_from_a_fresh_folder_leaves_only_the_users_data(installer, project):
    installer.ok("--project", project)
    make_the_hooks_leave_local_files(project)
    installer.ok("--uninstall", project)
    remaining = sorted(os.path.relpath(os.path.join(folder, name), project)
                       for folder, _, names in os.walk(project) for name in names
                       if os.path.relpath(folder, project).split(os.sep)[0] != ".git")
    assert remaining == [".claude/session-state.md"]


def test_uninstall_keeps_and_names_an_edited_command(installer, project):
    installer.ok("--project", project)
    write(path_in(project, ".claude/commands/handoff.md"), "my handoff\n")
    done = installer.ok("--uninstall", project)
    assert read(path_in(project, ".claude/commands/handoff.md")) == b"my handoff\n"
    assert "  keep     .claude/commands/handoff.md (edited by you; left in place)" in done.stdout
    for name in COMMANDS[1:]:
        assert not os.path.exists(path_in(project, ".claude/commands/" + name))


def test_uninstall_keeps_the_users_settings_and_drops_an_emptied_hooks_key(installer, project):
    user = {"model": "opus", "permissions": {"deny": ["Read(./config/production.yml)"]}}
    write(path_in(project, ".claude/settings.json"), json.dumps(user))
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project)
    assert settings_of(project) == user
    assert ("  merged   .claude/settings.json (unwired SessionStart and Stop; removed the "
            "protocol's Skill permissions; removed 10 .claudeignore deny rule(s))") in done.stdout


def test_uninstall_keeps_other_handlers_in_a_shared_group(installer, project):
    installer.ok("--project", project)
    data = settings_of(project)
    data["hooks"]["SessionStart"][0]["hooks"].append({"type": "command", "command": "echo mine"})
    write(path_in(project, ".claude/settings.json"), json.dumps(data, indent=2) + "\n")
    installer.ok("--uninstall", project)
    assert settings_of(project) == {"hooks": {"SessionStart": [{
        "matcher": "startup|resume|clear|compact|fork",
        "hooks": [{"type": "command", "command": "echo mine"}]}]}}


def test_uninstall_keeps_the_users_gitignore_lines(installer, project):
    write(path_in(project, ".gitignore"), "node_modules/\n")
    installer.ok("--project", project)
    with open(path_in(project, ".gitignore"), "a") as handle:
        handle.write("*.log\n")
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".gitignore")) == b"node_modules/\n*.log\n"


def test_uninstall_twice_and_without_an_install_change_nothing(installer, project):
    write(path_in(project, "notes.txt"), "mine\n")
    before = snapshot(project)
    done = installer.ok("--uninstall", project)
    assert snapshot(project) == before
    assert done.stdout.splitlines()[-1] == "nothing to remove: the protocol is not installed here"


def test_uninstall_refuses_invalid_settings_and_removes_nothing(installer, project):
    installer.ok("--project", project)
    write(path_in(project, ".claude/settings.json"), "{,}")
    before = snapshot(project)
    done = installer.run("--uninstall", project)
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert snapshot(project) == before


# ------------------------------------------------------------------ --dry-run

@pytest.mark.parametrize("mode", ["--project", "--update", "--uninstall"])
def test_dry_run_prints_the_changes_and_makes_none(installer, project, mode):
    if mode != "--project":
        installer.ok("--project", project)
        change_source_hook(installer, "session-start.py")
    before = snapshot(project)
    done = installer.ok(mode, project, "--dry-run")
    assert snapshot(project) == before
    lines = done.stdout.splitlines()
    assert lines[0].startswith("dry run: ")
    assert any(line.startswith("  would ") for line in lines)
    assert lines[-1].startswith("dry run: ") and "nothing was changed" in lines[-1]
    real = installer.ok(mode, project)
    # the same lines, but what comes next, which only the changes made can tell
    assert len([line for line in real.stdout.splitlines() if not line.startswith("  next ")]) \
        == len(lines)


def test_dry_run_still_refuses_what_the_real_run_would_refuse(installer, project):
    write(path_in(project, ".claude/settings.json"), "[1,")
    done = installer.run("--project", project, "--dry-run")
    assert done.returncode == 1 and "not valid JSON" in done.stderr


def test_uninstall_removes_a_symlinked_baseline_but_not_its_target(installer, project, tmp_path):
    installer.ok("--project", project)
    target = tmp_path / "dotfile"
    target.write_text("precious\n")
    os.symlink(str(target), path_in(project, ".claude/hooks/.session-baseline"))
    installer.ok("--uninstall", project)
    assert not os.path.lexists(path_in(project, ".claude/hooks/.session-baseline"))
    assert target.read_text() == "precious\n"


def test_uninstall_leaves_a_group_the_user_left_empty(installer, project):
    user = {"hooks": {"Stop": [{"hooks": []}]}}
    write(path_in(project, ".claude/settings.json"), json.dumps(user, indent=2) + "\n")
    installer.ok("--project", project)
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".claude/settings.json")).decode("utf-8") == \
        json.dumps(user, indent=2) + "\n"


def test_uninstall_names_wiring_left_in_the_local_settings_file(installer, project):
    installer.ok("--project", project)
    local = path_in(project, ".claude/settings.local.json")
    write(local, json.dumps(expected_settings(), indent=2) + "\n")
    before = read(local)
    done = installer.ok("--uninstall", project)
    assert read(local) == before
    assert ("  note     .claude/settings.local.json still wires SessionStart and Stop to the "
            "removed hooks; delete those entries") in done.stdout


# ------------------------------------------------------------------ round trip in git

def commit_files(repo, env, files):
    for rel, data in files.items():
        write(path_in(repo, rel), data)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "the user's files", env=env)


@pytest.mark.parametrize("rel, data", [
    (".claude/settings.json", b'{"permissions": {"allow": ["Bash(ls)"]}}'),
    (".claude/settings.json", b'{\r\n  "model": "opus"\r\n}\r\n'),
    (".claude/settings.json", b'\xef\xbb\xbf{\n    "model": "opus"\n}\n'),
    (".claude/settings.json", b"{}"),
    (".claude/settings.json", b'{"hooks":{}}'),
    (".claude/settings.json", b""),
    (".gitignore", b"node_modules"),
    (".gitignore", b"node_modules\r\n*.log\r\n"),
    (".gitignore", b""),
])
def test_uninstall_gives_a_committed_file_back_byte_for_byte(installer, repo, rel, data):
    commit_files(repo, installer.env, {rel: data})
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, rel)) == data


@pytest.mark.parametrize("data, added", [
    (b'\xef\xbb\xbf{\r\n  "model": "opus"\r\n}', b'\r\n  "hooks": {\r\n'),
    (b'{\n    "model": "opus"\n}\n', b'\n    "hooks": {\n'),
])
def test_a_merged_settings_file_keeps_its_bom_line_endings_and_final_newline(
        installer, project, data, added):
    write(path_in(project, ".claude/settings.json"), data)
    installer.ok("--project", project)
    merged = read(path_in(project, ".claude/settings.json"))
    assert merged.startswith(data[:3]) and merged.endswith(data[-1:])
    assert added in merged
    assert merged.count(b"\n") == merged.count(b"\r\n") or b"\r\n" not in data
    assert settings_of_bytes(merged)["model"] == "opus"


def settings_of_bytes(data):
    return json.loads(data.decode("utf-8-sig"))


@pytest.mark.parametrize("original", ["node_modules", "node_modules\r\n"])
def test_the_gitignore_block_follows_the_files_line_endings_and_final_newline(
        installer, project, original):
    write(path_in(project, ".gitignore"), original.encode("utf-8"))
    installer.ok("--project", project)
    text = read(path_in(project, ".gitignore")).decode("utf-8")
    assert text.endswith("\n") == original.endswith("\n")
    if "\r\n" in original:
        assert text.count("\n") == text.count("\r\n")
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".gitignore")) == original.encode("utf-8")


def test_an_install_before_the_record_keeps_the_rules_it_cannot_tell_it_wrote(installer, repo):
    """Settings of the protocol's shape but not in the bytes a release writes into a new file:
    the entries that run its hooks are its own, the rules may be the user's and stay."""
    env = installer.env
    commit_files(repo, env, {".claude/settings.json": json.dumps(expected_settings())})
    installer.ok("--uninstall", repo)
    assert json.loads(read(path_in(repo, ".claude/settings.json"))) == {
        "permissions": expected_settings()["permissions"]}


def test_uninstall_leaves_a_claude_folder_it_did_not_empty(installer, project):
    os.makedirs(path_in(project, ".claude/commands"))
    done = installer.ok("--uninstall", project)
    assert os.path.isdir(path_in(project, ".claude/commands"))
    assert done.stdout.splitlines()[-1] == "nothing to remove: the protocol is not installed here"


def test_project_with_another_python_says_how_to_switch(installer, project):
    installer.ok("--project", project)
    done = installer.ok("--project", project, "--python", "py -3", "--allow-missing-python")
    assert ('  note     the hooks stay wired to python3; --update --python "py -3" changes that'
            in done.stdout)
    assert settings_of(project) == expected_settings()


# ------------------------------------------------------------------ whose entries

GLOBAL_SESSION_START = {"type": "command", "command": "python3 ~/.claude/hooks/session-start.py"}


def test_a_global_hook_of_the_same_name_is_not_taken_for_the_protocols(installer, project):
    mine = {"hooks": {"SessionStart": [{"hooks": [GLOBAL_SESSION_START]}]}}
    write(path_in(project, ".claude/settings.json"), json.dumps(mine, indent=2) + "\n")
    done = installer.ok("--project", project)
    assert "(wired SessionStart and Stop;" in done.stdout
    groups = settings_of(project)["hooks"]["SessionStart"]
    assert groups == mine["hooks"]["SessionStart"] + expected_settings()["hooks"]["SessionStart"]
    installer.ok("--uninstall", project)
    assert settings_of(project) == mine


MY_SESSION_START = b"import mylib\nmylib.greet()\n"
MY_WIRING = {"hooks": {"SessionStart": [{"hooks": [{
    "type": "command", "command": 'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/session-start.py"'}]}]}}


@pytest.fixture
def project_with_my_wired_hook(project):
    write(path_in(project, ".claude/hooks/session-start.py"), MY_SESSION_START)
    write(path_in(project, ".claude/settings.json"), json.dumps(MY_WIRING, indent=2) + "\n")
    return project


def test_update_leaves_the_entry_of_a_hook_of_the_users(installer, project_with_my_wired_hook):
    project = project_with_my_wired_hook
    installer.ok("--update", project)
    assert read(path_in(project, ".claude/hooks/session-start.py")) == MY_SESSION_START
    settings = settings_of(project)
    assert settings["hooks"] == MY_WIRING["hooks"]  # and no Stop guard without session start
    installer.ok("--update", "--force", project)  # a hook of the user's is never taken over
    assert read(path_in(project, ".claude/hooks/session-start.py")) == MY_SESSION_START
    assert settings_of(project)["hooks"]["SessionStart"] == MY_WIRING["hooks"]["SessionStart"]


def test_uninstall_leaves_the_entry_of_a_hook_of_the_users(installer, project_with_my_wired_hook):
    project = project_with_my_wired_hook
    before = snapshot(project)
    done = installer.ok("--uninstall", project)
    assert snapshot(project) == before
    assert done.stdout.splitlines()[-1] == "nothing to do: already up to date"
    installer.ok("--update", project)
    installer.ok("--uninstall", project)
    assert settings_of(project) == MY_WIRING


def test_project_wires_no_hook_of_the_users(installer, project):
    write(path_in(project, ".claude/hooks/session-start.py"), MY_SESSION_START)
    installer.ok("--project", project)
    wanted = expected_settings()
    del wanted["hooks"]  # nor the Stop guard, which works only after the protocol's start
    assert settings_of(project) == wanted


@pytest.mark.parametrize("where", ["another group", "the same group"])
def test_update_keeps_the_first_copy_of_an_entry_wired_twice(installer, repo, where):
    installer.ok("--project", repo)
    data = settings_of(repo)
    first = data["hooks"]["Stop"][0]
    copy = json.loads(json.dumps(first["hooks"][0]))
    # spelled otherwise, so the harness runs it apart from the first (an identical copy runs once)
    copy["command"] = copy["command"].replace("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR")
    first["hooks"][0]["timeout"] = 60
    if where == "another group":
        data["hooks"]["Stop"].append({"hooks": [copy]})
    else:
        first["hooks"].append(copy)
    write(path_in(repo, ".claude/settings.json"), json.dumps(data, indent=2) + "\n")
    check = installer.run("--check", repo)
    assert check.returncode == 1
    assert ("Stop runs stop-handoff.py 2 times: .claude/settings.json wire it in 2 different "
            "commands, and the harness runs each; --update keeps one") in check.stdout
    assert fix_line(installer, "--update", repo) in check.stdout
    done = installer.ok("--update", repo)
    assert "  merged   .claude/settings.json (wired Stop)" in done.stdout
    stop = expected_settings()["hooks"]["Stop"]
    stop[0]["hooks"][0]["timeout"] = 60
    assert settings_of(repo)["hooks"]["Stop"] == stop
    installer.ok("--check", repo)
