"""A settings entry for which Claude Code applies nothing of the file it sits in.

Claude Code (2.1.328, pinned by tests/e2e/test_cli_harness_facts.py) skips a settings file whole
(hooks and permissions alike, with no word outside its debug log) when a PreToolUse or
PermissionRequest hook entry cannot be loaded, or when "permissions.ask" or
"permissions.additionalDirectories" is not a list; under any other event it drops only the broken
entry. In a project's settings.json that means the protocol's hooks never run, so --project
refuses such a file and --check fails on it, each naming the entry. The same entries are fine
where the harness keeps the file, and in another agent's hooks file, which Claude Code never reads.
"""

import json

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    installer, path_in, read, repo, snapshot, write, write_settings,
)

COMMAND = {"type": "command", "command": "true"}

SKIPPED = {
    "a group with a matcher that is not text":
        {"hooks": {"PreToolUse": [{"matcher": 5, "hooks": [COMMAND]}]}},
    "a handler of no known type":
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "bogus", "command": "true"}]}]}},
    "a handler without a type":
        {"hooks": {"PreToolUse": [{"hooks": [{"command": "true"}]}]}},
    "a command handler without its command":
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command"}]}]}},
    "a command that is not text":
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": ["true"]}]}]}},
    "a prompt handler without its prompt":
        {"hooks": {"PreToolUse": [{"hooks": [{"type": "prompt"}]}]}},
    "a timeout of zero":
        {"hooks": {"PreToolUse": [{"hooks": [dict(COMMAND, timeout=0)]}]}},
    "a negative timeout":
        {"hooks": {"PreToolUse": [{"hooks": [dict(COMMAND, timeout=-1)]}]}},
    "a timeout that is a boolean":
        {"hooks": {"PreToolUse": [{"hooks": [dict(COMMAND, timeout=True)]}]}},
    "a timeout that is text":
        {"hooks": {"PreToolUse": [{"hooks": [dict(COMMAND, timeout="5")]}]}},
    "a broken PermissionRequest handler":
        {"hooks": {"PermissionRequest": [{"hooks": [{"type": "command"}]}]}},
    "permissions.ask that is not a list":
        {"permissions": {"ask": "Bash(rm:*)"}},
    "permissions.additionalDirectories that is not a list":
        {"permissions": {"additionalDirectories": "../shared"}},
}

KEPT = {
    "a matcher of empty text": {"hooks": {"PreToolUse": [{"matcher": "", "hooks": [COMMAND]}]}},
    "no matcher": {"hooks": {"PreToolUse": [{"hooks": [COMMAND]}]}},
    "a timeout under a second": {"hooks": {"PreToolUse": [{"hooks": [dict(COMMAND, timeout=0.5)]}]}},
    "a prompt handler with its prompt":
        {"hooks": {"PermissionRequest": [{"hooks": [{"type": "prompt", "prompt": "ok?"}]}]}},
    "keys the harness does not know":
        {"hooks": {"PreToolUse": [{"hooks": [dict(COMMAND, note=1)], "note": 2}]}},
    "a Stop handler without its command, which the harness drops alone":
        {"hooks": {"Stop": [{"hooks": [{"type": "command"}]}]}},
    "a SessionStart timeout of zero, dropped alone":
        {"hooks": {"SessionStart": [{"hooks": [dict(COMMAND, timeout=0)]}]}},
    "lists where lists belong": {"permissions": {"ask": [], "additionalDirectories": ["../x"]}},
}


@pytest.mark.parametrize("case", sorted(SKIPPED))
def test_an_install_into_a_file_the_harness_would_skip_is_refused(installer, repo, case):
    write_settings(repo, SKIPPED[case])
    before = snapshot(repo)
    done = installer.run("--project", repo)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("install.py: error: .claude/settings.json: ")
    assert "Claude Code skips this whole file" in done.stderr
    assert done.stderr.rstrip().endswith("nothing was changed")
    assert snapshot(repo) == before


