"""install.py against what earlier releases installed: their hook files and settings entries."""

import hashlib
import json
import os
import re
import subprocess

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    forget_the_record,
    HOOKS, REPO, expected_settings, installer, load_installer, path_in, project, read,
    settings_of, write,
)

# The commit release 0.1.0 was made from, and the last one before the hooks shared their
# concerns, which projects installed from the repository hold.
RELEASE_0_1_0 = "88a6e28"
BEFORE_THE_SPLIT = "1d021e9"


def released_file(rel, commit=RELEASE_0_1_0):
    """A file as 0.1.0 shipped it, from this repository's history."""
    done = subprocess.run(["git", "-C", REPO, "show", "{}:{}".format(commit, rel)],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    if done.returncode != 0:
        pytest.skip("the repository's history does not reach release 0.1.0")
    return done.stdout


def released_hook(name, commit=RELEASE_0_1_0):
    return released_file("hooks/" + name, commit)


def test_every_hook_lists_the_digest_of_its_released_version(installer):
    module = load_installer(installer)
    assert sorted(module.releases.RELEASED_HOOK_DIGESTS) == sorted(HOOKS)
    for name, digests in module.releases.RELEASED_HOOK_DIGESTS.items():
        current = hashlib.sha256(read(installer.source_file("hooks/" + name))).hexdigest()
        assert digests and current not in digests, name
        assert all(re.match(r"[0-9a-f]{64}\Z", digest) for digest in digests), name


def put_the_released_hooks_in(project, crlf, commit=RELEASE_0_1_0):
    """The hooks as 0.1.0 installed them, which kept no record of what it added."""
    forget_the_record(project)
    for name in HOOKS:
        old = released_hook(name, commit)
        data = old.replace(b"\n", b"\r\n") if crlf else old
        write(path_in(project, ".claude/hooks/" + name), data)


def test_update_replaces_the_hooks_installed_before_they_shared_their_concerns(installer,
                                                                                project):
    installer.ok("--project", project)
    put_the_released_hooks_in(project, False, BEFORE_THE_SPLIT)
    done = installer.ok("--update", project)
    for name in HOOKS:
        assert "  replaced .claude/hooks/{} (was an older version)".format(name) in done.stdout
        assert read(path_in(project, ".claude/hooks/" + name)) == \
            read(installer.source_file("hooks/" + name))


@pytest.mark.parametrize("crlf", [False, True])
def test_update_replaces_the_hooks_0_1_0_installed(installer, project, crlf):
    installer.ok("--project", project)
    put_the_released_hooks_in(project, crlf)
    done = installer.ok("--update", project)
    for name in HOOKS:
        assert "  replaced .claude/hooks/{} (was an older version)".format(name) in done.stdout
        assert read(path_in(project, ".claude/hooks/" + name)) == \
            read(installer.source_file("hooks/" + name))


@pytest.mark.parametrize("crlf", [False, True])
def test_uninstall_removes_the_hooks_0_1_0_installed(installer, project, crlf):
    installer.ok("--project", project)
    put_the_released_hooks_in(project, crlf)
    done = installer.ok("--uninstall", project)
    for name in HOOKS:
        assert "  removed  .claude/hooks/{}".format(name) in done.stdout
    assert not os.path.exists(path_in(project, ".claude/hooks"))


# ---------------------------------------------------------- 0.1.0's settings entries

def settings_of_0_1_0():
    data = expected_settings(allow=False, deny=False)
    data["hooks"]["SessionStart"][0]["matcher"] = "startup|resume|clear|compact"
    return data


def test_update_leaves_the_matcher_of_a_group_shared_with_the_users_hook(installer, project):
    old = settings_of_0_1_0()
    mine = {"type": "command", "command": "./my-banner.sh"}
    old["hooks"]["SessionStart"][0]["hooks"].append(mine)
    write(path_in(project, ".claude/settings.json"), json.dumps(old, indent=2) + "\n")
    done = installer.ok("--update", project)
    old["permissions"] = expected_settings()["permissions"]
    del old["permissions"]["deny"]  # no .claudeignore, no deny rules
    assert settings_of(project) == old
    assert ("  note     the SessionStart group shared with hooks of your own keeps its matcher, "
            "so the protocol's hook misses fork; add it there, or move that hook to a group of "
            "its own") in done.stdout
    assert ("  merged   .claude/settings.json (allowed Skill(catchup), Skill(handoff), "
            "Skill(dream))") in done.stdout


def test_update_brings_the_matcher_of_the_protocols_own_group(installer, project):
    old = settings_of_0_1_0()
    old["hooks"]["SessionStart"].append({"matcher": "startup|resume|clear|compact",
                                         "hooks": [{"type": "command", "command": "./mine.sh"}]})
    write(path_in(project, ".claude/settings.json"), json.dumps(old, indent=2) + "\n")
    done = installer.ok("--update", project)
    groups = settings_of(project)["hooks"]["SessionStart"]
    assert [group["matcher"] for group in groups] == [
        "startup|resume|clear|compact|fork", "startup|resume|clear|compact"]
    assert "keeps its matcher" not in done.stdout


# ------------------------------------------------------- commands in a form of the user's

STOP = ".claude/hooks/stop-handoff.py"


def settings_with_stop_command(command):
    data = expected_settings(deny=False)
    data["hooks"]["Stop"][0]["hooks"][0]["command"] = command
    return data


@pytest.mark.parametrize("command", [
    '"${CLAUDE_PROJECT_DIR}/' + STOP + '"',
    '"$CLAUDE_PROJECT_DIR/' + STOP + '"',
    'uv run "${CLAUDE_PROJECT_DIR}/' + STOP + '"',
    'uv run --script "$CLAUDE_PROJECT_DIR/' + STOP + '"',
    'python3 "$CLAUDE_PROJECT_DIR"/' + STOP,
    'python3 "${CLAUDE_PROJECT_DIR}/' + STOP + '" --verbose',
])
def test_update_keeps_a_command_whose_interpreter_it_cannot_read(installer, project, command):
    data = settings_with_stop_command(command)
    write(path_in(project, ".claude/settings.json"), json.dumps(data, indent=2) + "\n")
    installer.ok("--update", project)
    assert settings_of(project) == data
    done = installer.ok("--project", project, "--python", "py -3", "--allow-missing-python")
    assert ("  note     the hooks stay wired to python3 and a command of your own; "
            '--update --python "py -3" changes that') in done.stdout
    installer.ok("--update", project, "--python", "py -3", "--allow-missing-python")
    assert settings_of(project) == expected_settings("py -3")


@pytest.mark.parametrize("python", [
    "/usr/bin/env python3", "'C:\\Program Files\\Python\\python.exe'", "uv run python", "pypy3",
])
def test_update_brings_an_older_command_form_with_its_interpreter(installer, project, python):
    data = settings_with_stop_command('{} "$CLAUDE_PROJECT_DIR/{}"'.format(python, STOP))
    write(path_in(project, ".claude/settings.json"), json.dumps(data, indent=2) + "\n")
    installer.ok("--update", project)
    assert settings_of(project)["hooks"]["Stop"] == expected_settings(python)["hooks"]["Stop"]


def test_every_changed_command_lists_the_digest_of_its_released_version(installer):
    module = load_installer(installer)
    for name, digests in module.releases.RELEASED_COMMAND_DIGESTS.items():
        if name in module.releases.RETIRED_COMMANDS:
            continue
        current = hashlib.sha256(read(installer.source_file("commands/" + name))).hexdigest()
        assert digests and current not in digests, name
        assert all(re.match(r"[0-9a-f]{64}\Z", digest) for digest in digests), name
        assert hashlib.sha256(released_file("commands/" + name)).hexdigest() == digests[0], name


def test_every_retired_command_lists_the_digest_of_its_released_version(installer):
    module = load_installer(installer)
    for name, successor in module.releases.RETIRED_COMMANDS.items():
        assert not os.path.exists(installer.source_file("commands/" + name)), name
        assert successor in module.protocol.COMMANDS, name
        digests = module.releases.RELEASED_COMMAND_DIGESTS[name]
        assert hashlib.sha256(released_file("commands/" + name)).hexdigest() == digests[0], name


@pytest.mark.parametrize("verb", ["--update", "--uninstall"])
def test_the_released_dream_command_counts_as_unedited(installer, project, verb):
    installer.ok("--project", project)
    forget_the_record(project)  # as 0.1.0 left it
    write(path_in(project, ".claude/commands/dream.md"), released_file("commands/dream.md"))
    done = installer.ok(verb, project)
    assert "edited by you" not in done.stdout
    if verb == "--update":
        assert read(path_in(project, ".claude/commands/dream.md")) == \
            read(installer.source_file("commands/dream.md"))
    else:
        assert not os.path.exists(path_in(project, ".claude/commands/dream.md"))
