"""install.py and what the protocol's flow needs from the Claude Code CLI (2.1.328, measured
against a local mock of the API): a handoff outside .claude/ (the CLI asks before every edit
there), no command named like a built-in one, the Skill permissions the model's own /catchup,
/handoff and /dream need, .claudeignore enforced as permissions.deny rules, and commands that
name the project's interpreter."""

import hashlib
import json
import os

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    forget_the_record,
    fix_line,
    COMMANDS, SKILL_RULES, TEMPLATE_DENY_RULES, expected_settings, installer, invoked,
    load_installer,
    path_in, project, read, repo, settings_of, snapshot, template_text, write, write_settings,
)
from test_install_releases import released_file

OLD_STATE = ".claude/session-state.md"
NEW_STATE = ".session-state.md"
HANDOFF = "## Handoff: 2026-11-30 10:00\n\n## Working On\nthe parser\n"


def installed_project(installer, project, *options):
    installer.ok("--project", project, *options)
    return project


def installed_before_the_record(installer, project, *options):
    """A project as an earlier release left it: installed, with no record of what it added."""
    installed_project(installer, project, *options)
    forget_the_record(project)
    return project


def check(installer, project):
    done = installer.run("--check", project)
    assert done.stderr == ""
    return done


# ------------------------------------------------------------- the handoff path

def test_update_moves_the_handoff_to_the_new_default(installer, repo):
    installed_project(installer, repo)
    write(path_in(repo, OLD_STATE), HANDOFF)
    dry = installer.ok("--update", repo, "--dry-run")
    assert "  would move     .claude/session-state.md (to .session-state.md)" in dry.stdout
    assert os.path.exists(path_in(repo, OLD_STATE))
    done = installer.ok("--update", repo)
    assert "  moved    .claude/session-state.md (to .session-state.md)" in done.stdout
    assert read(path_in(repo, NEW_STATE)) == HANDOFF.encode("utf-8")
    assert not os.path.exists(path_in(repo, OLD_STATE))
    before = snapshot(repo)
    again = installer.ok("--update", repo)
    assert snapshot(repo) == before
    assert again.stdout.splitlines()[-1] == "nothing to do: already up to date"


def test_update_never_overwrites_a_handoff_at_the_new_default(installer, project):
    installed_project(installer, project)
    write(path_in(project, OLD_STATE), "old\n")
    write(path_in(project, NEW_STATE), "new\n")
    done = installer.ok("--update", project)
    assert read(path_in(project, NEW_STATE)) == b"new\n"
    assert read(path_in(project, OLD_STATE)) == b"old\n"
    assert ("  keep     .claude/session-state.md (.session-state.md exists and is the one read; "
            "delete this older handoff once nothing in it is needed)") in done.stdout


def test_project_leaves_the_handoff_where_it_is(installer, project):
    write(path_in(project, OLD_STATE), HANDOFF)
    installed_project(installer, project)
    assert read(path_in(project, OLD_STATE)) == HANDOFF.encode("utf-8")
    assert not os.path.exists(path_in(project, NEW_STATE))


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_linked_old_handoff_is_not_moved(installer, project, tmp_path):
    installed_project(installer, project)
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("mine\n")
    os.symlink(str(elsewhere), path_in(project, OLD_STATE))
    installer.ok("--update", project)
    assert os.path.islink(path_in(project, OLD_STATE))
    assert not os.path.lexists(path_in(project, NEW_STATE))


def test_uninstall_keeps_both_handoffs(installer, project):
    installed_project(installer, project)
    write(path_in(project, OLD_STATE), "old\n")
    write(path_in(project, NEW_STATE), "new\n")
    done = installer.ok("--uninstall", project)
    assert "  keep     .session-state.md (your handoff; never removed)" in done.stdout
    assert "  keep     .claude/session-state.md (your handoff; never removed)" in done.stdout
    assert read(path_in(project, NEW_STATE)) == b"new\n"
    assert read(path_in(project, OLD_STATE)) == b"old\n"


