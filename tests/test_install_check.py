"""install.py --check and --check --recursive: budgets, installation, wiring and drift."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401
    fix_line,
    invoked,
    installer, make_repo, path_in, project, read, repo, snapshot, write,
)


def overfill_the_index(project):
    write(path_in(project, "memory/MEMORY.md"),
          "# Index\n" + "".join("- [t{0}](t{0}.md) - topic\n".format(n) for n in range(90)))
    for n in range(90):  # every pointer resolves: only the line budget is over
        write(path_in(project, "memory/t{}.md".format(n)), "# t{}\n".format(n))


# ------------------------------------------------------------------ one project

def test_healthy_project_is_one_short_line_and_exit_0(installer, repo):
    project = repo
    installer.ok("--project", project)
    before = snapshot(project)
    done = installer.ok("--check", project)
    assert done.stdout.splitlines() == [
        "ok: {} - hooks installed, wired and current; every budget within its limit".format(project)]
    assert snapshot(project) == before


def test_check_defaults_to_the_current_folder(installer, repo):
    project = repo
    installer.ok("--project", project)
    done = installer.ok("--check", cwd=project)
    assert done.stdout.startswith("ok: " + project)


def test_a_project_without_the_protocol_is_a_finding(installer, project):
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert "NONE     protocol not installed" in done.stdout
    assert fix_line(installer, "--project", project) in done.stdout


@pytest.mark.parametrize("typed", ["install.py", "./install.py"])
def test_the_fix_line_is_the_command_as_it_was_typed_and_runs_as_written(installer, repo, typed):
    python = invoked(installer)[:-len(" " + installer.script)]
    done = subprocess.run([sys.executable, typed, "--check", repo], cwd=os.path.dirname(
        installer.script), env=installer.env, stdout=subprocess.PIPE, universal_newlines=True)
    assert done.returncode == 1
    line = "fix: {} {} --project '{}'".format(python, typed, repo)  # the folder has a space
    assert "           " + line in done.stdout.splitlines()
    rerun = subprocess.run(["sh", "-c", line[len("fix: "):]], cwd=os.path.dirname(
        installer.script), env=installer.env, stdout=subprocess.PIPE)
    assert rerun.returncode == 0
    installer.ok("--check", repo)


def test_a_drifted_hook_is_named(installer, project):
    installer.ok("--project", project)
    with open(path_in(project, ".claude/hooks/prune-worktrees.py"), "a") as handle:
        handle.write("# local tweak\n")
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert "DRIFT    hooks differ from this version: prune-worktrees.py" in done.stdout
    assert "session-start.py" not in done.stdout
    assert fix_line(installer, "--update --force", project) in done.stdout


def test_a_missing_hook_and_a_missing_wiring_are_named(installer, project):
    installer.ok("--project", project)
    os.remove(path_in(project, ".claude/hooks/context-budget.py"))
    settings = path_in(project, ".claude/settings.json")
    data = json.loads(read(settings))
    del data["hooks"]["Stop"]
    write(settings, json.dumps(data))
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert "hooks missing: context-budget.py" in done.stdout
    assert "UNWIRED  not wired in settings.json: Stop" in done.stdout


def test_wiring_only_in_the_local_settings_file_does_not_reach_teammates(installer, repo):
    # The CLI keeps .claude/settings.local.json out of git: what only it holds is one person's.
    installer.ok("--project", repo)
    os.rename(path_in(repo, ".claude/settings.json"), path_in(repo, ".claude/settings.local.json"))
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert ("  UNSHARED SessionStart and Stop wired only in .claude/settings.local.json, which "
            "teammates do not get; --update wires them in .claude/settings.json too (the same "
            "command in both runs once)") in done.stdout.splitlines()
    assert fix_line(installer, "--update", repo) in done.stdout
    installer.ok("--update", repo)
    installer.ok("--check", repo)  # the local copy stays, and runs once with the shared one


def test_wiring_only_local_with_another_interpreter_says_the_local_entries_must_go(
        installer, repo):
    # --update writes the shared entries as --project does; a local command of another
    # interpreter is another command, which the harness would run as well.
    installer.ok("--project", repo, "--python", sys.executable)
    os.rename(path_in(repo, ".claude/settings.json"), path_in(repo, ".claude/settings.local.json"))
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert ("  UNSHARED SessionStart and Stop wired only in .claude/settings.local.json, which "
            "teammates do not get; --update wires them in .claude/settings.json too; then delete "
            "SessionStart and Stop from .claude/settings.local.json, whose command differs and "
            "would run as well") in done.stdout.splitlines()
    installer.ok("--update", repo)
    after = installer.run("--check", repo)
    assert after.returncode == 1 and "delete it from .claude/settings.local.json" in after.stdout
    os.remove(path_in(repo, ".claude/settings.local.json"))
    assert "settings.local.json" not in installer.run("--check", repo).stdout


def test_one_event_wired_only_locally_is_named_alone(installer, repo):
    installer.ok("--project", repo)
    shared = path_in(repo, ".claude/settings.json")
    data = json.loads(read(shared).decode())
    stop = data["hooks"].pop("Stop")
    write(shared, json.dumps(data, indent=2))
    write(path_in(repo, ".claude/settings.local.json"), json.dumps({"hooks": {"Stop": stop}}))
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert ("  UNSHARED Stop wired only in .claude/settings.local.json, which teammates do not "
            "get; --update wires it in .claude/settings.json too (the same command in both runs "
            "once)") in done.stdout.splitlines()


def test_an_index_over_budget_shows_the_budget_report(installer, project):
    installer.ok("--project", project)
    overfill_the_index(project)
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert "OVER     over budget on 1 point(s)" in done.stdout
    assert "## Context budget \u2014 over on 1 point(s)" in done.stdout
    assert "\n- " in done.stdout
    # no install.py line repairs a budget: the report's own lines do
    assert "fix: the repair on each line of the budget report below" in done.stdout
    assert "install.py --update" not in done.stdout


def test_invalid_settings_are_a_broken_finding(installer, project):
    installer.ok("--project", project)
    write(path_in(project, ".claude/settings.json"), "{oops")
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert "BROKEN   .claude/settings.json is not valid JSON at line 1, column 2" in done.stdout


def test_a_folder_where_a_hook_belongs_is_a_finding_not_a_crash(installer, project):
    installer.ok("--project", project)
    os.remove(path_in(project, ".claude/hooks/stop-handoff.py"))
    os.mkdir(path_in(project, ".claude/hooks/stop-handoff.py"))
    done = installer.run("--check", project)
    assert done.returncode == 1 and done.stderr == ""
    assert "BROKEN" in done.stdout and "stop-handoff.py is a directory" in done.stdout


def test_a_broken_budget_hook_in_the_source_is_one_line_exit_1(installer, project):
    write(installer.source_file("hooks/context-budget.py"), "def budget_points(:\n")
    done = installer.run("--check", project)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1 and "context-budget.py" in done.stderr
    assert "Traceback" not in done.stderr


def test_check_leaves_no_bytecode_beside_the_source_hooks(installer, repo):
    installer.ok("--project", repo)
    installer.ok("--check", repo, env={"PYTHONDONTWRITEBYTECODE": ""})
    assert not os.path.exists(installer.source_file("hooks/__pycache__"))


# ------------------------------------------------------------------ --recursive

def estate(tmp_path, installer):
    """A tree of repositories in every state, plus folders that must be skipped."""
    root = tmp_path / "estate"
    env = installer.env
    repos = {name: str(root / name) for name in
             ("healthy", "drifted", "bare", "over", "group/nested", "unwired")}
    for name, path in repos.items():
        make_repo(path, env)
    for name in ("healthy", "drifted", "over", "unwired"):
        installer.ok("--project", repos[name])
    with open(path_in(repos["drifted"], ".claude/hooks/stop-handoff.py"), "a") as handle:
        handle.write("# drift\n")
    overfill_the_index(repos["over"])
    os.remove(path_in(repos["unwired"], ".claude/settings.json"))
    for skipped in ("healthy/node_modules/pkg", "healthy/.claude/worktrees/agent-1", "vendor/lib",
                    "bare/.venv/src/x", "build/out"):
        os.makedirs(str(root / skipped / ".git"))
    write(str(root / "group" / "submodule" / ".git"), "gitdir: ../.git/modules/submodule\n")
    return str(root), repos


def test_recursive_lists_every_repository_worst_first(installer, tmp_path):
    root, repos = estate(tmp_path, installer)
    done = installer.run("--check", "--recursive", root)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    body = lines[:-2]
    assert [line.split()[:2] for line in body] == [
        ["OVER", "over"],
        ["DRIFT", "drifted"],
        ["UNWIRED", "unwired"],
        ["NONE", "bare"],
        ["NONE", "group/nested"],
        ["NONE", "group/submodule"],
        ["ok", "healthy"],
    ]
    assert "hooks differ from this version: stop-handoff.py" in body[1]
    assert lines[-2] == ("7 repositories: 1 over budget, 1 drifted, 1 not wired, "
                         "3 without the protocol, 1 ok")
    assert lines[-1].startswith("details: ")


def test_recursive_on_a_healthy_estate_exits_0(installer, tmp_path):
    root = tmp_path / "all good"
    for name in ("a", "b"):
        make_repo(str(root / name), installer.env)
        installer.ok("--project", str(root / name))
    done = installer.ok("--recursive", "--check", str(root))
    assert done.stdout.splitlines()[-1] == "2 repositories: 2 ok"


def test_recursive_reports_the_session_start_defects_not_the_history_report(installer, tmp_path):
    root = tmp_path / "estate"
    repo = make_repo(str(root / "a"), installer.env)
    installer.ok("--project", repo)
    with open(path_in(repo, "memory/MEMORY.md"), "a") as handle:
        handle.write("- [Topic](topic.md) - the topic\n")
    single = installer.run("--check", repo)
    assert single.returncode == 1 and "BROKEN   memory health: 1 broken (dead-pointer)" in single.stdout
    write(path_in(repo, "memory/lonely.md"), "# Lonely\n")  # an orphan: the full report only
    done = installer.run("--check", "--recursive", str(root))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == "BROKEN   a  memory: 1 defect(s) found at session start"


def test_recursive_with_no_repositories(installer, tmp_path):
    done = installer.ok("--check", "--recursive", str(tmp_path))
    assert done.stdout == "no git repositories under {}\n".format(tmp_path)


# Runs install.py's main() with the folders named in argv[2] (os.pathsep-separated) refusing
# to be listed, as a folder without read permission refuses a user other than root.
UNREADABLE_DRIVER = """\
import errno, importlib.util, os, sys
spec = importlib.util.spec_from_file_location("install_under_test", sys.argv[1])
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)
refused = set(sys.argv[2].split(os.pathsep))
real = os.scandir
def scandir(path="."):
    if os.fspath(path) in refused:
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
    return real(path)
