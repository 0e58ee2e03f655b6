"""The end-to-end tests' own instruments, checked without the CLI: the mock answers the way the
Messages API streams, keeps its script for the requests that count, refuses and records any other
host, a run's list of problems is empty only when nothing went wrong, and a run on CI reaches the CLI
as the same run on a laptop does."""
import http.client
import os
import json

import pytest

from cli_session import Run, block_message, sealed_base_environment
from mock_api import HELPER_REPLY, MockApi, say, use


@pytest.fixture
def mock():
    server = MockApi()
    yield server
    server.close()


def post(mock, body, path="/v1/messages"):
    connection = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read().decode("utf-8")
    connection.close()
    return response.status, response.getheader("Content-Type"), data


def streamed_message(data):
    """The message a client rebuilds from the server-sent events, as the CLI does."""
    message, inputs = None, {}
    for chunk in data.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        event = json.loads(lines["data"])
        assert event["type"] == lines["event"]
        if event["type"] == "message_start":
            message = event["message"]
        elif event["type"] == "content_block_start":
            message["content"].append(event["content_block"])
        elif event["type"] == "content_block_delta":
            block, delta = message["content"][event["index"]], event["delta"]
            if delta["type"] == "text_delta":
                block["text"] += delta["text"]
            else:
                inputs[event["index"]] = inputs.get(event["index"], "") + delta["partial_json"]
        elif event["type"] == "message_delta":
            message["stop_reason"] = event["delta"]["stop_reason"]
    for index, raw in inputs.items():
        message["content"][index]["input"] = json.loads(raw)
    return message


MAIN = {"model": "claude-sonnet", "stream": True, "tools": [{"name": "Write"}], "messages": []}


def test_main_requests_get_the_script_in_order_streamed(mock):
    mock.play([use("Write", file_path="/x", content="é" * 100), say("done " * 30)])
    _, kind, data = post(mock, MAIN)
    assert kind.startswith("text/event-stream")
    first = streamed_message(data)
    assert first["stop_reason"] == "tool_use"
    assert first["content"][0]["name"] == "Write"
    assert first["content"][0]["input"] == {"file_path": "/x", "content": "é" * 100}
    second = streamed_message(post(mock, MAIN)[2])
    assert (second["stop_reason"], second["content"][0]["text"]) == ("end_turn", "done " * 30)


def test_helper_requests_leave_the_script_alone(mock):
    mock.play([say("for the model")])
    for helper in ({"model": "claude-haiku", "tools": [{"name": "Write"}]}, {"model": "claude-sonnet"}):
        _, kind, data = post(mock, helper)
        assert kind == "application/json"
        assert json.loads(data)["content"][0]["text"] == HELPER_REPLY
    assert streamed_message(post(mock, MAIN)[2])["content"][0]["text"] == "for the model"
    assert [request["kind"] for request in mock.requests] == ["helper", "helper", "main"]


def test_a_scripted_reply_can_read_the_request(mock):
    mock.play([lambda body: say("saw %d messages" % len(body["messages"]))])
    message = streamed_message(post(mock, dict(MAIN, messages=[{"role": "user", "content": "a"}]))[2])
    assert message["content"][0]["text"] == "saw 1 messages"


def test_other_hosts_are_refused_and_recorded(mock):
    connection = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
    connection.request("CONNECT", "api.example.com:443")
    assert connection.getresponse().status == 403
    connection.close()
    connection = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
    connection.request("GET", "http://telemetry.example.com/v1/events")
    assert connection.getresponse().status == 403
    connection.close()
    assert [attempt["target"] for attempt in mock.refused] == [
        "api.example.com:443", "http://telemetry.example.com/v1/events"]
    assert mock.requests == []


def stream_line(**event):
    return json.dumps(dict(event, type="system"))


def run_of(events=(), code=0, stderr="", debug="", refused=()):
    return Run([], code, "\n".join(stream_line(**event) for event in events), stderr, debug, [], list(refused))


def test_a_clean_run_has_no_problems_and_a_block_is_not_one():
    block = {"subtype": "hook_response", "hook_event": "Stop", "hook_name": "Stop",
             "exit_code": 2, "outcome": "error", "stderr": "save first"}
    passed = dict(block, exit_code=0, outcome="success", stderr="")
    run = run_of([block, passed], debug="Hooks: Stop [python3 x.py] finished with status 2 (20ms)")
    assert run.problems() == []
    assert run.stop_verdicts() == ["block", "pass"]
    json_block = dict(passed, stdout=json.dumps({"decision": "block", "reason": "save first"}))
    assert run_of([json_block]).stop_verdicts() == ["block"]
    assert [block_message(response) for response in (block, json_block, passed)] == [
        "save first", "save first", None]


@pytest.mark.parametrize("run", [
    run_of(code=1),
    run_of(stderr="Ignoring 3 permissions.allow entries"),
    run_of([{"subtype": "hook_response", "hook_event": "SessionStart", "hook_name": "SessionStart:startup",
             "exit_code": 1, "outcome": "error"}]),
    run_of([{"subtype": "hook_response", "hook_event": "Stop", "hook_name": "Stop",
             "exit_code": 1, "outcome": "cancelled"}]),
    run_of(debug="Hooks: SessionStart:startup [sleep 3] timed out after 1000ms (1009ms)"),
    run_of(refused=[{"target": "api.example.com:443"}]),
], ids=["exit", "stderr", "start-hook-error", "stop-hook-cancelled", "timeout", "other-host"])
def test_each_kind_of_failure_is_a_problem(run):
    assert len(run.problems()) == 1


def test_the_variables_that_mark_a_ci_run_never_reach_the_cli(mock, monkeypatch, tmp_path):
    # `is-in-ci`, which Gemini CLI's terminal UI consults, takes CI, CONTINUOUS_INTEGRATION or any
    # CI_* variable for a CI run and then never shows its prompt.
    for variable in ("CI", "CONTINUOUS_INTEGRATION", "CI_JOB_TOKEN"):
        monkeypatch.setenv(variable, "true")
    monkeypatch.setenv("CIRCLE_LIKE_BUT_NOT_CI", "kept")
    env = sealed_base_environment(mock, str(tmp_path), str(tmp_path))
    assert not {"CI", "CONTINUOUS_INTEGRATION", "CI_JOB_TOKEN"} & set(env)
    assert env["CIRCLE_LIKE_BUT_NOT_CI"] == "kept"
    assert env["PATH"] == os.environ["PATH"]