def test_the_gitignore_block_ignores_both_handoff_paths(installer, project):
    installed_project(installer, project)
    lines = read(path_in(project, ".gitignore")).decode("utf-8").splitlines()
    assert "/.session-state.md" in lines and ".claude/session-state.md" in lines


def test_update_completes_the_block_0_1_0_wrote(installer, project):
    installed_project(installer, project)
    write(path_in(project, ".gitignore"), "build/\n" + released_file("templates/gitignore")
          .decode("utf-8"))
    done = installer.ok("--update", project)
    assert "  repaired .gitignore (restored the local-only lines)" in done.stdout
    text = read(path_in(project, ".gitignore")).decode("utf-8")
    assert text == "build/\n" + template_text(installer, "gitignore")


# -------------------------------------------------------------- command names

# Every command name and alias CLI 2.1.328 defines itself, read out of its package's
# executable (the objects with type "local", "local-jsx" or "prompt" and a name, and every
# aliases list).
BUILT_IN_COMMANDS = frozenset("""
add-dir advisor agents artifacts auto-mode-setup autocompact autofix-pr background branch brief
btw bug cd clear cloud-plugins color compact config context copy daemon design-consent
design-login design-revoke desktop diff effort exit export extra-usage fast feedback focus fork
goal heapdump help hooks ide import init insights install install-github-app install-slack-app
list-agents login logout loops mcp memory mobile model output-style passes pause-memory
permissions plan plugin powerup privacy-settings pro-trial-expired project radio
rate-limit-options recap reload-plugins reload-skills remote-control remote-env rename restart
resume scroll-speed session setup-bedrock setup-vertex skill-doctor skills status stickers stop
subtask tasks team-onboarding teleport terminal-setup theme tui ultraplan ultrareview upgrade
usage usage-credits use-case version voice web-setup wellbeing workflow-launch-exec workflows
rewind schedule
bg settings app quit peers memory-pause toggle-memory allowed-tools plugins marketplace rc name
update checkpoint undo routines remote bashes tp cost stats breaks break-reminder downtime
""".split())


def test_no_command_is_named_like_a_built_in_one(installer):
    module = load_installer(installer)
    names = [name[:-3] for name in module.protocol.COMMANDS]
    assert names == [name[:-3] for name in COMMANDS]
    assert not set(names) & BUILT_IN_COMMANDS
    assert set(name[:-3] for name in module.releases.RETIRED_COMMANDS) <= BUILT_IN_COMMANDS


def put_the_released_status_command_in(project):
    write(path_in(project, ".claude/commands/status.md"), released_file("commands/status.md"))


@pytest.mark.parametrize("crlf", [False, True])
def test_update_replaces_the_released_status_command(installer, project, crlf):
    installed_before_the_record(installer, project)
    data = released_file("commands/status.md")
    write(path_in(project, ".claude/commands/status.md"),
          data.replace(b"\n", b"\r\n") if crlf else data)
    os.remove(path_in(project, ".claude/commands/memory-status.md"))
    done = installer.ok("--update", project)
    assert "  removed  .claude/commands/status.md (/status is now /memory-status)" in done.stdout
    assert "  wrote    .claude/commands/memory-status.md" in done.stdout
    assert not os.path.exists(path_in(project, ".claude/commands/status.md"))
    before = snapshot(project)
    installer.ok("--update", project)
    assert snapshot(project) == before


def test_project_names_the_retired_command_and_leaves_it(installer, project):
    installed_before_the_record(installer, project)
    put_the_released_status_command_in(project)
    done = installer.ok("--project", project)
    assert ("  keep     .claude/commands/status.md (/status is now /memory-status; --update "
            "removes it)") in done.stdout
    assert os.path.exists(path_in(project, ".claude/commands/status.md"))


