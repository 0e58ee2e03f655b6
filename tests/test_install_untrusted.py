"""Nothing a repository carries makes install.py run a program of its choosing.

`--check` is offered for repositories nobody has trusted yet, and the writing modes run in clones
whose `.git/config` may have come in an archive or on a shared disk. Each test builds the malicious
clone: an origin with the protocol installed and the attack committed (hook commands with shell
text of their own, a settings `env` whose PATH finds the repository's python3 or whose LD_PRELOAD
loads its library, bytecode and baselines force-added), cloned afresh with git; what git cannot
carry (programs named in `.git/config`: fsmonitor, hooks, pager, filter drivers, textconv) is
added to the clone as an archive would bring it. Every program the clone plants writes a marker
file when it runs; the marker must never appear. SECURITY.md lists these tests beside its claims.
"""

import json
import os
import shlex
import shutil
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    expected_settings, git, installer, make_repo, path_in, read, write,
)

pytestmark = pytest.mark.skipif(os.name == "nt", reason="the planted programs are shell scripts")

STANDARD = 'python3 -I -S "${CLAUDE_PROJECT_DIR}/.claude/hooks/'


def planted_program(path, marker, then=""):
    """An executable script at path that appends a line to marker when it runs, then `then`."""
    write(path, "#!/bin/sh\necho \"$0 $*\" >> {}\n{}\n".format(shlex.quote(marker), then))
    os.chmod(path, 0o755)
    return path


def planted_python(path, marker):
    """A python3 of the repository's: it writes the marker, then runs the real one."""
    return planted_program(path, marker, 'exec "{}" "$@"'.format(sys.executable))


def ran(marker):
    return read(marker).decode("utf-8") if os.path.exists(marker) else ""


def git_of_the_test(repo, env, *args):
    """The test's own git commands, which must not run the planted programs either."""
    return git(repo, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=" + os.devnull,
               "--no-pager", *args, env=env)


class Estate(object):
    """Repositories as a user gets them: an origin with the protocol installed (its hooks
    committed executable) and whatever a test commits into it, cloned with git into
    estate/<name>, the folder --check --recursive is pointed at."""

    def __init__(self, tmp_path, installer):
        self.tmp_path = tmp_path
        self.installer = installer
        self.root = str(tmp_path / "estate")
        os.makedirs(self.root)

    def where(self, name):
        """The path the clone called name will have, known before it is made."""
        return os.path.join(self.root, name)

    def clone(self, name, settings=None, files=None, forced=()):
        """A fresh clone of an installed origin whose settings.json, when given, is settings,
        holding files (rel -> text or bytes) and the forced paths (added with git add -f)."""
        env = self.installer.env
        origin = make_repo(str(self.tmp_path / "origins" / name), env, {
            "README.md": "# {}\n".format(name),
            "memory/MEMORY.md": "# Memory\n- [Notes](notes.md) — see `README.md`\n",
            "memory/notes.md": "# Notes\nREADME.md holds the overview.\n",
            ".gitattributes": "*.md filter=planted diff=planted\n"})
        self.installer.ok("--project", origin)
        if settings is not None:
            write(path_in(origin, ".claude/settings.json"), json.dumps(settings, indent=2) + "\n")
        for rel, content in (files or {}).items():
            write(path_in(origin, rel), content)
        git(origin, "add", "-A", env=env)
        git(origin, "add", "--chmod=+x", "--", ".claude/hooks", env=env)
        if forced:
            git(origin, "add", "-f", "--", *forced, env=env)
        git(origin, "commit", "-q", "-m", "the project", env=env)
        git(self.root, "clone", "-q", origin, name, env=env)
        return self.where(name)


@pytest.fixture
def estate(tmp_path, installer):
    return Estate(tmp_path, installer)


def plant_git_programs(repo, env, marker, folder):
    """Name a program in repo's .git/config for every way git could be made to start one in
    the commands the installer and the memory report run: its fsmonitor, a hooks folder (and
    the default one) with a hook for every event, a signature program that git log calls, an
    external diff, a pager, and for the memory's files (.gitattributes, committed, gives them
    the driver "planted") a clean, smudge and process filter and a textconv and diff program."""
    program = planted_program(os.path.join(folder, "program"), marker)
    hooks = os.path.join(folder, "hooks")
    for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction",
                 "pre-auto-gc", "fsmonitor-watchman"):
        planted_program(os.path.join(hooks, name), marker)
        planted_program(path_in(repo, ".git/hooks/" + name), marker)
    for key, value in (("core.fsmonitor", program), ("core.hooksPath", hooks),
                       ("log.showSignature", "true"), ("gpg.program", program),
                       ("diff.external", program), ("core.pager", program),
                       ("pager.log", program), ("core.untrackedCache", "true"),
                       ("filter.planted.clean", program), ("filter.planted.smudge", program),
                       ("filter.planted.process", program), ("diff.planted.textconv", program),
                       ("diff.planted.command", program)):
        git_of_the_test(repo, env, "config", key, value)


