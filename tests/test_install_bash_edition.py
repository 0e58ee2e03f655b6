"""Moving a project from the bash edition, and hooks wired twice.

The bash edition wires `.claude/hooks/session-start.sh` and `.claude/hooks/stop-handoff.sh` into
`.claude/settings.json` (its settings.example.json: one matcher-less group per event, a command
handler with `timeout: 15` and a status message) and appends a five-line `.gitignore` snippet that
opens with the same marker line as this edition's block but has no end marker. --project and
--update take both over in place, so nothing runs twice and no line is listed twice; --uninstall
then removes what this edition put there; --check names a hook that runs twice.

What runs twice is the harness's to say. Checked with Claude Code 2.1.328 (a tracer hook wired in
several ways, counting its runs in one `claude -p` session): handlers with the same `command` (and,
in exec form, the same `args`) run once, whether they sit in one group, in two groups or in the
user's, the shared and the local settings file, whatever their timeout or status message; two
spellings of the same script (`"$CLAUDE_PROJECT_DIR"/x` and `"${CLAUDE_PROJECT_DIR}"/x`), or exec
forms with different `args`, run once each.
"""

import difflib
import json
import os
import shutil
import sys

import pytest

from installtools import (  # noqa: F401
    expected_settings, fix_line, installer, make_repo, path_in, read, settings_of, snapshot,
    write,
)

MARKER = "# memory-context-protocol \u2014 local-only files (per developer, never shared)"
BASH_SNIPPET = (MARKER + "\n.claude/session-state.md\n.claude/hooks/.session-baseline\n"
                ".claude/settings.local.json\n.claude/worktrees/\n")
OUR_BLOCK = (MARKER + "\n/.session-state.md\n.claude/session-state.md\n"
             ".claude/hooks/.session-baseline*\n.claude/hooks/__pycache__/\n"
             ".claude/hooks/.before-install.json\n"
             ".claude/settings.local.json\n.claude/worktrees/\n"
             "# memory-context-protocol \u2014 end\n")

BASH_HOOKS = ("session-start.sh", "context-budget.sh", "prune-worktrees.sh", "stop-handoff.sh")
BASH_STATUS = {"SessionStart": "Memory context: budgets, index, last handoff, git",
               "Stop": "Checking session persistence"}
BASH_SCRIPT = {"SessionStart": "session-start.sh", "Stop": "stop-handoff.sh"}
OUR_SCRIPT = {"SessionStart": "session-start.py", "Stop": "stop-handoff.py"}


def bash_handler(event, command=None):
    return {"type": "command",
            "command": command or '"$CLAUDE_PROJECT_DIR"/.claude/hooks/' + BASH_SCRIPT[event],
            "timeout": 15, "statusMessage": BASH_STATUS[event]}


@pytest.fixture
def project(tmp_path, installer):
    """A git repository with one commit: outside git the check fails on its own."""
    return make_repo(str(tmp_path / "a project"), installer.env)


def bash_settings():
    """The bash edition's settings.example.json: SessionStart and Stop, one matcher-less group
    each, holding one command handler."""
    return {"hooks": {event: [{"hooks": [bash_handler(event)]}]
                      for event in ("SessionStart", "Stop")}}


def our_handler(event):
    return expected_settings()["hooks"][event][0]["hooks"][0]


def settings_text(data):
    return json.dumps(data, indent=2) + "\n"


def bash_edition(project, gitignore="node_modules/\n\n" + BASH_SNIPPET + "dist/\n", settings=None):
    """A project the bash edition's install.sh set up: its four hooks, its settings, its
    .gitignore snippet between lines of the user's."""
    bash_hooks(project)
    write(path_in(project, ".claude/settings.json"), settings_text(settings or bash_settings()))
    write(path_in(project, ".gitignore"), gitignore)
    return project


