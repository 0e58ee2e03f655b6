"""In the real Codex CLI, the protocol's hooks (the very files `install.py --project` copies into
.claude/hooks/, wired by `--agents claude,codex` in .codex/hooks.json) do what they do in Claude
Code: the memory index, with the budget report, and the last handoff reach the model whole at the
start, within the 10,000 UTF-8 bytes Codex passes on from a hook; work earns one block whose
message reaches the model; the save it asks for needs no person, but for the memory's commit,
which Codex's sandbox leaves to one; the next stop passes, and so does the next session's; all of
it from a subfolder too, and nothing leaves 127.0.0.1. The flow commands the install made skills
of are offered to the model, and `$name` brings one whole. The hooks run without the bypass once
they are trusted in the terminal's review, which `install.py --check` reads as the CLI does.

The scripted model acts on what reached it: it writes the handoff where the block message says."""
import hashlib
import json
import os
import shlex

import pytest

from agent_fixtures import (  # noqa: F401  (fixtures are used by name)
    HANDOFF, MEMORY_COMMIT, assert_clean, codex, codex_binary, codex_project, first_body_line,
    handoff_path_the_block_asks_for, responses_api,
)
from e2e_fixtures import Fixture, handoff_path_named_in
from installtools import write
from mock_api import say, use
from mock_responses import texts_of

pytestmark = pytest.mark.e2e

LIMIT = 10000  # UTF-8 bytes Codex passes on whole from one hook's output
TRUNCATED = "Warning: truncated output"  # what Codex puts before a hook output it cut
BLOCKED = "hook: Stop Blocked"


def shell(command):
    return use("exec_command", cmd=command)


def injected(run, token):
    """The developer messages of the first request that carry the fixture's token."""
    return [text for text in run.texts(0, "developer") if token in text]


def assert_the_index_arrived_whole(run, project):
    found = injected(run, project.token)
    assert len(found) == 1, run.texts(0, "developer")
    assert not found[0].startswith(TRUNCATED)
    assert len(found[0].encode("utf-8")) <= LIMIT
    for line in project.pointers:
        assert line in found[0]
    return found[0]


def test_the_index_reaches_the_model_whole_and_a_stop_without_work_passes(codex, codex_project):
    run = codex.run(codex_project.path, "hello", [say("Nothing to change.")])
    assert_clean(run, codex)
    assert_the_index_arrived_whole(run, codex_project)
    assert BLOCKED not in run.stderr
    assert len(run.main_requests) == 1


def test_a_wide_index_is_cut_within_the_bytes_codex_passes_whole(codex, tmp_path):
    """Cyrillic takes two bytes a character: an index within 10,000 UTF-16 units but far over
    10,000 bytes would be truncated by Codex in the middle; the hook cuts it first, as marked."""
    project = Fixture(tmp_path / "wide", agents="claude,codex")
    lines = ["- [Тема %03d](t%03d.md) — заметка о решении, принятом командой" % (i, i) for i in range(120)]
    lines[0] += " (%s)" % project.token
    project.pointers = lines[:1]
    index = "# Project Memory Index\n\n## Topics\n" + "".join(line + "\n" for line in lines)
    assert len(index.encode("utf-16-le")) // 2 < LIMIT < len(index.encode("utf-8"))
    write(project.file("memory/MEMORY.md"), index)
    project.git("commit", "-q", "-am", "a wide index")
    run = codex.run(project.path, "hello", [say("Hello.")])
    assert_clean(run, codex)
    injected_text = assert_the_index_arrived_whole(run, project)
    assert "(budget 80)" in injected_text.split("## Memory index")[0], "no budget report"


def save_flow(project):
    """The model's side of a session that works, is blocked and saves as the block asks: the
    handoff where the block message says (else where the hook states), then the memory, merged
    and committed. The handoff paths it wrote are collected in the returned list."""
    written = []

    def write_the_handoff_the_block_asks_for(body):
        path = handoff_path_the_block_asks_for(
            [text for role, text in texts_of(body) if role == "user"], project)
        written.append(path)
        return shell("printf %%s %s > %s" % (shlex.quote(HANDOFF), shlex.quote(path)))

    replies = [
        shell("printf 'a report\\n' > report.txt"),
        say("The report is written."),
        write_the_handoff_the_block_asks_for,
        shell("printf -- '- 2026-11-30: the report feature writes plain text.\\n' >> memory/decisions.md"),
        shell("git add memory && git commit -q -m %s -- memory" % shlex.quote(MEMORY_COMMIT)),
        say("Saved.")]
    return replies, written


