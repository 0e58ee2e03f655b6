"""Fixtures of the end-to-end tests that run Codex CLI and Gemini CLI: each real CLI (or a skip that
says why there is none; a failure under E2E_REQUIRE_CLI=1, as for Claude Code), the mock of its
model API, a sealed runner, and a fixture repository where `install.py --project --agents` wired
the protocol for that CLI. The test modules import them by name, as they do e2e_fixtures.
"""
import json
import os
import shlex
import sys

import pytest

import npm_cli
from agent_session import CodexCli, GeminiCli
from e2e_fixtures import Fixture, binary_of, handoff_path_named_in, handoff_path_stated_by_the_hook
from installtools import write
from mock_gemini import GeminiApi
from mock_responses import ResponsesApi

SPY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "spy_hook.py")
HANDOFF = ("## Handoff: 2026-11-30 12:00\n\n## Working On\nThe report feature.\n\n## Next Steps\n"
           "1. Review the report.\n")
MEMORY_COMMIT = "memory: the report feature writes plain text"


@pytest.fixture(scope="session")
def codex_binary(pytestconfig):
    return binary_of(npm_cli.CODEX, "Codex CLI", pytestconfig)


@pytest.fixture(scope="session")
def gemini_binary(pytestconfig):
    return binary_of(npm_cli.GEMINI, "Gemini CLI", pytestconfig)


@pytest.fixture(scope="session")
def responses_api():
    server = ResponsesApi()
    yield server
    server.close()


@pytest.fixture(scope="session")
def gemini_api():
    server = GeminiApi()
    yield server
    server.close()


@pytest.fixture
def codex(codex_binary, responses_api, tmp_path):
    runner = CodexCli(codex_binary, responses_api, str(tmp_path / "codex"))
    yield runner
    runner.close()


@pytest.fixture
def gemini(gemini_binary, gemini_api, tmp_path):
    runner = GeminiCli(gemini_binary, gemini_api, str(tmp_path / "gemini"))
    yield runner
    runner.close()


@pytest.fixture
def codex_project(tmp_path):
    return Fixture(tmp_path / "repo", agents="claude,codex")


@pytest.fixture
def gemini_project(tmp_path):
    return Fixture(tmp_path / "repo", agents="claude,gemini")


def assert_clean(run, cli):
    """The run ended normally, no hook failed or timed out, nothing left 127.0.0.1."""
    problems = run.problems(cli.HOOK_FAILURE)
    assert not problems, (problems, run)


def spy(log, timeout, *answer):
    """A handler that runs spy_hook.py: it records what the CLI gives it in `log`, then answers."""
    return {"type": "command", "timeout": timeout,
            "command": " ".join(shlex.quote(word) for word in (sys.executable, SPY, str(log)) + answer)}


def wire(path, **events):
    """A hooks file holding one group of the given handlers per event."""
    groups = {event: [{"hooks": handlers}] for event, handlers in events.items()}
    write(str(path), json.dumps({"hooks": groups}))


def spied(log):
    with open(str(log), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def handoff_path_the_block_asks_for(said, project):
    """Where the scripted model writes the handoff: the path the block message (the last user
    text it received) names, else the one the installed hook states."""
    return handoff_path_named_in(said[-1], project) or handoff_path_stated_by_the_hook(project)


def first_body_line(text):
    """The first line of a command's or skill's body, after any frontmatter."""
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    return next(line for line in body.splitlines() if line.strip())