# A line of each of the bash edition's scripts that only that script holds (its reference:
# session-start.sh prints the first, stop-handoff.sh blocks with the second, the other two read
# the variables that set their budgets and their folder).
BASH_MARKS = {
    "session-start.sh": 'echo \'<auto-catchup source="SessionStart hook">\'',
    "stop-handoff.sh": "echo '[auto-handoff hook] the repository changed' >&2",
    "context-budget.sh": 'MEM_LINES="${MCP_MEM_LINES:-80}"',
    "prune-worktrees.sh": 'DIR="${MCP_WORKTREE_DIR:-.claude/worktrees}"',
}


def bash_hooks(project):
    for name in BASH_HOOKS:
        write(path_in(project, ".claude/hooks/" + name),
              "#!/usr/bin/env bash\n# {}\n{}\nexit 0\n".format(name, BASH_MARKS[name]))
        os.chmod(path_in(project, ".claude/hooks/" + name), 0o755)


def text_of(project, rel):
    return read(path_in(project, rel)).decode("utf-8")


def removed_lines(before, after):
    return [line[2:] for line in difflib.ndiff(before.splitlines(), after.splitlines())
            if line.startswith("- ")]


def finding_lines(done):
    return [line for line in done.stdout.splitlines() if line.startswith("  ")]


MOVED = {
    "SessionStart": "  merged   .claude/settings.json (the bash edition's SessionStart entry now "
                    "runs session-start.py, not session-start.sh)",
    "Stop": "  merged   .claude/settings.json (the bash edition's Stop entry now runs "
            "stop-handoff.py, not stop-handoff.sh)",
}
UNWIRED_SH = ("  keep     .claude/hooks/session-start.sh, .claude/hooks/context-budget.sh, "
              ".claude/hooks/prune-worktrees.sh, .claude/hooks/stop-handoff.sh (the bash "
              "edition's hooks, no longer wired; they may be deleted)")


# ------------------------------------------------------------------ the move, settings.json

@pytest.mark.parametrize("mode", ["--project", "--update"])
def test_the_bash_editions_entries_are_replaced_in_place(installer, project, mode):
    bash_edition(project)
    before = text_of(project, ".claude/settings.json")
    done = installer.ok(mode, project)
    after = text_of(project, ".claude/settings.json")
    hooks = json.loads(after)["hooks"]
    for event in ("SessionStart", "Stop"):
        # the same matcher-less group, its handler now this edition's: one entry per event
        assert hooks[event] == [{"hooks": [our_handler(event)]}]
        assert MOVED[event] in done.stdout.splitlines()
    # only the commands and the bash edition's status messages changed in what was there
    # (in the file as written, 12 spaces in; the command is followed by a comma, the message last)
    assert sorted(removed_lines(before, after)) == sorted(
        '            "{}": {}{}'.format(key, json.dumps(bash_handler(event)[key]),
                                      "," if key == "command" else "")
        for event in ("SessionStart", "Stop") for key in ("command", "statusMessage"))
    assert after.startswith(before[:before.index('"command"')])


@pytest.mark.skipif(shutil.which("sh") is None, reason="the harness runs hooks by sh")
def test_a_move_refuses_an_interpreter_that_cannot_run_the_hooks(installer, project, tmp_path):
    """--update wires an interpreter here for the first time, as --project does."""
    bash_edition(project)
    before = snapshot(project)
    folder = str(tmp_path / "bin")
    os.makedirs(folder)
    for name, target in (("sh", shutil.which("sh")), ("git", shutil.which("git")),
                         ("python", sys.executable)):
        os.symlink(target, os.path.join(folder, name))
    done = installer.run("--update", project, env={"PATH": folder}, python=sys.executable)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("install.py: error: the default interpreter python3 is not found, so "
                           "the hooks would not run; pass --python python; nothing was changed\n")
    assert snapshot(project) == before


def test_a_dry_run_says_what_the_move_would_do(installer, project):
    bash_edition(project)
    before = snapshot(project)
    done = installer.ok("--project", "--dry-run", project)
    assert snapshot(project) == before
    for event in ("SessionStart", "Stop"):
        would = MOVED[event].replace("  merged   ", "  would merge    ")
        assert would in done.stdout.splitlines()


def test_the_move_runs_once_and_then_changes_nothing(installer, project):
    bash_edition(project)
    installer.ok("--project", project)
    before = snapshot(project)
    done = installer.ok("--update", project)
    assert snapshot(project) == before
    assert done.stdout.splitlines()[-1] == "nothing to do: already up to date"
    assert "bash edition's SessionStart entry" not in done.stdout


