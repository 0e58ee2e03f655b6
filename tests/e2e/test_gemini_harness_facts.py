"""What the protocol relies on Gemini CLI to do, pinned against the real CLI (0.61.0), so that a new
release that changes it fails here rather than in a user's session:
- only a SessionStart hook's JSON additionalContext reaches the model (wrapped in
  `<hook_context>`, its `<` and `>` escaped, far past 10,000 characters whole); plain output goes
  to the CLI's stderr and never to the model: the hooks answer Gemini in JSON;
- hooks get GEMINI_PROJECT_DIR and CLAUDE_PROJECT_DIR (the project folder) and GEMINI_SESSION_ID
  (the input's session_id), and run in the project folder;
- an AfterAgent hook's JSON decision "block" sends its reason to the model as the next user turn
  with no warning, while a block by exit 2 is also reported as a failed hook: the hooks block
  Gemini in JSON;
- `stop_hook_active` is false again when the continuation ran a tool, but by then the transcript
  holds the block's reason as the last user text: that is how the guard knows a repeat;
- started in a subfolder, the CLI runs none of the project's hooks;
- a hook that fails or runs past its timeout shows in what these tests read.
"""
import json
import os

import pytest

from agent_fixtures import (  # noqa: F401  (fixtures are used by name)
    assert_clean, gemini, gemini_api, gemini_binary, spied, spy as agent_spy, wire as wire_hooks,
)
from conftest import make_repo
from mock_api import say, use
from mock_gemini import texts_of as gemini_texts

pytestmark = pytest.mark.e2e


def spy(log, *answer):
    return agent_spy(log, 15000, *answer)


def wire(repo, **events):
    wire_hooks(os.path.join(str(repo), ".gemini", "settings.json"), **events)


def user_texts_of_transcript(text):
    """The user-typed text parts of a Gemini transcript, in order (tool responses left out)."""
    found = []
    for line in (text or "").splitlines():
        record = json.loads(line)
        if record.get("type") == "user":
            found += [part["text"] for part in record.get("content") or [] if "text" in part]
    return found


def test_only_json_context_reaches_the_model_and_plain_output_goes_to_stderr(gemini, tmp_path):
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "start.log"
    long_context = "<long>" + "y" * 30000 + "</long>"
    wire(repo, SessionStart=[spy(log, "plain", "plain-said"), spy(log, "context", "SessionStart", "<json> said"),
                             spy(log, "context", "SessionStart", long_context)])
    run = gemini.run(repo, "hello", [say("Hello.")])
    assert_clean(run, gemini)
    user = "\n".join(run.texts(0, "user"))
    assert "&lt;json&gt; said" in user and "<hook_context>" in user
    assert long_context.replace("<", "&lt;").replace(">", "&gt;") in user
    assert not run.requests_carrying("plain-said")
    assert "plain-said" in run.stderr
    for entry in spied(log):
        given = entry["input"]
        assert given["hook_event_name"] == "SessionStart" and given["source"] == "startup"
        assert entry["env"]["GEMINI_PROJECT_DIR"] == entry["env"]["CLAUDE_PROJECT_DIR"] == str(repo)
        assert entry["env"]["GEMINI_SESSION_ID"] == given["session_id"]
        assert entry["cwd"] == str(repo)


def test_a_json_block_reaches_the_model_and_after_a_tool_only_the_transcript_tells_a_repeat(
        gemini, tmp_path):
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "stop.log"
    wire(repo, AfterAgent=[spy(log, "block-json", "save the work first")])
    run = gemini.run(repo, "hello", [
        say("Done."), use("write_file", file_path=str(repo / "saved.txt"), content="saved\n"), say("Saved.")])
    assert_clean(run, gemini)
    assert (repo / "saved.txt").exists()
    assert run.stderr.count("Agent execution blocked: save the work first") == 1
    assert run.requests_carrying("save the work first", "user") == [1, 2]
    stops = spied(log)
    assert [stop["input"]["hook_event_name"] for stop in stops] == ["AfterAgent", "AfterAgent"]
    assert [stop["input"]["stop_hook_active"] for stop in stops] == [False, False]
    assert user_texts_of_transcript(stops[1]["transcript"])[-1] == "save the work first"
    assert user_texts_of_transcript(stops[0]["transcript"])[-1].endswith("hello")


