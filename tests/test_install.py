"""install.py: the command line, and --project (files, settings merge, .gitignore, git index)."""

import ast
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    entries, fix_line,
    invoked,
    COMMANDS, GITIGNORE_BLOCK, HOOKS, REPO, expected_settings, git, index_mode, installer,
    installer_modules,
    path_in, project, read, release_a_new_version, repo, settings_of, snapshot, template_text,
    write, write_settings, SKILL_RULES, TEMPLATE_DENY_RULES,
)
from test_hook_interpreters import find_interpreter


# ------------------------------------------------------------------ the command line

def test_version_and_help_exit_zero(installer):
    assert "0.1.0" in installer.ok("--version").stdout
    text = installer.ok("--help").stdout
    for flag in ("--project", "--global", "--check", "--recursive", "--update", "--uninstall",
                 "--dry-run", "--force", "--python"):
        assert flag in text
    assert installer.ok("-h").stdout == text


@pytest.mark.parametrize("args", [
    [],
    ["--bogus"],
    ["--project"],
    ["--update"],
    ["--uninstall"],
    ["--project", "{dir}", "--check"],
    ["--global", "--uninstall", "{dir}"],
    ["--project", "{missing}"],
    ["--project", "{file}"],
    ["--check", "{file}"],
    ["--check", "{missing}", "--recursive"],
    ["--recursive", "{dir}"],
    ["--global", "{dir}"],
    ["--check", "{dir}", "--force"],
    ["--uninstall", "{dir}", "--python", "python"],
    ["--project", "{dir}", "--python", 'py "3"'],
    ["--project", "{dir}", "extra", "--force"],
    ["--proj", "{dir}"],
    ["--python"],
    ["--project", "{dir}", "{dir}"],
    ["--project", ""],
    ["--project", "{dir}/no\nsuch"],
    ["--bogus\nflag"],
    ["--check", ""],
    ["--project", "{dir}", "--python", "python3", "--python", "python"],
    ["--project", "{dir}", "--python", ""],
    ["--project", "{dir}", "--python", " "],
    ["--project", "{dir}", "--python", "py '3"],
    ["--project", "{dir}", "--python", "py\n3"],
    ["--project", "{dir}", "--python", "python3;rm -rf ~"],
    ["--project", "{dir}", "--python", "python3 #"],
    ["--project", "{dir}", "--python", "python3 &"],
    ["--project", "{dir}", "--python", "$(which python3)"],
    ["--project", "{dir}", "--python", "`which python3`"],
    ["--project", "{dir}", "--python", "C:\\Python312\\python.exe"],
    ["--project", "{dir}", "--python", "python3*"],
    ["--update", "{dir}", "--python", "{spaced}"],
])
def test_usage_errors_exit_2_with_one_line_and_no_traceback(installer, tmp_path, args):
    a_file = tmp_path / "a file.txt"
    a_file.write_text("x")
    spaced = tmp_path / "my python" / "python3"
    spaced.parent.mkdir()
    spaced.write_text("")
    names = {"dir": str(tmp_path), "missing": str(tmp_path / "missing"), "file": str(a_file),
             "spaced": str(spaced)}
    before = snapshot(str(tmp_path))
    done = installer.run(*[arg.format(**names) for arg in args])
    assert done.returncode == 2, done
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("install.py: error: ")
    assert "Traceback" not in done.stderr
    assert snapshot(str(tmp_path)) == before