@pytest.mark.parametrize("mode", ["--project", "--update"])
def test_a_bash_entry_beside_ours_is_removed(installer, project, mode):
    """What an install before this version left: the bash edition's entries and this edition's."""
    settings = expected_settings()
    for event in ("SessionStart", "Stop"):
        settings["hooks"][event].insert(0, {"hooks": [bash_handler(event)]})
    bash_edition(project, settings=settings)
    done = installer.ok(mode, project)
    assert settings_of(project)["hooks"] == expected_settings()["hooks"]
    for event in ("SessionStart", "Stop"):
        assert ("  merged   .claude/settings.json (removed the bash edition's {} entry, which ran "
                "{} beside {})".format(event, BASH_SCRIPT[event], OUR_SCRIPT[event])
                ) in done.stdout.splitlines()


STOP_SPELLINGS = {
    "braces": '"${CLAUDE_PROJECT_DIR}/.claude/hooks/stop-handoff.sh"',
    "a default": '"${CLAUDE_PROJECT_DIR:-.}"/.claude/hooks/stop-handoff.sh',
    "through bash": 'bash "$CLAUDE_PROJECT_DIR/.claude/hooks/stop-handoff.sh"',
    "relative": ".claude/hooks/stop-handoff.sh",
    "relative with ./": "./.claude/hooks/stop-handoff.sh",
    "exec form": None,
}


@pytest.mark.parametrize("spelling", sorted(STOP_SPELLINGS))
def test_every_spelling_of_the_bash_entry_is_taken_over(installer, project, spelling):
    settings = bash_settings()
    stop = settings["hooks"]["Stop"][0]["hooks"][0]
    if STOP_SPELLINGS[spelling] is None:
        stop.update(command="${CLAUDE_PROJECT_DIR}/.claude/hooks/stop-handoff.sh", args=[])
    else:
        stop["command"] = STOP_SPELLINGS[spelling]
    bash_edition(project, settings=settings)
    installer.ok("--project", project)
    assert settings_of(project)["hooks"]["Stop"] == [{"hooks": [our_handler("Stop")]}]


NOT_THE_BASH_EDITIONS = {
    "the user's global hook": '"$HOME"/.claude/hooks/stop-handoff.sh',
    "a home-relative path": "~/.claude/hooks/stop-handoff.sh",
    "another folder of the project": '"$CLAUDE_PROJECT_DIR"/tools/stop-handoff.sh',
    "another project": "../other/.claude/hooks/stop-handoff.sh",
    "another file name": '"$CLAUDE_PROJECT_DIR"/.claude/hooks/stop-handoff.sh.orig',
}


@pytest.mark.parametrize("which", sorted(NOT_THE_BASH_EDITIONS))
def test_a_script_of_another_place_is_not_taken_over(installer, project, which):
    settings = bash_settings()
    theirs = bash_handler("Stop", NOT_THE_BASH_EDITIONS[which])
    settings["hooks"]["Stop"] = [{"hooks": [theirs]}]
    bash_edition(project, settings=settings)
    installer.ok("--project", project)
    assert settings_of(project)["hooks"]["Stop"] == [{"hooks": [theirs]},
                                                     {"hooks": [our_handler("Stop")]}]


def test_a_status_message_of_the_users_stays(installer, project):
    settings = bash_settings()
    settings["hooks"]["Stop"][0]["hooks"][0].update(statusMessage="Saving?", timeout=30)
    bash_edition(project, settings=settings)
    installer.ok("--project", project)
    wanted = dict(our_handler("Stop"), statusMessage="Saving?", timeout=30)
    assert settings_of(project)["hooks"]["Stop"] == [{"hooks": [wanted]}]


