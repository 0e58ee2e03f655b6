"""Fixtures of the end-to-end tests that run Codex CLI and Gemini CLI: each real CLI (or a skip that
says why there is none; a failure under E2E_REQUIRE_CLI=1, as for Claude Code), the mock of its
model API, a sealed runner, and a fixture repository where `install.py --project --agents` wired
the protocol for that CLI. The test modules import them by name, as they do e2e_fixtures.
"""
import pytest

import npm_cli
from agent_session import CodexCli, GeminiCli
from e2e_fixtures import Fixture, binary_of
from mock_gemini import GeminiApi
from mock_responses import ResponsesApi


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
