"""memory-context-protocol.pyz, the one file a user downloads: built by release/build_pyz.py in a
temporary folder, it holds everything install.py reads, builds to the same bytes every time, and
does what install.py of the same commit does (the same output, the same files installed, the same
check), naming itself in what --check says to run."""

import os
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest

from installtools import REPO, make_repo, read, sealed_env, snapshot

sys.path.insert(0, os.path.join(REPO, "release"))
import build_pyz  # noqa: E402


@pytest.fixture
def env(tmp_path):
    env = sealed_env(str(tmp_path / "home"))
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    return env


@pytest.fixture
def pyz(tmp_path):
    return build_pyz.build(str(tmp_path / "dist" / build_pyz.NAME))


def run(argv, env, cwd=None):
    return subprocess.run([sys.executable] + argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=cwd)


def test_two_builds_of_the_same_sources_are_the_same_bytes(tmp_path, pyz):
    again = build_pyz.build(str(tmp_path / "again.pyz"))
    assert read(again) == read(pyz)
    assert read(pyz).startswith(b"#!/usr/bin/env python3\n")
    assert os.stat(pyz).st_mode & stat.S_IXUSR


def test_it_holds_every_file_install_py_reads_and_nothing_compiled(pyz):
    with zipfile.ZipFile(pyz) as archive:
        names = set(archive.namelist())
    # Every module beside install.py (it and memory_health.py load them by path; a run of
    # --check from the .pyz, below, shows one missing), the licences and the folders.
    expected = {"__main__.py", "LICENSE", "NOTICE"} | {
        name for name in os.listdir(REPO) if name.endswith(".py")}
    for folder in ("installer", "hooks", "commands", "templates"):
        for here, _, files in os.walk(os.path.join(REPO, folder)):
            if "__pycache__" in here:
                continue
            expected.update(os.path.relpath(os.path.join(here, name), REPO).replace(os.sep, "/")
                            for name in files if not name.endswith(".pyc"))
    assert names == expected


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["--help-all"], ["--bogus"],
                                  ["--project"], ["--check", "/nonexistent/folder"]])
def test_it_answers_as_install_py_does(pyz, env, argv):
    from_pyz = run([pyz] + argv, env)
    from_clone = run([os.path.join(REPO, "install.py")] + argv, env)
    assert (from_pyz.returncode, from_pyz.stdout, from_pyz.stderr) == \
        (from_clone.returncode, from_clone.stdout, from_clone.stderr)


def test_it_installs_what_install_py_installs_and_the_check_names_it(tmp_path, pyz, env):
    one = make_repo(str(tmp_path / "one"), env)
    two = make_repo(str(tmp_path / "two"), env)
    from_pyz = run([pyz, "--project", "."], env, cwd=one)
    from_clone = run([os.path.join(REPO, "install.py"), "--project", "."], env, cwd=two)
    assert from_pyz.returncode == from_clone.returncode == 0, from_pyz.stderr
    assert from_pyz.stdout.replace(one, "X") == from_clone.stdout.replace(two, "X")
    contents = [{rel: state[:2] for rel, state in snapshot(repo).items()} for repo in (one, two)]
    assert contents[0] == contents[1]
    assert run([pyz, "--check", one], env).stdout.startswith("ok: ")
    with open(os.path.join(one, ".claude", "commands", "dream.md"), "a") as handle:
        handle.write("an edit\n")
    check = run([pyz, "--check", one], env)
    assert check.returncode == 1
    python = os.path.basename(sys.executable)  # as install.py names it: by name when on PATH
    if shutil.which(python, path=env["PATH"]) is None:
        python = sys.executable
    assert "fix: {} {} --update --force {}".format(python, pyz, one) in check.stdout


def test_it_unpacks_once_into_a_private_folder_and_never_takes_a_half_unpacked_one(pyz, env):
    cache = os.path.join(env["XDG_CACHE_HOME"], "memory-context-protocol")
    os.makedirs(os.path.join(cache, ".unpacking-left-by-ctrl-c"))  # what an interrupted run leaves
    assert run([pyz, "--version"], env).returncode == 0
    [folder] = [name for name in os.listdir(cache) if name.startswith("installer-")]
    if os.name == "posix":
        assert stat.S_IMODE(os.stat(os.path.join(cache, folder)).st_mode) == 0o700
    os.utime(cache, ns=(10 ** 18, 10 ** 18))
    assert run([pyz, "--version"], env).returncode == 0
    assert os.stat(cache).st_mtime_ns == 10 ** 18  # nothing made in it: not unpacked again


@pytest.mark.skipif(os.name != "posix", reason="ownership and modes are POSIX")
def test_a_cache_others_may_write_is_refused_in_one_line(pyz, env):
    cache = os.path.join(env["XDG_CACHE_HOME"], "memory-context-protocol")
    os.makedirs(cache)
    os.chmod(cache, 0o777)
    done = run([pyz, "--version"], env)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == "install.py: error: cannot unpack {}: {} is not a folder of yours " \
        "alone; remove it, or set XDG_CACHE_HOME to another folder\n".format(pyz, cache)