os.scandir = scandir
sys.argv[0] = sys.argv[1]
sys.exit(install.main(sys.argv[3:]))
"""


def checked_with_unreadable(installer, root, *unreadable):
    return subprocess.run([sys.executable, "-c", UNREADABLE_DRIVER, installer.script,
                           os.pathsep.join(unreadable), "--check", "--recursive", root],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=installer.env)


def test_recursive_names_a_folder_it_cannot_read_and_fails(installer, tmp_path):
    root = tmp_path / "estate"
    for name in ("a", "b"):
        make_repo(str(root / name), installer.env)
        installer.ok("--project", str(root / name))
    os.makedirs(str(root / "locked" / "inner"))
    done = checked_with_unreadable(installer, str(root), str(root / "locked"))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines() == [
        "UNREAD   locked  cannot be read (Permission denied): git repositories under it are "
        "not checked",
        "ok       a",
        "ok       b",
        "2 repositories: 2 ok; 1 folder(s) not readable",
    ]  # no "details:" line: --check of a repository would not say more about that folder
    assert done.stderr == ""


def test_recursive_warns_of_a_folder_it_cannot_read_inside_a_repository(installer, tmp_path):
    # A database volume or another user's folder in a working tree holds data, not repositories.
    root = tmp_path / "estate"
    make_repo(str(root / "app"), installer.env)
    installer.ok("--project", str(root / "app"))
    os.makedirs(str(root / "app" / "docker" / "pgdata"))
    done = checked_with_unreadable(installer, str(root), str(root / "app" / "docker" / "pgdata"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        "WARN     app/docker/pgdata  cannot be read (Permission denied); a repository nested "
        "there would not be checked",
        "ok       app",
        "1 repositories: 1 ok; 1 folder(s) not readable",
    ]


def test_recursive_on_a_root_it_cannot_read_fails_instead_of_finding_nothing(installer, tmp_path):
    done = checked_with_unreadable(installer, str(tmp_path), str(tmp_path))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[:2] == [
        "UNREAD   .  cannot be read (Permission denied): git repositories under it are not checked",
        "no git repositories found; 1 folder(s) not readable"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root reads a folder whatever its permissions")
def test_recursive_names_a_folder_without_read_permission(installer, tmp_path):
    root = tmp_path / "estate"
    make_repo(str(root / "a"), installer.env)
    locked = root / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        done = installer.run("--check", "--recursive", str(root))
    finally:
        locked.chmod(0o755)
    assert done.returncode == 1
    assert done.stdout.splitlines()[0].startswith("UNREAD   locked  cannot be read (")


# Runs install.py's main() counting the child processes it starts (git, the interpreter probe):
# argv[1] is the script, the rest the command line; the count is the last line of stderr.
COUNTING_DRIVER = """\
import importlib.util, subprocess, sys
spec = importlib.util.spec_from_file_location("install_under_test", sys.argv[1])
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)
started = []
real = subprocess.Popen.__init__
def counted(self, *args, **kwargs):
    started.append(args[0] if args else kwargs.get("args"))
    real(self, *args, **kwargs)
