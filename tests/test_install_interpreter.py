"""The interpreter the hooks run with: install.py refuses to wire one that cannot run them (missing,
older than 3.8, or rejecting the hooks' flags), says what to pass instead, and --check runs the wired
one the way the harness does (through sh, with the flags in settings.json). install.py itself, run
by an older Python, ends with one line."""

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401
    entries, fix_line,
    installer, invoked, path_in, project, read, settings_of, write,
)

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="the harness runs hooks by sh")


def old_interpreter(version):
    """A Python of the given version (e.g. "2.7") that really runs; None when there is none."""
    name = "python" + version
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(os.path.join(pyenv_root, "versions", version + ".*", "bin", name)))
    candidates += [path for path in (shutil.which(name), "/usr/bin/" + name) if path]
    for candidate in candidates:
        try:
            done = subprocess.run([candidate, "-c", "import sys; sys.stdout.write('%d.%d' % "
                                   "sys.version_info[:2])"], stdout=subprocess.PIPE, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.decode() == version:
            return candidate
    return None


def a_path_of(folder, **programs):
    """A PATH holding only sh, git and the given programs (name -> the file it runs)."""
    os.makedirs(folder, exist_ok=True)
    for name, target in dict(sh=shutil.which("sh"), git=shutil.which("git"), **programs).items():
        os.symlink(target, os.path.join(folder, name))
    return folder


@pytest.mark.parametrize("version", ["2.7", "3.6", "3.7"])
def test_install_py_under_an_old_python_is_one_line(installer, project, version):
    python = old_interpreter(version)
    if python is None:
        pytest.skip("Python {} is not installed here".format(version))
    for args in (["--project", project], ["--version"], ["--check", project]):
        done = installer.run(*args, python=python)
        assert done.returncode == 1
        assert done.stdout == ""
        assert done.stderr == ("install.py: error: this is Python {}; install.py needs Python "
                               "3.8 or newer: run it with python3\n".format(version))
    assert entries(project) == []


def test_no_python3_but_python_on_path_refuses_and_names_python(installer, project, tmp_path):
    path = a_path_of(str(tmp_path / "bin"), python=sys.executable)
    done = installer.run("--project", project, env={"PATH": path}, python=sys.executable)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == ("install.py: error: the default interpreter python3 is not found, so "
                           "the hooks would not run; pass --python python; nothing was changed\n")
    assert entries(project) == []
    installer.ok("--project", project, "--python", "python", env={"PATH": path},
                 python=sys.executable)
    command = settings_of(project)["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command.startswith("python -I -S ")


def stand_in_for(version, folder):
    """An executable that answers the version question as Python `version` would: for a
    version this machine lacks (3.6, RHEL 8's and Ubuntu 18.04's python3). Only the
    version is asked of an interpreter that old, so the answer is all it needs."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "python" + version)
    write(path, "#!/bin/sh\nprintf '{}'\n".format(version))
    os.chmod(path, 0o755)
    return path


def an_old_python(version, tmp_path):
    old = old_interpreter(version)
    if old is None and version == "3.6" and os.name != "nt":
        old = stand_in_for(version, str(tmp_path / "old"))
    if old is None:
        pytest.skip("Python {} is not installed here".format(version))
    return old


@pytest.mark.parametrize("version", ["2.7", "3.6"])
def test_an_old_python_as_python3_or_as_python_is_refused(installer, project, tmp_path, version):
    old = an_old_python(version, tmp_path)
    path = a_path_of(str(tmp_path / "bin"), python3=old)
    done = installer.run("--project", project, env={"PATH": path}, python=sys.executable)
    assert done.returncode == 1 and entries(project) == []
    assert done.stderr.startswith("install.py: error: the default interpreter python3 ")
    assert done.stderr.endswith(", so the hooks would not run; install Python 3.8 or newer and "
                                "pass it with --python; nothing was changed\n")
    done = installer.run("--project", project, "--python", old)
    assert done.returncode == 1 and entries(project) == []
    why = "fails with exit 2 (Unknown option: -I)" if version == "2.7" else \
        "is Python 3.6; the hooks need 3.8 or newer"
    assert done.stderr.startswith("install.py: error: --python {} {}, so the hooks would not "
                                  "run; pass --python ".format(old, why))


@pytest.mark.parametrize("version", ["2.7", "3.6"])
def test_check_runs_the_wired_interpreter_with_its_flags(installer, project, tmp_path, version):
    old = an_old_python(version, tmp_path)
    installer.ok("--project", project)
    settings = path_in(project, ".claude/settings.json")
    write(settings, read(settings).decode().replace('"python3 -I -S ', '"{} -I -S '.format(old)))
    done = installer.run("--check", project)
    assert done.returncode == 1
    line = [line for line in done.stdout.splitlines() if "interpreter" in line]
    assert len(line) == 1 and line[0].startswith("  BROKEN   the hooks' interpreter ({} -I -S) "
                                                 .format(old))
    assert line[0].endswith("; pass --python python3")
    assert fix_line(installer, "--update --python python3", project) in done.stdout


def test_check_sees_a_python3_missing_from_path(installer, project, tmp_path):
    installer.ok("--project", project)
    path = a_path_of(str(tmp_path / "bin"), python=sys.executable)
    done = installer.run("--check", project, env={"PATH": path}, python=sys.executable)
    assert done.returncode == 1
    assert "  BROKEN   the hooks' interpreter (python3 -I -S) is not found; pass --python " \
        "python\n" in done.stdout


def test_check_passes_a_working_interpreter_given_as_a_path(installer, project):
    installer.ok("--project", project, "--python", sys.executable)
    done = installer.run("--check", project)
    assert "interpreter" not in done.stdout