def test_runs_through_a_symlink_to_the_script(installer, repo, tmp_path):
    project = repo
    link = tmp_path / "bin" / "mcp-install"
    link.parent.mkdir()
    os.symlink(installer.script, str(link))
    done = installer.run("--project", project)
    assert done.returncode == 0
    run_via_link = installer.run("--check", project, cwd=str(tmp_path))
    assert run_via_link.returncode == 0, run_via_link
    via = subprocess.run([sys.executable, str(link), "--check", project], env=installer.env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert via.returncode == 0, via.stderr
    assert via.stdout.startswith("ok")


@pytest.mark.parametrize("isolation", [[], ["-I", "-S"]], ids=["plain", "isolated"])
def test_the_package_beside_the_script_runs_whatever_the_folder_and_sys_path(
        installer, repo, tmp_path, isolation):
    """install.py imports installer/ by its path: run from another folder, under -I -S (no
    script folder on sys.path), or with packages of the same names first on sys.path, it runs
    its own modules and none of those."""
    decoys = tmp_path / "decoys"
    marker = tmp_path / "decoy ran"
    for name in ("installer", "mcp_installer"):
        write(str(decoys / name / "__init__.py"),
              "open({!r}, 'w').close()\n".format(str(marker)))
        for module in installer_modules():
            write(str(decoys / name / module), "open({!r}, 'w').close()\n".format(str(marker)))
    env = {"PYTHONPATH": str(decoys)}
    for args in (["--project", repo], ["--check", repo], ["--uninstall", repo]):
        done = subprocess.run([sys.executable] + isolation + [installer.script] + args,
                              cwd=str(decoys), env=dict(installer.env, **env),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)
        assert (done.returncode, done.stderr) == (0, ""), (args, done.stdout)
    assert not marker.exists()
    assert not os.path.exists(installer.source_file("installer/__pycache__"))


def test_a_missing_module_of_the_package_is_one_line_exit_1(installer, project):
    os.remove(installer.source_file("installer/plan.py"))
    done = installer.run("--project", project)
    assert done.returncode == 1 and done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith("install.py: error: incomplete installer: cannot load {}: ".format(
        installer.source_file("installer")))
    assert "plan" in line
    assert entries(project) == []


def test_an_incomplete_source_tree_is_one_line_exit_1(installer, project):
    os.remove(installer.source_file("commands/dream.md"))
    done = installer.run("--project", project)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert "dream.md" in done.stderr
    assert entries(project) == []


@pytest.mark.parametrize("minor", range(8, 14), ids=lambda minor: "3.%d" % minor)
def test_every_mode_runs_under_each_python_from_3_8(installer, repo, minor):
    python = find_interpreter(minor)
    if python is None:
        pytest.skip("Python 3.%d is not installed here" % minor)
    for args in (["--project", repo, "--python", python], ["--update", repo, "--dry-run"],
                 ["--check", repo], ["--check", "--json", repo], ["--uninstall", repo]):
        done = installer.run(*args, python=python)
        assert (done.returncode, done.stderr) == (0, ""), (args, done)
    done = installer.run("--project", repo, "--python", "py '3", python=python)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1


@pytest.mark.parametrize("rel", ["install.py"] + ["installer/" + name for name in installer_modules()])
def test_install_py_is_python_3_8_syntax_and_stdlib_only(rel):
    """install.py and its package: Python 3.8 syntax, and nothing imported but the standard
    library and the package's own modules (relative imports)."""
    with open(os.path.join(REPO, *rel.split("/")), encoding="utf-8") as handle:
        source = handle.read()
    tree = ast.parse(source, feature_version=(3, 8))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            imported.add(node.module.split(".")[0])
    stdlib = getattr(sys, "stdlib_module_names", None)
    if stdlib:
        assert imported <= set(stdlib) | {"__future__"}, imported - set(stdlib)
    if rel == "install.py":
        assert source.startswith("#!/usr/bin/env python3\n")
    else:  # every module opens with why it exists
        assert ast.get_docstring(tree), rel


# ------------------------------------------------------------------ --project

def test_project_installs_every_file(installer, project):
    done = installer.ok("--project", project)
    for name in HOOKS:
        installed = path_in(project, ".claude/hooks/" + name)
        assert read(installed) == read(installer.source_file("hooks/" + name))
        assert stat.S_IMODE(os.stat(installed).st_mode) == 0o755
    for name in COMMANDS:
        assert read(path_in(project, ".claude/commands/" + name)) == \
            read(installer.source_file("commands/" + name))
    assert read(path_in(project, "memory/MEMORY.md")) == read(installer.source_file("templates/MEMORY.md"))
    assert read(path_in(project, ".claudeignore")) == read(installer.source_file("templates/claudeignore"))
    assert read(path_in(project, ".gitignore")).decode("utf-8") == template_text(installer, "gitignore")
    assert read(path_in(project, ".gitattributes")).decode("utf-8") == \
        template_text(installer, "gitattributes")
    assert settings_of(project) == expected_settings()
    lines = done.stdout.splitlines()
    assert lines[0] == "installing into " + project
    assert lines[-1].startswith("done: ")
    wrote = [line for line in lines if line.startswith("  wrote")]
    # the hooks, the commands, the memory index, .claudeignore, .gitignore, .gitattributes,
    # settings.json, and first of all the record of what the protocol added
    assert len(wrote) == len(HOOKS) + len(COMMANDS) + 6
    assert wrote[0] == "  wrote    .claude/memory-context-protocol.json (what the protocol added here)"


def test_settings_are_two_space_json_with_a_final_newline(installer, project):
    installer.ok("--project", project)
    text = read(path_in(project, ".claude/settings.json")).decode("utf-8")
    assert text == json.dumps(expected_settings(), indent=2) + "\n"


def test_project_twice_changes_nothing(installer, repo):
    installer.ok("--project", repo)
    before = snapshot(repo)
    done = installer.ok("--project", repo)
    assert snapshot(repo) == before
    assert done.stdout.splitlines()[-1] == "nothing to do: already up to date"
    assert all(line.startswith(("installing", "  keep", "  note", "  next", "nothing"))
               for line in done.stdout.splitlines()), done.stdout


def test_python_option_chooses_the_interpreter(installer, project):
    installer.ok("--project", project, "--python", sys.executable)
    assert settings_of(project) == expected_settings(sys.executable)


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh, as the harness uses")
@pytest.mark.parametrize("python", [
    "py -3", "'/opt/my python/bin/python3'", "C:/Python312/python.exe", "/usr/bin/env python3",
    "'C:\\Program Files\\Python312\\python.exe'", "PYTHONUTF8=1 python3", "~/venv/bin/python",
    "/home/jos\u00e9/venv/bin/python",
])
def test_an_accepted_interpreter_reaches_sh_word_for_word(installer, project, python):
    installer.ok("--project", project, "--python", python, "--allow-missing-python")
    for group in settings_of(project)["hooks"].values():
        command = group[0]["hooks"][0]["command"]
        hook = command.rsplit("/", 1)[1].rstrip('"')
        shown = subprocess.run(["sh", "-c", "printf '%s\\n' " + command], stdout=subprocess.PIPE,
                               env=dict(installer.env, CLAUDE_PROJECT_DIR=project),
                               universal_newlines=True, check=True).stdout
        words = [word.replace("~", installer.env["HOME"], 1) if word.startswith("~") else word
                 for word in shlex.split(python)]
        assert shown.splitlines() == words + ["-I", "-S", project + "/.claude/hooks/" + hook]


@pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX sh, as the harness uses")
def test_an_interpreter_path_with_spaces_runs_when_single_quoted(installer, project, tmp_path):
    folder = tmp_path / "my python"
    folder.mkdir()
    os.symlink(sys.executable, str(folder / "python"))
    installer.ok("--project", project, "--python", "'{}'".format(folder / "python"))
    handler = settings_of(project)["hooks"]["SessionStart"][0]["hooks"][0]
    done = subprocess.run(["sh", "-c", handler["command"]], input=b'{"source": "startup"}',
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=project,
                          env=dict(installer.env, CLAUDE_PROJECT_DIR=project), timeout=30)
    assert done.returncode == 0, done.stderr


def test_a_missing_interpreter_is_refused_unless_allowed_then_noted(installer, project):
    refused = installer.run("--project", project, "--python", "py -3")
    assert refused.returncode == 1 and "py is not on this machine's PATH" in refused.stderr
    done = installer.ok("--project", project, "--python", "py -3", "--allow-missing-python")
    assert "py is not on this machine's PATH" in done.stdout
    command = settings_of(project)["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith('py -3 -I -S "${CLAUDE_PROJECT_DIR}/')


@pytest.mark.parametrize("mode", ["--project", "--update", "--uninstall"])
def test_the_user_configuration_folder_is_no_project(installer, tmp_path, mode):
    home = installer.env["HOME"]
    write(path_in(home, ".claude/settings.json"), '{"model": "opus"}\n')
    elsewhere = {"HOME": str(tmp_path / "elsewhere"), "CLAUDE_CONFIG_DIR": path_in(home, ".claude")}
    for env in ({}, elsewhere):
        before = snapshot(home)
        done = installer.run(mode, home, env=env)
        assert done.returncode == 2 and done.stdout == ""
        assert len(done.stderr.splitlines()) == 1
        assert "is your user configuration folder" in done.stderr
        assert snapshot(home) == before


def test_user_memory_and_claudeignore_survive_force(installer, project):
    write(path_in(project, "memory/MEMORY.md"), "# our team index\n- [a](a.md)\n")
    write(path_in(project, ".claudeignore"), "secrets/\n")
    done = installer.ok("--project", project, "--force")
    assert read(path_in(project, "memory/MEMORY.md")) == b"# our team index\n- [a](a.md)\n"
    assert read(path_in(project, ".claudeignore")) == b"secrets/\n"
    assert "  keep     memory/MEMORY.md (exists; never overwritten)" in done.stdout


@pytest.mark.parametrize("mode, rel, kept, replaced", [
    ("--update", ".claude/hooks/stop-handoff.py",
     "  keep     .claude/hooks/stop-handoff.py (edited by you; --update --force replaces it)",
     "  replaced .claude/hooks/stop-handoff.py (--force; your edit is kept in "
     ".claude/hooks/stop-handoff.py.mine)"),
    ("--update", ".claude/commands/dream.md",
     "  keep     .claude/commands/dream.md (edited by you; --force replaces it)",
     "  replaced .claude/commands/dream.md (--force; your edit is kept in "
     ".claude/commands/dream.md.mine)"),
])
def test_an_edited_hook_or_command_is_kept_and_named_unless_force(installer, project, mode, rel,
                                                                  kept, replaced):
    installer.ok("--project", project)
    path = path_in(project, rel)
    write(path, "# my own version\n")
    done = installer.ok(mode, project)
    assert read(path) == b"# my own version\n"
    assert kept in done.stdout
    done = installer.ok(mode, project, "--force")
    assert read(path) == read(installer.source_file(rel[len(".claude/"):]))
    assert replaced in done.stdout
    assert read(path + ".mine") == b"# my own version\n"


def test_a_hook_that_lost_its_executable_bit_gets_it_back(installer, project):
    installer.ok("--project", project)
    hook = path_in(project, ".claude/hooks/session-start.py")
    os.chmod(hook, 0o644)
    done = installer.ok("--project", project)
    assert stat.S_IMODE(os.stat(hook).st_mode) == 0o755
    assert "  chmod +x .claude/hooks/session-start.py" in done.stdout


# ------------------------------------------------------------------ settings.json merge

@pytest.mark.parametrize("content", ["{}", "{}\n", "", "  \n"])
def test_merge_into_an_empty_file(installer, project, content):
    write_settings(project, content)
    installer.ok("--project", project)
    assert settings_of(project) == expected_settings()


USER_SETTINGS = {
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Read(./.env)"]},
    "model": "opus",
    "hooks": {
        "SessionStart": [{"matcher": "startup",
                          "hooks": [{"type": "command", "command": "echo hello"}]}],
        "PreToolUse": [{"matcher": "Bash",
                        "hooks": [{"type": "command", "command": "./guard.sh", "timeout": 5}]}],
    },
    "env": {"FOO": "bär"},
}


def test_merge_keeps_every_user_key_hook_and_permission(installer, project):
    write_settings(project, USER_SETTINGS)
    done = installer.ok("--project", project)
    merged = settings_of(project)
    ours = expected_settings()["hooks"]
    # the user's rules first and unchanged, then the protocol's, none twice
    assert merged["permissions"] == {
        "allow": ["Bash(npm test:*)"] + SKILL_RULES,
        "deny": ["Read(./.env)"] + [rule for rule in TEMPLATE_DENY_RULES if rule != "Read(./.env)"],
    }
    assert merged["model"] == "opus"
    assert merged["env"] == {"FOO": "bär"}
    assert merged["hooks"]["PreToolUse"] == USER_SETTINGS["hooks"]["PreToolUse"]
    assert merged["hooks"]["SessionStart"] == USER_SETTINGS["hooks"]["SessionStart"] + ours["SessionStart"]
    assert merged["hooks"]["Stop"] == ours["Stop"]
    assert list(merged) == list(USER_SETTINGS)
    assert ("  merged   .claude/settings.json (wired SessionStart and Stop; allowed "
            "Skill(catchup), Skill(handoff), Skill(dream); denied the file tools 9 .claudeignore "
            "pattern(s))") in done.stdout
    assert '"FOO": "b\\u00e4r"' in read(path_in(project, ".claude/settings.json")).decode("utf-8")


def test_merge_twice_adds_nothing(installer, project):
    write_settings(project, USER_SETTINGS)
    installer.ok("--project", project)
    first = read(path_in(project, ".claude/settings.json"))
    installer.ok("--project", project)
    installer.ok("--update", project)
    installer.ok("--project", project, "--force")
    assert read(path_in(project, ".claude/settings.json")) == first


def test_a_file_already_holding_our_entries_is_left_byte_identical(installer, project):
    data = dict(USER_SETTINGS)
    data["hooks"] = dict(USER_SETTINGS["hooks"], **expected_settings()["hooks"])
    data["permissions"] = expected_settings()["permissions"]
    text = json.dumps(data, indent=4)  # the user's own layout, no final newline
    write_settings(project, text)
    done = installer.ok("--project", project)
    assert read(path_in(project, ".claude/settings.json")).decode("utf-8") == text
    assert "  keep     .claude/settings.json (hooks already wired)" in done.stdout


@pytest.mark.parametrize("escape", ["\\udc80", "\\ud800"])
def test_half_a_surrogate_pair_is_written_escaped_in_valid_utf8(installer, project, escape):
    write_settings(project, '{"env": {"X": "%s", "Y": "b\u00e4r"}}' % escape)
    installer.ok("--project", project)
    data = read(path_in(project, ".claude/settings.json"))
    data.decode("utf-8")
    assert escape.encode("ascii") in data
    assert json.loads(data)["env"]["Y"] == "b\u00e4r"
    installer.ok("--uninstall", project)


def test_entries_recognised_by_the_command_path_whatever_the_interpreter(installer, project):
    data = expected_settings("py -3")
    write_settings(project, data)
    installer.ok("--project", project)
    assert settings_of(project) == data


@pytest.mark.parametrize("text, what", [
    ('{\n  "hooks": {\n    "Stop": []\n  },\n}\n',
     "has a comma after its last entry (before line 5, column 1)"),
    ('{"permissions": {"allow": ["x",]}}',
     "has a comma after its last entry (before line 1, column 32)"),
    ("not json", "is not valid JSON at line 1, column 1"),
])
def test_invalid_settings_are_reported_and_nothing_is_installed(installer, project, text, what):
    write_settings(project, text)
    done = installer.run("--project", project)
    assert done.returncode == 1
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert ".claude/settings.json " + what in done.stderr
    assert "nothing was changed" in done.stderr
    assert entries(project) == [".claude"]
    assert os.listdir(path_in(project, ".claude")) == ["settings.json"]
    assert read(path_in(project, ".claude/settings.json")).decode("utf-8") == text


WRONG_SHAPES = [
    "[]",
    '{"hooks": []}',
    '{"hooks": "x"}',
    '{"hooks": {"Stop": {}}}',
    '{"hooks": {"PreToolUse": "x"}}',
    '{"hooks": {"SessionStart": "x"}}',
    '{"model": "a", "model": "b"}',
    '{"hooks": {}, "hooks": {}}',
    '{"timeout": NaN}',
    '{"cleanupPeriodDays": 1e999}',
    '{"env": {"X": [-1.5e400]}}',
    '{"model": "caf\xe9"}'.encode("latin-1"),
    pytest.param('{"a": ' * 100000 + "1" + "}" * 100000, id="nested-100000-deep"),
]


@pytest.mark.parametrize("text", WRONG_SHAPES)
def test_settings_of_the_wrong_shape_are_refused(installer, project, text):
    write_settings(project, text)
    before = snapshot(project)
    done = installer.run("--project", project)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("install.py: error: .claude/settings.json")
    assert done.stderr.rstrip().endswith("nothing was changed")
    assert snapshot(project) == before
    assert not os.path.exists(path_in(project, ".claude/hooks"))


@pytest.mark.parametrize("mode", ["--update", "--uninstall"])
def test_other_modes_refuse_settings_of_the_wrong_shape_too(installer, project, mode):
    installer.ok("--project", project)
    write_settings(project, '{"hooks": []}')
    before = snapshot(project)
    done = installer.run(mode, project)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert '"hooks" is not an object' in done.stderr
    assert snapshot(project) == before


def test_update_refuses_to_replace_an_event_it_must_add_to(installer, project):
    """The harness ignores an event that is not a list; the protocol's entry could go there only
    by replacing it, so --update refuses, and --uninstall, which adds nothing, leaves it."""
    installer.ok("--project", project)
    text = '{"hooks": {"Stop": {"hooks": [{"type": "command", "command": "make lint"}]}}}\n'
    write_settings(project, text)
    before = snapshot(project)
    done = installer.run("--update", project)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert '"hooks.Stop" is not a list of groups' in done.stderr
    assert snapshot(project) == before
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".claude/settings.json")).decode() == text