@pytest.mark.parametrize("args", [["--update"], ["--update", "--force"], ["--project", "--force"]])
def test_a_status_command_no_release_shipped_stays(installer, project, args):
    # Whether it is 0.1.0's edited or the project's own cannot be told: it is the user's.
    installed_before_the_record(installer, project)
    write(path_in(project, ".claude/commands/status.md"), "my own status\n")
    done = installer.ok(*(args + [project]))
    assert read(path_in(project, ".claude/commands/status.md")) == b"my own status\n"
    assert ".claude/commands/status.md" not in done.stdout


def test_uninstall_removes_the_released_status_command_and_keeps_an_edited_one(installer, project):
    installed_before_the_record(installer, project)
    put_the_released_status_command_in(project)
    done = installer.ok("--uninstall", project)
    assert "  removed  .claude/commands/status.md" in done.stdout
    installed_before_the_record(installer, project)
    forget_the_record(project)
    write(path_in(project, ".claude/commands/status.md"), "mine\n")
    done = installer.ok("--uninstall", project)
    assert "  keep     .claude/commands/status.md (your own command, not the protocol's; left " \
        "in place)" in done.stdout


# ------------------------------------------------------------ Skill permissions

def test_the_users_allow_rules_stay_first_and_none_twice(installer, project):
    write_settings(project, {"permissions": {"allow": ["Skill(handoff)", "Bash(make:*)"]}})
    installed_project(installer, project)
    assert settings_of(project)["permissions"]["allow"] == [
        "Skill(handoff)", "Bash(make:*)", "Skill(catchup)", "Skill(dream)"]


def test_update_restores_a_skill_permission_an_install_before_the_record_left_out(installer, repo):
    installed_before_the_record(installer, repo)
    data = settings_of(repo)
    data["permissions"]["allow"].remove("Skill(dream)")
    write_settings(repo, data)
    found = check(installer, repo)
    assert found.returncode == 1
    assert ("  UNWIRED  not allowed in settings.json: Skill(dream) (the CLI asks before the model "
            "runs that command)") in found.stdout
    assert fix_line(installer, "--update", repo) in found.stdout
    done = installer.ok("--update", repo)
    assert "  merged   .claude/settings.json (allowed Skill(dream))" in done.stdout
    assert settings_of(repo)["permissions"]["allow"] == SKILL_RULES
    assert check(installer, repo).returncode == 0


@pytest.mark.parametrize("where", ["nowhere", "ask", "deny", "the local file's ask"])
def test_a_grant_the_user_took_out_or_downgraded_stays_so(installer, repo, where):
    installed_project(installer, repo)
    data = settings_of(repo)
    data["permissions"]["allow"].remove("Skill(dream)")
    if where in ("ask", "deny"):
        data["permissions"].setdefault(where, []).append("Skill(dream)")
    write_settings(repo, data)
    if where == "the local file's ask":
        write(path_in(repo, ".claude/settings.local.json"),
              json.dumps({"permissions": {"ask": ["Skill(dream)"]}}))
    kept = read(path_in(repo, ".claude/settings.json"))
    assert check(installer, repo).returncode == 0
    installer.ok("--update", repo)
    installer.ok("--update", repo, "--force")
    assert read(path_in(repo, ".claude/settings.json")) == kept
    installer.ok("--uninstall", repo)
    if where in ("ask", "deny"):
        assert settings_of(repo) == {"permissions": {where: ["Skill(dream)"]}}


def test_grants_the_user_moved_to_the_local_file_are_theirs(installer, repo):
    installed_project(installer, repo)
    data = settings_of(repo)
    del data["permissions"]["allow"]
    write_settings(repo, data)
    write(path_in(repo, ".claude/settings.local.json"),
          json.dumps({"permissions": {"allow": SKILL_RULES}}))
    assert check(installer, repo).returncode == 0
    installer.ok("--update", repo)
    assert "allow" not in settings_of(repo)["permissions"]


