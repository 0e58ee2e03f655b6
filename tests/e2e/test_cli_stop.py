"""In the real CLI, the Stop guard and the save it asks for work unattended: work earns exactly one
block, the CLI hands the hook's message to the model, and the next stop passes; the save the block
asks for (/handoff writes the session state, /dream edits and commits memory/) completes in
acceptEdits mode with nothing but the settings `install.py --project` wrote; and the handoff it
wrote lets the next session stop.

The scripted model learns where to write the handoff the way a model would: from the block message
the CLI sent it (or, where the message names no path, from the installed hook's stated default), so
these tests follow whatever path the installed protocol uses."""
import os

import pytest

from cli_session import Cli, STOP_FEEDBACK, block_message, injections, texts_of
from e2e_fixtures import (Fixture, api, assert_clean, claude_binary, cli, handoff_path_named_in,  # noqa: F401
                          handoff_path_stated_by_the_hook, installed)
from mock_api import say, use

pytestmark = pytest.mark.e2e

HANDOFF = ("## Handoff: 2026-11-30 12:00\n\n## Working On\nThe report feature.\n\n## Modified Files\n"
           "- `report.txt` — new\n\n## Next Steps\n1. Review the report.\n")
MEMORY_COMMIT = "memory: the report feature writes plain text"


def test_a_stop_without_work_passes_at_once(cli, installed):
    run = cli.run(installed.path, ["hello"], [say("Nothing to change.")])
    assert_clean(run)
    assert run.stop_verdicts() == ["pass"]
    assert len(run.main_requests) == 1


def test_work_earns_one_block_whose_message_reaches_the_model_then_the_stop_passes(cli, installed):
    run = cli.run(installed.path, ["write a feature"], [
        use("Write", file_path=installed.file("feature.txt"), content="a feature\n"),
        say("Wrote feature.txt."),
        say("Understood.")], mode="acceptEdits")
    assert_clean(run)
    assert os.path.exists(installed.file("feature.txt"))
    assert run.stop_verdicts() == ["block", "pass"]
    assert len(run.main_requests) == 3
    feedback = run.stop_feedback()
    assert feedback[:2] == [[], []]
    said = [block_message(response) for response in run.hook_responses("Stop")]
    assert said[1] is None and said[0].strip()
    assert len(feedback[2]) == 1
    assert said[0].strip().splitlines()[0] in feedback[2][0]


def save_flow(project):
    """The model's side of a session that works, is blocked and saves as the block asks: the paths
    it wrote the handoff to are collected in the returned list."""
    written = []

    def invoke_handoff_as_the_block_asks(body):
        said = [text for role, text in texts_of(body) if role == "user" and STOP_FEEDBACK in text]
        path = handoff_path_named_in(said[-1], project) if said else None
        written.append(path or handoff_path_stated_by_the_hook(project))
        return use("Skill", skill="handoff")

    def write_the_handoff(body):
        return use("Write", file_path=project.file(written[-1]), content=HANDOFF)

    replies = [
        use("Write", file_path=project.file("report.txt"), content="a report\n"),
        say("The report is written."),
        invoke_handoff_as_the_block_asks,
        write_the_handoff,
        use("Skill", skill="dream"),
        use("Edit", file_path=project.file("memory/decisions.md"), old_string="stores none.\n",
            new_string="stores none.\n- 2026-11-30: the report feature writes plain text.\n"),
        use("Bash", command="git add memory", description="Stage the memory"),
        use("Bash", command='git commit -m "%s" -- memory' % MEMORY_COMMIT, description="Commit the memory"),
        say("Dream complete: 1 files written, 1 facts changed"),
        say("Stopped.")]
    return replies, written


def first_body_line(project, command):
    text = project.read(".claude/commands/%s.md" % command)
    body = text.split("\n---\n", 1)[1] if text.startswith("---\n") else text
    return next(line for line in body.splitlines() if line.strip())


@pytest.fixture(scope="module")
def saved(claude_binary, api, tmp_path_factory):  # noqa: F811
    """One project where a session worked, was blocked and saved; and the CLI that ran it."""
    folder = tmp_path_factory.mktemp("save-flow")
    project = Fixture(folder / "repo")
    runner = Cli(claude_binary, api, str(folder / "cli"))
    replies, written = save_flow(project)
    run = runner.run(project.path, ["write the report"], replies, mode="acceptEdits")
    yield project, runner, run, written
    runner.close()


def test_the_save_flow_completes_unattended_with_the_installed_settings(saved):
    project, _, run, written = saved
    assert_clean(run)
    assert [(denial.get("tool_name"), denial.get("message")) for denial in run.denials()] == []
    assert run.stop_verdicts() == ["block", "pass"]
    assert written and written[0], "neither the block message nor the hook named a handoff path"
    with open(project.file(written[0]), encoding="utf-8") as handle:
        assert handle.read() == HANDOFF
    everything = "\n".join(text for body in run.main_requests for _, text in texts_of(body))
    for command in ("handoff", "dream"):
        assert first_body_line(project, command) in everything, "/%s was not expanded" % command
    assert project.git("log", "-1", "--format=%s").strip() == MEMORY_COMMIT
    assert project.git("show", "--name-only", "--format=", "HEAD").split() == ["memory/decisions.md"]
    assert "the report feature writes plain text" in project.read("memory/decisions.md")


def test_the_next_session_stops_without_a_block_after_that_handoff(saved):
    project, runner, first, written = saved
    assert written and written[0] and os.path.exists(project.file(written[0])), "the save flow wrote no handoff"
    run = runner.run(project.path, ["one more file"], [
        use("Write", file_path=project.file("more.txt"), content="more\n"),
        say("Done."), say("Understood.")], mode="acceptEdits")
    assert_clean(run)
    assert run.session_id != first.session_id
    assert os.path.exists(project.file("more.txt"))
    assert run.stop_verdicts() == ["pass"]
    assert not any(run.stop_feedback())
    assert any("The report feature." in text for text in injections(run.main_requests[0], "startup"))
