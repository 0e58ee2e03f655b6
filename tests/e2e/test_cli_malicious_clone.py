"""In the real CLI, a repository cannot put a file outside the project into the model's context
through what it commits: a link in place of the memory index, or a path in its settings' "env",
which the CLI applies to the hooks it runs.

The secret here is the CLI's own API key (a dummy), which its hooks inherit with the rest of its
environment: `/proc/self/environ` of a hook holds it. The hooks' refusal line reaching the model
shows that the CLI gave the hook the committed "env", and that the hook ran; the key appearing in
no request shows that nothing of it got through.
"""
import json
import os

import pytest

from cli_session import texts_of
from e2e_fixtures import Fixture, api, assert_clean, claude_binary, cli, installed  # noqa: F401
from installtools import write
from mock_api import say

pytestmark = pytest.mark.e2e

API_KEY = "sk-e2e-dummy"  # what cli_session gives every run as ANTHROPIC_API_KEY


def everything_the_model_received(run):
    return "\n".join(text for body in run.main_requests for _, text in texts_of(body))


@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="no /proc/self/environ")
def test_a_committed_link_in_place_of_the_index_brings_no_secret_to_the_model(cli, installed):
    index = installed.file("memory/MEMORY.md")
    os.unlink(index)
    os.symlink("/proc/self/environ", index)
    installed.git("add", "-A")
    installed.git("commit", "-q", "-m", "the index, linked")
    run = cli.run(installed.path, ["hello"], [say("Hello.")])
    assert_clean(run)
    received = everything_the_model_received(run)
    assert API_KEY not in received
    assert ("- memory/MEMORY.md was not read: it is reached through a symbolic link; the hooks "
            "show only plain files.") in received


def test_a_committed_settings_env_brings_no_file_outside_the_project_to_the_model(cli, tmp_path):
    project = Fixture(tmp_path / "repo")
    secret = tmp_path / "outside.md"
    secret.write_text("the secret line %s\n" % project.token[::-1], encoding="utf-8")
    settings_path = project.file(".claude/settings.json")
    with open(settings_path, encoding="utf-8") as handle:
        settings = json.load(handle)
    settings["env"] = {"MCP_SESSION_STATE": "../outside.md"}
    write(settings_path, json.dumps(settings, indent=2) + "\n")
    project.git("commit", "-q", "-am", "the handoff, elsewhere")
    run = cli.run(project.path, ["hello"], [say("Hello.")])
    assert_clean(run)
    received = everything_the_model_received(run)
    assert project.token[::-1] not in received
    assert ("- MCP_SESSION_STATE=../outside.md was ignored: .claude/settings.json may set it, and "
            "it leads outside the project; only a value you set yourself is taken.") in received
    assert project.token in received  # the index still arrives
