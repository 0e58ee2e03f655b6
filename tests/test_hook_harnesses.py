"""The same hooks serve Claude Code, Codex CLI and Gemini CLI: they know each by what it sends and
answer in its form (tests/e2e/test_*_harness_facts.py pins each CLI's side of these facts):
- the project is what the harness names (CLAUDE_PROJECT_DIR, else GEMINI_PROJECT_DIR), else the
  top of the work tree the hook runs in, since Codex names none and may start in a subfolder;
- Gemini gets the injection only as JSON additionalContext, the very text Claude Code gets plain;
- Codex gets an injection within 10,000 UTF-8 bytes, the measure it truncates by;
- Codex and Gemini get a block as a JSON decision on stdout with exit 0, never an exit 2;
- under Gemini, whose stop_hook_active is false again after a continuation that ran a tool, a
  stop whose transcript's last user text is the guard's block passes;
- Claude Code sees none of this: the same input without those marks gets what it got before.
"""
import json
import subprocess
import sys

import pytest

from conftest import InstalledHooks, clean_environment, load_hook, set_age

GEMINI_SESSION = "3b1d6c2e-0f4a-4d8e-9a51-7c2b9e0d1f36"
CODEX_SESSION = "01a2331c-4b13-7ec3-92f6-3080c8524771"
STATE = ".session-state.md"


def run(hook, cwd, given, **env):
    """A hook as a CLI runs it, with only the variables given (no CLAUDE_PROJECT_DIR unless
    given), JSON on stdin."""
    environment = clean_environment(cwd.parent / "home")
    environment.update(env)
    done = subprocess.run([sys.executable, "-I", "-S", str(InstalledHooks.folder() / hook)],
                          input=json.dumps(given).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(cwd), timeout=30)
    assert b"Traceback" not in done.stderr
    return done


def gemini_start(project):
    return {"session_id": GEMINI_SESSION, "hook_event_name": "SessionStart", "source": "startup",
            "cwd": str(project), "timestamp": "2026-12-01T19:37:20.654Z",
            "transcript_path": str(project.parent / "chats" / "session-2026-12-01T19-37-3b1d6c2e.jsonl")}


def gemini_env(project):
    return {"GEMINI_PROJECT_DIR": str(project), "CLAUDE_PROJECT_DIR": str(project),
            "GEMINI_SESSION_ID": GEMINI_SESSION}


def codex_input(cwd, event, **more):
    given = {"session_id": CODEX_SESSION, "hook_event_name": event, "cwd": str(cwd), "model": "gpt-5",
             "permission_mode": "default",
             "transcript_path": "/home/u/.codex/sessions/2026/12/01/rollout-2026-12-01T19-37-02-%s.jsonl"
             % CODEX_SESSION}
    given.update(more)
    if event == "SessionStart":
        given["source"] = "startup"
    return given


def claude_start(project):
    return {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
            "cwd": str(project), "transcript_path": str(project.parent / "s1.jsonl")}


@pytest.mark.parametrize("given, env, expected", [
    ({"hook_event_name": "Stop", "session_id": "s1", "stop_hook_active": False}, {}, "claude"),
    ({"hook_event_name": "SessionStart", "session_id": "s1", "source": "startup"}, {}, "claude"),
    ({"hook_event_name": "AfterAgent", "session_id": "g1", "stop_hook_active": False}, {}, "gemini"),
    ({"hook_event_name": "SessionStart", "session_id": "g1"}, {"GEMINI_SESSION_ID": "g1"}, "gemini"),
    ({"hook_event_name": "SessionStart", "session_id": "s1"}, {"GEMINI_SESSION_ID": "g1"}, "claude"),
    ({"hook_event_name": "Stop", "session_id": "c1", "turn_id": "t1"}, {}, "codex"),
    ({"hook_event_name": "SessionStart", "session_id": "c1",
      "transcript_path": "/h/.codex/sessions/2026/12/01/rollout-2026-12-01T19-37-02-c1.jsonl"}, {}, "codex"),
    ({}, {}, "claude"),
], ids=["claude-stop", "claude-start", "gemini-stop", "gemini-start", "inherited-gemini-variable",
        "codex-stop", "codex-start", "nothing"])