def test_work_earns_one_block_the_save_needs_nobody_and_the_next_session_stops(codex, codex_project):
    project = codex_project
    replies, written = save_flow(project)
    run = codex.run(project.path, "write the report", replies)
    assert_clean(run, codex)
    assert os.path.exists(project.file("report.txt"))
    assert run.stderr.count(BLOCKED) == 1
    assert len(run.main_requests) == 6
    assert written and written[0], "neither the block message nor the hook named a handoff path"
    assert project.read(written[0]) == HANDOFF
    assert "the report feature writes plain text" in project.read("memory/decisions.md")
    # Codex's default sandbox keeps .git read-only: the memory is merged unattended, but its
    # commit waits for a person (an approved escalation, or the user's own commit).
    assert "Read-only file system" in run.texts(5, "tool")[-1]
    assert project.git("log", "-1", "--format=%s").strip() != MEMORY_COMMIT
    assert project.git("status", "--porcelain", "--", "memory").split() == ["M", "memory/decisions.md"]

    following = codex.run(project.path, "one more file", [shell("printf 'more\\n' > more.txt"), say("Done.")])
    assert_clean(following, codex)
    assert os.path.exists(project.file("more.txt"))
    assert BLOCKED not in following.stderr
    assert len(following.main_requests) == 2
    assert any(codex_project.token in text and "The report feature." in text
               for text in following.texts(0, "developer")), "the handoff was not injected"


def test_started_in_a_subfolder_the_hooks_find_the_project(codex, codex_project):
    project = codex_project
    write(project.file("src/module.py"), "print('module')\n")
    project.git("add", "-A")
    project.git("commit", "-q", "-m", "a module")
    run = codex.run(project.path, "edit the module", [
        shell("printf 'print(2)\\n' > module.py"), say("Edited."), say("Understood.")],
        cwd=project.file("src"))
    assert_clean(run, codex)
    assert_the_index_arrived_whole(run, project)
    assert run.stderr.count(BLOCKED) == 1
    said = [text for text in run.texts(2, "user")][-1]
    assert handoff_path_named_in(said, project)
    assert not os.path.exists(project.file("src/.claude"))



def test_the_installed_skills_are_offered_and_dollar_name_brings_one_whole(codex, codex_project):
    run = codex.run(codex_project.path, "$handoff", [say("Saved.")])
    assert_clean(run, codex)
    offered = "\n".join(run.texts(0, "developer"))
    for name in ("handoff", "dream", "catchup"):
        assert "- %s: " % name in offered and "%s/SKILL.md)" % name in offered
    skill = codex_project.read(".agents/skills/handoff/SKILL.md")
    assert any(first_body_line(skill) in text and "<skill>" in text for text in run.texts(0, "user"))


# --- the review Codex asks for before it runs a project's hooks -------------------------------

