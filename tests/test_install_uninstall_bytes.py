"""--project then --uninstall gives the folder back byte for byte: every file the user had keeps
its bytes and mode, every folder the user had stays, and only what the install created goes
(the memory index too, while it is the untouched template the install wrote)."""

import json
import os
import stat
import subprocess

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    entries, git, installer, make_repo, path_in, project, read, snapshot, template_text, write,
)

COMPACT = b'{"model":"x","note":"caf\\u00e9","n":1e2,"url":"a\\/b"}'


def state_of(root, env=None):
    """{relative path: (bytes, None for a folder or "-> target" for a link, permission bits)} of
    everything under root but .git/ (not the times: a rewrite of the same bytes counts as the
    same), and git's index as `ls-files --stage` reads it."""
    state = {rel.replace(os.sep, "/"): (content, mode)
             for rel, (content, mode, _) in snapshot(root).items()}
    if os.path.isdir(os.path.join(root, ".git")):
        state[".git/index"] = git(root, "ls-files", "--stage", env=env)
    return state


def round_trip(installer, folder):
    """The state before, and after --project then --uninstall."""
    before = state_of(folder, installer.env)
    installer.ok("--project", folder, "--allow-no-git")  # some of the folders are in no repository
    installer.ok("--uninstall", folder)
    return before, state_of(folder, installer.env)


def mkdirs(root, *rels):
    for rel in rels:
        os.makedirs(path_in(root, rel))


# ------------------------------------------------------------- settings.json

@pytest.mark.parametrize("data", [
    b"{}", b"{}\n", b"{ }\n", b"{\n}\n", b'{"hooks":{}}', b'{"hooks":{}}\n',
    b'{\n  "hooks": {}\n}\n', b'{"permissions":{}}\n', b'{"permissions": {"allow": []}}\n',
    b'{"hooks": {"Stop": []}}\n', b"", b"\n", COMPACT, b'{\r\n  "model": "x"\r\n}',
    # rules the user had that the protocol writes too: theirs, and they stay
    b'{"permissions": {"allow": ["Skill(catchup)"]}}\n',
    b'{"permissions": {"deny": ["Read(./.env)"], "allow": ["Bash(ls)"]}}\n',
    b'{"permissions":{"allow":["Skill(dream)","Bash(ls)"]}}',
])
def test_a_settings_file_the_user_had_comes_back_byte_for_byte(installer, project, data):
    write(path_in(project, ".claude/settings.json"), data)
    installer.ok("--project", project)
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".claude/settings.json")) == data


def test_a_settings_file_the_install_created_goes(installer, project):
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project)
    assert not os.path.lexists(path_in(project, ".claude/settings.json"))
    assert "  removed  .claude/settings.json (held only the protocol's entries)" in done.stdout


def test_an_uncommitted_layout_change_wins_over_heads_bytes(installer, tmp_path):
    """HEAD holds the settings indented; the working copy, the same settings compact and not yet
    committed. Giving HEAD's bytes back would undo the user's change."""
    repo = make_repo(str(tmp_path / "r"), installer.env,
                     {".claude/settings.json": '{\n  "model": "x"\n}\n'})
    write(path_in(repo, ".claude/settings.json"), b'{"model":"x"}')
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")) == b'{"model":"x"}'


def test_a_later_edit_of_the_settings_is_kept_over_the_bytes_from_before(installer, project):
    write(path_in(project, ".claude/settings.json"), b"{}\n")
    installer.ok("--project", project)
    path = path_in(project, ".claude/settings.json")
    write(path, read(path).replace(b"{\n", b'{\n  "model": "opus",\n', 1))
    installer.ok("--uninstall", project)
    assert read(path) == b'{\n  "model": "opus"\n}\n'


# ------------------------------------------------------------------ .gitignore

@pytest.mark.parametrize("data", [b"", b"\n", b"build/", b"build/\n", b"build/\r\n*.log\r\n"])
def test_a_gitignore_the_user_had_comes_back_byte_for_byte(installer, project, data):
    write(path_in(project, ".gitignore"), data)
    installer.ok("--project", project)
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".gitignore")) == data


# --------------------------------------------------------------------- folders

@pytest.mark.parametrize("folders", [
    [".claude"], [".claude/hooks"], [".claude/commands"], [".claude/hooks", ".claude/commands"],
    ["memory"],
])
def test_empty_folders_the_user_had_stay(installer, project, folders):
    mkdirs(project, *folders)
    before, after = round_trip(installer, project)
    assert after == before


def test_folders_the_install_created_go(installer, project):
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project)
    for rel in (".claude/hooks", ".claude/commands", ".claude"):
        assert not os.path.lexists(path_in(project, rel))
        assert "  removed  {} (now empty)".format(rel) in done.stdout


def test_a_second_install_does_not_take_the_protocols_folders_for_the_users(installer, project):
    installer.ok("--project", project)
    installer.ok("--project", project)
    installer.ok("--uninstall", project)
    assert entries(project) == []


# ---------------------------------------------------------------- the baseline

BASELINE = b"head 0123456789abcdef\0state 1 2 3\n"