def test_the_bash_hooks_stay_with_one_line_and_the_check_passes(installer, project):
    bash_edition(project)
    before = {name: read(path_in(project, ".claude/hooks/" + name)) for name in BASH_HOOKS}
    done = installer.ok("--project", project)
    assert done.stdout.splitlines().count(UNWIRED_SH) == 1
    assert {name: read(path_in(project, ".claude/hooks/" + name)) for name in BASH_HOOKS} == before
    check = installer.ok("--check", project)
    assert "edition" not in check.stdout and "  DRIFT" not in check.stdout


def test_the_bash_hooks_still_wired_locally_are_named(installer, project):
    bash_edition(project)
    write(path_in(project, ".claude/settings.local.json"), settings_text(bash_settings()))
    done = installer.ok("--project", project)
    assert ("  keep     .claude/hooks/session-start.sh, .claude/hooks/context-budget.sh, "
            ".claude/hooks/prune-worktrees.sh, .claude/hooks/stop-handoff.sh (the bash edition's "
            "hooks, still wired in .claude/settings.local.json: delete those entries, then these "
            "files)") in done.stdout.splitlines()


# ------------------------------------------------------------------ the move, .gitignore

@pytest.mark.parametrize("mode", ["--project", "--update"])
def test_the_bash_snippet_becomes_our_block_in_place(installer, project, mode):
    bash_edition(project)
    done = installer.ok(mode, project)
    assert text_of(project, ".gitignore") == "node_modules/\n\n" + OUR_BLOCK + "dist/\n"
    assert "  merged   .gitignore (took over the bash edition's local-only lines)" in done.stdout


def test_a_line_of_the_users_after_the_snippet_stays_the_users(installer, project):
    bash_edition(project, gitignore=BASH_SNIPPET + ".claude/worktrees/\n.env\n")
    installer.ok("--project", project)
    assert text_of(project, ".gitignore") == OUR_BLOCK + ".claude/worktrees/\n.env\n"
    installer.ok("--uninstall", project)
    assert text_of(project, ".gitignore") == ".claude/worktrees/\n.env\n"


def test_a_snippet_missing_a_line_is_taken_over_too(installer, project):
    snippet = BASH_SNIPPET.replace(".claude/settings.local.json\n", "")
    bash_edition(project, gitignore="build/\n" + snippet)
    installer.ok("--project", project)
    assert text_of(project, ".gitignore") == "build/\n" + OUR_BLOCK


# ------------------------------------------------------------------ uninstall after the move

def test_uninstall_after_the_move_leaves_nothing_wired(installer, project):
    bash_edition(project)
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project)
    assert "hooks" not in settings_of(project)
    assert text_of(project, ".gitignore") == "node_modules/\n\ndist/\n"
    assert UNWIRED_SH in done.stdout.splitlines()
    for name in BASH_HOOKS:
        assert os.path.isfile(path_in(project, ".claude/hooks/" + name))


def test_uninstall_removes_a_bash_entry_whose_script_is_gone(installer, project):
    settings = expected_settings()
    settings["hooks"]["Stop"].insert(0, {"hooks": [bash_handler("Stop")]})
    bash_edition(project, settings=settings)
    os.remove(path_in(project, ".claude/hooks/stop-handoff.sh"))
    installer.ok("--project", project)  # the install without the move (kept as it is below)
    write(path_in(project, ".claude/settings.json"), settings_text(settings))
    done = installer.ok("--uninstall", project)
    assert "hooks" not in settings_of(project)
    assert "the bash edition's Stop entry" in done.stdout


def test_uninstall_leaves_a_bash_entry_whose_script_is_there(installer, project):
    settings = expected_settings()
    settings["hooks"]["Stop"].insert(0, {"hooks": [bash_handler("Stop")]})
    bash_edition(project, settings=settings)
    installer.ok("--project", project)
    write(path_in(project, ".claude/settings.json"), settings_text(settings))
    installer.ok("--uninstall", project)
    assert settings_of(project)["hooks"] == {"Stop": [{"hooks": [bash_handler("Stop")]}]}


def test_uninstall_in_a_bash_only_project_changes_nothing(installer, project):
    bash_edition(project)
    before = snapshot(project)
    done = installer.ok("--uninstall", project)
    assert snapshot(project) == before
    assert done.stdout.splitlines()[-1] == "nothing to remove: the protocol is not installed here"


