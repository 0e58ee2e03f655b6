"""--check fails wherever a hook it wired cannot run for an agent, and names the gaps that keep
the install from teammates.

- a committed hooks file that runs hooks git does not track: every other clone runs a command
  whose file is missing;
- Gemini CLI's own switch and trust (measured on 0.61.0, tests/e2e/test_gemini_harness_facts.py):
  "hooksConfig": {"enabled": false} in the project's or the user's settings, or a folder the user
  has not trusted, and it runs none of the project's hooks;
- Codex CLI's entries go to the top of the work tree first: in a package of a monorepo they must
  then go to the package, or they never find a hook;
- a .gitignore that keeps .gitattributes or .claudeignore from teammates;
- a project folder that is the file system's root (an empty variable before a slash)."""

import json
import os
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    git, installer, make_repo, path_in, read, repo, write,
)
from test_install_agents import run_wired


def finding_lines(done, label):
    return [line for line in done.stdout.splitlines() if line.startswith("  " + label)]


# ------------------------------------------------------------------ hooks git does not track

@pytest.mark.parametrize("rel, agents", [(".claude/settings.json", "claude"),
                                         (".codex/hooks.json", "claude,codex")])
def test_a_committed_hooks_file_whose_hooks_git_does_not_track_fails_the_check(
        installer, repo, rel, agents):
    installer.ok("--project", repo, "--agents", agents)
    git(repo, "add", rel, env=installer.env)
    done = installer.run("--check", repo)
    assert done.returncode == 1
    [line] = [line for line in finding_lines(done, "BROKEN") if "git tracks" in line]
    assert rel in line and "session-start.py" in line and "git add --chmod=+x" in line
    git(repo, "add", "--chmod=+x", ".claude/hooks", env=installer.env)
    git(repo, "add", "-A", env=installer.env)
    installer.ok("--check", repo)


def test_hooks_files_git_does_not_track_either_are_no_such_gap(installer, repo):
    installer.ok("--project", repo, "--agents", "claude,codex")
    done = installer.run("--check", repo)
    assert "git tracks" not in done.stdout


def test_entries_that_run_the_users_own_hooks_are_no_such_gap(installer, repo):
    """The project's own session start, wired and committed: the protocol wires nothing beside
    it, so the protocol's other hooks, untracked, are run by no committed entry."""
    write(path_in(repo, ".claude/hooks/session-start.py"), "print('ours')\n")
    write(path_in(repo, ".claude/settings.json"), json.dumps({"hooks": {"SessionStart": [{
        "hooks": [{"type": "command", "command": "python3 .claude/hooks/session-start.py"}]}]}}))
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "our own start", env=installer.env)
    installer.ok("--project", repo)
    done = installer.run("--check", repo)
    assert "git tracks" not in done.stdout and "CLASH" in done.stdout


# ------------------------------------------------------------------ Gemini CLI's switch and trust

def gemini_user_file(installer, name, data):
    write(os.path.join(installer.env["HOME"], ".gemini", name), json.dumps(data))


def installed_for_gemini(installer, repo):
    installer.ok("--project", repo, "--agents", "claude,gemini")
    git(repo, "add", "--chmod=+x", ".claude/hooks", env=installer.env)
    git(repo, "add", "-A", env=installer.env)
    return repo


def trust(installer, repo, level):
    gemini_user_file(installer, "trustedFolders.json", {repo: level})


@pytest.mark.parametrize("case, fails", [
    ("no Gemini CLI for this user", False),
    ("a trusted folder", False),
    ("a trusted parent", False),
    ("a folder the user never trusted", True),
    ("a folder the user marked untrusted", True),
    ("hooks off for the user", True),
    ("hooks off for the user, on in the project", False),
    ("hooks off in the project", True),
    ("the folder question off", False),
])
def test_the_check_fails_where_gemini_runs_none_of_the_projects_hooks(installer, repo, case,
                                                                       fails):
    installed_for_gemini(installer, repo)
    settings_path = path_in(repo, ".gemini/settings.json")
    if case != "no Gemini CLI for this user":
        os.makedirs(os.path.join(installer.env["HOME"], ".gemini"), exist_ok=True)
        trust(installer, repo, "TRUST_FOLDER")
    if case == "a trusted parent":
        trust(installer, os.path.join(repo, "src"), "TRUST_PARENT")
    elif case == "a folder the user never trusted":
        trust(installer, os.path.join(os.path.dirname(repo), "elsewhere"), "TRUST_FOLDER")
    elif case == "a folder the user marked untrusted":
        trust(installer, repo, "DO_NOT_TRUST")
    elif case.startswith("hooks off for the user"):
        gemini_user_file(installer, "settings.json", {"hooksConfig": {"enabled": False}})
    elif case == "the folder question off":
        os.remove(os.path.join(installer.env["HOME"], ".gemini", "trustedFolders.json"))
        gemini_user_file(installer, "settings.json",
                         {"security": {"folderTrust": {"enabled": False}}})
    if case in ("hooks off in the project", "hooks off for the user, on in the project"):
        settings = json.loads(read(settings_path).decode("utf-8"))
        settings["hooksConfig"] = {"enabled": case == "hooks off for the user, on in the project"}
        write(settings_path, json.dumps(settings, indent=2) + "\n")
        git(repo, "add", "-A", env=installer.env)
    done = installer.run("--check", repo)
    assert (done.returncode == 1) == fails, done.stdout
    named = [line for line in finding_lines(done, "UNWIRED") if "Gemini CLI runs" in line]
    assert bool(named) == fails, done.stdout


