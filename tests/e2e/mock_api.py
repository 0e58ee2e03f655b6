"""A stand-in for the Anthropic Messages API that the real Claude Code CLI talks to in the end-to-end
tests, so that they need no account, no network and no model. Its server, script and record serve
the other CLIs' mocks too (mock_responses.py for Codex, mock_gemini.py for Gemini), which answer
their own protocol in `answer`.

It promises:
- it listens on 127.0.0.1 only, on a free port, in a thread of the test process;
- `POST /v1/messages` answers the CLI's "main" requests (a tool list, a model that is not a haiku
  model) from a script the test sets, one reply per request, streamed as server-sent events when the
  request asks for a stream; "helper" requests (titles, quota probes: no tools, or a haiku model)
  get a fixed text and never consume the script;
- a script entry is a reply, or a function of the request body that returns one, so a scripted
  model can act on what the CLI sent it (the path a Stop hook names, for instance);
- every request is recorded with its parsed body, so a test can read what reached the model;
- as the CLI's HTTP(S) proxy it refuses every request for another host and records the attempt, so
  a test both prevents and detects traffic beyond 127.0.0.1.
"""
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

WHEN_SCRIPT_IS_EMPTY = "Nothing left to do."
HELPER_REPLY = "Helper reply."


def say(text):
    """A reply that ends the model's turn with a text."""
    return {"text": text}


def use(tool, **tool_input):
    """A reply that calls one tool; the CLI runs it and sends the result in its next request."""
    return {"tool": tool, "input": tool_input}


class MockApi(object):
    def __init__(self):
        self.lock = threading.Lock()
        self.script = []
        self.requests = []
        self.refused = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler_class())
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = "http://127.0.0.1:%d" % self.port
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1})
        self.thread.daemon = True
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def play(self, replies):
        """Replace the script: the replies the next main requests get, in order."""
        with self.lock:
            self.script = list(replies)

    def mark(self):
        """A position in the record: what arrives after it belongs to the next CLI run."""
        with self.lock:
            return len(self.requests), len(self.refused)

    def since(self, mark):
        with self.lock:
            return list(self.requests[mark[0]:]), list(self.refused[mark[1]:])

    def next_reply(self, body):
        with self.lock:
            entry = self.script.pop(0) if self.script else say(WHEN_SCRIPT_IS_EMPTY)
        return entry(body) if callable(entry) else entry

    def record(self, entry, refused=False):
        with self.lock:
            (self.refused if refused else self.requests).append(entry)

    def answer(self, handler, path, body):
        """Answer one request for this server's own address: the Messages API's routes."""
        if path == "/v1/messages" and handler.command == "POST":
            self.answer_messages(handler, body)
        elif path == "/v1/messages/count_tokens":
            self.record({"path": path, "kind": "count_tokens", "body": body})
            handler.reply(200, {"input_tokens": 100})
        else:
            self.record({"path": path, "kind": "other", "body": body})
            handler.reply(200, {"data": [], "has_more": False})

    def answer_messages(self, handler, body):
        body = body if isinstance(body, dict) else {}
        main = bool(body.get("tools")) and "haiku" not in str(body.get("model", "")).lower()
        reply = self.next_reply(body) if main else say(HELPER_REPLY)
        message = message_for(reply, body.get("model") or "claude-e2e")
        self.record({"path": "/v1/messages", "kind": "main" if main else "helper",
                     "body": body, "reply": message["content"]})
        if body.get("stream") is True:
            handler.reply(200, stream_of(message), "text/event-stream")
        else:
            handler.reply(200, message)

    def handler_class(self):
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass  # the record is the log

            def do_CONNECT(self):
                api.record({"method": "CONNECT", "target": self.path}, refused=True)
                self.reply(403, {"error": "only 127.0.0.1 is reachable in this test"})
                self.close_connection = True

            def handle_request(self):
                parts = urlsplit(self.path)
                if parts.scheme and not self.is_own(parts):
                    api.record({"method": self.command, "target": self.path}, refused=True)
                    self.reply(403, {"error": "only 127.0.0.1 is reachable in this test"})
                    return
                api.answer(self, parts.path, self.read_json())

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = handle_request

            def is_own(self, parts):
                return parts.hostname in ("127.0.0.1", "localhost") and parts.port == api.port

            def read_json(self):
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    raw = self.read_chunks()
                else:
                    raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    return json.loads(raw.decode("utf-8")) if raw else None
                except ValueError:
                    return None

            def read_chunks(self):
                data = b""
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return data
                    data += self.rfile.read(size)
                    self.rfile.readline()

            def reply(self, status, payload, content_type="application/json"):
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("request-id", "req_" + uuid.uuid4().hex[:16])
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

        return Handler


def message_for(reply, model):
    blocks = []
    if reply.get("text"):
        blocks.append({"type": "text", "text": reply["text"]})
    if reply.get("tool"):
        blocks.append({"type": "tool_use", "id": "toolu_" + uuid.uuid4().hex[:20],
                       "name": reply["tool"], "input": reply.get("input") or {}})
    return {"id": "msg_" + uuid.uuid4().hex[:20], "type": "message", "role": "assistant", "model": model,
            "content": blocks or [{"type": "text", "text": WHEN_SCRIPT_IS_EMPTY}],
            "stop_reason": "tool_use" if reply.get("tool") else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 10,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def stream_of(message):
    """The message as the API streams it: start, each block as start/deltas/stop, delta, stop."""
    def event(name, data):
        return ("event: %s\ndata: %s\n\n" % (name, json.dumps(dict(data, type=name)))).encode("utf-8")

    opening = dict(message, content=[], stop_reason=None)
    out = [event("message_start", {"message": opening})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in pieces(block["text"])]
        else:
            start = dict(block, input={})
            deltas = [{"type": "input_json_delta", "partial_json": piece}
                      for piece in pieces(json.dumps(block["input"]))]
        out.append(event("content_block_start", {"index": index, "content_block": start}))
        out += [event("content_block_delta", {"index": index, "delta": delta}) for delta in deltas]
        out.append(event("content_block_stop", {"index": index}))
    out.append(event("message_delta", {"delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                                       "usage": {"output_tokens": message["usage"]["output_tokens"]}}))
    out.append(event("message_stop", {}))
    return b"".join(out)


def pieces(text, size=64):
    """A text cut as the API cuts a stream: several deltas, never an empty list."""
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]
