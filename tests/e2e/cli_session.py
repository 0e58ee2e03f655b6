"""One run of the real Claude Code CLI (`claude -p`) against the mock API, and what can be read from
it afterwards: the stream of events it printed, its debug log, the requests the model received.

The run is sealed: HOME and CLAUDE_CONFIG_DIR are throw-away folders, the API key is a dummy, the
variables that steer an agent CLI, the protocol or git (ANTHROPIC_*, CLAUDE*, MCP_*, GIT_*, ...)
and those that mark a CI run (CI, CI_*) are not passed on, non-essential traffic is off, and the
mock is the CLI's only proxy. The repository is recorded as trusted in that configuration, as it is
for a user who accepted the CLI's trust dialog there once: without it the CLI ignores the project's
permissions.allow.

The texts matched here are the CLI's own, not the protocol's: the `SessionStart:<source> hook
success` marker before a SessionStart hook's output, the `Stop hook feedback` message after a Stop
block, the debug log's report of a hook that timed out.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

from conftest import GIT_IDENTITY

START_MARKER = re.compile(r"SessionStart:(\w+) hook success")
STOP_FEEDBACK = "Stop hook feedback"
CLI_SECONDS = 180
# What steers an agent CLI, the protocol or git: never passed on from the environment the tests
# run in, whichever CLI a test runs.
STEERING = ("ANTHROPIC_", "CLAUDE", "MCP_", "GIT_", "OPENAI_", "CODEX_", "GEMINI_", "GOOGLE_")
PROXIES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")
# What tells a CLI it runs under CI: Gemini CLI's terminal UI (through `is-in-ci`) then declines to
# start and answers as `gemini -p` would, so a run on CI would differ from the same run on a laptop.
CI_MARKERS = ("CI", "CONTINUOUS_INTEGRATION")
CI_PREFIX = "CI_"


def utf16_units(text):
    """Length as the CLI measures a hook's output: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def sealed_base_environment(api, home, scratch):
    """What every CLI run gets: a throw-away HOME and temporary folder, the mock as its only
    proxy, git without the user's configuration, and nothing that steers a CLI or the protocol."""
    env = {key: value for key, value in os.environ.items() if is_passed_on(key)}
    env.update({
        "HOME": home,
        "TMPDIR": scratch, "TMP": scratch, "TEMP": scratch,
        "HTTP_PROXY": api.url, "HTTPS_PROXY": api.url, "http_proxy": api.url, "https_proxy": api.url,
        "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "GIT_CONFIG_GLOBAL": os.devnull,
    })
    env.update(GIT_IDENTITY)
    return env


def is_passed_on(variable):
    """Whether a variable of the environment the tests run in reaches the CLI under test."""
    return not (variable.startswith(STEERING) or variable.lower() in PROXIES
                or variable in CI_MARKERS or variable.startswith(CI_PREFIX))


def sealed_environment(api, home, config, scratch):
    env = sealed_base_environment(api, home, scratch)
    env.update({
        "CLAUDE_CONFIG_DIR": config,
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-e2e-dummy",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
    })
    return env


def trust(config, repo):
    """Record the repository as trusted in this configuration, keeping what the CLI wrote there."""
    path = os.path.join(config, ".claude.json")
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        data = {}
    projects = data.setdefault("projects", {})
    for key in {repo, os.path.realpath(repo)}:
        projects.setdefault(key, {})["hasTrustDialogAccepted"] = True
    os.makedirs(config, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)


class Cli(object):
    """The CLI binary, the mock, a folder for HOME, configuration and logs, and a temporary folder
    of its own, removed by close(): the CLI keeps files there per project, and its sockets need
    a short path, shorter than a test's folder may be."""

    def __init__(self, binary, api, folder):
        self.binary, self.api, self.folder = binary, api, folder
        self.home = os.path.join(folder, "home")
        self.config = os.path.join(folder, "config")
        self.scratch = tempfile.mkdtemp(prefix="mcp-e2e-")
        self.count = 0
        os.makedirs(self.home, exist_ok=True)

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def run(self, repo, args, replies, mode=None, settings=None, trusted=True):
        """`claude -p ARGS` in `repo`, the model's replies scripted; a Run of what happened.
        `trusted=False` runs it with a configuration of its own that never trusted the folder."""
        repo = str(repo)
        config = self.config if trusted else self.config + "-untrusted"
        if trusted:
            trust(config, repo)
        self.count += 1
        debug_file = os.path.join(self.folder, "run-%d.debug.log" % self.count)
        argv = [self.binary, "-p"] + list(args) + [
            "--output-format", "stream-json", "--verbose", "--include-hook-events",
            "--debug-file", debug_file]
        if mode:
            argv += ["--permission-mode", mode]
        if settings:
            argv += ["--settings", json.dumps(settings)]
        self.api.play(replies)
        mark = self.api.mark()
        done = subprocess.run(argv, cwd=repo, env=sealed_environment(self.api, self.home, config, self.scratch),
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, encoding="utf-8", timeout=CLI_SECONDS)
        requests, refused = self.api.since(mark)
        try:
            with open(debug_file, encoding="utf-8", errors="replace") as handle:
                debug = handle.read()
        except OSError:
            debug = ""
        return Run(argv, done.returncode, done.stdout, done.stderr, debug, requests, refused)


