"""End to end: install into a git project whose path has a space, then run every wired
command the way the harness does (`sh -c "<command>"`, CLAUDE_PROJECT_DIR set, JSON on stdin)."""

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401
    git, installer, make_repo, path_in, real_budget_api_present, real_hooks_present,
    settings_of, write,
)

pytestmark = [
    pytest.mark.skipif(not (real_hooks_present() and real_budget_api_present()),
                       reason="the hooks have not landed in hooks/ yet"),
    pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh, as the harness uses"),
]

SESSION = "e2e-session-1"
MEMORY_LINE = "- [Build](build.md) \u2014 the build runs through make, never npm"


def wired_commands(project, event):
    entries = []
    for group in settings_of(project)["hooks"][event]:
        for handler in group["hooks"]:
            assert handler["type"] == "command"
            assert isinstance(handler["timeout"], int) and 0 < handler["timeout"] <= 60
            assert handler["statusMessage"]
            entries.append(handler)
    assert entries
    return entries


def run_as_the_harness(project, handler, payload, env):
    hook_env = dict(env, CLAUDE_PROJECT_DIR=project)
    return subprocess.run(["sh", "-c", handler["command"]], input=json.dumps(payload).encode("utf-8"),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=hook_env,
                          cwd=project, timeout=handler["timeout"])


def hook_input(project, event, **extra):
    payload = {"session_id": SESSION, "cwd": project, "hook_event_name": event,
               "transcript_path": os.path.join(project, "..", "transcript.jsonl")}
    payload.update(extra)
    return payload


@pytest.mark.parametrize("folder", ["my project (v2)", "it's $HOME & `pwd`; \"quoted\""])
def test_the_wired_hooks_work_as_the_harness_runs_them(installer, tmp_path, folder):
    env = installer.env
    project = make_repo(str(tmp_path / folder), env,
                        {"README.md": "# demo\n", "src/app.py": "print('hi')\n"})
    installer.ok("--project", project, "--python", shlex.quote(sys.executable))
    with open(path_in(project, "memory/MEMORY.md"), "a", encoding="utf-8") as handle:
        handle.write(MEMORY_LINE + "\n")
    write(path_in(project, "memory/build.md"), "# Build\nRun `make`.\n")
    git(project, "add", "--chmod=+x", ".claude/hooks", env=env)
    git(project, "add", "-A", env=env)
    git(project, "commit", "-q", "-m", "install the memory protocol", env=env)
    assert git(project, "status", "--porcelain", env=env) == ""

    start = wired_commands(project, "SessionStart")
    matcher = settings_of(project)["hooks"]["SessionStart"][0]["matcher"]
    assert matcher == "startup|resume|clear|compact|fork"
    for handler in start:
        done = run_as_the_harness(project, handler, hook_input(project, "SessionStart",
                                                               source="startup"), env)
        assert done.returncode == 0, done.stderr
        injected = done.stdout.decode("utf-8")
        assert MEMORY_LINE in injected
        assert len(injected) <= 10000

    stop = wired_commands(project, "Stop")
    assert "matcher" not in settings_of(project)["hooks"]["Stop"][0]

    write(path_in(project, "src/app.py"), "print('changed')\n")
    for handler in stop:
        blocked = run_as_the_harness(project, handler, hook_input(project, "Stop",
                                                                  stop_hook_active=False), env)
        assert blocked.returncode == 2, (blocked.stdout, blocked.stderr)
        message = blocked.stderr.decode("utf-8")
        assert "/handoff" in message and "/dream" in message

    write(path_in(project, "src/more.py"), "x = 1\n")
    write(path_in(project, ".session-state.md"), "# Session state\nChanged app.py.\n")
    for handler in stop:
        passed = run_as_the_harness(project, handler, hook_input(project, "Stop",
                                                                 stop_hook_active=False), env)
        assert passed.returncode == 0, passed.stderr

    status = git(project, "status", "--porcelain", "--untracked-files=all", "--ignored=no", env=env)
    assert sorted(status.splitlines()) == [" M src/app.py", "?? src/more.py"]
    local_files = os.listdir(path_in(project, ".claude/hooks"))
    assert any(name.startswith(".session-baseline") for name in local_files), local_files

    check = installer.run("--check", project)
    assert check.returncode == 0, check.stdout