@pytest.mark.parametrize("name, data", [
    (".session-baseline-notes.txt", b"my notes\n"),
    (".session-baseline.bak", b"a copy I keep\n"),
    (".session-baseline.", BASELINE),
    (".session-baseline.a b", BASELINE),
    (".session-baseline.x.tmp", BASELINE),
    (".session-baselines", BASELINE),
    (".session-baseline.123.tmp", b"not a state"),
])
def test_a_users_file_named_like_a_baseline_stays(installer, project, name, data):
    """Only a name the hooks write (the shared baseline, `.<session id>`, a temporary
    `.<pid>.tmp` or `.<session id>.<pid>.tmp`) holding what they write goes."""
    installer.ok("--project", project)
    write(path_in(project, ".claude/hooks/" + name), data)
    done = installer.ok("--uninstall", project)
    assert read(path_in(project, ".claude/hooks/" + name)) == data
    assert ".claude/hooks/" + name not in done.stdout


@pytest.mark.parametrize("name, data", [
    (".session-baseline", BASELINE),
    (".session-baseline.0f3c2a1e-9b7d-4c1a-8e2f-5a6b7c8d9e0f", BASELINE),
    (".session-baseline.my_session-1", BASELINE),
    (".session-baseline.4242.tmp", b""),
    (".session-baseline.4242.tmp", BASELINE),
    (".session-baseline.abc.4242.tmp", b""),
])
def test_the_baselines_the_hooks_write_go(installer, project, name, data):
    installer.ok("--project", project)
    write(path_in(project, ".claude/hooks/" + name), data)
    done = installer.ok("--uninstall", project)
    assert not os.path.lexists(path_in(project, ".claude/hooks/" + name))
    assert "  removed  .claude/hooks/{} (local file the hooks wrote)".format(name) in done.stdout
    assert not os.path.lexists(path_in(project, ".claude"))


def test_the_bytecode_of_the_hooks_goes_and_other_bytecode_stays(installer, project):
    installer.ok("--project", project)
    cache = ".claude/hooks/__pycache__/"
    write(path_in(project, cache + "stop-handoff.cpython-311.pyc"), b"\x00compiled")
    write(path_in(project, cache + "my_hook.cpython-311.pyc"), b"\x00mine")
    installer.ok("--uninstall", project)
    assert not os.path.lexists(path_in(project, cache + "stop-handoff.cpython-311.pyc"))
    assert read(path_in(project, cache + "my_hook.cpython-311.pyc")) == b"\x00mine"


def test_a_cache_of_the_hooks_alone_goes_with_its_folder(installer, project):
    installer.ok("--project", project)
    write(path_in(project, ".claude/hooks/__pycache__/session-start.cpython-38.opt-1.pyc"), b"x")
    installer.ok("--uninstall", project)
    assert not os.path.lexists(path_in(project, ".claude"))


# ------------------------------------------------------------ the whole folder

def starting_folders():
    """name -> a function that builds the folder's starting state in a folder."""
    def files(entries, folders=()):
        def build(root, env):
            mkdirs(root, *folders)
            for rel, data in entries.items():
                write(path_in(root, rel), data)
        return build

    def committed(entries):
        def build(root, env):
            make_repo(root, env, entries)
        return build

    return {
        "empty": files({}),
        "empty settings": files({".claude/settings.json": b"{}"}),
        "settings with an empty hooks object": files({".claude/settings.json": b'{"hooks":{}}\n'}),
        "compact settings": files({".claude/settings.json": COMPACT}),
        "indented CRLF settings": files({".claude/settings.json":
                                         b'{\r\n    "model": "opus"\r\n}\r\n'}),
        "blank settings": files({".claude/settings.json": b""}),
        "gitignore with a final newline": files({".gitignore": b"build/\n"}),
        "gitignore without one": files({".gitignore": b"build/"}),
        "CRLF gitignore": files({".gitignore": b"build/\r\n*.log\r\n"}),
        "empty gitignore": files({".gitignore": b""}),
        "empty folders": files({}, [".claude/hooks", ".claude/commands", "memory"]),
        "an empty .claude": files({}, [".claude"]),
        "a mode of its own": files({".claude/settings.json": b"{}\n"}),
        "committed settings": committed({".claude/settings.json": '{"model": "x"}\n',
                                         ".gitignore": "build/\n", "README.md": "hi\n"}),
        "committed empty settings": committed({".claude/settings.json": "{}",
                                               "README.md": "hi\n"}),
    }


@pytest.mark.parametrize("name", sorted(starting_folders()))
def test_project_then_uninstall_leaves_every_file_and_folder_as_it_was(installer, tmp_path, name):
    folder = str(tmp_path / "start")
    os.makedirs(folder)
    starting_folders()[name](folder, installer.env)
    if name == "a mode of its own":
        os.chmod(path_in(folder, ".claude/settings.json"), 0o600)
    before, after = round_trip(installer, folder)
    assert after == before


