"""The instruments of the Codex and Gemini end-to-end tests, checked without the CLIs: each mock
answers the way its API streams, keeps its script for the requests that count, refuses and records
any other host, and a run's list of problems is empty only when nothing went wrong."""
import http.client
import json

import pytest

from agent_session import AgentRun, CodexCli, GeminiCli
from mock_api import HELPER_REPLY, say, use
from mock_gemini import DECISIONS, GeminiApi
from mock_responses import ResponsesApi, texts_of


@pytest.fixture
def responses():
    server = ResponsesApi()
    yield server
    server.close()


@pytest.fixture
def gemini():
    server = GeminiApi()
    yield server
    server.close()


def post(mock, path, body, method="POST"):
    connection = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
    connection.request(method, path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    data = response.read().decode("utf-8")
    connection.close()
    return response.status, response.getheader("Content-Type"), data


def events_of(data):
    """The server-sent events as a client reads them: (event name or None, data as JSON)."""
    out = []
    for chunk in data.replace("\r\n", "\n").strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((fields.get("event"), json.loads(fields["data"])))
    return out


MAIN = {"model": "gpt-e2e", "stream": True, "tools": [{"type": "function", "name": "exec_command"}], "input": []}


def test_responses_main_requests_get_the_script_in_order_as_codex_streams_it(responses):
    responses.play([use("exec_command", cmd="echo é"), say("done " * 30)])
    status, kind, data = post(responses, "/v1/responses", MAIN)
    assert status == 200 and kind.startswith("text/event-stream")
    events = events_of(data)
    assert all(name == payload["type"] for name, payload in events)
    assert [name for name, _ in events] == ["response.created", "response.output_item.added",
                                            "response.output_item.done", "response.completed"]
    call = events[2][1]["item"]
    assert (call["type"], call["name"], json.loads(call["arguments"])) == (
        "function_call", "exec_command", {"cmd": "echo é"})
    names = [name for name, _ in events_of(post(responses, "/v1/responses", MAIN)[2])]
    assert names == ["response.created", "response.output_item.added", "response.output_text.delta",
                     "response.output_item.done", "response.completed"]
    text = events_of(post(responses, "/v1/responses", MAIN)[2])[3][1]["item"]["content"][0]["text"]
    assert text == "Nothing left to do."


def test_responses_requests_without_tools_leave_the_script_alone(responses):
    responses.play([say("for the model")])
    helper = events_of(post(responses, "/v1/responses", dict(MAIN, tools=[]))[2])
    assert helper[-2][1]["item"]["content"][0]["text"] == HELPER_REPLY
    main = events_of(post(responses, "/v1/responses", MAIN)[2])
    assert main[-2][1]["item"]["content"][0]["text"] == "for the model"
    assert post(responses, "/v1/models", None, "GET")[0] == 200
    assert [request["kind"] for request in responses.requests] == ["helper", "main", "other"]


def test_responses_texts_are_read_by_role():
    body = {"instructions": "be brief", "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "memory"}]},
        {"type": "message", "role": "user", "content": "hello"},
        {"type": "function_call_output", "call_id": "c", "output": "ran"}]}
    assert texts_of(body) == [("system", "be brief"), ("developer", "memory"), ("user", "hello"), ("tool", "ran")]


def test_gemini_turns_get_the_script_and_its_own_questions_one_json_answer(gemini):
    gemini.play([use("write_file", file_path="/x", content="é"), say("done")])
    body = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}], "tools": []}
    status, kind, data = post(gemini, "/v1beta/models/m:streamGenerateContent?alt=sse", body)
    assert status == 200 and kind.startswith("text/event-stream")
    [(_, chunk)] = events_of(data)
    assert chunk["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"name": "write_file", "args": {"file_path": "/x", "content": "é"}}}]
    status, _, data = post(gemini, "/v1beta/models/m:generateContent", body)
    assert json.loads(json.loads(data)["candidates"][0]["content"]["parts"][0]["text"]) == DECISIONS
    [(_, chunk)] = events_of(post(gemini, "/v1beta/models/m:streamGenerateContent?alt=sse", body)[2])
    assert chunk["candidates"][0]["content"]["parts"] == [{"text": "done"}]
    assert post(gemini, "/v1beta/other", body)[0] == 404
    assert [request["kind"] for request in gemini.requests] == ["main", "helper", "main", "other"]


def test_other_hosts_are_refused_and_recorded(responses, gemini):
    for mock in (responses, gemini):
        connection = http.client.HTTPConnection("127.0.0.1", mock.port, timeout=10)
        connection.request("CONNECT", "api.example.com:443")
        assert connection.getresponse().status == 403
        connection.close()
        assert [attempt["target"] for attempt in mock.refused] == ["api.example.com:443"]
        assert mock.requests == []


def run_of(code=0, stdout="", stderr="", refused=()):
    return AgentRun(["cli"], "/", code, stdout, stderr, [], list(refused), texts_of)


def test_a_clean_run_has_no_problems():
    assert run_of(stderr="hook: Stop\nhook: Stop Blocked\nhook: Stop Completed\n").problems(
        CodexCli.HOOK_FAILURE) == []
    assert run_of(stderr="[WARNING] Agent execution blocked: save\n").problems(GeminiCli.HOOK_FAILURE) == []


@pytest.mark.parametrize("run, marks", [
    (run_of(code=1), None),
    (run_of(stderr="hook: SessionStart Failed\n"), CodexCli.HOOK_FAILURE),
    (run_of(stderr="Hook(s) [x] failed for event AfterAgent. Press F12\n"), GeminiCli.HOOK_FAILURE),
    (run_of(stderr="Hook execution error: Hook timed out after 1000ms\n"), GeminiCli.HOOK_FAILURE),
    (run_of(refused=[{"target": "api.example.com:443"}]), None),
], ids=["exit", "codex-hook-failed", "gemini-hook-failed", "gemini-timeout", "other-host"])
def test_each_kind_of_failure_is_a_problem(run, marks):
    assert len(run.problems(marks)) == 1