def test_a_gemini_settings_file_that_is_not_json_is_a_warning_not_a_pass(installer, repo):
    installed_for_gemini(installer, repo)
    write(os.path.join(installer.env["HOME"], ".gemini", "settings.json"), "{ // mine\n}")
    done = installer.run("--check", repo)
    assert any("Gemini CLI: cannot read" in line for line in finding_lines(done, "WARN"))


# ------------------------------------------------------------------ a package of a monorepo

@pytest.fixture
def monorepo(installer, tmp_path):
    return make_repo(str(tmp_path / "mono"), installer.env, {
        "README.md": "# mono\n", "packages/api/src/app.py": "print(1)\n",
        "packages/web/index.js": "1\n"})


def test_codex_entries_in_a_package_run_the_packages_hooks_from_anywhere_in_it(
        installer, monorepo):
    package = os.path.join(monorepo, "packages", "api")
    installer.ok("--project", package, "--allow-subfolder", "--agents", "claude,codex", "--python",
                 sys.executable)
    start = run_wired(installer, package, ".codex/hooks.json", "SessionStart",
                      os.path.join(package, "src"),
                      {"session_id": "c1", "hook_event_name": "SessionStart", "source": "startup"})
    assert start.returncode == 0 and "<project-memory" in start.stdout, start
    assert not any(line.startswith("  UNWIRED  Codex") for line in
                   installer.run("--check", package).stdout.splitlines())


def test_codex_entries_that_look_for_the_hooks_at_the_top_fail_the_check_and_update_fixes_them(
        installer, monorepo):
    package = os.path.join(monorepo, "packages", "api")
    installer.ok("--project", package, "--allow-subfolder", "--agents", "claude,codex")
    path = path_in(package, ".codex/hooks.json")
    settings = json.loads(read(path).decode("utf-8"))
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:  # as the entries were written before
                handler["command"] = handler["command"].replace(
                    "test -f packages/api/.claude", "test -f .claude").replace(
                    " && cd packages/api", "")
    write(path, json.dumps(settings, indent=2) + "\n")
    done = installer.run("--check", package)
    assert done.returncode == 1
    lines = [line for line in finding_lines(done, "UNWIRED") if line.startswith("  UNWIRED  Codex")]
    assert len(lines) == 2 and "where there is none" in lines[0]
    installer.ok("--update", package)
    assert "  UNWIRED  Codex" not in installer.run("--check", package).stdout


# ------------------------------------------------------------------ coexistence

@pytest.mark.parametrize("ignored", [".gitattributes", ".claudeignore"])
def test_a_gitignore_that_keeps_a_shared_file_from_teammates_is_named(installer, repo, ignored):
    write(path_in(repo, ".gitignore"), "build/\n%s\n" % ignored)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "ignore", env=installer.env)
    done = installer.ok("--project", repo)
    assert "git ignores " in done.stdout and ignored in done.stdout
    checked = installer.run("--check", repo)
    assert checked.returncode == 1
    [line] = [line for line in finding_lines(checked, "UNSHARED") if "git ignores" in line]
    assert ignored in line


@pytest.mark.parametrize("mode", ["--project", "--update", "--uninstall"])
def test_the_file_systems_root_is_no_project(installer, mode):
    done = installer.run(mode, "/")
    assert done.returncode == 2 and done.stdout == ""
    assert "is the file system's root" in done.stderr and len(done.stderr.splitlines()) == 1
