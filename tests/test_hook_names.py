"""The names one file takes from a hook file are declared there, in its __all__.

A hook file cannot import another: the entries load the others by path, and install.py --check
and memory_health.py load context-budget.py the same way. A name taken that way is checked by
nothing at run time (a hook that fails lets the session go on without a word), so this test
reads every file that takes names from a hook file and fails on any name its provider does not
declare, and on any declared name the provider does not define.
"""
import ast
import importlib.util

import pytest

from conftest import HOOKS, ROOT

# Which variable holds which hook file, in each file that takes names from one.
TAKERS = {
    "hooks/stop-handoff.py": {"shared": "context-budget.py", "git": "prune-worktrees.py"},
    "hooks/session-start.py": {"shared": "context-budget.py", "git": "prune-worktrees.py"},
    "hooks/prune-worktrees.py": {"shared": "context-budget.py"},
    "memory_health.py": {"BUDGET": "context-budget.py"},
    "installer/check.py": {"budget": "context-budget.py"},
}


def declared(provider):
    tree = ast.parse((HOOKS / provider).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "__all__"
                                                for target in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def taken(path, variable):
    """(line, name) of every `variable.name` in the file."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    return sorted((node.lineno, node.attr) for node in ast.walk(tree)
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == variable)


@pytest.mark.parametrize("path,variable,provider", [
    (path, variable, provider) for path, variables in TAKERS.items()
    for variable, provider in variables.items()])
def test_every_name_taken_from_a_hook_file_is_declared_there(path, variable, provider):
    names = declared(provider)
    undeclared = [(line, name) for line, name in taken(path, variable) if name not in names]
    assert undeclared == [], "%s takes from %s names it does not declare: %s" % (
        path, provider, undeclared)


@pytest.mark.parametrize("provider", sorted({p for v in TAKERS.values() for p in v.values()}))
def test_every_declared_name_is_defined(provider):
    spec = importlib.util.spec_from_file_location("declared_" + provider[:-3].replace("-", "_"),
                                                  str(HOOKS / provider))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    missing = sorted(name for name in declared(provider) if not hasattr(module, name))
    assert declared(provider) and missing == []


def test_the_check_sees_an_undeclared_name(tmp_path, monkeypatch):
    """The check itself fires: a file taking a name its provider does not declare is named."""
    fake = tmp_path / "taker.py"
    fake.write_text("def f(shared):\n    return shared.not_declared_anywhere()\n",
                    encoding="utf-8")
    monkeypatch.setattr("test_hook_names.ROOT", tmp_path)
    assert taken("taker.py", "shared") == [(2, "not_declared_anywhere")]
    assert "not_declared_anywhere" not in declared("context-budget.py")


def test_the_installer_runs_git_with_the_hooks_switches():
    """One definition of what takes a repository's programs away from git: the installer's
    runner starts with the hooks' switches, so a switch added to one reaches the other."""
    spec = importlib.util.spec_from_file_location("installer_git", str(ROOT / "installer" / "git.py"))
    installer_git = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(installer_git)
    switches = load_git_home().GIT_SWITCHES
    assert switches and installer_git.HARDENED[:len(switches)] == switches


def load_git_home():
    from conftest import load_hook
    return load_hook("prune-worktrees.py")