@pytest.mark.parametrize("mode", ["--project", "--uninstall"])
def test_a_number_that_reads_as_infinity_is_refused_not_written(installer, project, mode):
    text = '{"cleanupPeriodDays": 1e999}\n'
    write_settings(project, text)
    done = installer.run(mode, project)
    assert done.returncode == 1 and len(done.stderr.splitlines()) == 1
    assert "the number 1e999 is too large to be written back as JSON" in done.stderr
    assert read(path_in(project, ".claude/settings.json")).decode("utf-8") == text


def make_special_file(path, kind):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "a folder":
        os.mkdir(path)
    elif kind == "a FIFO":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(path)
    else:
        if not os.path.exists("/dev/zero"):
            pytest.skip("no /dev/zero here")
        os.symlink("/dev/zero", path)


@pytest.mark.parametrize("kind", ["a folder", "a FIFO", "a link to an endless device"])
def test_settings_that_are_not_a_regular_file_are_refused_without_waiting(installer, project, kind):
    make_special_file(path_in(project, ".claude/settings.json"), kind)
    done = installer.run("--project", project, timeout=30)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("install.py: error: .claude/settings.json is ")
    assert done.stderr.rstrip().endswith("; nothing was changed")
    assert sorted(os.listdir(path_in(project, ".claude"))) == ["settings.json"]
    check = installer.run("--check", project, timeout=30)
    assert check.returncode == 1 and check.stderr == ""
    assert "BROKEN   .claude/settings.json is " in check.stdout


