"""Fixtures of the end-to-end tests that run Codex CLI and Gemini CLI: each real CLI (or a skip that
says why there is none; a failure under E2E_REQUIRE_CLI=1, as for Claude Code), the mock of its
model API, a sealed runner, and the protocol's installed fixture repository wired for that CLI.
The test modules import them by name, as they do e2e_fixtures.
"""
import json

import pytest

import npm_cli
from agent_session import CodexCli, GeminiCli
from e2e_fixtures import Fixture, binary_of
from installtools import write
from mock_gemini import GeminiApi
from mock_responses import ResponsesApi

HOOK_SECONDS = 15


@pytest.fixture(scope="session")
def codex_binary():
    return binary_of(npm_cli.CODEX, "Codex CLI")


@pytest.fixture(scope="session")
def gemini_binary():
    return binary_of(npm_cli.GEMINI, "Gemini CLI")


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


def hook_command(hook, from_top):
    """The shell command that runs one of the installed hooks: from the top of the repository
    the CLI was started in (Codex starts hooks where it was started, a subfolder perhaps), and only
    when the file is there, so that a missing hook never exits 2, which both CLIs read as a block."""
    relative = ".claude/hooks/" + hook
    run = "test -f %s && python3 -I -S %s" % (relative, relative)
    return 'cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)" && ' + run if from_top else run


def wire_codex(project):
    handler = {"type": "command", "timeout": HOOK_SECONDS}
    write(project.file(".codex/hooks.json"), json.dumps({"hooks": {
        "SessionStart": [{"hooks": [dict(handler, command=hook_command("session-start.py", True))]}],
        "Stop": [{"hooks": [dict(handler, command=hook_command("stop-handoff.py", True))]}]}}, indent=2) + "\n")


def wire_gemini(project):
    handler = {"type": "command", "timeout": HOOK_SECONDS * 1000}
    write(project.file(".gemini/settings.json"), json.dumps({"hooks": {
        "SessionStart": [{"hooks": [dict(handler, command=hook_command("session-start.py", False))]}],
        "AfterAgent": [{"hooks": [dict(handler, command=hook_command("stop-handoff.py", False))]}]}},
        indent=2) + "\n")


def wired_fixture(path, wire):
    project = Fixture(path)
    wire(project)
    project.git("add", "-A")
    project.git("commit", "-q", "-m", "the hooks wired for another agent")
    return project


@pytest.fixture
def codex_project(tmp_path):
    return wired_fixture(tmp_path / "repo", wire_codex)


@pytest.fixture
def gemini_project(tmp_path):
    return wired_fixture(tmp_path / "repo", wire_gemini)


def assert_clean(run, cli):
    """The run ended normally, no hook failed or timed out, nothing left 127.0.0.1."""
    problems = run.problems(cli.HOOK_FAILURE)
    assert not problems, (problems, run)
