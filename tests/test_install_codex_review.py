"""--check and Codex CLI's review of a project's hooks: Codex runs none of them until its user has
trusted each one as it is now, and says nothing meanwhile, so the check says so for the user who
runs it, and only where Codex is configured.

The expected records are what the real CLI (0.169.0) wrote when its terminal's review was
accepted for a project installed with `--agents claude,codex` (tests/e2e/test_codex_harness_facts.py
pins them): in $CODEX_HOME/config.toml, a table per handler keyed by the hooks file's real path,
the event in snake case and the handler's two positions, holding the hash measured there. What was
measured to undo a review: another command or timeout, or the handler at another position; what
was measured not to: other bytes in the hook file. A record that says `enabled = false` was
measured to keep its hook from running, and so were `[features] hooks = false` and a project
config.toml does not mark trusted (a trusted folder above it does not count)."""

import json
import os
import sys

import pytest

from installtools import git, installer, path_in, read, repo, write  # noqa: F401  (fixtures)

# What Codex 0.169.0 recorded for the entries the installer writes with python3.
MEASURED = {
    "session_start": "sha256:2069a0081c68aa43255cd76f9d7af2dc7a1b0e98bae1177249f29f9d6444e4f1",
    "stop": "sha256:2ea00933b78abbb9a22714b3383e8022024d977201389f533bb44edbe1714dd6",
}
PYTHON38 = os.path.expanduser("~/.pyenv/versions/3.8.18/bin/python3")


@pytest.fixture
def codex_home(tmp_path):
    path = tmp_path / "codex home"
    path.mkdir()
    return str(path)


@pytest.fixture
def wired(installer, repo):
    """A committed project whose Codex CLI runs the protocol's hooks: python3 in its entries, as
    in the run the records were measured on."""
    installer.ok("--project", repo, "--agents", "claude,codex", "--python", "python3")
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "the protocol for Codex", env=installer.env)
    return repo


def config_with(codex_home, text):
    write(os.path.join(codex_home, "config.toml"), text)


def reviewed(project, **hashes):
    """The tables Codex writes for reviewed hooks: event in snake case -> trusted hash, each the
    first handler of the event's first group."""
    hooks_file = os.path.join(os.path.realpath(project), ".codex", "hooks.json")
    return "".join('[hooks.state.%s]\ntrusted_hash = "%s"\n\n' % (
        json.dumps("%s:%s:0:0" % (hooks_file, event)), value) for event, value in hashes.items())


def trusting(project, level="trusted"):
    """The table Codex writes for a project its user trusted (or not)."""
    return '[projects.%s]\ntrust_level = "%s"\n\n' % (json.dumps(os.path.realpath(project)), level)


def a_config(project, **hashes):
    return 'model = "gpt-5-codex"\n\n%s[hooks.state]\n%s' % (trusting(project),
                                                               reviewed(project, **hashes))


def check(installer, project, codex_home, **kwargs):
    return installer.run("--check", project, env={"CODEX_HOME": codex_home}, **kwargs)


def codex_lines(done):
    return [line.strip() for line in done.stdout.splitlines() if "Codex CLI" in line]


def edit_hooks(project, change):
    settings = json.loads(read(path_in(project, ".codex/hooks.json")).decode("utf-8"))
    change(settings["hooks"])
    write(path_in(project, ".codex/hooks.json"), json.dumps(settings, indent=2) + "\n")


def test_without_a_codex_configuration_nothing_is_said(installer, wired, codex_home):
    done = check(installer, wired, codex_home)
    assert done.returncode == 0 and codex_lines(done) == [] and done.stderr == ""
    os.makedirs(os.path.join(codex_home, "config.toml"))  # not a file: no configuration either
    assert codex_lines(check(installer, wired, codex_home)) == []


def test_hooks_reviewed_as_they_are_pass(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, **MEASURED))
    done = check(installer, wired, codex_home)
    assert done.returncode == 0 and codex_lines(done) == [], done.stdout


def test_hooks_nobody_reviewed_fail_with_what_to_do(installer, wired, codex_home):
    config = os.path.join(codex_home, "config.toml")
    config_with(codex_home, 'model = "gpt-5-codex"\n\n' + trusting(wired))
    done = check(installer, wired, codex_home)
    assert done.returncode == 1
    assert codex_lines(done) == [
        "UNWIRED  Codex CLI will not run the SessionStart and Stop hooks for you: %s records no "
        "review of SessionStart and Stop; start `codex` in the project and trust them when it "
        "asks (or in /hooks)" % config]


def test_a_review_of_one_hook_leaves_the_other_to_review(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, stop=MEASURED["stop"]))
    done = check(installer, wired, codex_home)
    assert done.returncode == 1
    [line] = codex_lines(done)
    assert "will not run the SessionStart hook for you:" in line and "no review of SessionStart;" in line
    assert "trust it when it asks" in line


def test_a_review_of_another_project_does_not_count(installer, wired, codex_home, tmp_path):
    other = str(tmp_path / "another project")
    config_with(codex_home, trusting(wired) + a_config(other, **MEASURED))
    [line] = codex_lines(check(installer, wired, codex_home))
    assert "no review of SessionStart and Stop" in line


