"""What the protocol relies on the CLI to do, pinned against the real CLI, so that a new release that
changes it fails here rather than in a user's session (spec/08-limits.md, "What the protocol relies
on in the harness"):
- every file under `.claude/` is write-protected, even in acceptEdits mode, while the project root
  is not: the reason the session state lives outside `.claude/`;
- a project's permissions.allow counts only in a workspace the user trusted;
- a Stop hook's block goes back to the model as "Stop hook feedback", and the hook's next run
  says `stop_hook_active: true`, which is how the guard avoids a loop;
- a hook that fails or runs past its timeout shows in what these tests read, so their verdict
  "no hook error or timeout" can be believed;
- an entry it cannot load under PreToolUse or PermissionRequest, or a "permissions.ask" that is no
  list, makes it apply nothing of the settings file, the protocol's hooks included, while a broken
  entry under another event is dropped alone: `install.py --check` fails on exactly the first kind.
"""
import json
import os
import re
import shlex
import sys

import pytest

from conftest import make_repo
from cli_session import injections
from e2e_fixtures import api, assert_clean, claude_binary, cli, installed  # noqa: F401
from mock_api import say, use

pytestmark = pytest.mark.e2e


def test_a_write_under_dot_claude_is_refused_in_accept_edits_and_one_at_the_root_is_not(cli, installed):
    run = cli.run(installed.path, ["take notes"], [
        use("Write", file_path=installed.file(".claude/notes.md"), content="x\n"),
        use("Write", file_path=installed.file("notes.md"), content="x\n"),
        say("Done."), say("Understood.")], mode="acceptEdits")
    assert_clean(run)
    refused = [(denial.get("tool_name"), denial.get("decision_reason_type")) for denial in run.denials()]
    assert refused == [("Write", "safetyCheck")]
    assert not os.path.exists(installed.file(".claude/notes.md"))
    assert os.path.exists(installed.file("notes.md"))


def test_a_write_outside_the_project_is_refused_in_accept_edits_unless_its_folder_is_added(
        cli, installed):
    outside = os.path.join(os.path.dirname(installed.path), "elsewhere")
    added = os.path.join(os.path.dirname(installed.path), "added")
    os.makedirs(outside)
    os.makedirs(added)
    settings = {"permissions": {"additionalDirectories": [added]}}
    run = cli.run(installed.path, ["take notes"], [
        use("Write", file_path=os.path.join(outside, "notes.md"), content="x\n"),
        use("Write", file_path=os.path.join(added, "notes.md"), content="x\n"),
        say("Done."), say("Understood.")], mode="acceptEdits", settings=settings)
    assert_clean(run)
    assert [denial.get("tool_name") for denial in run.denials()] == ["Write"]
    assert not os.path.exists(os.path.join(outside, "notes.md"))
    assert os.path.exists(os.path.join(added, "notes.md"))


def allow_the_handoff_skill(project):
    path = project.file(".claude/settings.json")
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    settings.setdefault("permissions", {})["allow"] = ["Skill(handoff)"]
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=2)


def test_the_project_permissions_count_only_in_a_trusted_workspace(cli, installed):
    allow_the_handoff_skill(installed)
    script = [use("Skill", skill="handoff"), say("Done.")]
    trusted = cli.run(installed.path, ["save"], script)
    assert_clean(trusted)
    assert trusted.denials() == []
    untrusted = cli.run(installed.path, ["save"], script, trusted=False)
    assert "this workspace has not been trusted" in untrusted.stderr
    assert [denial.get("tool_name") for denial in untrusted.denials()] == ["Skill"]


def test_a_failing_hook_and_a_slow_one_are_problems(cli, installed):
    settings = {"hooks": {
        "SessionStart": [{"hooks": [{"type": "command", "command": "sleep 5", "timeout": 1}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "exit 1"}]}]}}
    problems = cli.run(installed.path, ["hello"], [say("Hello.")], settings=settings).problems()
    assert any("timed out" in problem for problem in problems), problems
    assert any(problem.startswith("hook Stop: outcome error") for problem in problems), problems


BLOCK_ONCE = """
import json, sys
given = json.load(sys.stdin)
with open(sys.argv[1], "a") as record:
    record.write(json.dumps(given.get("stop_hook_active")) + "\\n")
if not given.get("stop_hook_active"):
    sys.stderr.write("save the work first")
    sys.exit(2)
"""


