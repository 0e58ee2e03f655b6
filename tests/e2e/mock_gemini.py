"""A stand-in for the Gemini API that the real Gemini CLI talks to in the end-to-end tests.

It is the Messages API mock (mock_api.py) with another protocol: the same server on 127.0.0.1,
the same script of replies (`say`, `use`), the same record of requests and the same refusal of
every other host when it serves as the CLI's proxy. It promises:
- `POST .../models/<model>:streamGenerateContent?alt=sse`, the agent's own turns, answers from
  the script, streamed as server-sent events of one candidate: a text part, a function call
  part, or both;
- `POST .../models/<model>:generateContent`, which the CLI sends for its own decisions (which
  model to route to, whether the model speaks next) with a JSON schema, gets one JSON answer that
  satisfies every such schema the pinned CLI sends: the simplest route, and the user speaks next;
  these never consume the script;
- `:countTokens` gets a small count; anything else is recorded and refused with 404.
"""
import json

from mock_api import WHEN_SCRIPT_IS_EMPTY, MockApi, say

# One answer for the CLI's own JSON questions: its router's two classifiers and its check of
# who speaks next, each reading only its own fields.
DECISIONS = {"reasoning": "A scripted test turn.", "model_choice": "flash",
             "complexity_reasoning": "A scripted test turn.", "complexity_score": 1,
             "next_speaker": "user"}
USAGE = {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}


class GeminiApi(MockApi):
    def answer(self, handler, path, body):
        body = body if isinstance(body, dict) else {}
        method = path.rpartition(":")[2]
        if method == "streamGenerateContent" and handler.command == "POST":
            parts = reply_parts(self.next_reply(body))
            self.record({"path": path, "kind": "main", "body": body, "reply": parts})
            chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                     "index": 0}], "usageMetadata": USAGE, "modelVersion": "e2e"}
            handler.reply(200, ("data: %s\r\n\r\n" % json.dumps(chunk)).encode("utf-8"), "text/event-stream")
        elif method == "generateContent" and handler.command == "POST":
            parts = [{"text": json.dumps(DECISIONS)}]
            self.record({"path": path, "kind": "helper", "body": body, "reply": parts})
            handler.reply(200, {"candidates": [{"content": {"role": "model", "parts": parts},
                                                "finishReason": "STOP", "index": 0}],
                                "usageMetadata": USAGE})
        elif method == "countTokens":
            self.record({"path": path, "kind": "count_tokens", "body": body})
            handler.reply(200, {"totalTokens": 100})
        else:
            self.record({"path": path, "kind": "other", "body": body})
            handler.reply(404, {"error": {"code": 404, "message": "not served here", "status": "NOT_FOUND"}})


def reply_parts(reply):
    parts = []
    if reply.get("text"):
        parts.append({"text": reply["text"]})
    if reply.get("tool"):
        parts.append({"functionCall": {"name": reply["tool"], "args": reply.get("input") or {}}})
    return parts or reply_parts(say(WHEN_SCRIPT_IS_EMPTY))


def texts_of(body):
    """(role, text) of every text a request carries: the system instruction, each turn's text
    parts and the tools' responses."""
    out = []
    system = body.get("systemInstruction") or {}
    for part in system.get("parts") or []:
        out.append(("system", part.get("text") or ""))
    for content in body.get("contents") or []:
        for part in content.get("parts") or []:
            if "text" in part:
                out.append((content.get("role"), part.get("text") or ""))
            elif "functionResponse" in part:
                response = part["functionResponse"].get("response")
                out.append(("tool", json.dumps(response, ensure_ascii=False)))
    return out