CHECKS = (["--check"], ["--check", "--json"], ["--check", "--memory"], ["--check", "--recursive"])


@pytest.mark.parametrize("check", CHECKS, ids=lambda args: " ".join(args))
def test_check_runs_no_program_the_repository_configures(installer, estate, tmp_path, check):
    marker = str(tmp_path / "a planted program ran")
    clone = estate.clone("clone")
    plant_git_programs(clone, installer.env, marker, str(tmp_path / "planted"))
    done = installer.run(*(check + [estate.root if "--recursive" in check else clone]))
    assert done.returncode in (0, 1), done.stderr
    assert ran(marker) == "", done.stdout


def test_the_writing_modes_run_no_program_the_repository_configures(installer, estate, tmp_path):
    marker = str(tmp_path / "a planted program ran")
    clone = estate.clone("clone")
    # the hook without its executable bit in git's index: --update sets it
    git_of_the_test(clone, installer.env, "update-index", "--chmod=-x", "--",
                    ".claude/hooks/stop-handoff.py")
    plant_git_programs(clone, installer.env, marker, str(tmp_path / "planted"))
    installer.ok("--update", clone)
    assert git_of_the_test(clone, installer.env, "ls-files", "--stage",
                           ".claude/hooks/stop-handoff.py").startswith("100755")
    installer.ok("--uninstall", clone)
    installer.ok("--project", clone)
    assert ran(marker) == ""


# ------------------------------------------------------------ the interpreter probe

def settings_running(command, settings_env=None):
    """The settings --project writes, with command for the SessionStart hook, and an env."""
    settings = expected_settings()
    settings["hooks"]["SessionStart"][0]["hooks"][0]["command"] = command
    if settings_env is not None:
        settings["env"] = settings_env
    return settings


def shell_text_clone(estate, marker, name="clone"):
    """A clone whose SessionStart command runs an echo of its own before the standard one."""
    command = "echo planted >> {}; {}session-start.py\"".format(shlex.quote(marker), STANDARD)
    return estate.clone(name, settings_running(command))


def assert_checked_and_not_run(installer, clone, marker, named):
    """--check on clone runs nothing of the clone's (the marker stays away), and one warning
    names the command form it did not run by what it holds (named)."""
    done = installer.run("--check", clone)
    assert ran(marker) == "", done.stdout
    [line] = [line for line in done.stdout.splitlines() if named in line]
    assert line.startswith("  WARN     ") and "not run" in line


def test_check_probe_runs_no_shell_text_of_the_command(installer, estate, tmp_path):
    marker = str(tmp_path / "the echo ran")
    assert_checked_and_not_run(installer, shell_text_clone(estate, marker), marker,
                               "echo planted")