def test_the_harness_is_known_by_what_it_sends(monkeypatch, given, env, expected):
    guard = load_hook("context-budget.py")
    monkeypatch.delenv("GEMINI_SESSION_ID", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert guard.harness(given) == expected


# --- the project ------------------------------------------------------------------------------

def test_without_a_project_variable_the_hooks_serve_the_top_of_the_work_tree(project):
    sub = project / "src" / "deeper"
    sub.mkdir(parents=True)
    started = run("session-start.py", sub, codex_input(sub, "SessionStart"))
    assert started.returncode == 0
    assert "- [Topic](topic.md) — the pointer" in started.stdout.decode("utf-8")
    baselines = sorted(path.name for path in (project / ".claude" / "hooks").iterdir()
                       if path.name.startswith(".session-baseline"))
    assert baselines == [".session-baseline." + CODEX_SESSION]
    assert not (sub / ".claude").exists()
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    stopped = run("stop-handoff.py", sub, codex_input(sub, "Stop", turn_id="t1", stop_hook_active=False))
    assert json.loads(stopped.stdout.decode("utf-8"))["decision"] == "block"
    assert not (sub / ".claude").exists()


def test_outside_any_work_tree_the_working_folder_is_the_project(plain_dir):
    (plain_dir / "memory").mkdir()
    (plain_dir / "memory" / "MEMORY.md").write_text("# Index\n- [A](a.md) — plain\n", encoding="utf-8")
    started = run("session-start.py", plain_dir, codex_input(plain_dir, "SessionStart"))
    assert "- [A](a.md) — plain" in started.stdout.decode("utf-8")


def test_gemini_project_dir_names_the_project_when_claude_project_dir_is_absent(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    started = run("session-start.py", elsewhere, gemini_start(project),
                  GEMINI_PROJECT_DIR=str(project), GEMINI_SESSION_ID=GEMINI_SESSION)
    context = json.loads(started.stdout.decode("utf-8"))["hookSpecificOutput"]["additionalContext"]
    assert "- [Topic](topic.md) — the pointer" in context


# --- the injection ----------------------------------------------------------------------------

def test_gemini_gets_the_injection_claude_code_gets_as_json_additional_context(project):
    plain = run("session-start.py", project, claude_start(project), CLAUDE_PROJECT_DIR=str(project))
    given = gemini_start(project)
    as_json = run("session-start.py", project, given, **gemini_env(project))
    assert plain.returncode == as_json.returncode == 0
    answer = json.loads(as_json.stdout.decode("utf-8"))
    assert answer == {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                             "additionalContext": plain.stdout.decode("utf-8")}}
    assert plain.stdout.decode("utf-8").startswith("<project-memory")


WIDE = ["- [Тема %03d](t%03d.md) — заметка о решении, принятом командой" % (i, i) for i in range(120)]


def wide_index(project):
    index = "# Project Memory Index\n\n## Topics\n" + "".join(line + "\n" for line in WIDE)
    (project / "memory" / "MEMORY.md").write_text(index, encoding="utf-8")
    assert len(index.encode("utf-16-le")) // 2 < 10000 < len(index.encode("utf-8"))


def test_every_harness_gets_an_injection_within_10000_utf8_bytes(project):
    """Codex CLI counts bytes and Claude Code UTF-16 units; the hook cannot always tell them
    apart (`codex exec --ephemeral` sends what Claude Code sends), so it counts bytes, which
    are never fewer than units."""
    wide_index(project)
    codex = run("session-start.py", project, codex_input(project, "SessionStart")).stdout.decode("utf-8")
    claude = run("session-start.py", project, claude_start(project),
                 CLAUDE_PROJECT_DIR=str(project)).stdout.decode("utf-8")
    ephemeral = dict(codex_input(project, "SessionStart"), transcript_path=None)
    unknown = run("session-start.py", project, ephemeral).stdout.decode("utf-8")
    for text in (codex, claude, unknown):
        assert len(text.encode("utf-8")) <= 10000 and "[cut here:" in text
        assert WIDE[0] in text and text.rstrip("\n").endswith("</project-memory>")


@pytest.mark.parametrize("seed", range(20))
def test_the_measure_is_never_below_any_harness_unit(seed):
    """The rule: no harness's count of the injection exceeds the count the hook keeps within
    the limit, for any text."""
    import random
    rng = random.Random(seed)
    alphabet = ["a", "é", "€", "\U0001F642", "中", "\t", " "]
    text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 400)))
    measured = load_hook("context-budget.py").injection_length(text)
    assert measured >= len(text.encode("utf-16-le")) // 2
    assert measured >= len(text.encode("utf-8"))


# --- the block --------------------------------------------------------------------------------

def stale_handoff(project):
    state = project / STATE
    state.write_text("## Handoff: 2026-01-01 09:00\n", encoding="utf-8")
    set_age(state, 24 * 3600)


def started_with_work(project, start, env):
    stale_handoff(project)
    assert run("session-start.py", project, start, **env).returncode == 0
    (project / "README.md").write_text("changed\n", encoding="utf-8")


def test_codex_and_gemini_are_blocked_by_a_json_decision_and_claude_code_by_exit_2(project):
    started_with_work(project, codex_input(project, "SessionStart"), {})
    codex = run("stop-handoff.py", project, codex_input(project, "Stop", turn_id="t1", stop_hook_active=False))
    assert (codex.returncode, codex.stderr) == (0, b"")
    decision = json.loads(codex.stdout.decode("utf-8"))
    assert set(decision) == {"decision", "reason"} and decision["decision"] == "block"
    assert "write .session-state.md" in decision["reason"]

    gemini_given = {"session_id": GEMINI_SESSION, "hook_event_name": "AfterAgent", "stop_hook_active": False,
                    "cwd": str(project), "prompt": "go", "prompt_response": "done"}
    assert run("session-start.py", project, gemini_start(project), **gemini_env(project)).returncode == 0
    (project / "more.txt").write_text("more\n", encoding="utf-8")
    gemini = run("stop-handoff.py", project, gemini_given, **gemini_env(project))
    assert (gemini.returncode, gemini.stderr) == (0, b"")
    assert json.loads(gemini.stdout.decode("utf-8"))["reason"] == decision["reason"]

    claude_given = {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False}
    assert run("session-start.py", project, claude_start(project), CLAUDE_PROJECT_DIR=str(project)).returncode == 0
    (project / "third.txt").write_text("third\n", encoding="utf-8")
    claude = run("stop-handoff.py", project, claude_given, CLAUDE_PROJECT_DIR=str(project))
    assert (claude.returncode, claude.stdout) == (2, b"")
    assert claude.stderr.decode("utf-8") == decision["reason"]


