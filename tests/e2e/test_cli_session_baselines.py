"""In the real CLI, a session keeps its own baseline through a resume, a compaction and a fork: the
hooks run with the source the CLI gives them, the files they keep for a session (named by its id)
are left as they were, a fork gets files of its own, and a session that did nothing new since its
last save is not blocked again."""
import pytest

from e2e_fixtures import api, assert_clean, claude_binary, cli, installed  # noqa: F401
from mock_api import say, use

pytestmark = pytest.mark.e2e


def worked_session(cli, project):
    """A session that wrote a file and answered its one block; its id and the files the hooks keep
    for it."""
    run = cli.run(project.path, ["write a file"], [
        use("Write", file_path=project.file("feature.txt"), content="x\n"),
        say("Wrote it."), say("Understood.")], mode="acceptEdits")
    assert_clean(run)
    assert run.stop_verdicts() == ["block", "pass"]
    kept = project.files_of_session(run.session_id)
    assert kept, "the hooks keep no file named by the session id"
    return run.session_id, kept


def test_a_resumed_session_keeps_its_baseline_and_is_not_blocked_again(cli, installed):
    session, kept = worked_session(cli, installed)
    run = cli.run(installed.path, ["--resume", session, "anything else?"], [say("Nothing new.")])
    assert_clean(run)
    assert run.session_id == session
    assert run.start_sources() == ["resume"]
    assert installed.files_of_session(session) == kept
    assert run.stop_verdicts() == ["pass"]


def test_a_compaction_keeps_the_session_baseline(cli, installed):
    session, kept = worked_session(cli, installed)
    run = cli.run(installed.path, ["--resume", session, "/compact"], [say("<summary>A file was written.</summary>")])
    assert_clean(run)
    assert "compact" in run.start_sources()
    assert installed.files_of_session(session) == kept


def test_a_fork_gets_a_baseline_of_its_own_and_leaves_the_original_alone(cli, installed):
    session, kept = worked_session(cli, installed)
    run = cli.run(installed.path, ["--resume", session, "--fork-session", "go on"], [say("Forked.")])
    assert_clean(run)
    assert run.session_id not in (None, session)
    assert run.start_sources() == ["fork"]
    assert installed.files_of_session(run.session_id)
    assert installed.files_of_session(session) == kept
    assert run.stop_verdicts() == ["pass"]
