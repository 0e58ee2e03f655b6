"""One run of the real Codex CLI (`codex exec`) or Gemini CLI (`gemini -p`) against its mock API,
and what can be read from it afterwards: its exit status and output, the requests the model
received, and any attempt to reach another host.

Each run is sealed as the Claude Code runs are (cli_session.sealed_base_environment): a throw-away
HOME, a dummy key, no variable that steers a CLI, the protocol or git, and the mock as the only
proxy. What each CLI needs besides, measured on the pinned releases:
- Codex ignores OPENAI_BASE_URL; a model provider of its own in `$CODEX_HOME/config.toml` points
  it at the mock (Responses API, no WebSocket, no retries). It loads a project's `.codex/` only
  when the project is marked trusted there, and runs a project's hooks only once the user
  reviewed them in its TUI (a record per hook, of its definition, in that config.toml) or, for
  one run, `--dangerously-bypass-hook-trust`, which these runs pass unless told not to.
  Analytics, plugins and the TUI's update check are off, or it reaches for hosts of its own.
- Gemini takes GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY, but only with the user setting that
  selects API-key auth (else it exits 41); the folder must be trusted (else it exits 55); tools
  run under `-p` only in `--approval-mode yolo`; usage statistics are off, or it reaches for a
  telemetry host.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time

from cli_session import sealed_base_environment
from mock_gemini import texts_of as gemini_texts
from mock_responses import texts_of as codex_texts

CLI_SECONDS = 180
CODEX_KEY_VARIABLE = "MCP_E2E_MOCK_KEY"  # any value: the mock checks no key


def toml_string(text):
    return json.dumps(text)  # a JSON string is a valid TOML basic string for these paths


class AgentRun(object):
    """What one run left: `texts_of` is the mock protocol's reader of a request's texts."""

    def __init__(self, argv, cwd, code, stdout, stderr, requests, refused, texts_of):
        self.argv, self.cwd, self.code, self.stdout, self.stderr = argv, cwd, code, stdout, stderr
        self.requests, self.refused, self.texts_of = requests, refused, texts_of

    def __repr__(self):
        return "<%s exit %s, %d main requests, stderr %r>" % (
            os.path.basename(self.argv[0]), self.code, len(self.main_requests), self.stderr[-600:])

    @property
    def main_requests(self):
        return [request["body"] for request in self.requests if request["kind"] == "main"]

    def texts(self, index, role=None):
        """The texts of the index-th main request, of one role when given."""
        return [text for who, text in self.texts_of(self.main_requests[index]) if role in (None, who)]

    def requests_carrying(self, text, role=None):
        """The indexes of the main requests that carry `text` in a text of that role."""
        return [index for index in range(len(self.main_requests))
                if any(text in said for said in self.texts(index, role))]

    def problems(self, hook_failure=None):
        """A non-zero exit, a line of the CLI's stderr that says a hook failed or timed out (in
        the CLI's own words, a pattern per CLI) and any attempt to reach a host other than
        127.0.0.1."""
        found = []
        if self.code != 0:
            found.append("exited %s" % self.code)
        for line in self.stderr.splitlines():
            if hook_failure is not None and hook_failure.match(line):
                found.append("cli: " + line[:300])
        found += ["tried to reach %s" % attempt["target"] for attempt in self.refused]
        return found


class SealedRunner(object):
    """A CLI binary, its mock, a folder for HOME and a temporary folder of its own (removed by
    close())."""

    def __init__(self, binary, api, folder):
        self.binary, self.api, self.folder = binary, api, folder
        self.home = os.path.join(folder, "home")
        self.scratch = tempfile.mkdtemp(prefix="mcp-e2e-")
        os.makedirs(self.home, exist_ok=True)

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def execute(self, argv, cwd, env, replies, texts_of):
        self.api.play(replies)
        mark = self.api.mark()
        done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, encoding="utf-8",
                              errors="replace", timeout=CLI_SECONDS)
        requests, refused = self.api.since(mark)
        return AgentRun(argv, cwd, done.returncode, done.stdout, done.stderr, requests, refused, texts_of)

    def in_the_tui(self, repo, env, argv, ready, act, seconds):
        """The interactive CLI (argv, in env) in a terminal of its own (tmux, on a private
        socket), started in repo; once its screen shows every text of `ready`,
        act(tmux, socket, deadline) does what the test wants there and its answer is returned.
        None without tmux. A CLI that quits before its screen is ready is started once more (a
        loaded machine has been seen to lose the first start); a second such exit fails the test
        with what the screen last showed."""
        tmux = shutil.which("tmux")
        if tmux is None:
            return None
        env = dict(env, TERM="xterm-256color")
        command = " ".join(["env"] + [shlex.quote("%s=%s" % item) for item in sorted(env.items())]
                           + [shlex.quote(word) for word in argv])
        deadline = time.monotonic() + seconds
        for attempt in (1, 2):
            socket = "mcp-e2e-%d-%d" % (os.getpid(), attempt)
            try:
                self.start_in_tmux(tmux, socket, repo, command, env)
                screen = self.wait_for_screen(tmux, socket, ready, deadline)
                if screen is None:
                    continue
                return act(tmux, socket, deadline)
            finally:
                last_screen = self.screen(tmux, socket)
                subprocess.run([tmux, "-L", socket, "kill-server"], stderr=subprocess.DEVNULL)
        raise AssertionError("the CLI quit before its screen showed %r; it last showed:\n%s"
                             % (ready, last_screen))

    @staticmethod
    def start_in_tmux(tmux, socket, repo, command, env):
        """A detached session whose pane stays after the CLI exits, so that its last screen can
        still be read."""
        subprocess.run([tmux, "-L", socket, "new-session", "-d", "-x", "160", "-y", "50", "-c",
                        str(repo), command, ";", "set-option", "remain-on-exit", "on"],
                       env=env, check=True)

    def wait_for_screen(self, tmux, socket, ready, deadline):
        """The screen once it shows every text of `ready` (or the time is up); None when the CLI
        has exited first."""
        while True:
            screen = self.screen(tmux, socket)
            if all(text in screen for text in ready) or time.monotonic() >= deadline:
                return screen
            if self.pane_is_dead(tmux, socket):
                return None
            time.sleep(0.5)

    @staticmethod
    def pane_is_dead(tmux, socket):
        done = subprocess.run([tmux, "-L", socket, "display-message", "-p", "#{pane_dead}"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True)
        return done.returncode != 0 or done.stdout.strip() == "1"

    @staticmethod
    def screen(tmux, socket):
        done = subprocess.run([tmux, "-L", socket, "capture-pane", "-p"], stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, universal_newlines=True)
        return done.stdout


class CodexCli(SealedRunner):
    # How `codex exec` reports a hook that failed or ran out of time, on stderr.
    HOOK_FAILURE = re.compile(r"hook: \w+ Failed")

    @property
    def codex_home(self):
        return os.path.join(self.home, ".codex")

    def configure(self, projects):
        codex_home = self.codex_home
        os.makedirs(codex_home, exist_ok=True)
        lines = ['model = "gpt-5-codex"', 'model_provider = "e2e"', "", "[model_providers.e2e]",
                 'name = "e2e mock"', "base_url = %s" % toml_string(self.api.url + "/v1"),
                 "env_key = %s" % toml_string(CODEX_KEY_VARIABLE), 'wire_api = "responses"',
                 "supports_websockets = false", "request_max_retries = 0", "stream_max_retries = 0", ""]
        for project in sorted(set(projects)):
            lines += ["[projects.%s]" % toml_string(project), 'trust_level = "trusted"', ""]
        with open(os.path.join(codex_home, "config.toml"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines))
        return codex_home

    def run(self, repo, prompt, replies, cwd=None, hooks_trusted=True, as_reviewed=False):
        """`codex exec PROMPT` started in `cwd` (default: the repository), the model's replies
        scripted; the repository is a trusted project. as_reviewed keeps the configuration a
        review in the terminal left (review_hooks_in_the_tui): the hooks run as it trusted them."""
        repo = str(repo)
        if not as_reviewed:
            self.configure([repo, os.path.realpath(repo)])
        argv = [self.binary, "exec", "-c", "analytics.enabled=false", "--disable", "plugins"]
        if hooks_trusted:
            argv.append("--dangerously-bypass-hook-trust")
        argv.append(prompt)
        return self.execute(argv, str(cwd or repo), self.environment(self.codex_home), replies,
                            codex_texts)

    def environment(self, codex_home):
        env = sealed_base_environment(self.api, self.home, self.scratch)
        env.update({"CODEX_HOME": codex_home, CODEX_KEY_VARIABLE: "sk-e2e-dummy"})
        return env

    def review_hooks_in_the_tui(self, repo, seconds=90):
        """The interactive CLI started in the repository (a trusted project), its review of the
        project's hooks answered "Trust all and continue": (the text of config.toml once the CLI
        has left the review and written a record there, or the time is up; the attempts to reach
        another host than 127.0.0.1). None without tmux."""
        repo = str(repo)
        codex_home = self.configure([repo, os.path.realpath(repo)])
        config = os.path.join(codex_home, "config.toml")
        mark = self.api.mark()

        def trust_all(tmux, socket, deadline):
            for key in ("Down", "Enter"):
                subprocess.run([tmux, "-L", socket, "send-keys", key], check=True)
                time.sleep(1)
            while time.monotonic() < deadline and ("Hooks need review" in self.screen(tmux, socket)
                                                   or "trusted_hash" not in read(config)):
                time.sleep(0.5)
            time.sleep(1)  # the last record lands
            return read(config), self.api.since(mark)[1]

        argv = [self.binary, "-c", "analytics.enabled=false",
                "-c", "check_for_update_on_startup=false", "--disable", "plugins"]
        return self.in_the_tui(repo, self.environment(codex_home), argv,
                               ("Hooks need review", "Trust all and continue"), trust_all, seconds)


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


class GeminiCli(SealedRunner):
    # How `gemini -p` reports a hook that failed or ran out of time, on stderr.
    HOOK_FAILURE = re.compile(r"(\[WARNING\] )?Hook\(s\) \[.*\] failed for event|Hook execution error")

    def configure(self):
        settings = os.path.join(self.home, ".gemini", "settings.json")
        os.makedirs(os.path.dirname(settings), exist_ok=True)
        with open(settings, "w", encoding="utf-8") as handle:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "privacy": {"usageStatisticsEnabled": False}}, handle)

    def environment(self):
        self.configure()
        env = sealed_base_environment(self.api, self.home, self.scratch)
        env.update({"GEMINI_API_KEY": "e2e-dummy-key", "GOOGLE_GEMINI_BASE_URL": self.api.url,
                    "GEMINI_CLI_TRUST_WORKSPACE": "true"})
        return env

    def run(self, repo, prompt, replies, cwd=None):
        """`gemini -p PROMPT` in yolo mode, started in `cwd` (default: the repository), the model's
        replies scripted; the folder is trusted."""
        argv = [self.binary, "-p", prompt, "--approval-mode", "yolo"]
        return self.execute(argv, str(cwd or repo), self.environment(), replies, gemini_texts)

    def type_in_the_tui(self, repo, typed, replies, ready=("Type your message",), requests=1,
                        seconds=90):
        """The interactive CLI, `typed` entered once its screen shows every text of `ready`; the
        main requests that arrived until there are `requests` of them, or the time is up. None
        without tmux."""
        self.api.play(replies)
        mark = self.api.mark()

        def enter(tmux, socket, deadline):
            subprocess.run([tmux, "-L", socket, "send-keys", "-l", typed], check=True)
            time.sleep(2)  # the completion menu settles before Enter takes its choice
            subprocess.run([tmux, "-L", socket, "send-keys", "Enter"], check=True)
            while time.monotonic() < deadline and len(self.main_since(mark)) < requests:
                time.sleep(0.5)
            return self.main_since(mark)

        return self.in_the_tui(repo, self.environment(), [self.binary, "--approval-mode", "yolo"],
                               ready, enter, seconds)

    def main_since(self, mark):
        return [request["body"] for request in self.api.since(mark)[0] if request["kind"] == "main"]