def test_hooks_switched_off_for_all_of_codex_fail_with_the_line_to_remove(installer, wired, codex_home):
    config = os.path.join(codex_home, "config.toml")
    config_with(codex_home, "[features]\nhooks = false\n\n" + a_config(wired, **MEASURED))
    done = check(installer, wired, codex_home)
    assert done.returncode == 1
    assert codex_lines(done) == ["UNWIRED  Codex CLI runs no hook at all for you: %s says hooks = "
                                 "false under [features]; remove that line" % config]
    config_with(codex_home, "[features]\nhooks = true\n\n" + a_config(wired, **MEASURED))
    assert codex_lines(check(installer, wired, codex_home)) == []


@pytest.mark.parametrize("projects, says", [
    ("", "does not list it; start `codex` in the project and trust it, then its hooks, when it asks"),
    ("parent", "does not list it"),  # a trusted folder above the project was measured not to count
    ("untrusted", 'marks the project untrusted; set its trust_level to "trusted" there'),
])
def test_a_project_codex_does_not_trust_runs_no_hook(installer, wired, codex_home, projects, says):
    table = {"": "", "parent": trusting(os.path.dirname(wired)),
             "untrusted": trusting(wired, "untrusted")}[projects]
    config_with(codex_home, table + "[hooks.state]\n" + reviewed(wired, **MEASURED))
    done = check(installer, wired, codex_home)
    assert done.returncode == 1
    [line] = codex_lines(done)
    assert line.startswith("UNWIRED  Codex CLI runs none of this project's hooks for you") and says in line


def test_a_linked_work_trees_trust_is_not_judged(installer, wired, codex_home, tmp_path):
    tree = str(tmp_path / "linked-tree")
    git(wired, "worktree", "add", "-q", tree, env=installer.env)
    config_with(codex_home, "[hooks.state]\n" + reviewed(tree, **MEASURED))
    assert codex_lines(check(installer, tree, codex_home)) == []


def test_another_timeout_undoes_the_review_of_that_hook_only(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, **MEASURED))
    edit_hooks(wired, lambda hooks: hooks["Stop"][0]["hooks"][0].update(timeout=30))
    done = check(installer, wired, codex_home)
    assert done.returncode == 1
    [line] = codex_lines(done)
    assert "will not run the Stop hook for you: Stop changed since %s recorded your review;" % (
        os.path.join(codex_home, "config.toml")) in line


def test_an_update_to_another_interpreter_undoes_both_reviews(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, **MEASURED))
    installer.ok("--update", wired, "--python", sys.executable)
    [line] = codex_lines(check(installer, wired, codex_home))
    assert "SessionStart and Stop changed since" in line


def test_a_group_of_the_users_put_first_moves_the_hook_out_of_its_review(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, **MEASURED))
    edit_hooks(wired, lambda hooks: hooks["SessionStart"].insert(
        0, {"hooks": [{"type": "command", "command": "true"}]}))
    [line] = codex_lines(check(installer, wired, codex_home))
    assert "no review of SessionStart;" in line


def test_a_hook_switched_off_in_codex_fails_with_how_to_switch_it_on(installer, wired, codex_home):
    config = os.path.join(codex_home, "config.toml")
    config_with(codex_home, a_config(wired, **MEASURED).replace(
        ':session_start:0:0"]\n', ':session_start:0:0"]\nenabled = false\n'))
    done = check(installer, wired, codex_home)
    assert done.returncode == 1
    assert codex_lines(done) == [
        "UNWIRED  Codex CLI will not run the SessionStart hook for you: SessionStart switched off "
        "in %s; switch it back on in Codex's /hooks" % config]

def test_a_review_given_with_the_users_hooks_around_is_read_at_the_positions_codex_gives(
        installer, wired, codex_home):
    # As Codex 0.169.0 recorded them with a group of the user's before the protocol's SessionStart
    # group and a handler of the user's before its Stop handler in the same group.
    def around(hooks):
        hooks["SessionStart"].insert(0, {"hooks": [{"type": "command", "command": "true"}]})
        hooks["Stop"][0]["hooks"].insert(0, {"type": "command", "command": "true"})
    edit_hooks(wired, around)
    hooks_file = os.path.join(os.path.realpath(wired), ".codex", "hooks.json")
    config_with(codex_home, trusting(wired) + "".join('[hooks.state.%s]\ntrusted_hash = "%s"\n' % (
        json.dumps(hooks_file + key), value) for key, value in (
            (":session_start:1:0", MEASURED["session_start"]), (":stop:0:1", MEASURED["stop"]))))
    assert codex_lines(check(installer, wired, codex_home)) == []

def test_new_bytes_in_a_hook_file_keep_the_review(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, **MEASURED))
    with open(path_in(wired, ".claude/hooks/session-start.py"), "a", encoding="utf-8") as handle:
        handle.write("# edited\n")
    edit_hooks(wired, lambda hooks: None)  # the same entries in another layout
    done = check(installer, wired, codex_home)
    assert "hooks differ from this version: session-start.py" in done.stdout
    assert codex_lines(done) == []


