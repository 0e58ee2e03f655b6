"""A stand-in for the OpenAI Responses API that the real Codex CLI talks to in the end-to-end tests.

It is the Messages API mock (mock_api.py) with another protocol: the same server on 127.0.0.1,
the same script of replies (`say`, `use`), the same record of requests and the same refusal of
every other host when it serves as the CLI's proxy. It promises:
- `POST /v1/responses` answers a "main" request (one that offers tools) from the script, streamed
  as the server-sent events Codex reads: response.created, each output item as added, text
  deltas and done, then response.completed; a request without tools gets a fixed text and never
  consumes the script;
- a `use(tool, ...)` reply is a function call with the input as its JSON arguments (Codex 0.169.0
  offers `exec_command`, whose `cmd` runs in a shell in the project);
- anything else is recorded and answered with an empty list.
"""
import json
import uuid

from mock_api import HELPER_REPLY, WHEN_SCRIPT_IS_EMPTY, MockApi, say


class ResponsesApi(MockApi):
    def answer(self, handler, path, body):
        if path.endswith("/responses") and handler.command == "POST":
            body = body if isinstance(body, dict) else {}
            main = bool(body.get("tools"))
            reply = self.next_reply(body) if main else say(HELPER_REPLY)
            items = output_items(reply)
            self.record({"path": path, "kind": "main" if main else "helper", "body": body, "reply": items})
            handler.reply(200, stream_of(items), "text/event-stream")
        else:
            self.record({"path": path, "kind": "other", "body": body})
            handler.reply(200, {"object": "list", "data": []})


def output_items(reply):
    """The response's output items: a message for a text, a function call for a tool."""
    items = []
    if reply.get("text"):
        items.append({"type": "message", "id": "msg_" + uuid.uuid4().hex[:16], "role": "assistant",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply["text"], "annotations": []}]})
    if reply.get("tool"):
        items.append({"type": "function_call", "id": "fc_" + uuid.uuid4().hex[:16],
                      "call_id": "call_" + uuid.uuid4().hex[:16], "name": reply["tool"],
                      "arguments": json.dumps(reply.get("input") or {}), "status": "completed"})
    return items or output_items(say(WHEN_SCRIPT_IS_EMPTY))


def stream_of(items):
    """The response as the API streams it; Codex wants each item announced before its deltas."""
    response_id = "resp_" + uuid.uuid4().hex[:16]
    events = [{"type": "response.created", "response": {"id": response_id, "status": "in_progress"}}]
    for index, item in enumerate(items):
        opening = dict(item, content=[]) if item["type"] == "message" else item
        events.append({"type": "response.output_item.added", "output_index": index, "item": opening})
        for part in item.get("content") or []:
            events.append({"type": "response.output_text.delta", "output_index": index,
                           "item_id": item["id"], "content_index": 0, "delta": part["text"]})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed", "response": {
        "id": response_id, "status": "completed", "output": items,
        "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
                  "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": 110}}})
    return b"".join(("event: %s\ndata: %s\n\n" % (event["type"], json.dumps(event))).encode("utf-8")
                    for event in events)


def texts_of(body):
    """(role, text) of every text a request carries: instructions, messages, tool output."""
    out = []
    if isinstance(body.get("instructions"), str):
        out.append(("system", body["instructions"]))
    for item in body.get("input") or []:
        if item.get("type") == "message":
            content = item.get("content")
            for part in ([{"text": content}] if isinstance(content, str) else content or []):
                out.append((item.get("role"), part.get("text") or ""))
        elif item.get("type") == "function_call_output":
            output = item.get("output")
            out.append(("tool", output if isinstance(output, str) else json.dumps(output)))
    return out
