"""The test harness itself: hooks run from an installed copy, and nothing is written into hooks/."""
import os
import stat
import sys
from pathlib import Path

from conftest import HOOK_NAMES, HOOKS, ROOT, load_hook, run_hook, source_hooks_state


def test_hooks_run_from_a_copy_laid_out_as_install_writes_it(project):
    done = run_hook("context-budget.py", project)
    hook = Path(done.args[-1])
    assert hook.parent.parts[-2:] == (".claude", "hooks")
    assert ROOT not in hook.parents
    for name in HOOK_NAMES:
        installed = hook.parent / name
        assert installed.read_bytes() == (HOOKS / name).read_bytes()
        assert os.stat(str(installed)).st_mode & stat.S_IXUSR


def test_running_and_loading_the_hooks_writes_nothing_into_hooks(project, monkeypatch):
    """session-start.py caches its siblings' bytecode beside them, and loading a hook as a
    module caches its own: both must land in the installed copy, not in the checkout."""
    (project / ".claude" / "worktrees").mkdir()  # so that the pruner is loaded too
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    before = source_hooks_state()
    assert run_hook("session-start.py", project, stdin={"session_id": "s1"}).returncode == 0
    for name in HOOK_NAMES:
        load_hook(name)
    assert source_hooks_state() == before
    assert not (HOOKS / "__pycache__").exists()