def test_a_symlinked_settings_file_is_refused_and_its_target_untouched(installer, project, tmp_path):
    target = tmp_path / "shared-settings.json"
    target.write_text('{"model": "opus"}\n')
    os.makedirs(path_in(project, ".claude"))
    os.symlink(str(target), path_in(project, ".claude/settings.json"))
    done = installer.run("--project", project)
    assert done.returncode == 1
    assert "symbolic link" in done.stderr
    assert target.read_text() == '{"model": "opus"}\n'
    assert os.path.islink(path_in(project, ".claude/settings.json"))
    assert not os.path.exists(path_in(project, ".claude/hooks"))


@pytest.mark.parametrize("rel", [".claude/commands/dream.md", ".claude/hooks/stop-handoff.py"])
@pytest.mark.parametrize("mode", ["--project", "--update", "--dry-run"])
def test_a_link_to_nothing_where_an_owned_file_belongs_is_refused(installer, project, rel, mode):
    installer.ok("--project", project)
    os.remove(path_in(project, rel))
    os.symlink(path_in(project, "nowhere"), path_in(project, rel))
    before = snapshot(project)
    done = installer.run(*(["--project", project, "--dry-run"] if mode == "--dry-run" else
                           [mode, project, "--force"]))
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("install.py: error: {} is a symbolic link; refusing to write through "
                           "it; nothing was changed\n".format(rel))
    assert snapshot(project) == before