subprocess.Popen.__init__ = counted
code = install.main(sys.argv[2:])
sys.stderr.write("children: %d\\n" % len(started))
sys.exit(code)
"""


def checked_with_a_count(installer, root):
    """(completed --check --recursive of root, child processes it started)."""
    done = subprocess.run([sys.executable, "-c", COUNTING_DRIVER, installer.script, "--check",
                           "--recursive", root], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=installer.env)
    *errors, count = done.stderr.splitlines()
    done.stderr = "".join(line + "\n" for line in errors)
    return done, int(count.split(": ")[1])


def an_estate_of_copies(template, root, count, change=lambda n, copy: None):
    for n in range(count):
        copy = str(root / "team{}".format(n % 10) / "repo{}".format(n))
        shutil.copytree(template, copy, symlinks=True)
        change(n, copy)
    return str(root)


def within_the_cost_of_one_more(counts, size):
    """The most children an estate of size may cost, given what estates of one and two
    repositories cost: what a run pays once (the interpreter probe) is paid once, and each
    further repository adds what the second one did."""
    one, two = counts
    return one + (size - 1) * (two - one)


# The cost of an estate is bounded per repository, whatever it holds: the work is counted in
# child processes (each git command, each interpreter probe), which a loaded machine does not
# change, rather than timed.

def test_recursive_work_per_repository_does_not_grow_with_the_estate_or_its_depth(
        installer, tmp_path):
    template = str(tmp_path / "template")
    os.makedirs(os.path.join(template, ".git"))
    os.makedirs(os.path.join(template, "src", "deep", "deeper"))
    counts = [checked_with_a_count(installer, an_estate_of_copies(
        template, tmp_path / str(size), size))[1] for size in (1, 2)]
    many, many_count = checked_with_a_count(installer, an_estate_of_copies(
        template, tmp_path / "many", 300))
    assert many.returncode == 1, many.stderr
    assert many.stdout.splitlines()[-2] == "300 repositories: 300 without the protocol"
    assert many_count <= within_the_cost_of_one_more(counts, 300)


def test_recursive_work_on_installed_repositories_is_bounded_per_repository(installer, tmp_path):
    template = str(tmp_path / "template")
    subprocess.run(["git", "init", "-q", template], env=installer.env, check=True)
    installer.ok("--project", template)

    def vary(n, copy):
        if n % 3 == 0:
            overfill_the_index(copy)
        if n % 5 == 0:
            with open(path_in(copy, ".claude/hooks/stop-handoff.py"), "a") as handle:
                handle.write("# drift\n")
    counts = [checked_with_a_count(installer, an_estate_of_copies(
        template, tmp_path / str(size), size, vary))[1] for size in (1, 2)]
    done, many_count = checked_with_a_count(installer, an_estate_of_copies(
        template, tmp_path / "estate", 300, vary))
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-2] == "300 repositories: 100 over budget, 40 drifted, 160 ok"
    assert many_count <= within_the_cost_of_one_more(counts, 300)


def strict_json(text):
    """The one JSON document in text, refusing NaN and Infinity as other parsers do."""
    def refuse(name):
        raise ValueError("not JSON: " + name)
    return json.loads(text, parse_constant=refuse)


@pytest.mark.parametrize("state, status, code", [
    ("healthy", "ok", 0),
    ("over budget", "over budget", 1),
    ("drifted", "drifted", 1),
    ("broken settings", "broken", 1),
    ("not installed", "without the protocol", 1),
])
def test_check_json_is_one_valid_document_in_every_state(installer, repo, state, status, code):
    project = repo
    if state != "not installed":
        installer.ok("--project", project)
    if state == "over budget":
        overfill_the_index(project)
    elif state == "drifted":
        with open(path_in(project, ".claude/hooks/session-start.py"), "a") as handle:
            handle.write("# drift\n")
    elif state == "broken settings":
        write(path_in(project, ".claude/settings.json"), '{"hooks": []}')
    done = installer.run("--check", "--json", project, timeout=60)
    assert done.returncode == code and done.stderr == ""
    report = strict_json(done.stdout)
    assert report["project"] == project
    assert report["status"] == status and report["exit"] == code
    assert all(set(finding) == {"kind", "text", "fix"} for finding in report["findings"])
    assert isinstance(report["budget_points"], list)


@pytest.mark.parametrize("encoding", ["cp1252", "ascii", "latin-1"])
def test_output_is_utf8_whatever_the_locale(installer, tmp_path, encoding):
    folder = tmp_path / "jp\u65e5\u672c"
    folder.mkdir()
    env = dict(installer.env, PYTHONIOENCODING=encoding)
    done = subprocess.run([sys.executable, installer.script, "--check", "--json", str(folder)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert json.loads(done.stdout.decode("utf-8"))["project"] == str(folder)
    done = subprocess.run([sys.executable, installer.script, "--update", str(folder)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert str(folder).encode("utf-8") in done.stderr


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_recursive_checks_a_repository_reached_through_a_symbolic_link(installer, tmp_path):
    """An estate that links a checkout in: the linked repository is checked (once, however many
    links lead to it, and a link back up is no loop), and a link inside a repository to a folder
    that is no repository is not walked."""
    root = tmp_path / "estate"
    make_repo(str(root / "a"), installer.env)
    installer.ok("--project", str(root / "a"))
    elsewhere = make_repo(str(tmp_path / "elsewhere" / "b"), installer.env)
    os.symlink(elsewhere, str(root / "b"))
    os.symlink(elsewhere, str(root / "b again"))
    os.symlink(str(root), str(root / "a" / "up"))
    os.symlink(str(tmp_path / "elsewhere"), str(root / "a" / "data"))
    done = installer.run("--check", "--recursive", str(root))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("NONE     b") and "protocol not installed" in lines[0]
    assert lines[1] == "ok       a"
    assert lines[2] == "2 repositories: 1 without the protocol, 1 ok"


# ------------------------------------------------------------ what the harness will not run

def managed_folder(installer):
    """Where the sealed environment's managed policy lives (nothing there unless a test puts it)."""
    return installer.env["MCP_MANAGED_SETTINGS_DIR"]


