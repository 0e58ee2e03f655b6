"""In the real CLI, two developers save on two branches and the memory merges like code.

A project installed by an earlier release keeps its memory in the stamped format; `install.py
--update` moves it to the team format and the move is committed. Two developers then each clone
the project, work on a branch of their own, are blocked at the stop, and save as the block asks:
/handoff, then /dream, which, as its text says, writes what the session learned as a new note in a
topic folder and commits memory/ on its own. Their branches land on main with a plain `git merge`
in a third clone, and the same landing as a forge does it (no merge attribute) meets no conflict
either. In a fresh clone of main, where nobody ran the installer, the next session's injection,
as the CLI hands it to the model, names both developers' notes; and where one developer deleted a
fact that the other corrected, both lines landed side by side and the injection marks them, at
their file and lines, as the model is handed it."""
import os
import subprocess
import uuid

import pytest

from cli_session import Cli, STOP_FEEDBACK, injections, texts_of
from conftest import git
from e2e_fixtures import (Fixture, api, assert_clean, claude_binary,  # noqa: F401
                          handoff_path_named_in, handoff_path_stated_by_the_hook)
from installtools import sealed_env
from mock_api import say, use

pytestmark = pytest.mark.e2e


CACHE_NOTE = "# Cache layer\n\n%s\n"
CACHE_EDITS = {"deletes": "- (deleted) 2026-11-01: the cache is in-process.",
               "corrects": "- 2026-12-01: the cache is Redis."}