class Run(object):
    def __init__(self, argv, code, stdout, stderr, debug, requests, refused):
        self.argv, self.code, self.stderr, self.debug = argv, code, stderr, debug
        self.requests, self.refused = requests, refused
        self.events = []
        for line in stdout.splitlines():
            try:
                self.events.append(json.loads(line))
            except ValueError:
                pass

    def __repr__(self):
        return "<claude run exit %s, %d main requests, stderr %r>" % (
            self.code, len(self.main_requests), self.stderr[-300:])

    @property
    def session_id(self):
        for event in self.events:
            if event.get("type") == "system" and event.get("subtype") == "init":
                return event.get("session_id")
        return None

    @property
    def main_requests(self):
        return [request["body"] for request in self.requests if request["kind"] == "main"]

    def hook_responses(self, event):
        """What each hook of `event` returned, in order: the stream's hook_response events."""
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "hook_response"
                and e.get("hook_event") == event]

    def stop_verdicts(self):
        """'block' or 'pass' for each run of the Stop hooks. A hook blocks by exiting 2 or by
        printing a JSON decision "block"; the CLI treats both alike."""
        return ["block" if blocks(response) else "pass" for response in self.hook_responses("Stop")]

    def start_sources(self):
        return [e.get("hook_name", "").partition(":")[2] for e in self.hook_responses("SessionStart")]

    def denials(self):
        return [e for e in self.events if e.get("type") == "system" and e.get("subtype") == "permission_denied"]

    def stop_feedback(self):
        """The user-role texts carrying the CLI's 'Stop hook feedback', request by request."""
        return [[text for role, text in texts_of(body) if role == "user" and STOP_FEEDBACK in text]
                for body in self.main_requests]

    def problems(self):
        """Everything that says a hook failed or the run was not clean: a non-zero exit, CLI stderr,
        a hook that errored or timed out, an attempt to reach a host other than 127.0.0.1."""
        found = []
        if self.code != 0:
            found.append("claude exited %s" % self.code)
        if self.stderr.strip():
            found.append("claude stderr: %s" % self.stderr.strip()[:500])
        for response in self.hook_responses("SessionStart") + self.hook_responses("Stop"):
            if response.get("outcome") != "success" and not blocks(response):
                found.append("hook %s: outcome %s, exit %s, stderr %r" % (
                    response.get("hook_name"), response.get("outcome"), response.get("exit_code"),
                    (response.get("stderr") or "")[:300]))
        for line in self.debug.splitlines():
            low = line.lower()
            if "hook" in low and ("timed out" in low or "timeout:" in low or "cancelled" in low):
                found.append("debug log: " + line[:300])
        found += ["tried to reach %s" % attempt["target"] for attempt in self.refused]
        return found


def blocks(response):
    return block_message(response) is not None


def block_message(response):
    """What a Stop hook said when it blocked (stderr after exit 2, or the JSON decision's reason);
    None when it did not block."""
    if response.get("exit_code") == 2:
        return response.get("stderr") or ""
    try:
        decision = json.loads(response.get("stdout") or "")
    except ValueError:
        return None
    if isinstance(decision, dict) and decision.get("decision") == "block":
        return str(decision.get("reason") or "")
    return None


def texts_of(body):
    """(role, text) of every text the request carries: system prompt, messages, tool results."""
    out = []
    system = body.get("system")
    for block in ([{"text": system}] if isinstance(system, str) else system or []):
        out.append(("system", block.get("text") or ""))
    for message in body.get("messages") or []:
        content = message.get("content")
        for block in ([{"type": "text", "text": content}] if isinstance(content, str) else content or []):
            text = block.get("text")
            if text is None and block.get("type") == "tool_result":
                inner = block.get("content")
                text = inner if isinstance(inner, str) else json.dumps(inner)
            out.append((message.get("role"), text or ""))
    return out


def injections(body, source):
    """The texts a request carries right after the CLI's 'SessionStart:<source> hook success'
    marker, each up to the next marker or the end of its block."""
    out = []
    for _, text in texts_of(body):
        marks = list(START_MARKER.finditer(text))
        for k, mark in enumerate(marks):
            if mark.group(1) == source:
                end = marks[k + 1].start() if k + 1 < len(marks) else len(text)
                out.append(text[mark.end():end])
    return out