def test_a_skill_allowed_only_in_the_local_settings_does_not_reach_teammates(installer, repo):
    installed_before_the_record(installer, repo)
    data = settings_of(repo)
    del data["permissions"]["allow"]
    write_settings(repo, data)
    write(path_in(repo, ".claude/settings.local.json"),
          json.dumps({"permissions": {"allow": SKILL_RULES}}))
    found = check(installer, repo)
    assert found.returncode == 1
    assert ("  UNSHARED only in .claude/settings.local.json, which teammates do not get: "
            "Skill(catchup), Skill(handoff), Skill(dream); --update writes them into "
            ".claude/settings.json") in found.stdout.splitlines()
    installer.ok("--update", repo)
    assert check(installer, repo).returncode == 0


def test_a_deny_rule_only_in_the_local_settings_does_not_reach_teammates(installer, repo):
    installed_project(installer, repo)
    data = settings_of(repo)
    data["permissions"]["deny"].remove("Read(./.env)")
    write_settings(repo, data)
    write(path_in(repo, ".claude/settings.local.json"),
          json.dumps({"permissions": {"deny": ["Read(./.env)"]}}))
    found = check(installer, repo)
    assert found.returncode == 1
    assert ("  UNSHARED only in .claude/settings.local.json, which teammates do not get: "
            "Read(./.env); --update writes them into .claude/settings.json") in found.stdout.splitlines()


def test_the_protocols_rules_in_both_settings_files_are_shared(installer, repo):
    installed_project(installer, repo)
    write(path_in(repo, ".claude/settings.local.json"), json.dumps(
        {"permissions": {"allow": SKILL_RULES, "deny": ["Read(./.env)"]}}))
    assert check(installer, repo).returncode == 0


def test_uninstall_removes_only_the_protocols_permissions(installer, project):
    mine = {"permissions": {"allow": ["Bash(make:*)"], "deny": ["Read(./config/prod.yml)"]}}
    write_settings(project, mine)
    installed_project(installer, project)
    installer.ok("--uninstall", project)
    assert settings_of(project) == mine


@pytest.mark.parametrize("permissions", [[], {"allow": "Skill(dream)"}, {"deny": [1]}])
def test_permissions_of_another_shape_are_refused_before_any_write(installer, project,
                                                                 permissions):
    write_settings(project, {"permissions": permissions})
    before = snapshot(project)
    done = installer.run("--project", project)
    assert done.returncode == 1 and done.stdout == ""
    assert "permissions" in done.stderr and "nothing was changed" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert snapshot(project) == before


# -------------------------------------------------------------- the ignore list

@pytest.mark.parametrize("line, rule", [
    (".env", "Read(./.env)"),
    ("*.pem", "Read(./*.pem)"),
    ("secrets/", "Read(./secrets/)"),
    ("/build", "Read(/build)"),
    ("/out/", "Read(/out/)"),
    ("docs/private.md", "Read(/docs/private.md)"),
    ("config/*.yml", "Read(/config/*.yml)"),
    ("**/node_modules/", "Read(/**/node_modules/)"),
    ("  .env.local  ", "Read(./.env.local)"),
])
def test_a_claudeignore_line_becomes_the_rule_that_matches_what_git_would(installer, line, rule):
    module = load_installer(installer)
    assert module.permissions.deny_rules(line + "\n") == ([rule], [])


@pytest.mark.parametrize("line", ["!.env.example", "weird(name).txt", "a\\#b"])
def test_a_line_with_no_deny_form_is_named(installer, line):
    module = load_installer(installer)
    assert module.permissions.deny_rules("# a comment\n\n.env\r\n" + line + "\n") == (["Read(./.env)"], [line])


def test_the_template_becomes_exactly_these_rules(installer, project):
    installed_project(installer, project)
    assert settings_of(project) == expected_settings()
    assert settings_of(project)["permissions"]["deny"] == TEMPLATE_DENY_RULES