def transcript(project, *records):
    path = project.parent / "chats" / "session.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def user(text):
    return {"id": "u", "type": "user", "content": [{"text": text}]}


def tool_response():
    return {"id": "r", "type": "user", "content": [{"functionResponse": {"name": "write_file",
                                                                          "response": {"output": "ok"}}}]}


def model(text):
    return {"id": "m", "type": "gemini", "content": text}


def gemini_stop(project, path, **env):
    given = {"session_id": GEMINI_SESSION, "hook_event_name": "AfterAgent", "stop_hook_active": False,
             "cwd": str(project), "transcript_path": str(path), "prompt": "go", "prompt_response": "done"}
    return run("stop-handoff.py", project, given, **dict(gemini_env(project), **env))


def blocked(done):
    return bool(done.stdout.strip()) and json.loads(done.stdout.decode("utf-8")).get("decision") == "block"


@pytest.fixture
def gemini_session(project):
    """A Gemini session whose work was blocked once: the block's reason is known."""
    started_with_work(project, gemini_start(project), gemini_env(project))
    first = gemini_stop(project, transcript(project, user("go"), model("done")))
    assert blocked(first)
    return project, json.loads(first.stdout.decode("utf-8"))["reason"]


def test_a_gemini_continuation_that_ran_a_tool_after_the_block_passes(gemini_session):
    project, reason = gemini_session
    (project / "notes.txt").write_text("work in the continuation\n", encoding="utf-8")
    path = transcript(project, user("go"), model("done"), user(reason), model(""), tool_response(), model("ok"))
    assert not blocked(gemini_stop(project, path))


def test_a_new_gemini_turn_after_the_block_is_blocked_for_new_work(gemini_session):
    project, reason = gemini_session
    (project / "notes.txt").write_text("work in a new turn\n", encoding="utf-8")
    path = transcript(project, user("go"), model("done"), user(reason), model("ok"), user("next task"),
                      tool_response(), model("done"))
    assert blocked(gemini_stop(project, path))


def test_the_last_user_text_is_found_past_a_long_tool_response(gemini_session, monkeypatch):
    project, reason = gemini_session
    guard = load_hook("prune-worktrees.py")
    huge = {"id": "r", "type": "user", "content": [{"functionResponse": {"response": {"output": "x" * 3000}}}]}
    path = transcript(project, user("go"), user(reason), *([huge] * 3))
    monkeypatch.setattr(guard, "TRANSCRIPT_TAIL", 4000)
    assert guard.last_user_text(str(path)) is None  # the block is further back than the tail
    monkeypatch.setattr(guard, "TRANSCRIPT_TAIL", 20000)
    assert guard.last_user_text(str(path)) == reason
    path.write_text("not json\n" + json.dumps(user(reason)) + "\n{\"type\": \"user\", \"con", encoding="utf-8")
    assert guard.last_user_text(str(path)) == reason


@pytest.mark.parametrize("where", ["missing", "folder", "fifo"])
def test_a_transcript_that_cannot_be_read_recognises_no_repeat(gemini_session, where):
    project, _ = gemini_session
    path = project.parent / "chats" / "odd"
    path.parent.mkdir(exist_ok=True)
    if where == "folder":
        path.mkdir()
    elif where == "fifo":
        pytest.importorskip("os").mkfifo(str(path))
    (project / "notes.txt").write_text("more work\n", encoding="utf-8")
    assert blocked(gemini_stop(project, path))


def test_claude_code_ignores_a_transcript_that_ends_with_the_block(project):
    """The transcript counts only under Gemini: Claude Code's own stop_hook_active is reliable."""
    stale_handoff(project)
    env = {"CLAUDE_PROJECT_DIR": str(project)}
    assert run("session-start.py", project, claude_start(project), **env).returncode == 0
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    first = run("stop-handoff.py", project, {"session_id": "s1", "hook_event_name": "Stop",
                                             "stop_hook_active": False}, **env)
    assert first.returncode == 2
    path = transcript(project, user(first.stderr.decode("utf-8")))
    (project / "other.txt").write_text("more\n", encoding="utf-8")
    again = run("stop-handoff.py", project, {"session_id": "s1", "hook_event_name": "Stop",
                                             "stop_hook_active": False, "transcript_path": str(path)}, **env)
    assert again.returncode == 2
