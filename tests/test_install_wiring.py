"""Wiring that is there but does not work: --check reports a hook the harness never runs (all hooks
switched off, an "if", an async Stop, a matcher that selects no source, a handler of another type,
a command commented out) and reads the "env" of the settings files as a session does. Handlers in
exec form or with ${CLAUDE_PROJECT_DIR:-.} are the protocol's, for install, update, uninstall and
check alike."""

import json
import os

import pytest

from installtools import installer, path_in, project, repo, read, settings_of, snapshot, write  # noqa: F401

STOP_PATH = "${CLAUDE_PROJECT_DIR}/.claude/hooks/stop-handoff.py"


def change_settings(project, change, rel=".claude/settings.json"):
    path = path_in(project, rel)
    data = json.loads(read(path)) if os.path.exists(path) else {}
    change(data)
    write(path, json.dumps(data, indent=2) + "\n")


def handler_of(data, event):
    return data["hooks"][event][0]["hooks"][0]


def installed(installer, project):
    installer.ok("--project", project)
    return project


def finding_lines(done):
    return [line for line in done.stdout.splitlines() if line.startswith("  ")]


# ------------------------------------------------------------------ hooks switched off

@pytest.mark.parametrize("where", [".claude/settings.json", ".claude/settings.local.json", "user"])
def test_all_hooks_switched_off_is_a_finding(installer, project, where):
    installed(installer, project)
    rel = where if where != "user" else None
    if rel is None:
        path = path_in(installer.env["HOME"], ".claude/settings.json")
        write(path, '{"disableAllHooks": true}\n')
        shown = path
    else:
        change_settings(project, lambda data: data.update(disableAllHooks=True), rel)
        shown = rel
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert '  UNWIRED  "disableAllHooks": true in {}: no hook runs; remove the key'.format(
        shown) in done.stdout


def test_a_local_false_overrides_a_shared_true(installer, repo):
    installed(installer, repo)
    change_settings(repo, lambda data: data.update(disableAllHooks=True))
    change_settings(repo, lambda data: data.update(disableAllHooks=False),
                    ".claude/settings.local.json")
    installer.ok("--check", repo)


# ------------------------------------------------------------------ a hook that never runs

NEVER_RUNS = {
    "an if on Stop": ("Stop", lambda group, handler: handler.update({"if": "Bash(git *)"}),
                      'it has an "if", which makes a Stop hook never run: remove it'),
    "an if on SessionStart": (
        "SessionStart", lambda group, handler: handler.update({"if": "Bash(*)"}),
        'it has an "if", which makes a SessionStart hook never run: remove it'),
    "an async Stop": ("Stop", lambda group, handler: handler.update({"async": True}),
                      'it is "async": true, so it cannot stop the session: remove it'),
    "a matcher of no source": (
        "SessionStart", lambda group, handler: group.update({"matcher": "Startup|Resume"}),
        'its matcher "Startup|Resume" matches none of startup|resume|clear|compact|fork: '
        'use startup|resume|clear|compact|fork'),
    "a regular expression of no source": (
        "SessionStart", lambda group, handler: group.update({"matcher": "^session$"}),
        'its matcher "^session$" matches none of startup|resume|clear|compact|fork: '
        'use startup|resume|clear|compact|fork'),
    "a prompt handler": ("Stop", lambda group, handler: handler.update({"type": "prompt"}),
                         'its type is "prompt" (the harness runs a "command" only): make it "command"'),
    "a command commented out": (
        "Stop", lambda group, handler: handler.update(
            command='true # python3 -I -S "{}"'.format(STOP_PATH)),
        "its command is commented out (#): remove the text before the hook's command"),
}


@pytest.mark.parametrize("setup", sorted(NEVER_RUNS))
def test_a_hook_the_harness_never_runs_is_a_finding(installer, project, setup):
    event, change, reason = NEVER_RUNS[setup]
    installed(installer, project)

    def edit(data):
        group = data["hooks"][event][0]
        change(group, group["hooks"][0])
    change_settings(project, edit)
    done = installer.run("--check", project)
    assert done.returncode == 1
    lines = [line for line in finding_lines(done) if "never runs as it should" in line]
    assert len(lines) == 1, done.stdout
    assert lines[0] == "  UNWIRED  {} hook never runs as it should: {} in .claude/settings.json" \
        .format(event, reason)
    # A handler the harness never runs is that one finding: nothing about its interpreter.
    assert not [line for line in finding_lines(done) if "interpreter" in line], done.stdout