def test_the_review_is_read_under_the_projects_real_path(installer, wired, codex_home, tmp_path):
    config_with(codex_home, a_config(wired, **MEASURED))
    link = str(tmp_path / "a link")
    os.symlink(wired, link)
    assert codex_lines(check(installer, link, codex_home)) == []


def test_codex_home_defaults_to_the_users_home(installer, wired):
    home = installer.env["HOME"]
    config_with(os.path.join(home, ".codex"), 'model = "gpt-5-codex"\n')
    [line] = codex_lines(installer.run("--check", wired))
    assert os.path.join(home, ".codex", "config.toml") in line


def test_a_project_that_does_not_wire_codex_is_not_judged(installer, repo, codex_home):
    installer.ok("--project", repo)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "the protocol", env=installer.env)
    for text in ('model = "gpt-5-codex"\n', 'model = "gpt-5-codex\n'):  # whole, or not TOML
        config_with(codex_home, text)
        done = check(installer, repo, codex_home)
        assert done.returncode == 0 and codex_lines(done) == []


def test_a_hook_without_a_timeout_is_judged_as_codex_hashes_it(installer, wired, codex_home):
    # What Codex 0.169.0 recorded for the protocol's SessionStart entry with its timeout removed.
    without = "sha256:89340e5307d37c28312203dc9271376b879bfab83957fab79adbc2182a66112a"
    edit_hooks(wired, lambda hooks: hooks["SessionStart"][0]["hooks"][0].pop("timeout"))
    config_with(codex_home, a_config(wired, session_start=without, stop=MEASURED["stop"]))
    assert codex_lines(check(installer, wired, codex_home)) == []
    config_with(codex_home, a_config(wired, **MEASURED))
    assert "SessionStart changed since" in codex_lines(check(installer, wired, codex_home))[0]

def test_a_hook_in_a_form_the_record_was_not_measured_on_gets_no_verdict(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, stop=MEASURED["stop"]))
    edit_hooks(wired, lambda hooks: hooks["SessionStart"][0].update(matcher="startup"))
    assert codex_lines(check(installer, wired, codex_home)) == []


@pytest.mark.parametrize("text", [
    'model = "gpt-5-codex\n',                          # an unterminated string
    "[hooks.state]\n[hooks.state]\n",                   # a table twice
    b"model = \"\xff\"\n",                              # not UTF-8
])
def test_a_configuration_that_cannot_be_read_is_said_without_failing(installer, wired, codex_home, text):
    config_with(codex_home, text)
    done = check(installer, wired, codex_home)
    assert done.returncode == 0 and done.stderr == "" and "Traceback" not in done.stdout
    [line] = codex_lines(done)
    assert line.startswith("WARN     Codex CLI: cannot read %s (" % os.path.join(codex_home, "config.toml"))
    assert line.endswith("so whether Codex runs the protocol's hooks for you is not checked")


def test_records_of_another_shape_count_as_none(installer, wired, codex_home):
    config_with(codex_home, 'hooks = "on"\n' + trusting(wired))
    assert "no review of SessionStart and Stop" in codex_lines(check(installer, wired, codex_home))[0]
    config_with(codex_home, trusting(wired) + '[hooks.state.%s]\ntrusted_hash = 1\n' % json.dumps(
        os.path.join(os.path.realpath(wired), ".codex", "hooks.json:stop:0:0")))
    assert "no review of SessionStart and Stop" in codex_lines(check(installer, wired, codex_home))[0]
    config_with(codex_home, trusting(wired) + '[hooks.state]\n%s = "trusted"\n' % json.dumps(
        os.path.join(os.path.realpath(wired), ".codex", "hooks.json:stop:0:0")))
    done = check(installer, wired, codex_home)
    assert done.stderr == "" and "no review of SessionStart and Stop" in codex_lines(done)[0]


@pytest.mark.skipif(not os.path.exists(PYTHON38), reason="no Python 3.8 here")
def test_a_python_without_a_toml_reader_says_it_cannot_tell(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, **MEASURED))
    done = check(installer, wired, codex_home, python=PYTHON38)
    [line] = codex_lines(done)
    assert "no TOML reader (tomllib, Python 3.11+)" in line and line.startswith("WARN")


def test_the_check_never_writes_to_codex_home(installer, wired, codex_home):
    config_with(codex_home, a_config(wired, stop=MEASURED["stop"]))
    before = {name: read(os.path.join(codex_home, name)) for name in os.listdir(codex_home)}
    check(installer, wired, codex_home)
    assert {name: read(os.path.join(codex_home, name)) for name in os.listdir(codex_home)} == before


def test_a_run_that_writes_codex_entries_says_they_need_a_review(installer, repo):
    said = "Codex CLI runs these hooks only once you trust them as they are now"
    assert said in installer.ok("--project", repo, "--agents", "claude,codex").stdout
    assert said not in installer.ok("--update", repo).stdout
    assert said in installer.ok("--update", repo, "--python", sys.executable).stdout
    assert said not in installer.ok("--project", repo, "--agents", "claude,gemini").stdout