def test_the_local_file_wiring_a_missing_bash_hook_is_named_at_uninstall(installer, project):
    bash_edition(project)
    installer.ok("--project", project)
    write(path_in(project, ".claude/settings.local.json"), settings_text(bash_settings()))
    for name in BASH_HOOKS:
        os.remove(path_in(project, ".claude/hooks/" + name))
    done = installer.ok("--uninstall", project)
    assert ("  note     .claude/settings.local.json still wires SessionStart and Stop to the bash "
            "edition's hooks, which are gone; delete those entries") in done.stdout.splitlines()


# ------------------------------------------------------------------ --check

def test_a_bash_only_project_is_named_with_its_move(installer, project):
    bash_edition(project)
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert ("  DRIFT    the bash edition is installed (SessionStart and Stop wired to its .sh "
            "hooks in .claude/settings.json); --update moves the project to this edition"
            ) in finding_lines(done)
    assert "protocol not installed" not in done.stdout
    assert fix_line(installer, "--update", project) in done.stdout
    installer.ok("--update", project)
    assert "edition" not in installer.ok("--check", project).stdout


def both_editions(installer, project, where):
    installer.ok("--project", project)
    bash_hooks(project)
    bash = {"hooks": {"Stop": [{"hooks": [bash_handler("Stop")]}]}}
    if where == ".claude/settings.json":
        settings = settings_of(project)
        settings["hooks"]["Stop"].append(bash["hooks"]["Stop"][0])
        bash = settings
    path = path_in(installer.env["HOME"], ".claude/settings.json") if where == "user" \
        else path_in(project, where)
    write(path, settings_text(bash))
    return path


@pytest.mark.parametrize("where", [".claude/settings.json", ".claude/settings.local.json", "user"])
def test_both_editions_wired_is_a_finding(installer, project, where):
    path = both_editions(installer, project, where)
    shown = path if where == "user" else where
    done = installer.run("--check", project)
    assert done.returncode == 1
    repair = "--update replaces it" if where == ".claude/settings.json" \
        else "delete that entry from " + shown
    assert ("  DRIFT    Stop is wired in both editions: the bash edition's stop-handoff.sh ({}) "
            "runs beside stop-handoff.py, so two Stop guards ask for the handoff; {}".format(
                shown, repair)
            ) in finding_lines(done)
    assert (fix_line(installer, "--update", project) in done.stdout) == \
        (where == ".claude/settings.json")


def test_a_bash_entry_whose_script_is_gone_is_named_so(installer, project):
    both_editions(installer, project, ".claude/settings.local.json")
    os.remove(path_in(project, ".claude/hooks/stop-handoff.sh"))
    done = installer.run("--check", project)
    assert ("  DRIFT    Stop is wired in both editions: the bash edition's stop-handoff.sh "
            "(.claude/settings.local.json) is gone, so it fails at every Stop; delete that entry "
            "from .claude/settings.local.json") in finding_lines(done)


def test_the_user_file_is_found_where_claude_config_dir_says(installer, project, tmp_path):
    both_editions(installer, project, "user")  # in $HOME/.claude, which the variable moves away
    config = str(tmp_path / "config")
    installer.ok("--check", project, env={"CLAUDE_CONFIG_DIR": config})
    write(os.path.join(config, "settings.json"),
          settings_text({"hooks": {"Stop": [{"hooks": [bash_handler("Stop")]}]}}))
    done = installer.run("--check", project, env={"CLAUDE_CONFIG_DIR": config})
    assert done.returncode == 1
    assert "stop-handoff.sh ({})".format(os.path.join(config, "settings.json")) in done.stdout


SPELLED_OTHERWISE = 'python3 -I -S "$CLAUDE_PROJECT_DIR/.claude/hooks/stop-handoff.py"'