def test_the_snapshot_sees_a_changed_byte_a_mode_and_a_new_folder(tmp_path, installer):
    """The comparison above would pass on anything if the snapshot missed these."""
    folder = str(tmp_path / "f")
    write(path_in(folder, "a"), b"x")
    first = state_of(folder)
    write(path_in(folder, "a"), b"y")
    assert state_of(folder) != first
    write(path_in(folder, "a"), b"x")
    os.chmod(path_in(folder, "a"), 0o600)
    assert state_of(folder) != first
    os.chmod(path_in(folder, "a"), first["a"][1])
    assert state_of(folder) == first
    os.makedirs(path_in(folder, "b"))
    assert state_of(folder) != first
    subprocess.run(["git", "init", "-q", folder], env=installer.env, check=True)
    assert ".git/index" in state_of(folder, installer.env)


# ------------------------------------------------- what the install writes down

RECORD = ".claude/hooks/.before-install.json"


def test_a_second_install_changes_nothing_where_the_first_wrote_down_the_folder(
        installer, project):
    mkdirs(project, ".claude")
    done = installer.ok("--project", project)
    assert "  wrote    {} (what --uninstall must leave as it was: .claude)".format(
        RECORD) in done.stdout
    before = state_of(project)
    done = installer.ok("--project", project)
    assert state_of(project) == before
    assert done.stdout.splitlines()[-1].startswith("nothing to do: already up to date")


def test_the_files_the_install_edits_are_written_down_as_they_were(installer, project):
    """No simulation of the uninstall decides what to write down: the bytes of settings.json
    and .gitignore before the first install always are, and nothing else is."""
    write(path_in(project, ".claude/settings.json"), b'{"model": "x"}\n')
    write(path_in(project, ".gitignore"), b"build/\n")
    installer.ok("--project", project)
    with open(path_in(project, RECORD), encoding="utf-8") as handle:
        assert json.load(handle) == {"folders": [], "files": {
            ".claude/settings.json": '{"model": "x"}\n', ".gitignore": "build/\n"}}


def test_nothing_is_written_down_where_nothing_was_there(installer, project):
    installer.ok("--project", project)
    assert not os.path.lexists(path_in(project, RECORD))


def test_a_file_of_the_users_under_the_records_name_stays(installer, project):
    installer.ok("--project", project)
    write(path_in(project, RECORD), b'{"mine": true}\n')
    done = installer.ok("--uninstall", project)
    assert read(path_in(project, RECORD)) == b'{"mine": true}\n'
    assert "  keep     {} (not a record the installer wrote; left in place)".format(
        RECORD) in done.stdout


# ------------------------------------------- what the user had of the protocol's own

def test_a_committed_rule_the_user_had_stays(installer, tmp_path):
    data = '{"permissions": {"allow": ["Skill(dream)", "Bash(ls)"]}}\n'
    repo = make_repo(str(tmp_path / "r"), installer.env, {".claude/settings.json": data})
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")) == data.encode()
    assert git(repo, "status", "--porcelain", "--", ".claude/settings.json", env=installer.env) == ""


@pytest.mark.parametrize("data", ['{"hooks": {}}\n', "", "\n", '{"permissions": {"allow": []}}\n'])
def test_settings_committed_after_the_install_come_back_byte_for_byte(installer, tmp_path, data):
    # HEAD gives the bytes back at install time, not once the installed file is committed.
    repo = make_repo(str(tmp_path / "r"), installer.env, {".claude/settings.json": data})
    installer.ok("--project", repo)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "the protocol", env=installer.env)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")) == data.encode()


@pytest.mark.parametrize("thing", ["file", "folder"])
def test_the_records_name_taken_by_something_else_refuses_the_install(installer, project, thing):
    write(path_in(project, ".claude/settings.json"), b'{"hooks":{}}')
    if thing == "file":
        write(path_in(project, RECORD), b"my notes\n")
    else:
        os.makedirs(path_in(project, RECORD))
    before = state_of(project)
    done = installer.run("--project", project)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "install.py: error: .claude/hooks/.before-install.json is there and is not a record the "
        "installer wrote; move it away, so the install can write down what --uninstall must "
        "leave as it was; nothing was changed\n")
    assert state_of(project) == before


@pytest.mark.skipif(os.name == "nt", reason="Windows keeps no such permission bits")
def test_the_record_is_readable_by_its_owner_alone(installer, project):
    # It may hold a copy of settings whose "env" holds a secret.
    write(path_in(project, ".claude/settings.json"), b'{"env": {"TOKEN": "s3cret"}, "hooks": {}}')
    os.chmod(path_in(project, ".claude/settings.json"), 0o600)
    installer.ok("--project", project)
    assert stat.S_IMODE(os.lstat(path_in(project, RECORD)).st_mode) == 0o600


def test_an_install_over_an_install_writes_nothing_down(installer, project):
    # What is there then is the first install's: neither its settings nor a folder it emptied
    # of commands the user deleted are the user's to keep.
    installer.ok("--project", project)
    for name in os.listdir(path_in(project, ".claude/commands")):
        os.remove(path_in(project, ".claude/commands/" + name))
    installer.ok("--project", project)
    assert not os.path.lexists(path_in(project, RECORD))
    installer.ok("--uninstall", project)
    assert entries(project) == []
