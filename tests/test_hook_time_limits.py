"""Every wait the hooks make ends, with margin, inside the timeout install.py writes into
settings.json (spec §7.8): a hook the harness kills loses its work (the injection, or the stop's
verdict). Proven with everything slow at once, the way it would meet a bad day: stdin left open,
a git that never answers, agent worktrees to prune and to weigh."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import ROOT, clean_environment, load_hook, make_repo

MARGIN_SECONDS = 3.0  # the interpreter starting on a loaded machine, the writes, the harness's own
READS_END_SECONDS = 10.0  # every git read of a hook is over this long after it began (§7.8)


@pytest.fixture
def installed(tmp_path):
    """A repository with the protocol installed by install.py, and the timeout it wrote."""
    project = make_repo(tmp_path / "project")
    env = clean_environment(tmp_path / "home")
    done = subprocess.run([sys.executable, str(ROOT / "install.py"), "--project", str(project)],
                          capture_output=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    with open(str(project / ".claude" / "settings.json"), encoding="utf-8") as stream:
        settings = json.load(stream)
    timeouts = {handler["timeout"] for groups in settings["hooks"].values()
                for group in groups for handler in group["hooks"]}
    assert len(timeouts) == 1
    return project, timeouts.pop()


def git_that_never_answers(tmp_path):
    shim = tmp_path / "hanging-bin"
    shim.mkdir()
    (shim / "git").write_text("#!/bin/sh\nexec sleep 120\n", encoding="utf-8")
    (shim / "git").chmod(0o755)
    return str(shim) + os.pathsep + os.environ.get("PATH", "")


def run_with_stdin_left_open(project, hook, payload, path, tmp_path):
    """(seconds the hook ran, its exit code): stdin is written and never closed."""
    env = clean_environment(tmp_path / "home")
    env.update(CLAUDE_PROJECT_DIR=str(project), PATH=path)
    started = time.monotonic()
    command = [sys.executable, "-I", "-S", str(project / ".claude" / "hooks" / hook)]
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env, cwd=str(project))
    try:
        process.stdin.write(payload)
        process.stdin.flush()
        process.wait(timeout=60)
    finally:
        process.kill()
        process.stdin.close()
        process.stdout.close()
        process.stderr.close()
    return time.monotonic() - started, process.returncode


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
@pytest.mark.parametrize("hook", ["session-start.py", "stop-handoff.py"])
def test_every_wait_ends_inside_the_timeout_settings_json_gives(installed, tmp_path, hook):
    project, timeout = installed
    worktrees = project / ".claude" / "worktrees" / "agent-1"
    worktrees.mkdir(parents=True)
    (worktrees / "file.txt").write_text("agent output\n", encoding="utf-8")
    seconds, code = run_with_stdin_left_open(project, hook, b'{"session_id": "s1", "sour',
                                             git_that_never_answers(tmp_path), tmp_path)
    assert code == 0
    assert seconds <= timeout - MARGIN_SECONDS


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
def test_the_git_reads_end_when_the_hook_started_says_not_when_they_started(project, tmp_path,
                                                                           monkeypatch):
    """However long the steps before them took, the baseline's git reads give up at a deadline
    fixed when session-start began."""
    monkeypatch.setenv("PATH", git_that_never_answers(tmp_path))
    began = time.monotonic()
    # The hook began 9 s ago; its git reads end 10 s after that.
    guard = load_hook("prune-worktrees.py").Guard(str(project), began - 9.0)
    reading = guard.reading()
    assert reading is None or reading.parts[0].digest is None
    assert time.monotonic() - began < 3.0


def test_the_worktree_walk_stops_after_a_second(tmp_path, monkeypatch):
    budget = load_hook("context-budget.py")
    folder = tmp_path / "worktrees"
    for number in range(40):
        (folder / ("agent-%d" % number)).mkdir(parents=True)
    real_scandir = os.scandir

    def slow_scandir(path):  # a file system answering slowly, as a network mount may
        time.sleep(0.1)
        return real_scandir(path)

    monkeypatch.setattr(budget.os, "scandir", slow_scandir)
    began = time.monotonic()
    total, counted_all = budget.disk_usage(str(folder))
    assert not counted_all
    assert time.monotonic() - began < 2.5  # the walk's second, not the 4 s of the whole walk


def git_whose_config_hangs_in(tmp_path, marker):
    """A git that never answers a `config` call made in a folder whose path holds `marker`,
    and is the real git everywhere else: listing a nested repository's filter drivers (to turn
    them off) is then the slow step, once per nested repository. Every other status call takes
    1.5 s more, so those listings do not start on whole seconds."""
    shim = tmp_path / "config-hangs-bin"
    shim.mkdir()
    (shim / "git").write_text(
        '#!/bin/sh\n'
        'case "$*" in\n'
        '  *%s*" config "*) exec sleep 120 ;;\n'
        '  *%s*) ;;\n'
        '  *" status "*) sleep 1.5 ;;\n'
        'esac\n'
        'exec "%s" "$@"\n' % (marker, marker, shutil.which("git")), encoding="utf-8")
    (shim / "git").chmod(0o755)
    return str(shim) + os.pathsep + os.environ.get("PATH", "")


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for git")
@pytest.mark.parametrize("hook", ["session-start.py", "stop-handoff.py"])
def test_listing_each_nested_repositorys_filters_ends_by_the_reads_deadline(installed, tmp_path,
                                                                            hook):
    """Turning off the filter drivers of each nested repository takes a git call of its own;
    however many there are, those calls end by the one deadline of the hook's git reads."""
    project, timeout = installed
    for number in range(8):
        nested = make_repo(project / "vendor" / ("nested-%d" % number))
        with open(str(nested / ".git" / "config"), "a", encoding="utf-8") as stream:
            stream.write('[filter "lfs"]\n\tclean = true\n')  # so its drivers are listed
    seconds, code = run_with_stdin_left_open(project, hook, b'{"session_id": "s1", "sour',
                                             git_whose_config_hangs_in(tmp_path, "nested-"),
                                             tmp_path)
    assert code in (0, 2)  # no baseline, and new files: the stop may block
    assert seconds <= timeout - MARGIN_SECONDS
    assert seconds < READS_END_SECONDS + 1.0  # a second for the interpreter and the writes