@pytest.mark.parametrize("where", [".claude/settings.json", ".claude/settings.local.json", "user"])
def test_the_same_hook_run_twice_is_a_finding(installer, project, where):
    installer.ok("--project", project)
    copy = dict(our_handler("Stop"), command=SPELLED_OTHERWISE)
    if where == ".claude/settings.json":
        settings = settings_of(project)
        settings["hooks"]["Stop"].append({"hooks": [copy]})
        write(path_in(project, where), settings_text(settings))
        repair = "--update keeps one"
    else:
        path = path_in(installer.env["HOME"], ".claude/settings.json") if where == "user" \
            else path_in(project, where)
        write(path, settings_text({"hooks": {"Stop": [{"hooks": [copy]}]}}))
        where = path if where == "user" else where
        repair = "delete it from " + where
    done = installer.run("--check", project)
    assert done.returncode == 1
    files = ".claude/settings.json" if where == ".claude/settings.json" \
        else ".claude/settings.json and " + where
    assert ("  DRIFT    Stop runs stop-handoff.py 2 times: {} wire it in 2 different commands, "
            "and the harness runs each; {}".format(files, repair)) in finding_lines(done)


@pytest.mark.parametrize("where", ["another group", "the same group",
                                   ".claude/settings.local.json", "user"])
def test_an_identical_copy_runs_once_and_is_no_finding(installer, project, where):
    installer.ok("--project", project)
    settings = settings_of(project)
    copy = dict(our_handler("Stop"), timeout=60, statusMessage="another message")
    if where == "another group":
        settings["hooks"]["Stop"].append({"hooks": [copy]})
    elif where == "the same group":
        settings["hooks"]["Stop"][0]["hooks"].append(copy)
    else:
        path = path_in(installer.env["HOME"], ".claude/settings.json") if where == "user" \
            else path_in(project, where)
        write(path, settings_text({"hooks": {"Stop": [{"hooks": [copy]}]}}))
    write(path_in(project, ".claude/settings.json"), settings_text(settings))
    done = installer.ok("--check", project)
    assert "times" not in done.stdout


def test_a_copy_that_never_runs_is_no_second_run(installer, project):
    installer.ok("--project", project)
    settings = settings_of(project)
    never = dict(our_handler("Stop"), command=SPELLED_OTHERWISE, type="prompt")
    settings["hooks"]["Stop"].append({"hooks": [never]})
    write(path_in(project, ".claude/settings.json"), settings_text(settings))
    done = installer.run("--check", project)
    assert "2 times" not in done.stdout


def test_an_exec_form_copy_with_other_args_runs_twice(installer, project):
    installer.ok("--project", project)
    settings = settings_of(project)
    path = "${CLAUDE_PROJECT_DIR}/.claude/hooks/stop-handoff.py"
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "python3",
                                                 "args": ["-I", "-S", path]}]})
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "python3",
                                                 "args": ["-I", path]}]})
    write(path_in(project, ".claude/settings.json"), settings_text(settings))
    done = installer.run("--check", project)
    assert "  DRIFT    Stop runs stop-handoff.py 3 times: .claude/settings.json wire it in 3 " \
        "different commands, and the harness runs each; --update keeps one" in finding_lines(done)


def test_the_bash_editions_commands_are_named_until_replaced(installer, project):
    """Its five commands are files this edition never shipped: edited files to --update, which
    --update --force replaces; its /status, now /memory-status, no mode removes."""
    bash_edition(project)
    for name in ("handoff", "dream", "catchup", "status", "update-context"):
        write(path_in(project, ".claude/commands/{}.md".format(name)),
              "The bash /{}.\n".format(name))
    installer.ok("--update", project)
    done = installer.run("--check", project)
    assert ("  DRIFT    edited by you, so --update keeps them: .claude/commands/handoff.md, "
            ".claude/commands/dream.md, .claude/commands/catchup.md, "
            ".claude/commands/update-context.md; --update --force replaces them"
            ) in finding_lines(done)
    installer.ok("--update", "--force", project)
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert finding_lines(done)[0] == (
        "  DRIFT    .claude/commands/status.md is edited by you and shadows the CLI's own /status "
        "(the protocol's is now /memory-status): rename or delete it")
    assert "fix:" not in done.stdout
    os.remove(path_in(project, ".claude/commands/status.md"))
    installer.ok("--check", project)