@pytest.mark.parametrize("matcher", ["startup", "startup, compact", "*", "", "start.*"])
def test_a_matcher_selecting_some_source_passes(installer, repo, matcher):
    installed(installer, repo)
    change_settings(repo, lambda data: data["hooks"]["SessionStart"][0].update(matcher=matcher))
    installer.ok("--check", repo)


def test_a_second_working_copy_in_the_local_file_keeps_the_hook_running(installer, project):
    installed(installer, project)
    change_settings(project, lambda data: handler_of(data, "Stop").update({"if": "Bash(*)"}))
    change_settings(project, lambda data: data.update(hooks={"Stop": [{"hooks": [{
        "type": "command", "command": 'python3 -I -S "{}"'.format(STOP_PATH)}]}]}),
        ".claude/settings.local.json")
    done = installer.run("--check", project)
    assert "never runs" not in done.stdout


def test_a_hash_inside_quotes_or_a_word_is_no_comment(installer, project):
    installed(installer, project)
    change_settings(project, lambda data: handler_of(data, "Stop").update(
        command='PYTHONX="a #b" python3 -I -S "{}"'.format(STOP_PATH)))
    done = installer.run("--check", project)
    assert "commented out" not in done.stdout


# ------------------------------------------------------------------ the settings' env

def test_the_settings_env_is_what_the_check_measures(installer, repo):
    installed(installer, repo)
    write(path_in(repo, "notes/INDEX.md"), "# Index\n" + "- a line\n" * 90)
    installer.ok("--check", repo)
    change_settings(repo, lambda data: data.update(env={"MCP_MEMORY_INDEX": "notes/INDEX.md"}))
    done = installer.run("--check", repo)
    assert done.returncode == 1 and "OVER" in done.stdout
    # the local file's value wins over the shared one's, as in a session
    change_settings(repo, lambda data: data.update(env={"MCP_MEM_LINES": 200}),
                    ".claude/settings.local.json")
    installer.ok("--check", repo)


def test_the_settings_env_path_is_the_one_the_interpreter_is_looked_up_in(installer, project,
                                                                           tmp_path):
    """Read for what it says, never handed to a process: an interpreter the PATH there does
    not hold is named, without running anything from that PATH."""
    installed(installer, project)
    empty = tmp_path / "empty"
    empty.mkdir()
    change_settings(project, lambda data: data.update(env={"PATH": str(empty)}),
                    ".claude/settings.local.json")
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert ("the hooks' interpreter (python3 -I -S) is not found on the PATH the settings' env "
            "gives ({})").format(empty) in done.stdout


# ------------------------------------------------------------------ other forms of one handler

def exec_form(data):
    for event, hook in (("SessionStart", "session-start.py"), ("Stop", "stop-handoff.py")):
        handler = handler_of(data, event)
        handler["command"] = "python3"
        handler["args"] = ["-I", "-S", "${CLAUDE_PROJECT_DIR}/.claude/hooks/" + hook]


def default_form(data):
    for event in ("SessionStart", "Stop"):
        handler = handler_of(data, event)
        handler["command"] = handler["command"].replace("${CLAUDE_PROJECT_DIR}",
                                                        "${CLAUDE_PROJECT_DIR:-.}")


@pytest.mark.parametrize("form", [exec_form, default_form], ids=["exec form", "default"])
def test_another_form_of_the_handler_is_the_protocols_everywhere(installer, repo, form):
    installed(installer, repo)
    change_settings(repo, form)
    before = read(path_in(repo, ".claude/settings.json"))
    installer.ok("--check", repo)
    if form is exec_form:  # kept as the user wrote it; a default is brought to this version's form
        installer.ok("--update", repo)
        assert read(path_in(repo, ".claude/settings.json")) == before
    installer.ok("--project", repo)
    installer.ok("--update", repo)
    data = settings_of(repo)
    assert [len(data["hooks"][event]) for event in ("SessionStart", "Stop")] == [1, 1]
    installer.ok("--uninstall", repo)
    assert not os.path.exists(path_in(repo, ".claude/settings.json")) or \
        "hooks" not in settings_of(repo)


def test_an_exec_form_interpreter_is_probed(installer, project):
    installed(installer, project)

    def missing_python(data):
        exec_form(data)
        handler_of(data, "Stop")["command"] = "python3.99"
    change_settings(project, missing_python)
    done = installer.run("--check", project)
    assert "the hooks' interpreter (python3.99 -I -S) is not found" in done.stdout