@pytest.mark.parametrize("policy, key", [
    ({"allowManagedHooksOnly": True}, "allowManagedHooksOnly"),
    ({"disableAllHooks": True}, "disableAllHooks"),
    ({"strictPluginOnlyCustomization": True}, "strictPluginOnlyCustomization"),
    ({"strictPluginOnlyCustomization": ["skills", "hooks"]}, "strictPluginOnlyCustomization"),
])
def test_a_managed_policy_under_which_no_project_hook_runs_fails_the_check(
        installer, repo, policy, key):
    installer.ok("--project", repo)
    policy_file = os.path.join(managed_folder(installer), "managed-settings.json")
    write(policy_file, json.dumps(policy) + "\n")
    done = installer.run("--check", repo)
    assert done.returncode == 1
    [line] = [line for line in done.stdout.splitlines() if key in line]
    assert line.startswith("  UNWIRED  ") and policy_file in line
    assert "fix:" not in done.stdout  # no mode of install.py changes a managed policy


def test_a_managed_policy_that_leaves_project_hooks_alone_passes(installer, repo):
    installer.ok("--project", repo)
    write(os.path.join(managed_folder(installer), "managed-settings.json"),
          '{"permissions": {"deny": ["Read(./.env)"]}, "allowManagedHooksOnly": false, '
          '"strictPluginOnlyCustomization": ["mcp", "agents"]}\n')
    installer.ok("--check", repo)


