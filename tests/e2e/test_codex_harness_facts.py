"""What the protocol relies on Codex CLI to do, pinned against the real CLI (0.169.0), so that a new
release that changes it fails here rather than in a user's session:
- a SessionStart hook's output reaches the model as a developer message whether it is plain text
  or JSON additionalContext, whole up to 10,000 bytes of UTF-8 and truncated past that: the hooks
  keep their injection within that measure under Codex;
- a Stop hook blocks by exit 2 or by a JSON decision alike, its reason arrives as the next user
  turn, and the next run says `stop_hook_active: true` even when the continuation ran a tool;
- hooks get no project variable and run where the CLI was started, a subfolder perhaps: the hooks
  find the project from the repository, and the wiring runs them from its top;
- a project's hooks nobody reviewed do not run at all, silently;
- a hook that fails or runs past its timeout shows in what these tests read.
"""
import json
import os

import pytest

from agent_fixtures import (  # noqa: F401  (fixtures are used by name)
    assert_clean, codex, codex_binary, responses_api, spied, spy as agent_spy, wire as wire_hooks,
)
from conftest import make_repo
from mock_api import say, use

pytestmark = pytest.mark.e2e

LIMIT = 10000  # UTF-8 bytes Codex passes on whole from one hook's output


def spy(log, *answer):
    return agent_spy(log, 15, *answer)


def wire(repo, **events):
    wire_hooks(os.path.join(str(repo), ".codex", "hooks.json"), **events)


def sized(tag, size, filler):
    """A text of exactly `size` UTF-8 bytes that starts with `tag` and ends with it reversed."""
    middle = size - 2 * len(tag.encode("utf-8"))
    text = tag + filler * (middle // len(filler.encode("utf-8"))) + "x" * (middle % len(filler.encode("utf-8")))
    text += tag[::-1]
    assert len(text.encode("utf-8")) == size
    return text


def test_start_output_reaches_the_model_plain_or_as_json_whole_up_to_10000_bytes(codex, tmp_path):
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "start.log"
    fits, over = sized("FITS<", LIMIT, "é"), sized("OVER<", LIMIT + 1, "é")
    wire(repo, SessionStart=[spy(log, "plain", "plain-said"), spy(log, "context", "SessionStart", "json-said"),
                             spy(log, "plain", fits), spy(log, "plain", over)])
    run = codex.run(repo, "hello", [say("Hello.")])
    assert_clean(run, codex)
    developer = run.texts(0, "developer")
    assert "plain-said" in developer and "json-said" in developer
    assert fits in developer
    assert not any(over in text for text in developer)
    assert any(text.startswith("Warning: truncated output") and "OVER<" in text for text in developer)
    given = spied(log)[0]
    assert given["input"]["hook_event_name"] == "SessionStart" and given["input"]["source"] == "startup"
    assert given["input"]["transcript_path"].endswith("-%s.jsonl" % given["input"]["session_id"])
    assert os.path.basename(given["input"]["transcript_path"]).startswith("rollout-")


@pytest.mark.parametrize("how", ["block-exit", "block-json"])
def test_a_stop_block_reaches_the_model_and_stop_hook_active_holds_through_a_tool(codex, tmp_path, how):
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "stop.log"
    wire(repo, Stop=[spy(log, how, "save the work first")])
    run = codex.run(repo, "hello", [
        say("Done."), use("exec_command", cmd="echo saved > saved.txt"), say("Saved.")])
    assert_clean(run, codex)
    assert (repo / "saved.txt").exists()
    assert run.stderr.count("hook: Stop Blocked") == 1
    assert len(run.main_requests) == 3
    asked = run.requests_carrying("save the work first", "user")
    assert asked == [1, 2]
    stops = [entry["input"] for entry in spied(log)]
    assert [stop["stop_hook_active"] for stop in stops] == [False, True]
    assert stops[0]["turn_id"] == stops[1]["turn_id"]
    assert stops[0]["hook_event_name"] == "Stop"


def test_hooks_run_where_the_cli_started_with_no_project_variable(codex, tmp_path):
    repo = make_repo(tmp_path / "plain")
    os.makedirs(str(repo / "sub" / "deeper"))
    log = tmp_path / "start.log"
    wire(repo, SessionStart=[spy(log, "quiet")], Stop=[spy(log, "quiet")])
    run = codex.run(repo, "hello", [say("Hello.")], cwd=repo / "sub" / "deeper")
    assert_clean(run, codex)
    started = str(repo / "sub" / "deeper")
    for entry in spied(log):
        assert entry["cwd"] == started and entry["input"]["cwd"] == started
        assert entry["env"]["CLAUDE_PROJECT_DIR"] is None and entry["env"]["GEMINI_PROJECT_DIR"] is None
    assert [entry["input"]["hook_event_name"] for entry in spied(log)] == ["SessionStart", "Stop"]


def test_hooks_nobody_reviewed_do_not_run_and_nothing_says_so(codex, tmp_path):
    repo = make_repo(tmp_path / "plain")
    log = tmp_path / "start.log"
    wire(repo, SessionStart=[spy(log, "plain", "never-said")], Stop=[spy(log, "block-exit", "never")])
    run = codex.run(repo, "hello", [say("Hello.")], hooks_trusted=False)
    assert_clean(run, codex)
    assert not log.exists()
    assert not [line for line in run.stderr.splitlines() if line.startswith("hook:")]
    assert len(run.main_requests) == 1


def test_a_failing_hook_and_a_slow_one_are_problems(codex, tmp_path):
    repo = make_repo(tmp_path / "plain")
    wire(repo, SessionStart=[{"type": "command", "command": "sleep 5", "timeout": 1}],
         Stop=[{"type": "command", "command": "exit 1"}])
    problems = codex.run(repo, "hello", [say("Hello.")]).problems(codex.HOOK_FAILURE)
    assert "cli: hook: SessionStart Failed" in problems and "cli: hook: Stop Failed" in problems
