"""Helpers for the install.py tests: a private copy of the installer's source
tree, a sealed environment, git repositories and directory snapshots."""

import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HOOKS = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
COMMANDS = ("handoff.md", "dream.md", "catchup.md", "memory-status.md", "update-context.md")
TEMPLATES = ("MEMORY.md", "claudeignore", "gitignore", "gitattributes", "CLAUDE.md-section.md",
             "AGENTS.md-section.md")

GITIGNORE_BLOCK = (
    "# memory-context-protocol \u2014 local-only files (per developer, never shared)\n"
    "/.session-state.md\n"
    ".claude/session-state.md\n"
    ".claude/hooks/.session-baseline*\n"
    ".claude/hooks/__pycache__/\n"
    ".claude/hooks/.before-install.json\n"
    ".claude/settings.local.json\n"
    ".claude/worktrees/\n"
    "# memory-context-protocol \u2014 end\n"
)

# Stand-ins used only while the real files have not landed in the repository.
# The budget stand-in follows the contract in conventions.md for one budget
# (the index line count), which is all the --check tests rely on.
PLACEHOLDER_BUDGET = '''\
import os

def budget_points(project_dir, env):
    index = os.path.join(project_dir, env.get("MCP_MEMORY_INDEX") or "memory/MEMORY.md")
    try:
        with open(index, "rb") as handle:
            lines = handle.read().count(b"\\n")
    except OSError:
        return []
    return ["- index {} lines (budget 80)".format(lines)] if lines > 80 else []

def format_report(points):
    if not points:
        return ""
    return "## Context budget \\u2014 over on {} point(s)\\n".format(len(points)) + "\\n".join(points) + "\\n"
'''

PLACEHOLDER_TEMPLATES = {
    "MEMORY.md": "# Memory index\n\n<!-- one line per topic -->\n",
    "claudeignore": "node_modules/\n.venv/\n",
    "gitignore": GITIGNORE_BLOCK,
    "CLAUDE.md-section.md": (
        "<!-- memory-context-protocol: begin -->\n"
        "## Memory protocol\n"
        "Read memory/MEMORY.md first.\n"
        "<!-- memory-context-protocol: end -->\n"
    ),
}


def real_file(rel):
    path = os.path.join(REPO, *rel.split("/"))
    return path if os.path.isfile(path) else None


def real_hooks_present():
    return all(real_file("hooks/" + name) for name in HOOKS)


def real_budget_api_present():
    path = real_file("hooks/context-budget.py")
    if not path:
        return False
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return "def budget_points" in text and "def format_report" in text


def placeholder(rel):
    folder, name = rel.split("/")
    if folder == "hooks":
        if name == "context-budget.py":
            return PLACEHOLDER_BUDGET
        return "# placeholder for {}\nimport sys\nsys.exit(0)\n".format(name)
    if folder == "commands":
        return "Placeholder for the /{} command.\n".format(name[:-3])
    return PLACEHOLDER_TEMPLATES[name]