def test_a_block_by_exit_2_also_blocks_but_is_reported_as_a_failed_hook(gemini, tmp_path):
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "stop.log"
    wire(repo, AfterAgent=[spy(log, "block-exit", "save the work first")])
    run = gemini.run(repo, "hello", [say("Done."), say("Saved.")])
    assert run.requests_carrying("save the work first", "user") == [1]
    assert any("failed for event AfterAgent" in problem for problem in run.problems(gemini.HOOK_FAILURE))


def test_started_in_a_subfolder_the_cli_runs_none_of_the_projects_hooks(gemini, tmp_path):
    repo = make_repo(tmp_path / "plain")
    os.makedirs(str(repo / "sub"))
    log = tmp_path / "start.log"
    wire(repo, SessionStart=[spy(log, "context", "SessionStart", "never-said")],
         AfterAgent=[spy(log, "block-json", "never")])
    run = gemini.run(repo, "hello", [say("Hello.")], cwd=repo / "sub")
    assert_clean(run, gemini)
    assert not log.exists()
    assert not run.requests_carrying("never-said")


def test_a_failing_hook_and_a_slow_one_are_problems(gemini, tmp_path):
    repo = make_repo(tmp_path / "plain")
    wire(repo, SessionStart=[{"type": "command", "command": "sleep 5", "timeout": 1000}],
         AfterAgent=[{"type": "command", "command": "exit 1"}])
    problems = gemini.run(repo, "hello", [say("Hello.")]).problems(gemini.HOOK_FAILURE)
    assert any("timed out" in problem for problem in problems), problems
    assert any("failed for event AfterAgent" in problem for problem in problems), problems



# What keeps Gemini CLI from running a project's hooks for its user, which `install.py --check`
# reads: hooksConfig.enabled false in the project's or the user's settings, and a folder the user
# has not trusted (~/.gemini/trustedFolders.json; GEMINI_CLI_TRUST_WORKSPACE trusts any).
SWITCHES = {
    "on": (None, None, "trusted by the variable"),
    "off in the project": ({"enabled": False}, None, "trusted by the variable"),
    "off for the user": (None, {"enabled": False}, "trusted by the variable"),
    "on in the project over off for the user": ({"enabled": True}, {"enabled": False},
                                                "trusted by the variable"),
    "a folder marked untrusted": (None, None, "DO_NOT_TRUST"),
    "a folder trusted in the file": (None, None, "TRUST_FOLDER"),
    "a folder trusted by its parent": (None, None, "TRUST_PARENT"),
    "a folder never asked about": (None, None, "no rule"),
}


@pytest.mark.parametrize("case", sorted(SWITCHES))
def test_hooks_run_only_switched_on_and_in_a_trusted_folder(gemini, tmp_path, case):
    project_switch, user_switch, trust = SWITCHES[case]
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "start.log"
    wire(repo, SessionStart=[spy(log, "context", "SessionStart", "said-at-start")])
    path = os.path.join(str(repo), ".gemini", "settings.json")
    with open(path, encoding="utf-8") as handle:
        settings = json.load(handle)
    if project_switch is not None:
        settings["hooksConfig"] = project_switch
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(settings, handle)
    env = gemini.environment()
    user = os.path.join(gemini.home, ".gemini", "settings.json")
    with open(user, encoding="utf-8") as handle:
        user_settings = json.load(handle)
    if user_switch is not None:
        user_settings["hooksConfig"] = user_switch
    with open(user, "w", encoding="utf-8") as handle:
        json.dump(user_settings, handle)
    if trust != "trusted by the variable":
        del env["GEMINI_CLI_TRUST_WORKSPACE"]
        rules = {} if trust == "no rule" else {
            os.path.join(str(repo), "sub") if trust == "TRUST_PARENT" else str(repo): trust}
        with open(os.path.join(gemini.home, ".gemini", "trustedFolders.json"), "w") as handle:
            json.dump(rules, handle)
    run = gemini.execute([gemini.binary, "-p", "hello", "--approval-mode", "yolo"], str(repo),
                         env, [say("Hello.")], gemini_texts)
    ran = log.exists()
    expected = case in ("on", "on in the project over off for the user",
                        "a folder trusted in the file", "a folder trusted by its parent")
    assert ran == expected, (run.code, run.stderr[-1500:])
