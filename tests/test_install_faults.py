"""install.py when the world gets in the way: read-only files, folders and file systems, a write
that fails half way, Ctrl-C, and a stdout nobody reads. Either every change is made or, refused
before the first one, none is; every failure is one line on stderr."""

import contextlib
import os
import shutil
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401
    COMMANDS, HOOKS, entries, installer, path_in, project, repo, snapshot, write,
)

# Runs install.py's main() with one of its functions patched, to make a fault happen at an
# exact point: argv[1] is the script, argv[2] the patch (Python, given `patch` and `calls`),
# the rest the command line. patch(name, new) puts new in the place of the installer's function
# of that name in every module that uses it, and returns the function it replaced.
DRIVER = """\
import importlib.util, sys
spec = importlib.util.spec_from_file_location("install_under_test", sys.argv[1])
install = importlib.util.module_from_spec(spec)
spec.loader.exec_module(install)
package = install.load_installer()
def patch(name, new):
    real = getattr(package.files, name)
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(install.PACKAGE + ".") and \\
                getattr(module, name, None) is real:
            setattr(module, name, new)
    return real
exec(sys.argv[2], {"patch": patch, "calls": []})
sys.exit(install.main(sys.argv[3:]))
"""


def run_patched(installer, patch, *args):
    return subprocess.run([sys.executable, "-c", DRIVER, installer.script, patch] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=installer.env, timeout=60)


def on_write(action, at=1):
    """A patch that does `action` on the at-th file write, before making it."""
    return """
import os, signal
def patched(path, *args, **kwargs):
    calls.append(path)
    if len(calls) == {at}:
        {action}
    real(path, *args, **kwargs)
real = patch("write_atomically", patched)
""".format(at=at, action=action)


# Every file --project writes into an empty folder: the hooks, the commands, memory/MEMORY.md,
# .claudeignore, .gitignore, .gitattributes, .claude/settings.json and
# .claude/memory-context-protocol.json.
ALL_FILES = len(HOOKS) + len(COMMANDS) + 5 + 1  # and the record of what the install added


def installed_files(project):
    return sorted(os.path.relpath(os.path.join(folder, name), project)
                  for folder, _, names in os.walk(project) for name in names
                  if not os.path.relpath(folder, project).split(os.sep)[0] == ".git")


# ------------------------------------------------------------------ read-only targets

@contextlib.contextmanager
def read_only(path):
    """path made unwritable: by its mode for an ordinary user, by `chattr +i` for root (whom
    modes do not stop); skipped where neither works."""
    if os.name == "nt":
        pytest.skip("POSIX permissions")
    if os.geteuid() != 0:
        mode = os.stat(path).st_mode
        os.chmod(path, 0o555 if os.path.isdir(path) else 0o444)
        try:
            yield
        finally:
            os.chmod(path, mode)
        return
    if shutil.which("chattr") is None or subprocess.run(
            ["chattr", "+i", path], stderr=subprocess.DEVNULL).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", path], check=True)


def assert_refused(done, message):
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith("install.py: error: " + message)
    assert done.stderr.rstrip().endswith("; nothing was changed")


@pytest.mark.parametrize("mode, rel, message", [
    ("--project", ".gitignore", ".gitignore is read-only"),
    ("--project", ".claude/hooks", "cannot write in {path}"),
    ("--uninstall", ".claude/hooks", "cannot write in {path}"),
])
def test_a_read_only_target_stops_the_run_before_any_change(installer, project, mode, rel, message):
    path = path_in(project, rel)
    if mode == "--uninstall":
        installer.ok("--project", project)
    elif rel == ".gitignore":
        write(path, "dist/\n")
    else:
        os.makedirs(path)
    before = snapshot(project)
    with read_only(path):
        done = installer.run(mode, project)
    assert_refused(done, message.format(path=path))
    assert snapshot(project) == before


def test_a_read_only_config_folder_stops_global(installer, tmp_path):
    config = tmp_path / "config"
    config.mkdir()
    with read_only(str(config)):
        done = installer.run("--global", env={"CLAUDE_CONFIG_DIR": str(config)})
    assert_refused(done, "cannot write in " + str(config))
    assert os.listdir(str(config)) == []


@pytest.mark.skipif(os.name == "nt" or shutil.which("mount") is None, reason="needs mount")
def test_a_read_only_file_system_stops_the_install_before_any_change(installer, project):
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    if subprocess.run(["mount", "--bind", project, project], stderr=subprocess.DEVNULL).returncode:
        pytest.skip("cannot bind-mount here")
    try:
        if subprocess.run(["mount", "-o", "remount,ro,bind", project],
                          stderr=subprocess.DEVNULL).returncode:
            pytest.skip("cannot remount read-only here")
        done = installer.run("--project", project)
    finally:
        subprocess.run(["umount", project], check=True)
    assert_refused(done, "cannot write in " + project)
    assert entries(project) == []


# ------------------------------------------------------------------ a write that fails half way