def test_a_line_added_to_claudeignore_is_drift_until_update(installer, repo):
    installed_project(installer, repo)
    with open(path_in(repo, ".claudeignore"), "a") as handle:
        handle.write("config/credentials.json\n")
    found = check(installer, repo)
    assert found.returncode == 1
    assert ("  DRIFT    .claudeignore lines without their permissions.deny rule (the file tools "
            "may open them): Read(/config/credentials.json)") in found.stdout
    done = installer.ok("--update", repo)
    assert ("  merged   .claude/settings.json (denied the file tools 1 .claudeignore "
            "pattern(s))") in done.stdout
    assert settings_of(repo)["permissions"]["deny"][-1] == "Read(/config/credentials.json)"
    assert check(installer, repo).returncode == 0
    before = snapshot(repo)
    installer.ok("--update", repo)
    assert snapshot(repo) == before


def test_a_line_removed_from_claudeignore_loses_its_rule(installer, repo):
    installed_project(installer, repo)
    text = template_text(installer, "claudeignore").replace("*.pfx\n", "")
    write(path_in(repo, ".claudeignore"), text)
    found = check(installer, repo)
    assert found.returncode == 1
    assert ("  DRIFT    permissions.deny rules the protocol added for lines gone from "
            ".claudeignore: Read(./*.pfx)") in found.stdout
    done = installer.ok("--update", repo)
    assert ("  merged   .claude/settings.json (dropped 1 deny rule(s) for lines gone from "
            ".claudeignore)") in done.stdout
    assert "Read(./*.pfx)" not in settings_of(repo)["permissions"]["deny"]
    assert check(installer, repo).returncode == 0


def test_the_users_own_deny_rules_stay_through_update_and_uninstall(installer, project):
    write_settings(project, {"permissions": {"deny": ["Read(./config/prod.yml)"]}})
    installed_project(installer, project)
    os.remove(path_in(project, ".claudeignore"))
    installer.ok("--update", project)
    assert settings_of(project)["permissions"]["deny"] == ["Read(./config/prod.yml)"]
    installer.ok("--uninstall", project)
    assert settings_of(project) == {"permissions": {"deny": ["Read(./config/prod.yml)"]}}


def test_a_negation_is_named_at_every_run(installer, project):
    write(path_in(project, ".claudeignore"), ".env*\n!.env.example\n")
    done = installer.ok("--project", project)
    assert ("  note     .claudeignore has no deny form (a negation, a backslash or parentheses), "
            "so the agent's file tools may still open what it names: !.env.example") in done.stdout
    assert settings_of(project)["permissions"]["deny"] == ["Read(./.env*)"]


def test_update_replaces_the_claudeignore_0_1_0_wrote(installer, project):
    installed_before_the_record(installer, project)
    write(path_in(project, ".claudeignore"), released_file("templates/claudeignore"))
    done = installer.ok("--update", project)
    assert "  replaced .claudeignore (was an older version)" in done.stdout
    assert read(path_in(project, ".claudeignore")) == \
        read(installer.source_file("templates/claudeignore"))
    assert settings_of(project) == expected_settings()


def test_an_edited_claudeignore_is_kept_and_enforced(installer, repo):
    installed_project(installer, repo)
    edited = released_file("templates/claudeignore") + b"reports/\n"
    write(path_in(repo, ".claudeignore"), edited)
    installer.ok("--update", repo)
    assert read(path_in(repo, ".claudeignore")) == edited
    assert "Read(./reports/)" in settings_of(repo)["permissions"]["deny"]
    assert check(installer, repo).returncode == 0


def test_released_claudeignore_digest_is_0_1_0s(installer):
    module = load_installer(installer)
    digest = hashlib.sha256(released_file("templates/claudeignore")).hexdigest()
    assert module.releases.RELEASED_CLAUDEIGNORE_DIGESTS[0] == digest
    assert hashlib.sha256(read(installer.source_file("templates/claudeignore"))).hexdigest() \
        not in module.releases.RELEASED_CLAUDEIGNORE_DIGESTS


# ---------------------------------------------------------------- the interpreter

def command_text(project, name):
    return read(path_in(project, ".claude/commands/" + name)).decode("utf-8")