def test_the_managed_drop_in_folder_is_merged_in_name_order_after_the_file(installer, repo):
    """managed-settings.d/*.json on top of managed-settings.json, by name; a later file's value
    wins, a hidden file and a file of another kind are not read."""
    installer.ok("--project", repo)
    folder = managed_folder(installer)
    write(os.path.join(folder, "managed-settings.json"), '{"allowManagedHooksOnly": true}\n')
    write(os.path.join(folder, "managed-settings.d", "10-hooks.json"),
          '{"allowManagedHooksOnly": false}\n')
    write(os.path.join(folder, "managed-settings.d", ".99-hidden.json"),
          '{"allowManagedHooksOnly": true}\n')
    write(os.path.join(folder, "managed-settings.d", "99-notes.txt"),
          '{"allowManagedHooksOnly": true}\n')
    installer.ok("--check", repo)
    later = os.path.join(folder, "managed-settings.d", "20-lockdown.json")
    write(later, '{"strictPluginOnlyCustomization": ["hooks"]}\n')
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert '"strictPluginOnlyCustomization": ["hooks"] in {}'.format(later) in done.stdout


@pytest.mark.skipif(os.name == "nt", reason="symbolic links need privileges on Windows")
def test_a_claude_folder_that_is_a_symbolic_link_gets_no_fix_that_would_be_refused(
        installer, repo, tmp_path):
    shared = tmp_path / "a shared .claude"
    shared.mkdir()
    os.symlink(str(shared), path_in(repo, ".claude"))
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert "fix:" not in done.stdout
    [line] = [line for line in done.stdout.splitlines() if ".claude is a symbolic link" in line]
    assert line.startswith("  BROKEN   ") and str(shared) in line
    refused = installer.run("--project", repo)  # what a fix line of --project would meet
    assert refused.returncode == 1 and "symbolic link" in refused.stderr


def test_check_reads_each_settings_file_once(installer, repo):
    """However many findings look at the settings, each file is opened and parsed once."""
    from test_install_faults import run_patched
    installer.ok("--project", repo)
    write(path_in(repo, ".claude/settings.local.json"), '{"env": {"A": "1"}}\n')
    write(os.path.join(installer.env["HOME"], ".claude", "settings.json"), '{"model": "x"}\n')
    count = """
import atexit, collections, sys
opened = collections.Counter()
def counted(path, *args, **kwargs):
    opened[path] += 1
    return real(path, *args, **kwargs)
real = patch("read_bytes", counted)
atexit.register(lambda: sys.stderr.write(
    "".join("%d %s\\n" % (n, p) for p, n in opened.items() if p.endswith(".json"))))
"""
    done = run_patched(installer, count, "--check", repo)
    assert done.returncode == 0, done.stdout + done.stderr
    reads = dict((line.split(" ", 1)[1], int(line.split(" ", 1)[0]))
                 for line in done.stderr.splitlines())
    for rel in (".claude/settings.json", ".claude/settings.local.json"):
        assert reads[path_in(repo, rel)] == 1, reads
    assert reads[os.path.join(installer.env["HOME"], ".claude", "settings.json")] == 1, reads