def test_lines_an_earlier_install_left_of_the_snippet_are_taken_back(installer, project):
    """An install before this version restored its block in the snippet's place and left the
    snippet's other lines after it, each of them also in the block."""
    left = ".claude/hooks/.session-baseline\n.claude/settings.local.json\n.claude/worktrees/\n"
    installer.ok("--project", project)
    write(path_in(project, ".gitignore"), "node_modules/\n\n" + OUR_BLOCK + left + "dist/\n")
    check = installer.run("--check", project)
    assert ("  DRIFT    --update would: merge .gitignore (took over the bash edition's local-only "
            "lines)") in finding_lines(check)
    done = installer.ok("--update", project)
    assert "  merged   .gitignore (took over the bash edition's local-only lines)" in done.stdout
    assert text_of(project, ".gitignore") == "node_modules/\n\n" + OUR_BLOCK + "dist/\n"


@pytest.mark.parametrize("after", [".claude/settings.local.json\n.claude/worktrees/\n",
                                   ".env\n.claude/hooks/.session-baseline\n"])
def test_lines_of_the_users_after_the_block_stay(installer, project, after):
    bash_edition(project, settings=expected_settings(), gitignore=OUR_BLOCK + after)
    done = installer.ok("--update", project)
    assert "  keep     .gitignore (local-only lines present)" in done.stdout
    assert text_of(project, ".gitignore") == OUR_BLOCK + after


# ------------------------------------------- a hook of the user's that shares a name

def a_hook_of_the_users(project, event, status=None):
    """A project's own hook under the bash edition's script name, with nothing else of that
    edition: a user's settings entry, which no mode may take over or call the bash edition."""
    script = BASH_SCRIPT[event]
    write(path_in(project, ".claude/hooks/" + script), "#!/bin/sh\necho 'run make lint'\n")
    handler = {"type": "command", "command": "$CLAUDE_PROJECT_DIR/.claude/hooks/" + script}
    if status:
        handler["statusMessage"] = status
    write(path_in(project, ".claude/settings.json"), settings_text(
        {"hooks": {event: [{"matcher": "startup", "hooks": [handler]}]}}))
    return handler


@pytest.mark.parametrize("event", ["SessionStart", "Stop"])
def test_a_users_hook_named_like_the_bash_editions_is_the_users(installer, project, event):
    handler = a_hook_of_the_users(project, event, status="Linting")
    done = installer.run("--check", project)
    assert "bash edition" not in done.stdout
    assert "  NONE     protocol not installed" in done.stdout.splitlines()
    done = installer.ok("--project", project)
    assert "bash edition" not in done.stdout
    wired = settings_of(project)["hooks"][event]
    assert wired[0] == {"matcher": "startup", "hooks": [handler]}  # the user's, untouched
    assert [group["hooks"][0]["command"] for group in wired[1:]] == \
        [our_handler(event)["command"]]
    installer.ok("--check", project)  # two hooks, each once: nothing runs twice
    installer.ok("--uninstall", project)
    assert settings_of(project) == {"hooks": {event: [{"matcher": "startup", "hooks": [handler]}]}}


def test_one_mark_of_the_bash_edition_is_enough(installer, project):
    # Its status message on the entry, or a script it installs beside the wired ones.
    a_hook_of_the_users(project, "Stop", status=BASH_STATUS["Stop"])
    assert "the bash edition's Stop entry now runs stop-handoff.py" in \
        installer.ok("--project", project).stdout
    other = make_repo(project + " too", installer.env)
    a_hook_of_the_users(other, "Stop")
    write(path_in(other, ".claude/hooks/prune-worktrees.sh"),
          "#!/bin/sh\n" + BASH_MARKS["prune-worktrees.sh"] + "\n")
    assert "the bash edition's Stop entry now runs stop-handoff.py" in \
        installer.ok("--project", other).stdout
    # a script of one of its names that says nothing of that edition's is no mark at all
    third = make_repo(project + " three", installer.env)
    a_hook_of_the_users(third, "Stop")
    write(path_in(third, ".claude/hooks/prune-worktrees.sh"), "#!/bin/sh\ngit worktree prune\n")
    assert "bash edition" not in installer.ok("--project", third).stdout
