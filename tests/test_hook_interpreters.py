"""The 3.8 floor, proven by running: every hook's main path under each Python 3.8+ on the machine."""
import glob
import os
import shutil
import subprocess

import pytest

from conftest import age_worktree, git, run_hook, set_age, write_lines

MINORS = range(8, 14)


def find_interpreter(minor):
    """An interpreter for 3.<minor> that really runs (a pyenv shim for an absent one does not)."""
    name = "python3.%d" % minor
    pyenv_root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    candidates = sorted(glob.glob(os.path.join(pyenv_root, "versions", "3.%d.*" % minor, "bin", name)))
    candidates += [p for p in (shutil.which(name), "/usr/bin/" + name, "/usr/local/bin/" + name) if p]
    for candidate in candidates:
        try:
            done = subprocess.run([candidate, "-c", "import sys; print(sys.version_info[1])"],
                                  capture_output=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0 and done.stdout.strip() == str(minor).encode():
            return candidate
    return None


@pytest.fixture(params=MINORS, ids=lambda minor: "3.%d" % minor)
def python(request):
    found = find_interpreter(request.param)
    if found is None:
        pytest.skip("Python 3.%d is not installed here" % request.param)
    return found


def test_every_hook_under_this_interpreter(python, project):
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n<!-- history -->\n- [Topic](topic.md) — the pointer\n", encoding="utf-8")
    state = project / ".claude" / "session-state.md"
    state.write_text("## Handoff: 2026-01-01 09:00\nWorking on X\n", encoding="utf-8")
    set_age(state, 3 * 86400)
    finished = project / ".claude" / "worktrees" / "finished"
    git(project, "worktree", "add", "-q", "-b", "finished", str(finished))
    age_worktree(finished)

    start = run_hook("session-start.py", project, python=python,
                     stdin={"session_id": "s1", "source": "startup"})
    text = start.stdout.decode("utf-8")
    assert start.returncode == 0 and start.stderr == b""
    assert "- [Topic](topic.md) — the pointer" in text and "history" not in text
    assert "3 days old" in text and "pruned 1 merged agent worktree(s): finished" in text

    write_lines(project / "memory" / "MEMORY.md", 81)
    budget = run_hook("context-budget.py", project, python=python)
    assert budget.returncode == 0 and b"is 81 lines (budget 80)" in budget.stdout

    (project / "README.md").write_text("work of the session\n", encoding="utf-8")
    assert run_hook("stop-handoff.py", project, python=python,
                    stdin={"session_id": "s1"}).returncode == 2
    assert run_hook("stop-handoff.py", project, python=python,
                    stdin={"session_id": "s1"}).returncode == 0

    assert run_hook("session-start.py", project, python=python).returncode == 0