def test_a_write_that_fails_half_way_says_what_was_made_and_a_rerun_completes(installer, repo):
    fail = 'raise OSError(28, "No space left on device", path)'
    done = run_patched(installer, on_write(fail, at=3), "--project", repo)
    assert done.returncode == 1
    assert done.stderr == ("install.py: error: could not change .claude/hooks/session-start.py: "
                           "No space left on device; the 2 change(s) above were made; "
                           "run again once it is fixed\n")
    # what was there (the repository's .gitignore) and what the install adds, written down first
    assert [line.split()[1] for line in done.stdout.splitlines()[1:]] == [
        ".claude/hooks/.before-install.json", ".claude/memory-context-protocol.json"]
    installer.ok("--project", repo)
    installer.ok("--check", repo)


def test_a_first_write_that_fails_changed_nothing(installer, project):
    done = run_patched(installer, on_write('raise PermissionError(13, "Permission denied")'),
                       "--project", project)
    assert done.returncode == 1
    assert done.stderr.endswith(": Permission denied; nothing was changed\n")
    assert entries(project) == []


# ------------------------------------------------------------------ Ctrl-C

def test_ctrl_c_while_the_changes_are_made_lets_them_finish(installer, project):
    done = run_patched(installer, on_write("os.kill(os.getpid(), signal.SIGINT)"),
                       "--project", project)
    assert done.returncode == 130
    assert done.stderr == "install.py: interrupted\n"
    assert done.stdout.splitlines()[-1].startswith("done: {} change(s)".format(ALL_FILES))
    assert len(installed_files(project)) == ALL_FILES
    again = installer.ok("--project", project)
    assert again.stdout.splitlines()[-1].startswith("nothing to do: already up to date")


def test_a_second_ctrl_c_stops_at_once(installer, project):
    twice = "os.kill(os.getpid(), signal.SIGINT); os.kill(os.getpid(), signal.SIGINT)"
    done = run_patched(installer, on_write(twice), "--project", project)
    assert done.returncode == 130
    assert done.stderr == "install.py: interrupted\n"
    assert installed_files(project) == []


def test_ctrl_c_before_the_first_change_changes_nothing(installer, project):
    # The first read of the plan waits for the interrupt it sent, however late the signal
    # lands: the run can go on only by being interrupted, never by a signal that came late.
    patch = """
import os, signal, time
def patched(path, shown):
    os.kill(os.getpid(), signal.SIGINT)
    while True:
        time.sleep(0.05)
patch("read_bytes", patched)
"""
    done = run_patched(installer, patch, "--project", project)
    assert done.returncode == 130
    assert done.stderr == "install.py: interrupted\n" and done.stdout == ""
    assert entries(project) == []


# ------------------------------------------------------------------ a stdout nobody reads

def test_a_closed_stdout_neither_stops_the_install_nor_prints_an_error(installer, project):
    process = subprocess.Popen([sys.executable, installer.script, "--project", project],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=installer.env)
    process.stdout.close()  # the reader is gone before the first line, as with `| head -0`
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr
    assert stderr == b""
    assert len(installed_files(project)) == ALL_FILES


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_stdout_is_one_line_and_the_install_still_completes(installer, project):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, installer.script, "--project", project],
                              stdout=full, stderr=subprocess.PIPE, universal_newlines=True,
                              env=installer.env)
    assert done.returncode == 1
    assert done.stderr == "install.py: error: cannot print the report: No space left on device\n"
    assert len(installed_files(project)) == ALL_FILES



@pytest.mark.skipif(os.name != "posix", reason="a process group and a shell-script git")
def test_ctrl_c_at_the_terminal_during_the_index_step_reaches_no_git(installer, tmp_path):
    """A terminal's Ctrl-C goes to every process of the foreground group. The run leads a
    group of its own here, as a shell's foreground job does, and the stand-in git sends the
    interrupt to that group while it marks the hooks in the index: the run still finishes its
    changes, then exits 130, and the mark is made."""
    real_git = shutil.which("git")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "git").write_text(
        '#!/bin/sh\n'
        'case " $* " in *" update-index "*) kill -INT "-$PPID"; sleep 1;; esac\n'
        'exec "{}" "$@"\n'.format(real_git), encoding="utf-8")
    (fake / "git").chmod(0o755)
    project = str(tmp_path / "project")
    env = installer.env
    subprocess.run([real_git, "init", "-q", project], check=True, env=env)
    installer.ok("--project", project)
    hooks = [".claude/hooks/" + name for name in HOOKS]
    subprocess.run([real_git, "-C", project, "add"] + hooks, check=True, env=env)
    subprocess.run([real_git, "-C", project, "update-index", "--chmod=-x"] + hooks, check=True,
                   env=env)
    done = subprocess.run(
        [sys.executable, installer.script, "--update", project], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, universal_newlines=True, start_new_session=True, timeout=120,
        env=dict(env, PATH="{}{}{}".format(fake, os.pathsep, env.get("PATH", ""))))
    assert done.returncode == 130, (done.stdout, done.stderr)
    assert done.stderr == "install.py: interrupted\n"
    modes = subprocess.run([real_git, "-C", project, "ls-files", "-s"] + hooks, check=True,
                           stdout=subprocess.PIPE, universal_newlines=True, env=env).stdout
    assert [line.split()[0] for line in modes.splitlines()] == ["100755"] * len(hooks)