def trusted_hash(event, handler):
    """What Codex records for a hook its user trusted, as measured on 0.169.0: "sha256:" and the
    digest of the handler's definition as compact JSON with sorted keys, the event in snake case."""
    definition = {"event_name": event, "hooks": [{
        "async": False, "command": handler["command"], "timeout": handler["timeout"],
        "type": "command"}]}
    text = json.dumps(definition, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def codex_check(codex, project):
    """What `install.py --check` says of Codex for the user whose configuration the runner holds."""
    done = project.install_py("--check", home="-check-home", CODEX_HOME=codex.codex_home)
    return [line.strip() for line in done.stdout.splitlines() if "Codex CLI" in line]


def test_a_review_in_the_terminal_is_a_record_per_hook_that_the_check_reads(codex, codex_project):
    """Trusting the hooks in the terminal writes, in the user's config.toml, one record per hook:
    its key the hooks file's real path, the event and the two positions, its hash that of the
    handler's definition. The check then passes and the hooks run without the bypass; other bytes
    in a hook file keep the review, another timeout undoes it for that hook, and the check says so;
    so does a record switched off (`enabled = false`), which runs nothing. A new release that keeps
    the review elsewhere or hashes another way fails here."""
    tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads Codex's config.toml")
    project = codex_project
    reviewed = codex.review_hooks_in_the_tui(project.path)
    if reviewed is None:
        pytest.skip("tmux is needed to answer the CLI's review in its terminal")
    config, refused = reviewed
    # The terminal fetches an announcement from GitHub at every start, whatever the settings;
    # the mock refuses it, as any host but 127.0.0.1. Nothing else is tried.
    assert set(attempt["target"] for attempt in refused) <= {"raw.githubusercontent.com:443"}
    wired = json.loads(project.read(".codex/hooks.json"))["hooks"]
    hooks_file = os.path.join(os.path.realpath(project.path), ".codex", "hooks.json")
    assert tomllib.loads(config)["hooks"]["state"] == {
        "%s:%s:0:0" % (hooks_file, snake): {
            "trusted_hash": trusted_hash(snake, wired[event][0]["hooks"][0])}
        for event, snake in (("SessionStart", "session_start"), ("Stop", "stop"))}
    assert codex_check(codex, project) == []

    with open(project.file(".claude/hooks/session-start.py"), "a", encoding="utf-8") as handle:
        handle.write("# other bytes in the hook file\n")
    run = codex.run(project.path, "hello", [say("Hello.")], hooks_trusted=False, as_reviewed=True)
    assert_clean(run, codex)
    assert injected(run, project.token)
    assert [line for line in run.stderr.splitlines() if line.startswith("hook:")] == [
        "hook: SessionStart", "hook: SessionStart Completed", "hook: Stop", "hook: Stop Completed"]

    wired["Stop"][0]["hooks"][0]["timeout"] += 1
    write(project.file(".codex/hooks.json"), json.dumps({"hooks": wired}, indent=2) + "\n")
    run = codex.run(project.path, "hello", [say("Hello.")], hooks_trusted=False, as_reviewed=True)
    assert_clean(run, codex)
    assert injected(run, project.token)
    assert [line for line in run.stderr.splitlines() if line.startswith("hook:")] == [
        "hook: SessionStart", "hook: SessionStart Completed"]
    [said] = codex_check(codex, project)
    assert "will not run the Stop hook for you: Stop changed since" in said

    with open(os.path.join(codex.codex_home, "config.toml"), encoding="utf-8") as handle:
        config = handle.read()
    header = '[hooks.state.%s]\n' % json.dumps("%s:session_start:0:0" % hooks_file)
    assert header in config
    write(os.path.join(codex.codex_home, "config.toml"),
          config.replace(header, header + "enabled = false\n"))
    run = codex.run(project.path, "hello", [say("Hello.")], hooks_trusted=False, as_reviewed=True)
    assert_clean(run, codex)
    assert not injected(run, project.token)
    assert [line for line in run.stderr.splitlines() if line.startswith("hook:")] == []
    [said] = codex_check(codex, project)
    assert "SessionStart switched off in" in said


@pytest.mark.parametrize("change, says", [
    (lambda config, project: config + "\n[features]\nhooks = false\n", "runs no hook at all for you"),
    (lambda config, project: config.replace('[projects.%s]\ntrust_level = "trusted"\n' % json.dumps(
        project), ""), "runs none of this project's hooks for you until you trust the project"),
], ids=["hooks-off", "project-not-trusted"])
def test_a_configuration_under_which_no_hook_runs_is_what_the_check_says(codex, codex_project, change,
                                                                         says):
    """Hooks switched off under [features], or a project the configuration does not mark trusted:
    Codex runs none of the project's hooks, even with the review bypassed, and the check says why."""
    project = codex_project
    codex.configure([project.path])
    config = os.path.join(codex.codex_home, "config.toml")
    with open(config, encoding="utf-8") as handle:
        before = handle.read()
    after = change(before, project.path)
    assert after != before
    write(config, after)
    run = codex.run(project.path, "hello", [say("Hello.")], as_reviewed=True)
    assert_clean(run, codex)
    assert not injected(run, project.token)
    assert [line for line in run.stderr.splitlines() if line.startswith("hook:")] == []
    [said] = codex_check(codex, project)
    assert says in said