def test_commands_name_the_interpreter_the_project_was_installed_with(installer, project):
    installed_project(installer, project, "--python", "py -3", "--allow-missing-python")
    dream = command_text(project, "dream.md")
    assert "Bash(py -3 .claude/hooks/context-budget.py)" in dream.splitlines()[2]
    assert "Run `py -3 .claude/hooks/context-budget.py`" in dream
    assert "`py -3 -c \"import datetime;" in command_text(project, "handoff.md")
    for name in COMMANDS:
        assert "python3" not in command_text(project, name), name
    before = snapshot(project)
    again = installer.ok("--project", project, "--python", "py -3", "--allow-missing-python")
    assert snapshot(project) == before
    assert "  keep     .claude/commands/dream.md (up to date)" in again.stdout


def test_update_with_another_python_brings_the_commands_along(installer, repo):
    installed_project(installer, repo, "--python", "py -3", "--allow-missing-python")
    done = installer.ok("--update", repo, "--python", "python", "--allow-missing-python")
    assert "  replaced .claude/commands/dream.md (was an older version)" in done.stdout
    assert "Bash(python .claude/hooks/context-budget.py)" in command_text(repo, "dream.md")
    assert "edited by you" not in done.stdout
    assert check(installer, repo).returncode == 0


def test_project_with_another_python_keeps_the_wired_interpreter_in_the_commands(installer,
                                                                               project):
    installed_project(installer, project, "--python", "py -3", "--allow-missing-python")
    done = installer.ok("--project", project, "--python", "python", "--allow-missing-python")
    assert "Bash(py -3 .claude/hooks/context-budget.py)" in command_text(project, "dream.md")
    assert "--update --python python changes that" in done.stdout


def test_uninstall_recognises_commands_rendered_for_the_projects_python(installer, project):
    installed_project(installer, project, "--python", "py -3", "--allow-missing-python")
    done = installer.ok("--uninstall", project)
    assert "edited by you" not in done.stdout
    assert not os.path.exists(path_in(project, ".claude/commands"))
    assert not os.path.exists(path_in(project, ".claude/settings.json"))


def test_an_edited_command_stays_in_a_project_of_another_python(installer, project):
    installed_project(installer, project, "--python", "py -3", "--allow-missing-python")
    path = path_in(project, ".claude/commands/dream.md")
    write(path, read(path) + b"My own step.\n")
    done = installer.ok("--update", project)
    assert "  keep     .claude/commands/dream.md (edited by you; --force replaces it)" in done.stdout


def test_the_released_dream_command_counts_as_unedited_in_a_project_of_another_python(
        installer, project):
    installed_before_the_record(installer, project, "--python", "py -3", "--allow-missing-python")
    write(path_in(project, ".claude/commands/dream.md"), released_file("commands/dream.md"))
    done = installer.ok("--update", project)
    assert "  replaced .claude/commands/dream.md (was an older version)" in done.stdout
    assert "Bash(py -3 .claude/hooks/context-budget.py)" in command_text(project, "dream.md")


def test_a_project_0_1_0_installed_is_told_to_update(installer, repo):
    installed_before_the_record(installer, repo)
    write(path_in(repo, ".claudeignore"), released_file("templates/claudeignore"))
    write_settings(repo, expected_settings(allow=False, deny=False))
    found = check(installer, repo)
    assert found.returncode == 1
    lines = [line for line in found.stdout.splitlines() if line.startswith("  ")]
    assert "  DRIFT    --update would: replace .claudeignore (was an older version)" in lines
    assert [line for line in lines if line.startswith(("  UNWIRED", "  DRIFT    .claudeignore"))] == [
        "  UNWIRED  not allowed in settings.json: Skill(catchup), Skill(handoff), "
        "Skill(dream) (the CLI asks before the model runs that command)",
        "  DRIFT    .claudeignore lines without their permissions.deny rule (the "
        "file tools may open them): Read(./.git/), Read(/**/node_modules/), "
        "Read(/**/bin/), Read(/**/obj/) and 22 more",
    ]
    installer.ok("--update", repo)
    assert check(installer, repo).returncode == 0