def write_note(fixture, text):
    path = fixture.file("memory/gotchas/cache-layer.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as stream:
        stream.write(text)


def note_of(name, fact):
    return "# %s\n\n- 2026-12-01: %s\n" % (name.replace("-", " ").capitalize(), fact)


def save_flow(clone, work_file, note, fact, message):
    """The model's side of a session on a developer's branch: it works, is blocked, writes its
    handoff where the block says, then runs /dream as its text says: a new note, committed alone."""
    written = []

    def invoke_handoff_as_the_block_asks(body):
        said = [text for role, text in texts_of(body) if role == "user" and STOP_FEEDBACK in text]
        path = handoff_path_named_in(said[-1], clone) if said else None
        written.append(path or handoff_path_stated_by_the_hook(clone))
        return use("Skill", skill="handoff")

    def write_the_handoff(body):
        return use("Write", file_path=clone.file(written[-1]),
                   content="## Handoff: 2026-12-01 10:00\n\n## Working On\n%s\n" % work_file)

    return [
        use("Write", file_path=clone.file(work_file), content="work\n"),
        say("Done."),
        invoke_handoff_as_the_block_asks,
        write_the_handoff,
        use("Skill", skill="dream"),
        use("Write", file_path=clone.file("memory/gotchas/%s.md" % note), content=note_of(note, fact)),
        use("Bash", command="git add memory", description="Stage the memory"),
        use("Bash", command='git commit -m "%s" -- memory' % message, description="Commit the memory"),
        say("Dream complete: 1 files written, 1 facts changed"),
        say("Stopped.")], written


class Clone(Fixture):
    """A developer's clone of the project: no install, no setup, only `git clone`."""

    def __init__(self, origin, path, branch=None):  # noqa: super() would build a new project
        self.path = str(path)
        subprocess.run(["git", "clone", "-q", origin, self.path], check=True,
                       env=sealed_env(self.path + "-home"))
        if branch:
            git(self.path, "checkout", "-q", "-b", branch)


@pytest.fixture(scope="module")
def team(claude_binary, api, tmp_path_factory):  # noqa: F811
    folder = tmp_path_factory.mktemp("team")
    origin = Fixture(folder / "origin")
    done = origin.install_py("--update")
    assert done.returncode == 0, done.stdout
    write_note(origin, CACHE_NOTE % "- 2026-11-01: the cache is in-process.")
    origin.git("add", "-A")
    origin.git("commit", "-q", "-m", "memory: the team format")
    runner = Cli(claude_binary, api, str(folder / "cli"))
    token = uuid.uuid4().hex[:8]
    developers = {}
    for name, fact in (("alice", "the queue retries five times"), ("bob", "port 8081 is the API's")):
        clone = Clone(origin.path, folder / name, branch=name)
        note = "%s-note-%s" % (name, token)
        replies, written = save_flow(clone, name + ".txt", note, fact, "memory: %s's note" % name)
        run = runner.run(clone.path, ["work on it"], replies, mode="acceptEdits")
        clone.git("add", name + ".txt")
        clone.git("commit", "-q", "-m", "%s's work" % name)
        clone.git("push", "-q", "origin", name)
        developers[name] = (clone, run, note, fact, written)
    for branch, line in CACHE_EDITS.items():  # one deletes the fact, the other corrects it
        editor = Clone(origin.path, folder / branch, branch=branch)
        write_note(editor, CACHE_NOTE % line)
        editor.git("commit", "-q", "-am", "memory: %s the cache fact" % branch)
        editor.git("push", "-q", "origin", branch)
    yield origin, runner, developers
    runner.close()


def test_each_developer_saves_a_note_of_their_own_on_their_branch(team):
    origin, _, developers = team
    for name, (clone, run, note, fact, written) in developers.items():
        assert_clean(run)
        assert run.stop_verdicts() == ["block", "pass"], name
        assert written and written[0], name
        dream = [line for line in clone.read(".claude/commands/dream.md").split("\n---\n", 1)[1]
                 .splitlines() if line.strip()][0]
        assert any(dream in text for body in run.main_requests for _, text in texts_of(body))
        memory_commit = clone.git("log", "-1", "--format=%H", "--grep=memory: " + name).strip()
        assert clone.git("show", "--name-only", "--format=", memory_commit).split() == [
            "memory/gotchas/%s.md" % note]
        assert "Last" not in clone.read("memory/MEMORY.md")  # nothing stamped


def land(maintainer, squash_as_a_forge):
    """Land both branches on main; the forge's way reads no merge attribute from the tree."""
    if squash_as_a_forge:
        with open(os.path.join(maintainer.path, ".git", "info", "attributes"), "w") as handle:
            handle.write("* merge=text\n")
    results = []
    for name in ("alice", "bob"):
        args = ["merge", "--squash", "origin/" + name] if squash_as_a_forge else \
            ["merge", "--no-edit", "origin/" + name]
        results.append(git(maintainer.path, *args, check=False))
        if squash_as_a_forge:
            maintainer.git("commit", "-q", "-m", "squashed " + name)
    return results


@pytest.mark.parametrize("forge", [False, True])
def test_the_two_branches_land_without_a_conflict(team, tmp_path, forge):
    origin, _, _ = team
    maintainer = Clone(origin.path, tmp_path / "maintainer")
    land(maintainer, forge)
    assert maintainer.git("diff", "--name-only", "--diff-filter=U") == ""
    assert sorted(os.listdir(maintainer.file("memory/gotchas"))) == sorted(
        ["cache-layer.md"] + ["%s.md" % note for _, _, note, _, _ in team[2].values()])


def test_the_next_session_in_a_fresh_clone_is_handed_both_notes(team, tmp_path):
    origin, runner, developers = team
    maintainer = Clone(origin.path, tmp_path / "maintainer")
    land(maintainer, squash_as_a_forge=False)
    maintainer.git("push", "-q", "origin", "HEAD:refs/heads/merged")
    teammate = Clone(origin.path, tmp_path / "teammate")
    teammate.git("checkout", "-q", "merged")
    run = runner.run(teammate.path, ["hello"], [say("Hello.")])
    assert_clean(run)
    printed = [response.get("stdout") or "" for response in run.hook_responses("SessionStart")]
    listing = [line for text in printed for line in text.splitlines() if line.startswith("- [gotchas/]")]
    assert len(listing) == 1, printed
    for _, _, note, fact, _ in developers.values():
        assert note in listing[0]
        assert fact in teammate.read("memory/gotchas/%s.md" % note)
    handed = "\n".join(injections(run.main_requests[0], "startup"))
    assert listing[0] in handed


def test_a_deletion_against_a_correction_is_marked_in_what_the_model_is_handed(team, tmp_path):
    origin, runner, _ = team
    maintainer = Clone(origin.path, tmp_path / "maintainer")
    land(maintainer, squash_as_a_forge=False)
    for branch in CACHE_EDITS:
        maintainer.git("merge", "-q", "--no-edit", "origin/" + branch)
    assert maintainer.read("memory/gotchas/cache-layer.md") == CACHE_NOTE % "\n".join(
        CACHE_EDITS.values())  # the union kept both, side by side
    maintainer.git("push", "-q", "origin", "HEAD:refs/heads/merged-edits")
    teammate = Clone(origin.path, tmp_path / "teammate")
    teammate.git("checkout", "-q", "merged-edits")
    run = runner.run(teammate.path, ["hello"], [say("Hello.")])
    assert_clean(run)
    handed = "\n".join(injections(run.main_requests[0], "startup"))
    assert "## Memory marks — 1 line(s) not to take as written (/dream settles them)" in handed
    assert ("- memory/gotchas/cache-layer.md:4 deleted on one branch, changed on another "
            "(lines 3-4): keep the deletion or the fact") in handed
    assert handed.index("## Memory marks") < handed.index("## Memory index")
