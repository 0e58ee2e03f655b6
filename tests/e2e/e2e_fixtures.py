"""Fixtures of the end-to-end tests: the real CLI (or a skip that says why there is none), the mock
API it talks to, and throw-away git repositories where `install.py --project` installed the protocol.
The test modules import them by name (a second conftest.py would shadow the suite's own `conftest`
module, which other tests import).

Without node and npm, or without the registry, every test here is skipped with the reason, and the
rest of the suite runs as before. Where the CLI must run (CI sets E2E_REQUIRE_CLI=1), its absence is
an error instead: a green run that never started the CLI would say nothing.
"""
import os
import re
import subprocess
import sys
import uuid

import pytest

import npm_cli
from cli_session import Cli
from conftest import git
from installtools import REPO, sealed_env, write
from mock_api import MockApi

INSTALL_PY = os.path.join(REPO, "install.py")


def on_the_terminal(config):
    """say(line): a line on the terminal past pytest's capture, for work that takes minutes."""
    capture = config.pluginmanager.getplugin("capturemanager")

    def say(text):
        with capture.global_and_fixture_disabled():
            sys.stderr.write("\n" + text + "\n")
            sys.stderr.flush()
    return say


def binary_of(pinned, name, config):
    binary, reason = pinned.find(on_the_terminal(config))
    if binary:
        return binary
    if os.environ.get("E2E_REQUIRE_CLI") == "1":
        pytest.fail("E2E_REQUIRE_CLI=1 but the %s cannot be had: %s" % (name, reason), pytrace=False)
    pytest.skip("real %s unavailable: %s" % (name, reason))


@pytest.fixture(scope="session")
def claude_binary(pytestconfig):
    return binary_of(npm_cli.CLAUDE, "Claude Code CLI", pytestconfig)


@pytest.fixture(scope="session")
def api():
    server = MockApi()
    yield server
    server.close()


@pytest.fixture
def cli(claude_binary, api, tmp_path):
    runner = Cli(claude_binary, api, str(tmp_path / "cli"))
    yield runner
    runner.close()


def assert_clean(run):
    """The run ended normally, no hook failed or timed out, nothing left 127.0.0.1."""
    assert not run.problems(), run.problems()


class Fixture(object):
    """A committed git repository with a small memory and the protocol installed (for the agents
    named, when given). `token` is a word only this fixture's memory index contains, so the index
    can be recognised wherever it lands."""

    def __init__(self, path, agents=None):
        self.path = str(path)
        self.token = "e2e-token-" + uuid.uuid4().hex[:10]
        self.pointers = [
            "- [Decisions](decisions.md) — why the service keeps no state between requests (%s)" % self.token,
            "- [Gotchas](gotchas.md) — the port the tests reserve"]
        os.makedirs(self.path)
        git(self.path, "init", "-q", "-b", "main")
        write(self.file("memory/MEMORY.md"), "# Project Memory Index\n<!-- Last dream: 2026-11-30 -->\n\n"
              "## Active Context\nA small service used by the end-to-end tests.\n\n## Topics\n"
              + "".join(line + "\n" for line in self.pointers))
        write(self.file("memory/decisions.md"), "# Decisions\n<!-- Last updated: 2026-11-30 -->\n\n"
              "- 2026-11-30: requests carry all their state; the service stores none.\n")
        write(self.file("memory/gotchas.md"), "# Gotchas\n<!-- Last updated: 2026-11-30 -->\n\n"
              "- 2026-11-30: port 8080 is reserved by the test runner.\n")
        write(self.file("CLAUDE.md"), "# Service\n\nRun it with `python3 app.py`.\n")
        write(self.file("app.py"), "print('service')\n")
        self.install = self.install_py("--project", *(["--agents", agents] if agents else []))
        assert self.install.returncode == 0, self.install.stdout
        git(self.path, "add", "-A")
        git(self.path, "commit", "-q", "-m", "a service with the protocol installed")

    def install_py(self, mode, *options, home="-home", **environment):
        """`install.py <mode> <project> <options>` as a user runs it here, in a sealed
        environment whose HOME is the project's path followed by `home`, plus `environment`;
        its output, stdout and stderr together."""
        return subprocess.run([sys.executable, INSTALL_PY, mode, self.path] + list(options),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True,
                              env=dict(sealed_env(self.path + home), **environment))

    def file(self, relative):
        return os.path.join(self.path, *relative.split("/"))

    def read(self, relative):
        with open(self.file(relative), encoding="utf-8") as handle:
            return handle.read()

    def git(self, *args):
        return git(self.path, *args)

    def files_of_session(self, session_id):
        """{path relative to the repository: (content, inode, modification time)} of the files the
        hooks keep for one session: those whose name ends with its id. The inode and the time tell
        a file left alone from one written again with the same content."""
        found = {}
        for top, dirs, files in os.walk(self.path):
            dirs[:] = [name for name in dirs if name != ".git"]
            for name in files:
                if session_id and name.endswith(session_id):
                    path = os.path.join(top, name)
                    with open(path, "rb") as handle:
                        content = handle.read()
                    info = os.stat(path)
                    found[os.path.relpath(path, self.path).replace(os.sep, "/")] = (
                        content, info.st_ino, info.st_mtime_ns)
        return found


@pytest.fixture
def installed(tmp_path):
    return Fixture(tmp_path / "repo")


def handoff_path_named_in(text, project):
    """The session-state file a block message asks for: a Markdown path it names that is not part
    of the shared memory and does not exist yet."""
    for token in re.findall(r"[\w./-]*[\w-]\.md\b", text):
        relative = token[len(project.path) + 1:] if token.startswith(project.path + "/") else token
        relative = relative[2:] if relative.startswith("./") else relative
        if os.path.isabs(relative) or relative.startswith("memory/") or "/memory/" in relative:
            continue
        if not os.path.exists(project.file(relative)):
            return relative
    return None


def handoff_path_stated_by_the_hook(project):
    """MCP_SESSION_STATE's default as the installed Stop hook's header states it."""
    source = project.read(".claude/hooks/stop-handoff.py")
    found = re.search(r"MCP_SESSION_STATE \(([^()\s]+\.md)\)", source)
    return found.group(1) if found else None
