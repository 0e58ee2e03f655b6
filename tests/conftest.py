"""Shared fixtures: run a hook the way the harness does, and build git repositories to run it in.

The hooks run from an installed copy, laid out as install.py --project lays them out, never from
hooks/ of the checkout: that is the file layout the harness runs, and the hooks there would
otherwise gather bytecode from every test run. A test session that leaves hooks/ changed fails.
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HOOKS = ROOT / "hooks"
HOOK_NAMES = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
MIB = 1024 * 1024

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def clean_environment(home):
    """The test runner's environment without anything that would steer a hook, with HOME moved
    into the test's own folder so no real ~/.claude is ever read."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MCP_", "CLAUDE_", "GIT_"))}
    env.update(GIT_IDENTITY)
    env["HOME"] = str(home)
    env["GIT_CONFIG_GLOBAL"] = str(Path(home) / ".gitconfig")
    return env


class InstalledHooks:
    """The four hooks copied byte for byte into `<folder>/.claude/hooks/`, executable, as
    install.py --project writes them: made at first use in a test session, removed at its end."""
    root = None

    @classmethod
    def folder(cls):
        if cls.root is None:
            cls.root = Path(tempfile.mkdtemp(prefix="mcp-installed-"))
            hooks = cls.root / ".claude" / "hooks"
            hooks.mkdir(parents=True)
            for name in HOOK_NAMES:
                shutil.copyfile(str(HOOKS / name), str(hooks / name))
                os.chmod(str(hooks / name), 0o755)
        return cls.root / ".claude" / "hooks"

    @classmethod
    def remove(cls):
        if cls.root is not None:
            shutil.rmtree(str(cls.root), ignore_errors=True)
            cls.root = None


def source_hooks_state():
    """Every entry under hooks/ of the checkout with its size and modification time."""
    state = {}
    for folder, names, files in os.walk(str(HOOKS)):
        for name in names + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            state[os.path.relpath(path, str(HOOKS))] = (info.st_size, info.st_mtime_ns)
    return state


# Bytecode that runs of earlier versions of this suite left beside the sources goes first, so
# that any found at the end was written by this run.
shutil.rmtree(str(HOOKS / "__pycache__"), ignore_errors=True)
SOURCE_HOOKS_AT_START = source_hooks_state()


def pytest_sessionfinish(session, exitstatus):
    """Remove the installed copy, and fail the run if anything was written into hooks/."""
    InstalledHooks.remove()
    changed = sorted(set(source_hooks_state().items()) ^ set(SOURCE_HOOKS_AT_START.items()))
    if changed:
        names = sorted({name for name, _ in changed})
        sys.stderr.write("\nthe test run wrote into hooks/ of the checkout: %s\n"
                         % ", ".join(names))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def run_hook(name, project, stdin=b"", env=None, python=None, cwd=None, isolated=True,
             timeout=30, hooks_dir=None):
    """Run one hook as a subprocess with JSON (or raw bytes) on stdin, as the harness does,
    from the installed copy unless `hooks_dir` names another folder."""
    if isinstance(stdin, dict):
        stdin = json.dumps(stdin).encode("utf-8")
    home = Path(project).parent / "home" if project else Path.cwd()
    environment = clean_environment(home)
    environment["MCP_PROJECTS_DIR"] = str(Path(home) / "no-projects")
    if project is not None:
        environment["CLAUDE_PROJECT_DIR"] = str(project)
    environment.update(env or {})
    flags = ["-I", "-S"] if isolated else []
    hook = Path(hooks_dir or InstalledHooks.folder()) / name
    command = [python or sys.executable] + flags + [str(hook)]
    if cwd is None:
        cwd = project if project and Path(project).is_dir() else Path(project or home).parent
    return subprocess.run(command, input=stdin, capture_output=True, env=environment,
                          cwd=str(cwd), timeout=timeout)


def load_hook(file_name):
    """A hook file of the installed copy as a module, loaded by path (its name has a hyphen),
    as install.py loads it."""
    name = "hook_" + file_name[:-len(".py")].replace("-", "_")
    spec = importlib.util.spec_from_file_location(name, str(InstalledHooks.folder() / file_name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if hasattr(module, "uses"):  # the git home takes the shared reading from its caller
        module.uses(load_hook("context-budget.py"))
    return module


def git(repo, *args, check=True):
    env = clean_environment(Path(repo).parent / "home")
    done = subprocess.run(["git", "-C", str(repo)] + list(args), capture_output=True, env=env)
    if check and done.returncode != 0:
        raise AssertionError("git %s failed: %s" % (" ".join(args), done.stderr.decode()))
    return done.stdout.decode("utf-8", "replace").strip()


def make_repo(path, branch="main"):
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", branch)
    (path / "README.md").write_text("# fixture\n", encoding="utf-8")
    git(path, "add", "README.md")
    git(path, "commit", "-q", "-m", "first commit")
    return path


def write_lines(path, count, text="- line {i}"):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(text.format(i=i) + "\n" for i in range(count)), encoding="utf-8")
    return path


def write_bytes(path, size):
    """A file of exactly `size` real bytes (not sparse)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def set_age(path, seconds):
    stamp = __import__("time").time() - seconds
    os.utime(str(path), (stamp, stamp))


def harness_length(text):
    """The injection's length as every harness may count it: UTF-8 bytes, which Codex CLI
    counts and which are never fewer than the UTF-16 units Claude Code counts."""
    return len(text.encode("utf-8"))


@pytest.fixture
def project(tmp_path):
    """A fresh project: a git repository with a two-line index and a small CLAUDE.md."""
    root = make_repo(tmp_path / "project")
    (root / "memory").mkdir()
    (root / "memory" / "MEMORY.md").write_text(
        "# Project Memory Index\n- [Topic](topic.md) — the pointer\n", encoding="utf-8")
    (root / "memory" / "topic.md").write_text("# Topic\n", encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Fixture\nA small instruction file.\n", encoding="utf-8")
    (root / ".claude" / "hooks").mkdir(parents=True)
    (root / ".gitignore").write_text(
        ".claude/session-state.md\n.claude/hooks/.session-baseline*\n"
        ".claude/hooks/__pycache__/\n.claude/worktrees/\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "protocol files")
    return root


@pytest.fixture
def plain_dir(tmp_path):
    """A folder that is no project at all: no git repository and no .claude/."""
    folder = tmp_path / "plain"
    folder.mkdir()
    return folder


def worktree_admin_folder(path):
    """A linked worktree's own folder in the main repository's .git, as its `.git` file names it."""
    marker = (Path(path) / ".git").read_text(encoding="utf-8").split("\n")[0]
    return Path(path) / marker[len("gitdir:"):].strip()


def age_worktree(path, seconds=2 * 3600):
    """Make a linked worktree look unused for `seconds`, as the pruner judges use: by its folder
    in the main repository's .git and that folder's HEAD, index and HEAD reflog."""
    admin = worktree_admin_folder(path)
    for entry in (admin / "HEAD", admin / "index", admin / "logs" / "HEAD", admin):
        if entry.exists():
            set_age(entry, seconds)


def system_message(done):
    """The warning a stop shows the user without blocking: JSON on stdout, exit 0; "" when it
    printed nothing."""
    if not done.stdout.strip():
        return ""
    value = json.loads(done.stdout.decode("utf-8"))
    assert set(value) == {"systemMessage"} and done.returncode == 0
    return value["systemMessage"]