@pytest.mark.parametrize("case", sorted(KEPT))
def test_an_entry_the_harness_keeps_the_file_for_is_installed_beside(installer, repo, case):
    write_settings(repo, KEPT[case])
    installer.ok("--project", repo)
    installer.ok("--check", repo)


@pytest.mark.parametrize("case", sorted(SKIPPED))
def test_check_fails_when_the_entry_comes_after_the_install(installer, repo, case):
    installer.ok("--project", repo)
    path = path_in(repo, ".claude/settings.json")
    settings = json.loads(read(path).decode("utf-8"))
    for key, value in SKIPPED[case].items():
        for name, entry in value.items():
            settings.setdefault(key, {})[name] = entry
    write_settings(repo, settings)
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert "BROKEN   .claude/settings.json: " in done.stdout
    assert "Claude Code skips this whole file" in done.stdout


def test_another_agents_hooks_file_is_not_held_to_claude_codes_rule(installer, repo):
    installer.ok("--project", repo, "--agents", "claude,codex")
    path = path_in(repo, ".codex/hooks.json")
    settings = json.loads(read(path).decode("utf-8"))
    settings["hooks"]["PreToolUse"] = [{"matcher": "Bash", "hooks": [dict(COMMAND, timeout=True)]}]
    write(path, json.dumps(settings, indent=2) + "\n")
    done = installer.run("--check", repo)
    assert "Claude Code skips" not in done.stdout + done.stderr
    assert done.returncode == 0, done.stdout


# Entries Claude Code skips alone, with a line in its debug log, applying the rest of the file
# (tests/e2e/test_cli_harness_facts.py pins the first three and their messages): every mode
# installs beside them, keeps them byte for byte, and --check names them as the harness does.
SKIPPED_ALONE = {
    "the old object form of an event, under a name it does not know":
        ('{"hooks": {"sessionStart": {"command": "./scripts/hello.sh"}}}\n',
         'hooks.sessionStart: Unknown hook event "sessionStart" was ignored'),
    "a handler given where its group belongs":
        ('{\n  "hooks": {\n    "SessionStart": [\n      {"type": "command", "command": "echo hi"}'
         '\n    ]\n  }\n}\n',
         'hooks.SessionStart.0: Hook matcher "hooks" must be an array of hook entries; received '
         "undefined"),
    "an event that is an object":
        ('{"hooks": {"Notification": {"hooks": [{"type": "command", "command": "true"}]}}}',
         'hooks.Notification: Hook event "Notification" must be an array of matchers; received '
         "object"),
    "a group that is text": ('{"hooks": {"Stop": ["make lint"]}}', "hooks.Stop.0: Hook matcher "
                             "must be an object; received string"),
    "a handler that is a number": ('{"hooks": {"Stop": [{"hooks": [1]}]}}',
                                   "hooks.Stop.0.hooks.0: hook is not an object"),
}


@pytest.mark.parametrize("case", sorted(SKIPPED_ALONE))
def test_an_entry_the_harness_skips_alone_is_kept_named_and_given_back(installer, repo, case):
    text, named = SKIPPED_ALONE[case]
    write_settings(repo, text)
    installer.ok("--project", repo)
    settings = json.loads(read(path_in(repo, ".claude/settings.json")).decode("utf-8"))
    assert settings["hooks"]["SessionStart"][-1]["hooks"][0]["command"].endswith(
        '/.claude/hooks/session-start.py"')
    for event, value in json.loads(text)["hooks"].items():  # the user's entries, as they were
        kept = settings["hooks"][event]
        assert (kept[:len(value)] if isinstance(value, list) else kept) == value
    done = installer.run("--check", repo)
    assert done.returncode == 0, done.stdout
    [line] = [line for line in done.stdout.splitlines() if line.startswith("  WARN ")]
    assert ".claude/settings.json: " + named in line and "skips it" in line
    installer.ok("--update", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")).decode("utf-8") == text
