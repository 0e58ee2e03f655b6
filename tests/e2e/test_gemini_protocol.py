"""In the real Gemini CLI, the protocol's hooks (the very files `install.py --project` copies into
.claude/hooks/, wired in .gemini/settings.json as SessionStart and AfterAgent) do what they do in
Claude Code: the memory index reaches the model whole at the start; work earns one block whose
message reaches the model, with no hook reported as failed; the save it asks for needs no person;
the continuation is let go even when it ran a tool, although Gemini then says
`stop_hook_active: false`; the next session stops without a block; nothing leaves 127.0.0.1.

The scripted model acts on what reached it: it writes the handoff where the block message says."""
import os

import pytest

from agent_fixtures import assert_clean, gemini, gemini_api, gemini_binary, gemini_project  # noqa: F401
from e2e_fixtures import handoff_path_named_in, handoff_path_stated_by_the_hook
from mock_api import say, use
from mock_gemini import texts_of

pytestmark = pytest.mark.e2e

BLOCKED = "Agent execution blocked"  # what Gemini prints on stderr for each block
HANDOFF = ("## Handoff: 2026-11-30 12:00\n\n## Working On\nThe report feature.\n\n## Next Steps\n"
           "1. Review the report.\n")
MEMORY_COMMIT = "memory: the report feature writes plain text"


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


def save_flow(project):
    """The model's side of a session that works, is blocked and saves as the block asks: the
    handoff where the block message says (else where the hook states), then the memory, merged
    and committed. The handoff paths it wrote are collected in the returned list."""
    written = []

    def write_the_handoff_the_block_asks_for(body):
        said = [text for role, text in texts_of(body) if role == "user"]
        path = handoff_path_named_in(said[-1], project) or handoff_path_stated_by_the_hook(project)
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