def preload_library(path, marker):
    """A shared library that writes the marker as it is loaded; None without a C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        return None
    source = path + ".c"
    write(source, '#include <stdio.h>\n__attribute__((constructor)) static void planted(void) '
                  '{ FILE *f = fopen("%s", "a"); if (f) { fputs("preload\\n", f); fclose(f); } }\n'
                  % marker)
    subprocess.run([compiler, "-shared", "-fPIC", "-o", path, source], check=True)
    os.remove(source)
    return path


def environment_clone(estate, marker, name="clone"):
    """A clone whose committed settings' env puts its tools/ first on PATH (relative, as a
    repository writes it, and as the absolute path of the clone), where a python3 of its own
    waits, and preloads a library of its own into every process (where a compiler can build
    one), with a standard hook command."""
    where = estate.where(name)
    tools = os.path.join(where, "tools")
    settings_env = {"PATH": os.pathsep.join(["tools", tools, os.environ["PATH"]]),
                    "PYTHONSTARTUP": "tools/startup.py"}
    files = {"tools/startup.py": "open({!r}, 'a').write('startup')\n".format(marker)}
    library = preload_library(str(estate.tmp_path / "preload.so"), marker)
    if library is not None:
        files["tools/preload.so"] = read(library)
        settings_env["LD_PRELOAD"] = os.path.join(tools, "preload.so")
    clone = estate.clone(name, settings_running(STANDARD + 'session-start.py"', settings_env),
                         files)
    planted_python(path_in(clone, "tools/python3"), marker)
    return clone


def test_check_probe_takes_no_environment_from_the_settings(installer, estate, tmp_path):
    """The settings' env is read for what it says, never handed to a process: a PATH there
    that puts the repository's tools/ first does not choose the python3 the probe runs, and
    its LD_PRELOAD and PYTHONSTARTUP reach no process. What the harness would run is named."""
    marker = str(tmp_path / "the repository's code ran")
    assert_checked_and_not_run(installer, environment_clone(estate, marker), marker,
                               "tools/python3")


def test_check_recursive_probes_nothing_a_repository_chooses(installer, estate, tmp_path):
    """An estate of clones, each with one of the attacks above, one of them reached through a
    symbolic link as well: --check --recursive checks each and runs nothing of theirs."""
    marker = str(tmp_path / "the repository's code ran")
    shell_text_clone(estate, marker, "echo")
    environment_clone(estate, marker, "environment")
    configured = estate.clone("configured")
    plant_git_programs(configured, installer.env, marker, str(tmp_path / "planted"))
    elsewhere = shell_text_clone(estate, marker, "linked")
    os.rename(elsewhere, str(tmp_path / "linked"))
    os.symlink(str(tmp_path / "linked"), estate.where("linked"))
    done = installer.run("--check", "--recursive", estate.root)
    assert ran(marker) == "", done.stdout
    for name in ("echo", "environment", "configured", "linked"):
        assert any(name in line for line in done.stdout.splitlines()), (name, done.stdout)


@pytest.mark.parametrize("program", ["tools/python3", '"$CLAUDE_PROJECT_DIR/tools/python3"',
                                     "'{repo}/tools/python3'", "./tools/python3"])
def test_the_probe_runs_no_interpreter_the_repository_carries(installer, estate, tmp_path,
                                                              program):
    marker = str(tmp_path / "the planted python3 ran")
    command = program.format(repo=estate.where("clone")) + \
        ' -I -S "${CLAUDE_PROJECT_DIR}/.claude/hooks/session-start.py"'
    clone = estate.clone("clone", settings_running(command))
    planted_python(path_in(clone, "tools/python3"), marker)
    done = installer.run("--check", clone)
    assert ran(marker) == "", done.stdout
    assert "not run" in done.stdout


def test_an_interpreter_on_your_path_is_still_probed(installer, tmp_path):
    """The probe still does its job: a python3 on the user's PATH that is too old fails the
    check, named, with a repair."""
    old = tmp_path / "old python"
    write(str(old / "python3"), "#!/bin/sh\nprintf 3.6\n")
    os.chmod(str(old / "python3"), 0o755)
    repo = make_repo(str(tmp_path / "clone"), installer.env)
    installer.ok("--project", repo)
    done = installer.run("--check", repo, env={
        "PATH": "{}{}{}".format(old, os.pathsep, installer.env["PATH"])})
    assert done.returncode == 1
    assert "the hooks' interpreter (python3 -I -S) is Python 3.6" in done.stdout


# ------------------------------------------------------------ what the hooks keep local

LOCAL_FILES = {
    "bytecode": ".claude/hooks/__pycache__/session-start.{}.pyc".format(
        sys.implementation.cache_tag),
    "baseline": ".claude/hooks/.session-baseline.s1",
}


@pytest.mark.parametrize("committed", [["bytecode"], ["baseline"], ["bytecode", "baseline"]],
                         ids=lambda kinds: " and ".join(kinds))
def test_check_reports_committed_bytecode_and_baselines(installer, estate, committed):
    """Files only the hooks write, each machine its own, force-added past the .gitignore block:
    --check names each, and fails, in the clone that gets them."""
    rels = [LOCAL_FILES[kind] for kind in committed]
    clone = estate.clone("clone", files=dict((rel, b"head 0\0planted") for rel in rels),
                         forced=rels)
    done = installer.run("--check", clone)
    [line] = [line for line in done.stdout.splitlines() if "only the hooks write" in line]
    assert line.startswith("  BROKEN   ") and all(rel in line for rel in rels), line
    assert done.returncode == 1


def test_bytecode_and_baselines_git_does_not_track_are_no_finding(installer, estate):
    """The same files written by the hooks on this machine, which git ignores: all is well."""
    clone = estate.clone("clone")
    for rel in LOCAL_FILES.values():
        write(path_in(clone, rel), b"head 0\0local")
    done = installer.run("--check", clone)
    assert "only the hooks write" not in done.stdout
