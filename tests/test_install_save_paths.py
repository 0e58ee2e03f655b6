"""--check fails when a setting moves what the agent writes while saving to a place where the CLI
asks before every write: under .claude/ (write-protected even in acceptEdits mode) or, for the
handoff, outside the project and the folders the settings add to it. The save must need nobody.
The CLI's side of this rule is measured in tests/e2e/test_cli_harness_facts.py."""

import json
import os

import pytest

from installtools import installer, path_in, repo, write  # noqa: F401

ASKED = ", so every save waits for someone to approve it; unset it (default {}) or choose a path " \
        "in the project outside .claude/"


def with_settings(project, **extra):
    path = path_in(project, ".claude/settings.json")
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    for key, value in extra.items():  # the protocol's own permissions stay
        if isinstance(value, dict):
            settings.setdefault(key, {}).update(value)
        else:
            settings[key] = value
    write(path, json.dumps(settings, indent=2) + "\n")


def finding(name, value, where, default):
    return "  BROKEN   {}={} puts what the agent saves {}".format(name, value, where) + \
        ASKED.format(default)


UNDER_CLAUDE = "under .claude/, which the CLI write-protects"


@pytest.mark.parametrize("value", [".claude/session-state.md", "./.claude/state.md",
                                   ".claude/notes/../state.md"])
def test_a_handoff_under_the_claude_folder_fails_the_check(installer, repo, value):
    installer.ok("--project", repo)
    with_settings(repo, env={"MCP_SESSION_STATE": value})
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert finding("MCP_SESSION_STATE", value, UNDER_CLAUDE, ".session-state.md") in \
        done.stdout.splitlines()


def test_a_handoff_outside_the_project_fails_the_check(installer, repo, tmp_path):
    installer.ok("--project", repo)
    for value in ("../state.md", str(tmp_path / "state.md")):
        with_settings(repo, env={"MCP_SESSION_STATE": value})
        done = installer.run("--check", repo)
        assert done.returncode == 1
        assert finding("MCP_SESSION_STATE", value, "outside the project", ".session-state.md") in \
            done.stdout.splitlines()


def test_a_handoff_in_a_folder_the_settings_add_passes(installer, repo, tmp_path):
    installer.ok("--project", repo)
    notes = tmp_path / "notes"
    notes.mkdir()
    with_settings(repo, env={"MCP_SESSION_STATE": str(notes / "state.md")},
                  permissions={"additionalDirectories": [str(notes)]})
    installer.ok("--check", repo)


@pytest.mark.parametrize("value", ["notes/state.md", ".claude-notes/state.md", ".session-state.md",
                                   "docs/.claude/state.md"])
def test_a_handoff_elsewhere_in_the_project_passes(installer, repo, value):
    installer.ok("--project", repo)
    with_settings(repo, env={"MCP_SESSION_STATE": value})
    installer.ok("--check", repo)


def test_an_absolute_handoff_path_in_the_project_passes(installer, repo):
    installer.ok("--project", repo)
    with_settings(repo, env={"MCP_SESSION_STATE": path_in(repo, "notes/state.md")})
    installer.ok("--check", repo)


def test_the_variable_set_in_the_environment_counts_too(installer, repo):
    installer.ok("--project", repo)
    done = installer.run("--check", repo, env={"MCP_SESSION_STATE": ".claude/state.md"})
    assert done.returncode == 1
    assert finding("MCP_SESSION_STATE", ".claude/state.md", UNDER_CLAUDE, ".session-state.md") in \
        done.stdout.splitlines()


def test_a_memory_index_under_the_claude_folder_fails_the_check(installer, repo):
    installer.ok("--project", repo)
    write(path_in(repo, ".claude/memory/MEMORY.md"), "# Memory\n")
    with_settings(repo, env={"MCP_MEMORY_INDEX": ".claude/memory/MEMORY.md"})
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert finding("MCP_MEMORY_INDEX", ".claude/memory/MEMORY.md", UNDER_CLAUDE,
                   "memory/MEMORY.md") in done.stdout.splitlines()


def test_a_memory_index_outside_the_project_is_not_this_checks_business(installer, repo, tmp_path):
    # The CLI lets the agent write its own auto memory outside the project, where such an index
    # may live; whether the index is there and may be read is the memory check's finding (a
    # project's settings may not lead the hooks out of the project: `not-read`).
    installer.ok("--project", repo)
    with_settings(repo, env={"MCP_MEMORY_INDEX": str(tmp_path / "memory" / "MEMORY.md")})
    out = installer.run("--check", repo).stdout
    assert "puts what the agent saves" not in out
    assert "MCP_MEMORY_INDEX=%s was ignored" % (tmp_path / "memory" / "MEMORY.md") in out


@pytest.mark.parametrize("name", ["MCP_SESSION_STATE", "MCP_MEMORY_INDEX"])
def test_a_path_starting_with_a_tilde_fails_the_check(installer, repo, name):
    # Settings values reach the hooks as written: no shell turns ~ into the home folder.
    installer.ok("--project", repo)
    with_settings(repo, env={name: "~/notes/state.md"})
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert ("  BROKEN   {}=~/notes/state.md starts with ~, which the hooks do not expand: they "
            "look in a folder named ~ in the project, the agent in your home folder; give a path "
            "relative to the project, or an absolute one".format(name)) in done.stdout.splitlines()