def test_a_symlinked_hooks_folder_is_refused(installer, project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.makedirs(path_in(project, ".claude"))
    os.symlink(str(elsewhere), path_in(project, ".claude/hooks"))
    done = installer.run("--project", project)
    assert done.returncode == 1
    assert ".claude/hooks is a symbolic link" in done.stderr
    assert os.listdir(str(elsewhere)) == []


def test_settings_write_is_atomic_and_leaves_no_temporary_files(installer, project):
    write_settings(project, USER_SETTINGS)
    os.chmod(path_in(project, ".claude/settings.json"), 0o600)
    installer.ok("--project", project)
    assert sorted(os.listdir(path_in(project, ".claude"))) == [
        "commands", "hooks", "memory-context-protocol.json", "settings.json"]
    assert stat.S_IMODE(os.stat(path_in(project, ".claude/settings.json")).st_mode) == 0o600


# ------------------------------------------------------------------ .gitignore

def gitignore_of(project):
    return read(path_in(project, ".gitignore")).decode("utf-8")


def block_of(installer):
    return template_text(installer, "gitignore")


def test_gitignore_block_appended_after_a_final_newline(installer, project):
    write(path_in(project, ".gitignore"), "node_modules/\n")
    installer.ok("--project", project)
    assert gitignore_of(project) == "node_modules/\n" + block_of(installer)


def test_gitignore_without_final_newline_stays_without_one(installer, repo):
    write(path_in(repo, ".gitignore"), "node_modules/")
    installer.ok("--project", repo)
    assert gitignore_of(repo) == "node_modules/\n" + block_of(installer).rstrip("\n")
    done = installer.ok("--project", repo)
    assert done.stdout.splitlines()[-1] == "nothing to do: already up to date"


def test_gitignore_block_appended_once(installer, project):
    write(path_in(project, ".gitignore"), "dist/\n")
    installer.ok("--project", project)
    done = installer.ok("--project", project)
    assert gitignore_of(project).count(block_of(installer)) == 1
    assert "  keep     .gitignore (local-only lines present)" in done.stdout


def lines_of_block(installer):
    return block_of(installer).splitlines()


@pytest.mark.parametrize("drop", ["a body line", "the end marker", "the begin marker", "two lines"])
def test_a_partly_deleted_block_is_repaired_in_place(installer, project, drop):
    block = lines_of_block(installer)
    if drop == "a body line":
        damaged = block[:2] + block[3:]
    elif drop == "the end marker":
        damaged = block[:-1]
    elif drop == "the begin marker":
        damaged = block[1:]
    else:
        damaged = block[:1] + block[3:]
    write(path_in(project, ".gitignore"), "dist/\n" + "\n".join(damaged) + "\n*.log\n")
    done = installer.ok("--project", project)
    assert gitignore_of(project) == "dist/\n" + block_of(installer) + "*.log\n"
    assert "  repaired .gitignore (restored the local-only lines)" in done.stdout
    again = installer.ok("--project", project)
    assert "  keep     .gitignore" in again.stdout


def test_lines_the_user_wrote_inside_the_block_are_kept_just_after_it(installer, project):
    block = lines_of_block(installer)
    write(path_in(project, ".gitignore"), "dist/\n" + "\n".join(
        block[:2] + [".env"] + block[2:4] + ["*.pem"] + block[4:]) + "\n")
    done = installer.ok("--project", project)
    assert gitignore_of(project) == "dist/\n" + block_of(installer) + ".env\n*.pem\n"
    assert "  repaired .gitignore" in done.stdout
    installer.ok("--uninstall", project)
    assert gitignore_of(project) == "dist/\n.env\n*.pem\n"


@pytest.mark.parametrize("lost", ["begin", "end"])
def test_a_block_that_lost_a_marker_never_takes_the_users_lines(installer, project, lost):
    block = lines_of_block(installer)
    mine = [".claude/settings.local.json", ".claude/worktrees/"]
    lines = mine + block[1:] if lost == "begin" else block[:-1] + mine
    write(path_in(project, ".gitignore"), "\n".join(lines) + "\n")
    installer.ok("--uninstall", project)
    assert gitignore_of(project) == "\n".join(mine) + "\n"


def test_gitignore_with_crlf_line_endings_keeps_them(installer, project):
    write(path_in(project, ".gitignore"), "dist/\r\n")
    installer.ok("--project", project)
    expected = "dist/\r\n" + block_of(installer).replace("\n", "\r\n")
    assert gitignore_of(project) == expected


def test_the_block_lists_every_local_only_file(installer):
    block = block_of(installer)
    assert block == GITIGNORE_BLOCK or all(
        line in block for line in GITIGNORE_BLOCK.splitlines()[1:-1])


# ------------------------------------------------------------------ git index

def test_new_hooks_are_not_staged_and_the_next_step_says_how(installer, repo):
    done = installer.ok("--project", repo)
    assert git(repo, "diff", "--cached", "--name-only", env=installer.env) == ""
    [line] = [line for line in done.stdout.splitlines() if "git add --chmod=+x" in line]
    assert line.startswith("  next     cd {} && git add --chmod=+x {} && git add ".format(
        shlex.quote(repo), " ".join(".claude/hooks/" + name for name in HOOKS)))


def test_the_line_that_adds_the_hooks_leaves_the_users_own_hooks_alone(installer, repo):
    """A hook of the user's, committed without the executable bit: the line the run gives,
    run as printed, marks the protocol's hooks executable and not theirs."""
    write(path_in(repo, ".claude/hooks/lint.py"), "print('lint')\n")
    git(repo, "add", "--", ".claude/hooks/lint.py", env=installer.env)
    git(repo, "commit", "-q", "-m", "a hook of ours", env=installer.env)
    done = installer.ok("--project", repo)
    [line] = [line for line in done.stdout.splitlines() if "git add --chmod=+x" in line]
    subprocess.run(line.split("next     ", 1)[1].split(" (then commit")[0], shell=True, cwd=repo,
                   check=True, env=installer.env)
    assert index_mode(repo, installer.env, ".claude/hooks/lint.py") == "100644"
    assert all(index_mode(repo, installer.env, ".claude/hooks/" + name) == "100755"
               for name in HOOKS)


def test_tracked_hooks_are_marked_executable_in_the_index(installer, repo):
    installer.ok("--project", repo)
    env = installer.env
    git(repo, "add", "--chmod=-x", ".claude", env=env)
    git(repo, "commit", "-q", "-m", "hooks without exec bit", env=env)
    assert index_mode(repo, env, ".claude/hooks/stop-handoff.py") == "100644"
    done = installer.ok("--project", repo)
    for name in HOOKS:
        assert index_mode(repo, env, ".claude/hooks/" + name) == "100755"
    assert "  git +x   " + ", ".join(HOOKS) + " (mode 100755 in git's index)" in done.stdout
    # the mode changed in the index is what is left to commit
    [line] = [line for line in done.stdout.splitlines() if line.startswith("  next     ")
              and "git add" in line]
    assert "git add --chmod=+x " + " ".join(".claude/hooks/" + name for name in HOOKS) + " && " \
        in line
    again = installer.ok("--project", repo)
    assert "git +x" not in again.stdout


def test_a_file_where_a_folder_belongs_is_refused_before_any_write(installer, project):
    write(path_in(project, ".claude/commands"), "not a folder\n")
    done = installer.run("--project", project)
    assert done.returncode == 1
    assert ".claude/commands is not a directory" in done.stderr
    assert not os.path.exists(path_in(project, ".claude/hooks"))


# ------------------------------------------------------------------ a hook of the user's

MY_HOOK = b"print('my own session start')\n"


@pytest.fixture
def repo_with_my_hook(installer, repo):
    write(path_in(repo, ".claude/hooks/session-start.py"), MY_HOOK)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "my hook", env=installer.env)
    return repo