def build_source(dest):
    """A copy of install.py with its installer/ package, hooks/, commands/ and
    templates/ beside it: the repository's files where they exist, stand-ins
    otherwise. Returns the path of the copied install.py."""
    os.makedirs(dest, exist_ok=True)
    shutil.copy2(os.path.join(REPO, "install.py"), os.path.join(dest, "install.py"))
    os.makedirs(os.path.join(dest, "installer"))
    for name in installer_modules():
        shutil.copy2(os.path.join(REPO, "installer", name), os.path.join(dest, "installer", name))
    wanted = (["hooks/" + name for name in HOOKS] + ["commands/" + name for name in COMMANDS]
              + ["templates/" + name for name in TEMPLATES] + ["memory_health.py", "memory_format.py"])
    for rel in wanted:
        target = os.path.join(dest, *rel.split("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        source = real_file(rel)
        if rel == "hooks/context-budget.py" and not real_budget_api_present():
            source = None
        if source:
            shutil.copy2(source, target)
        else:
            write(target, placeholder(rel))
    return os.path.join(dest, "install.py")


def installer_modules():
    """The file names of the installer package's modules."""
    return sorted(name for name in os.listdir(os.path.join(REPO, "installer"))
                  if name.endswith(".py"))


def write(path, text, mode="w"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if isinstance(text, bytes):
        with open(path, "wb") as handle:
            handle.write(text)
    else:
        with open(path, mode, encoding="utf-8", newline="") as handle:
            handle.write(text)


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def sealed_env(home):
    """An environment that cannot reach the real user's files or git config."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MCP_", "CLAUDE_", "GIT_", "CODEX_"))}
    os.makedirs(os.path.join(home, ".claude", "projects"), exist_ok=True)
    env.update({
        "HOME": home,
        "USERPROFILE": home,
        "MCP_PROJECTS_DIR": os.path.join(home, ".claude", "projects"),
        # no managed policy but the one a test writes there, whatever this machine has
        "MCP_MANAGED_SETTINGS_DIR": os.path.join(home, "managed policy"),
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Author",
        "GIT_COMMITTER_EMAIL": "author@example.com",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    return env


class Installer(object):
    """Runs a private copy of install.py the way a user would."""

    def __init__(self, script, env):
        self.script = script
        self.env = env
        self.source = os.path.dirname(script)

    def run(self, *args, **kwargs):
        env = dict(self.env)
        env.update(kwargs.pop("env", {}))
        for key in kwargs.pop("unset", ()):
            env.pop(key, None)
        return subprocess.run(
            [kwargs.pop("python", sys.executable), self.script] + [str(arg) for arg in args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
            env=env, cwd=kwargs.pop("cwd", None), **kwargs)

    def ok(self, *args, **kwargs):
        done = self.run(*args, **kwargs)
        assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
        assert done.stderr == ""
        return done

    def source_file(self, rel):
        return os.path.join(self.source, *rel.split("/"))


def invoked(installer):
    """How --check names the installer run by Installer.run: the interpreter by
    its name on PATH, then the script's path as given."""
    python = os.path.basename(sys.executable)
    return "{} {}".format(python if shutil.which(python) else sys.executable, installer.script)


def fix_line(installer, option, project):
    """The repair --check prints: a command a shell runs as written, paths quoted."""
    return "fix: {} {} {}".format(invoked(installer), option, shlex.quote(project))


def git(repo, *args, **kwargs):
    env = kwargs.pop("env")
    done = subprocess.run(("git", "-C", str(repo)) + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env)
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def index_mode(repo, env, rel):
    """The mode git's index holds for rel, e.g. "100755"; None when untracked."""
    line = git(repo, "ls-files", "--stage", "--", rel, env=env)
    return line.split(" ")[0] if line else None


def make_repo(path, env, files=None):
    """A git repository at path with files committed (relative path -> text)."""
    os.makedirs(path, exist_ok=True)
    git(path, "init", "-q", "-b", "main", env=env)
    for rel, text in (files or {"README.md": "hello\n"}).items():
        write(os.path.join(path, *rel.split("/")), text)
    git(path, "add", "-A", env=env)
    git(path, "commit", "-q", "-m", "initial", env=env)
    return path


def snapshot(root):
    """{relative path: (bytes or None for folders, permission bits, mtime)}."""
    state = {}
    for folder, folders, files in os.walk(root):
        folders[:] = [name for name in folders if name != ".git"]
        for name in folders + files:
            path = os.path.join(folder, name)
            info = os.lstat(path)
            content = None
            if stat.S_ISREG(info.st_mode):
                content = read(path)
            elif stat.S_ISLNK(info.st_mode):
                content = "-> " + os.readlink(path)
            state[os.path.relpath(path, root)] = (content, stat.S_IMODE(info.st_mode), info.st_mtime_ns)
    return state


# What the model itself invokes in the protocol's flow, allowed without a prompt.
SKILL_RULES = ["Skill(catchup)", "Skill(handoff)", "Skill(dream)"]

# The template's .claudeignore lines as the CLI's deny rules: a line without an
# inner slash matches at any depth (Read(./line)), one with a leading or inner
# slash is anchored at the project root (Read(/line)).
TEMPLATE_DENY_RULES = [
    "Read(./.env)", "Read(./.env.*)", "Read(./*.pem)", "Read(./*.key)", "Read(./*.p12)",
    "Read(./*.pfx)", "Read(./id_rsa*)", "Read(./id_ecdsa*)", "Read(./id_ed25519*)",
    "Read(./secrets/)",
]


def expected_settings(python="python3", allow=True, deny=True):
    """The entries install.py writes into a new settings file: the hooks, the
    protocol's skills allowed (allow) and the template's deny rules (deny;
    --update writes none where there is no .claudeignore). Release 0.1.0
    wrote the hook entries alone."""
    def handler(hook, status):
        return {
            "type": "command",
            "command": '{} -I -S "${{CLAUDE_PROJECT_DIR}}/.claude/hooks/{}"'.format(python, hook),
            "timeout": 15,
            "statusMessage": status,
        }
    settings = {"hooks": {
        "SessionStart": [{
            "matcher": "startup|resume|clear|compact|fork",
            "hooks": [handler("session-start.py",
                              "Loading project memory and checking context budgets")],
        }],
        "Stop": [{
            "hooks": [handler("stop-handoff.py", "Checking that the session's work is saved")],
        }],
    }}
    permissions = {}
    if allow:
        permissions["allow"] = list(SKILL_RULES)
    if deny:
        permissions["deny"] = list(TEMPLATE_DENY_RULES)
    if permissions:
        settings["permissions"] = permissions
    return settings


@pytest.fixture
def installer(tmp_path):
    script = build_source(str(tmp_path / "source"))
    return Installer(script, sealed_env(str(tmp_path / "home")))


@pytest.fixture
def project(tmp_path, installer):
    """A new git repository with nothing committed: install.py refuses a folder outside git
    unless --allow-no-git (outside_git is that folder)."""
    path = tmp_path / "a project"
    path.mkdir()
    git(str(path), "init", "-q", "-b", "main", env=installer.env)
    return str(path)


@pytest.fixture
def outside_git(tmp_path):
    """A folder in no git repository."""
    path = tmp_path / "a folder"
    path.mkdir()
    return str(path)


@pytest.fixture
def repo(tmp_path, installer):
    return make_repo(str(tmp_path / "a repo"), installer.env, {
        "README.md": "# demo\n",
        "src/app.py": "print('hi')\n",
        ".gitignore": "build/\n",
    })


def forget_the_record(project):
    """Make an install of this version look like one made before the installer kept its record
    (a release's, or the init prompt's): no record of what it added, nor of what was there."""
    for rel in (".claude/memory-context-protocol.json", ".claude/hooks/.before-install.json"):
        if os.path.lexists(path_in(project, rel)):
            os.remove(path_in(project, rel))


def entries(folder):
    """The names in folder, git's own folder aside: what a run may have written there."""
    return sorted(name for name in os.listdir(folder) if name != ".git")


def path_in(root, rel):
    return os.path.join(root, *rel.split("/"))


def settings_of(project):
    with open(path_in(project, ".claude/settings.json"), encoding="utf-8") as handle:
        return json.load(handle)


def write_settings(project, data):
    """The project's settings.json: text (or bytes) as given, anything else as indented JSON."""
    text = data if isinstance(data, (str, bytes)) else json.dumps(data, indent=2) + "\n"
    write(path_in(project, ".claude/settings.json"), text)


def template_text(installer, name):
    with open(installer.source_file("templates/" + name), encoding="utf-8") as handle:
        return handle.read()


def release_a_new_version(installer, rel, table):
    """Change a source file as a release would: append a line, and list the
    digest of the version it replaces in install.py's table of that name."""
    path = installer.source_file(rel)
    old = read(path).replace(b"\r\n", b"\n")
    with open(path, "ab") as handle:
        handle.write(b"# a newer version\n")
    name = os.path.basename(rel)
    set_in_installer(installer, "{0}[{1!r}] = {0}.get({1!r}, ()) + ({2!r},)".format(
        table, name, hashlib.sha256(old).hexdigest()), "releases")


def set_in_installer(installer, statement, module):
    """Run a statement in one module of the installer copy's package (installer/<module>.py),
    after every definition of that module: the modules that import a name from it import the
    value the statement leaves."""
    path = os.path.join(installer.source, "installer", module + ".py")
    assert os.path.isfile(path), path
    with open(path, "a", encoding="utf-8") as handle:
        handle.write("\n\n" + statement + "\n")


def load_installer(installer):
    """The installer copy's package (installer/), imported by its path as install.py imports it."""
    spec = importlib.util.spec_from_file_location("install_under_test", installer.script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_installer()
