"""In the real Gemini CLI, the protocol's hooks (the very files `install.py --project` copies into
.claude/hooks/, wired by `--agents claude,gemini` in .gemini/settings.json as SessionStart and
AfterAgent) do what they do in Claude Code: the memory index, with the budget report, and the last
handoff reach the model whole at the start; work earns one block whose message reaches the
model, with no hook reported as failed; the save it asks for needs no person; the continuation is
let go even when it ran a tool, although Gemini then says `stop_hook_active: false`; the next
session stops without a block; nothing leaves 127.0.0.1. The skills the install made of the flow
commands are offered to the model and activated whole, and `/handoff` typed in the CLI's
terminal uses the skill.

The scripted model acts on what reached it: it writes the handoff where the block message says."""
import os

import pytest

from agent_fixtures import (  # noqa: F401  (fixtures are used by name)
    HANDOFF, MEMORY_COMMIT, assert_clean, first_body_line, gemini, gemini_api, gemini_binary,
    gemini_project, handoff_path_the_block_asks_for,
)
from mock_api import say, use
from mock_gemini import texts_of

pytestmark = pytest.mark.e2e

BLOCKED = "Agent execution blocked"  # what Gemini prints on stderr for each block


def shell(command):
    return use("run_shell_command", command=command, description="a scripted step")


def test_the_index_reaches_the_model_whole_and_a_stop_without_work_passes(gemini, gemini_project):
    run = gemini.run(gemini_project.path, "hello", [say("Nothing to change.")])
    assert_clean(run, gemini)
    found = [text for text in run.texts(0, "user") if gemini_project.token in text]
    assert len(found) == 1, run.texts(0, "user")
    for line in gemini_project.pointers:
        assert line in found[0]
    assert "&lt;/project-memory&gt;" in found[0]  # the closing tag: nothing was cut after it
    assert BLOCKED not in run.stderr
    assert len(run.main_requests) == 1


def test_an_index_over_its_budget_is_reported_in_the_injection(gemini, gemini_project):
    lines = "".join("- [Topic %03d](t%03d.md) — a clause\n" % (i, i) for i in range(120))
    path = gemini_project.file("memory/MEMORY.md")
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(lines)
    gemini_project.git("commit", "-q", "-am", "an index past its budget")
    run = gemini.run(gemini_project.path, "hello", [say("Hello.")])
    assert_clean(run, gemini)
    [found] = [text for text in run.texts(0, "user") if gemini_project.token in text]
    report = found.split("## Memory index")[0]
    assert "(budget 80)" in report, "no budget report"


def save_flow(project):
    """The model's side of a session that works, is blocked and saves as the block asks: the
    handoff where the block message says (else where the hook states), then the memory, merged
    and committed. The handoff paths it wrote are collected in the returned list."""
    written = []

    def write_the_handoff_the_block_asks_for(body):
        path = handoff_path_the_block_asks_for(
            [text for role, text in texts_of(body) if role == "user"], project)
        written.append(path)
        return use("write_file", file_path=project.file(path), content=HANDOFF)

    replies = [
        use("write_file", file_path=project.file("report.txt"), content="a report\n"),
        say("The report is written."),
        write_the_handoff_the_block_asks_for,
        shell("printf -- '- 2026-11-30: the report feature writes plain text.\\n' >> memory/decisions.md"),
        shell("git add memory && git commit -q -m '%s' -- memory" % MEMORY_COMMIT),
        say("Saved.")]
    return replies, written


def test_work_earns_one_block_the_save_needs_nobody_and_the_next_session_stops(gemini, gemini_project):
    project = gemini_project
    replies, written = save_flow(project)
    run = gemini.run(project.path, "write the report", replies)
    assert_clean(run, gemini)
    assert os.path.exists(project.file("report.txt"))
    assert run.stderr.count(BLOCKED) == 1
    assert len(run.main_requests) == 6
    assert written and written[0], "neither the block message nor the hook named a handoff path"
    assert project.read(written[0]) == HANDOFF
    assert project.git("log", "-1", "--format=%s").strip() == MEMORY_COMMIT
    assert project.git("show", "--name-only", "--format=", "HEAD").split() == ["memory/decisions.md"]

    following = gemini.run(project.path, "one more file", [
        use("write_file", file_path=project.file("more.txt"), content="more\n"), say("Done.")])
    assert_clean(following, gemini)
    assert os.path.exists(project.file("more.txt"))
    assert BLOCKED not in following.stderr
    assert len(following.main_requests) == 2
    assert any(project.token in text and "The report feature." in text
               for text in following.texts(0, "user")), "the handoff was not injected"


def test_a_continuation_that_ran_a_tool_is_not_blocked_again(gemini, gemini_project):
    """Gemini says stop_hook_active: false after a continuation that ran a tool; the guard
    still knows the stop ends the continuation its block started, and lets it go."""
    project = gemini_project
    run = gemini.run(project.path, "write the report", [
        use("write_file", file_path=project.file("report.txt"), content="a report\n"),
        say("The report is written."),
        use("write_file", file_path=project.file("notes.txt"), content="not a save\n"),
        say("I will not save.")])
    assert_clean(run, gemini)
    assert os.path.exists(project.file("notes.txt"))
    assert run.stderr.count(BLOCKED) == 1
    assert len(run.main_requests) == 4



def test_the_installed_skills_are_offered_and_activate_whole(gemini, gemini_project):
    project = gemini_project
    run = gemini.run(project.path, "save the session", [use("activate_skill", name="handoff"), say("Saved.")])
    assert_clean(run, gemini)
    offered = "\n".join(run.texts(0, "system"))
    for name in ("handoff", "dream", "catchup"):
        assert "<name>%s</name>" % name in offered
    handoff = first_body_line(project.read(".agents/skills/handoff/SKILL.md"))
    assert handoff == first_body_line(project.read(".claude/commands/handoff.md"))
    assert any(handoff in text for text in run.texts(1, "tool"))


def test_slash_name_typed_in_the_terminal_uses_the_installed_skill(gemini, gemini_project):
    requests = gemini.type_in_the_tui(gemini_project.path, "/handoff", [say("Saved.")],
                                      ready=("Type your message", "3 skills"))
    if requests is None:
        pytest.skip("tmux is needed to type into the CLI's terminal")
    assert requests, "the CLI sent nothing after /handoff was typed"
    said = [text for role, text in texts_of(requests[0]) if role == "user"]
    assert said[-1] == "Use the skill handoff"