def test_a_stop_block_reaches_the_model_and_the_next_stop_says_stop_hook_active(cli, tmp_path):
    repo = make_repo(tmp_path / "plain")
    record = tmp_path / "stop-inputs"
    command = "%s -c %s %s" % (shlex.quote(sys.executable), shlex.quote(BLOCK_ONCE), shlex.quote(str(record)))
    run = cli.run(str(repo), ["hello"], [say("Done."), say("Saved.")],
                  settings={"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}})
    assert_clean(run)
    assert run.stop_verdicts() == ["block", "pass"]
    assert record.read_text().split() == ["false", "true"]
    feedback = run.stop_feedback()
    assert feedback[0] == [] and len(feedback[1]) == 1
    assert feedback[1][0].startswith("Stop hook feedback:") and "save the work first" in feedback[1][0]



# An entry the CLI cannot load, by where it sits; whether the CLI still applies the file is what
# the test reads from the run, and the installer's check must agree with it.
BROKEN_ENTRIES = {
    "a PreToolUse handler without its command": ("hooks", "PreToolUse", [{"hooks": [{"type": "command"}]}]),
    "a PermissionRequest group without hooks": ("hooks", "PermissionRequest", [{"matcher": "Bash"}]),
    "a PreToolUse timeout of zero": ("hooks", "PreToolUse", [{"hooks": [
        {"type": "command", "command": "true", "timeout": 0}]}]),
    "permissions.ask as text": ("permissions", "ask", "Bash(rm:*)"),
    "a PostToolUse handler without its command": ("hooks", "PostToolUse", [{"hooks": [{"type": "command"}]}]),
    "a Notification timeout of zero": ("hooks", "Notification", [{"hooks": [
        {"type": "command", "command": "true", "timeout": 0}]}]),
}
SKIPS_THE_FILE = {"a PreToolUse handler without its command", "a PermissionRequest group without hooks",
                  "a PreToolUse timeout of zero", "permissions.ask as text"}


@pytest.mark.parametrize("case", sorted(BROKEN_ENTRIES))
def test_the_check_fails_exactly_when_an_entry_makes_the_cli_skip_the_settings_file(
        cli, installed, case):
    section, key, value = BROKEN_ENTRIES[case]
    path = installed.file(".claude/settings.json")
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    settings.setdefault(section, {})[key] = value
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=2)
    run = cli.run(installed.path, ["hello"], [say("Hello.")])
    loaded = any(injections(body, "startup") for body in run.main_requests)
    assert loaded == (case not in SKIPS_THE_FILE), run.debug[-2000:]
    check = installed.install_py("--check")
    assert (check.returncode != 0) == (not loaded), check.stdout


# Entries the CLI skips alone, with a line in its debug log, keeping the rest of the file: the old
# object form of an event, under a name it does not know, and a handler given where its group
# belongs. install.py installs beside them, keeps them byte for byte, and --check names them.
SKIPPED_ALONE = {
    "the old object form": ("sessionStart", {"command": "echo old"}),
    "a handler without its group": ("SessionStart", [{"type": "command", "command": "echo bare"}]),
    "an event that is not a list": ("SessionStart", {"hooks": [{"type": "command", "command": "true"}]}),
}


@pytest.mark.parametrize("case", sorted(SKIPPED_ALONE))
def test_an_entry_the_cli_skips_alone_leaves_the_rest_of_the_file_in_effect(cli, installed, case):
    event, value = SKIPPED_ALONE[case]
    path = installed.file(".claude/settings.json")
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    if event in settings["hooks"]:
        settings["hooks"]["Notification"] = value  # the protocol's own entry stays where it is
        event = "Notification"
    else:
        settings["hooks"][event] = value
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle, indent=2)
    run = cli.run(installed.path, ["hello"], [say("Hello.")])
    assert any(injections(body, "startup") for body in run.main_requests), run.debug[-2000:]
    skipped = [line for line in run.debug.splitlines() if "Invalid setting skipped" in line]
    assert len(skipped) == 1 and ("settings.json: hooks." + event) in skipped[0], run.debug[-3000:]
    named = re.split(r"; |\. ", skipped[0].split("settings.json: ", 1)[1])[0]
    check = installed.install_py("--check")
    assert check.returncode == 0 and ".claude/settings.json: " + named in check.stdout, (
        named, check.stdout)