@pytest.mark.parametrize("args", [["--project"], ["--project", "--force"], ["--update"]])
def test_a_hook_of_the_users_is_kept_with_its_index_mode(installer, repo_with_my_hook, args):
    repo = repo_with_my_hook
    if args[0] == "--update":
        installer.ok("--project", repo)
    done = installer.ok(*(args + [repo]))
    assert read(path_in(repo, ".claude/hooks/session-start.py")) == MY_HOOK
    assert index_mode(repo, installer.env, ".claude/hooks/session-start.py") == "100644"
    assert ("  keep     .claude/hooks/session-start.py (your own hook, not the protocol's: it "
            "stays, and the protocol's session-start.py is not installed (see --check))"
            ) in done.stdout
    assert "hooks" not in settings_of(repo)  # nor the Stop guard, which needs the protocol's start


def test_a_hook_of_the_users_is_a_clash_no_mode_takes_over(installer, repo_with_my_hook):
    """Not drift, and no --force: --check names the clash and the way out, renaming it."""
    repo = repo_with_my_hook
    installer.ok("--project", repo)
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert "differ" not in done.stdout and "fix:" not in done.stdout
    [line] = [line for line in done.stdout.splitlines() if "session-start.py" in line]
    assert line.startswith("  CLASH    .claude/hooks/session-start.py is your own file") and \
        "rename yours" in line
    installer.ok("--update", "--force", repo)
    assert read(path_in(repo, ".claude/hooks/session-start.py")) == MY_HOOK
    git(repo, "mv", ".claude/hooks/session-start.py", ".claude/hooks/my-session-start.py",
        env=installer.env)
    installer.ok("--update", repo)
    assert read(path_in(repo, ".claude/hooks/session-start.py")) == \
        read(installer.source_file("hooks/session-start.py"))
    assert "SessionStart" in settings_of(repo)["hooks"]


def test_uninstall_leaves_a_hook_of_the_users(installer, repo_with_my_hook):
    repo = repo_with_my_hook
    installer.ok("--project", repo)
    done = installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/hooks/session-start.py")) == MY_HOOK
    assert "  keep     .claude/hooks/session-start.py (your own hook, not the protocol's; " \
        "left in place)" in done.stdout
    assert not os.path.exists(path_in(repo, ".claude/hooks/stop-handoff.py"))


def test_an_older_release_of_a_hook_is_fixed_by_update(installer, repo):
    installer.ok("--project", repo)
    release_a_new_version(installer, "hooks/stop-handoff.py", "RELEASED_HOOK_DIGESTS")
    done = installer.run("--check", repo)
    assert fix_line(installer, "--update", repo) + "\n" in done.stdout
    installer.ok("--update", repo)
    installer.ok("--check", repo)


def test_a_locked_git_index_is_found_before_any_write(installer, repo):
    env = installer.env
    installer.ok("--project", repo)
    git(repo, "add", "--chmod=-x", ".claude/hooks", env=env)
    os.remove(path_in(repo, ".claude/commands/memory-status.md"))
    write(path_in(repo, ".git/index.lock"), "")
    before = snapshot(repo)
    done = installer.run("--project", repo)
    assert done.returncode == 1 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "index is locked" in done.stderr and "nothing was changed" in done.stderr
    assert snapshot(repo) == before


def test_help_lists_every_exit_code(installer):
    done = installer.ok("--help")
    assert "130 interrupted" in done.stdout
