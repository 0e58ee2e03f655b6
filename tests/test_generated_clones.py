"""Malicious clones built at random from combined primitives, and what none of them may make the
hooks or install.py --check do.

test_malicious_clone.py holds one test per known attack; a fix made for its case alone passes it.
Here a seeded generator combines the attack's parts instead, so that a class is closed only when
its mechanism is: symbolic links at every path a hook reads (the index and its topic files and
folders, both handoff paths, both instruction files, the settings files, the baseline, the agent
worktree folder, the targets of the MCP_* variables) leading to a secret inside the project (the
developer's git-ignored .env) or outside it (a file beside the checkout, /proc/self/environ);
settings files in every shape the harness still applies (a Latin-1 byte, a byte-order mark, over
1 MiB, nesting 1,500 deep, a lone surrogate in an `env` value, unknown keys) carrying `env` and
`Read(...)` deny rules, in the repository's files, the user's and the managed policy's (its file
and its managed-settings.d drop-ins); program-running git keys (fsmonitor, hooks, a filter driver
with its .gitattributes line, gpg.program with log.showSignature and a signed commit, an external
diff, a pager, textconv) in every configuration git reads (.git/config, an included file,
config.worktree of the checkout and of an agent worktree, a submodule's own config); committed
bytecode and modules beside the hooks; each agent's environment files (.gemini/.env, .env).

Each clone is then run as each harness runs the hooks (Claude Code: CLAUDE_PROJECT_DIR, the
settings' `env` applied; Codex CLI: no project variable, started at the top or in a subfolder;
Gemini CLI: GEMINI_PROJECT_DIR with its .env file's variables exported, as Gemini CLI loads them),
start then stop, plus context-budget.py and prune-worktrees.py on their own and install.py
--check and --check --memory, and must show: no planted program ran (it writes a witness file),
the secret token in no output, no file changed but the baselines the hooks own (and the agent
worktrees the pruner may remove), the exit codes each promises, no traceback, and every run
finished (bounded by a timeout; nothing here measures speed).

MCP_CLONE_SEEDS=<n> runs n seeds instead of the few of the normal suite; MCP_CLONE_SEED=<seed>
replays one. A failing seed names itself and its primitives.

Below the generator: one test per defect the generator found first, each a fixed scenario.
"""
import json
import os
import random
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HOOK_NAMES, HOOKS, age_worktree, clean_environment, git, make_repo
from installtools import TEMPLATE_DENY_RULES, expected_settings, installer  # noqa: F401
from test_hook_harnesses import CODEX_SESSION, GEMINI_SESSION, codex_input
from test_malicious_clone import POINTER, SHADOWING_MODULES, Origin, pyc_bytes

pytestmark = pytest.mark.skipif(os.name != "posix", reason="planted programs are shell scripts")

DEFAULT_SEEDS = 4
RUN_SECONDS = 120  # a bound on each run, so a hang fails instead of stalling the suite
CLAUDE_SESSION = "s1"
ENVIRON = "/proc/self/environ"
HAS_ENVIRON = os.path.exists(ENVIRON)
GIT_PROGRAM_KEYS = ("fsmonitor", "hooksPath", "filter", "gpg", "external-diff", "pager",
                    "textconv")
GIT_LOCATIONS = ("config", "include", "worktree-config", "agent-worktree-config", "submodule")
SETTINGS_SHAPES = ("plain", "bom", "latin1", "huge", "deep", "surrogate", "surrogate-escape",
                   "unknown-keys")
FILE_SITES = ("memory/MEMORY.md", "memory/topic.md", ".session-state.md",
              ".claude/session-state.md", "CLAUDE.md", ".claude/CLAUDE.md",
              ".claude/settings.json", ".claude/settings.local.json")
FOLDER_SITES = ("memory", "memory/notes", ".claude/worktrees")
PATH_VARIABLES = ("MCP_MEMORY_INDEX", "MCP_SESSION_STATE", "MCP_CLAUDE_MD")
# Variables Gemini CLI leaves out of a project's .env (not of .gemini/.env).
GEMINI_EXCLUDED = ("DEBUG", "DEBUG_MODE")
REPLACEMENT = "\ufffd"  # what a lone surrogate becomes in an environment variable the CLI sets


def shell_environment(home):
    """A user's shell, reduced to what git and Python need and a home of the test's own:
    nothing of the test runner's own environment, which a hook that reads /proc/self/environ
    would otherwise copy into a failure's report."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}


def excerpt(text, secret):
    """The few characters around the secret in an output, for a failure's message."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    at = text.find(secret)
    return "...%s..." % text[max(0, at - 120):at + len(secret) + 40] if at >= 0 else ""


def assert_no_secret(text, secret):
    assert secret not in text, "the secret reached the output: " + excerpt(text, secret)


def seeds():
    one = os.environ.get("MCP_CLONE_SEED")
    if one:
        return [int(one)]
    return list(range(int(os.environ.get("MCP_CLONE_SEEDS") or DEFAULT_SEEDS)))


# --- the managed policy, where only a private mount namespace can put it --------------------

MANAGED_FOLDER = "/etc/claude-code"  # the hooks' managed policy folder on Linux; not overridable
MOUNT_POLICY = ('mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1,workdir=$2" /etc '
                '|| exit 97; shift 2; exec "$@"')


def can_overlay_etc():
    """Whether a command can be run with /etc overlaid in a mount namespace of its own (root,
    Linux, util-linux unshare): the machine's /etc is never touched."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0 or not shutil.which("unshare"):
        return False
    if not hasattr(can_overlay_etc, "answer"):
        import tempfile
        folder = Path(tempfile.mkdtemp(prefix="mcp-overlay-"))
        try:
            (folder / "upper" / "claude-code").mkdir(parents=True)
            (folder / "work").mkdir()
            done = subprocess.run(["unshare", "-m", "sh", "-c", MOUNT_POLICY, "probe",
                                   str(folder / "upper"), str(folder / "work"), "test", "-d",
                                   MANAGED_FOLDER], capture_output=True, timeout=30)
            can_overlay_etc.answer = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            can_overlay_etc.answer = False
        finally:
            shutil.rmtree(str(folder), ignore_errors=True)
    return can_overlay_etc.answer


class ManagedPolicy:
    """The managed policy's folder as a test lays it out (managed-settings.json and the drop-ins
    of managed-settings.d), shown to a command at /etc/claude-code through an overlay of /etc in
    the command's own mount namespace, and to install.py through MCP_MANAGED_SETTINGS_DIR."""

    def __init__(self, root):
        self.upper = Path(root) / "etc-overlay"
        self.folder = self.upper / "claude-code"
        self.work = Path(root) / "etc-overlay-work"
        self.folder.mkdir(parents=True, exist_ok=True)
        self.work.mkdir(exist_ok=True)

    def wrap(self, argv):
        return ["unshare", "-m", "sh", "-c", MOUNT_POLICY, "policy", str(self.upper),
                str(self.work)] + list(argv)


# --- settings in every shape the harness applies ----------------------------------------------

def settings_bytes(data, shape):
    """`data` as a settings file of the given shape. Each shape is one the harness still reads
    and applies: Node decodes a byte that is not UTF-8 (a Latin-1 `é`, a lone surrogate encoded
    as UTF-8 would encode it) as U+FFFD, strips a byte-order mark, has no size limit that 1 MiB
    reaches, parses arrays 1,500 deep, and ignores keys it does not know. "surrogate-escape"
    writes `\udc80` escapes instead, at the head of each relative `env` path (`\udc80/../`,
    which a committed folder named U+FFFD makes a path again once the CLI has applied it)."""
    data = json.loads(json.dumps(data))
    if shape == "unknown-keys":
        data.update({"$schema": "https://json.schemastore.org/claude-code-settings.json",
                     "futureFeature": {"enabled": True, "list": [1, {"x": None}]}})
    if shape == "surrogate-escape":
        data["env"] = {name: value if os.path.isabs(value) else "\udc80/../" + value
                       for name, value in data.get("env", {}).items()}
    if shape == "surrogate":
        data.setdefault("env", {})["EDITOR"] = "vi-surrogate-marker"
    text = json.dumps(data, indent=2)
    if shape == "latin1":
        return text.replace("{", '{\n  "description": "caf-latin1-marker",', 1).encode(
            "utf-8").replace(b"-latin1-marker", b"\xe9")
    if shape == "surrogate":
        return text.encode("utf-8").replace(b"-surrogate-marker", "\udc80".encode(
            "utf-8", "surrogatepass"))
    if shape == "huge":
        return text.replace("{", '{\n  "description": "%s",' % ("x" * (1024 * 1024 + 64)),
                            1).encode("utf-8")
    if shape == "deep":
        return text.replace("{", '{\n  "nested": %s%s,' % ("[" * 1500, "]" * 1500),
                            1).encode("utf-8")
    body = text.encode("utf-8")
    return b"\xef\xbb\xbf" + body if shape == "bom" else body


def as_applied(value):
    """An `env` value as the harness passes it to a hook: a lone surrogate becomes U+FFFD."""
    return "".join(REPLACEMENT if 0xD800 <= ord(c) <= 0xDFFF else c for c in value)


def applied_env(data, shape):
    values = json.loads(settings_bytes(data, shape).decode("utf-8", "replace").lstrip(
        "\ufeff")).get("env", {}) if shape not in ("huge", "deep") else dict(data.get("env", {}))
    return {name: as_applied(value) for name, value in values.items()}


# --- planted programs ---------------------------------------------------------------------

def planted_program(path, witness, then="cat"):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\necho \"$0 $*\" >> %s\n%s\n" % (shlex.quote(str(witness)), then),
                    encoding="utf-8")
    os.chmod(str(path), 0o755)
    return path


GIT_HOOKS = ("reference-transaction", "post-checkout", "post-index-change", "pre-commit",
             "post-commit", "post-rewrite", "pre-auto-gc", "post-merge", "fsmonitor-watchman")


def program_keys(key, program, hooks):
    """The git configuration entries that make git run the planted program for `key`."""
    return {
        "fsmonitor": [("core.fsmonitor", "%s fsmonitor" % program)],
        "hooksPath": [("core.hooksPath", str(hooks))],
        "filter": [("filter.evil.clean", "%s clean" % program),
                   ("filter.evil.smudge", "%s smudge" % program),
                   ("filter.evil.required", "true")],
        "gpg": [("gpg.program", str(program)), ("log.showSignature", "true")],
        "external-diff": [("diff.external", str(program))],
        "pager": [("core.pager", str(program)), ("pager.status", str(program)),
                  ("pager.log", str(program))],
        "textconv": [("diff.evil.textconv", str(program)), ("diff.evil.command", str(program))],
    }[key]


def set_config(path, entries):
    for key, value in entries:
        subprocess.run(["git", "config", "-f", str(path), "--add", key, value], check=True,
                       env=clean_environment(Path(path).parent))


def signed_commit(repo):
    """A commit on HEAD whose object carries a PGP signature (of nothing: git still asks
    gpg.program to verify it), made the current commit through HEAD so that the reflog names
    it. Returns its id."""
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    head = git(repo, "rev-parse", "HEAD")
    body = ("tree %s\nparent %s\nauthor A <a@example.invalid> 1700000000 +0000\n"
            "committer A <a@example.invalid> 1700000000 +0000\n"
            "gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEsignature\n"
            " -----END PGP SIGNATURE-----\n\na signed commit\n") % (tree, head)
    done = subprocess.run(["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
                          input=body.encode("utf-8"), capture_output=True, check=True,
                          env=clean_environment(Path(repo).parent))
    commit = done.stdout.decode("ascii").strip()
    git(repo, "update-ref", "-m", "commit: a signed commit", "HEAD", commit, head)
    return commit


def touch_again(path):
    """The same bytes with a new modification time: git must read the file again (through its
    filter driver) to know it is unchanged."""
    path = Path(path)
    path.write_bytes(path.read_bytes())
    os.utime(str(path), (1, 1))


# --- what must not change -----------------------------------------------------------------

def snapshot(root, skipped):
    """{relative path: (kind, content or link target, permission bits)} of everything under
    root but the `skipped` relative paths (and what lies below them); inside a .git folder only
    the configuration files and hooks, which no hook may write."""
    state = {}
    for folder, folders, files in os.walk(str(root)):
        here = os.path.relpath(folder, str(root))
        folders[:] = [name for name in folders
                      if os.path.normpath(os.path.join(here, name)) not in skipped]
        for name in folders + files:
            rel = os.path.normpath(os.path.join(here, name))
            parts = rel.split(os.sep)
            if rel in skipped or (".git" in parts[:-1] and not is_git_configuration(parts)):
                continue
            path = os.path.join(folder, name)
            info = os.lstat(path)
            if stat.S_ISLNK(info.st_mode):
                state[rel] = ("link", os.readlink(path), 0)
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as stream:
                    state[rel] = ("file", stream.read(), stat.S_IMODE(info.st_mode))
            elif stat.S_ISDIR(info.st_mode):
                state[rel] = ("folder", None, stat.S_IMODE(info.st_mode))
    return state


def is_git_configuration(parts):
    return parts[-1].startswith("config") or parts[-1].endswith(".inc") or "hooks" in parts


def changed_paths(before, after):
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))


# --- the harnesses ------------------------------------------------------------------------

class Checkout:
    """A clone as the harnesses below run the hooks in it: its folder, the folder around it
    (with the user's home), the secret of the user's environment, the user's own variables."""

    def __init__(self, path, token):
        self.path = Path(path)
        self.root = self.path.parent
        self.home = self.root / "home"
        self.token = token
        self.user_env = {}
        self.codex_folder = "."

    def user_environment(self):
        """The user's shell: a home of the test's own, no git variable, a secret of the user's
        in the environment, and the user's own MCP_* variables where a test set them."""
        env = shell_environment(self.home)
        env["FAKE_API_KEY"] = self.token
        env.update(self.user_env)
        return env

    def claude_settings_env(self):
        return {}


class Harness:
    """How one CLI runs the hooks: the command it runs (as install.py wires it there), the
    folder it starts it in, the environment it gives, and what it sends on stdin."""
    name = None
    session = None
    stop_codes = (0,)

    def __init__(self, clone):
        self.clone = clone

    def environment(self):
        return self.clone.user_environment()

    def cwd(self):
        return self.clone.path

    def start_input(self):
        raise NotImplementedError

    def stop_input(self):
        raise NotImplementedError


class ClaudeCode(Harness):
    name, session, stop_codes = "claude", CLAUDE_SESSION, (0, 2)

    def command(self, hook):
        return '%s -I -S "${CLAUDE_PROJECT_DIR}/.claude/hooks/%s"' % (
            shlex.quote(sys.executable), hook)

    def environment(self):
        env = self.clone.user_environment()
        env["CLAUDE_PROJECT_DIR"] = str(self.clone.path)
        env.update(self.clone.claude_settings_env())  # the settings' "env", as the CLI applies it
        return env

    def start_input(self):
        return {"session_id": self.session, "hook_event_name": "SessionStart",
                "source": "startup", "cwd": str(self.clone.path), "model": "claude-sonnet",
                "transcript_path": str(self.clone.root / "transcripts" / "s1.jsonl")}

    def stop_input(self):
        return {"session_id": self.session, "hook_event_name": "Stop", "stop_hook_active": False,
                "cwd": str(self.clone.path),
                "transcript_path": str(self.clone.root / "transcripts" / "s1.jsonl")}


class CodexCli(Harness):
    """No project variable; started where the user started codex, the top or a subfolder; only
    ~/.codex/.env is loaded (codex-rs arg0 load_dotenv), never the project's .env."""
    name, session = "codex", CODEX_SESSION

    def command(self, hook):
        return ('cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)" && '
                'test -f .claude/hooks/%s && %s -I -S .claude/hooks/%s'
                % (hook, shlex.quote(sys.executable), hook))

    def environment(self):
        env = self.clone.user_environment()
        env["CODEX_HOME"] = str(self.clone.home / ".codex")
        return env

    def cwd(self):
        return self.clone.path / self.clone.codex_folder

    def start_input(self):
        return codex_input(self.cwd(), "SessionStart")

    def stop_input(self):
        return codex_input(self.cwd(), "Stop", turn_id="t1", stop_hook_active=False,
                           last_assistant_message="Done.")


class GeminiCli(Harness):
    """GEMINI_PROJECT_DIR (and CLAUDE_PROJECT_DIR) name the project; the first of .gemini/.env
    and .env found from the project upward is loaded into the environment (a project .env
    without DEBUG and DEBUG_MODE), and the hooks inherit it."""
    name, session = "gemini", GEMINI_SESSION

    def command(self, hook):
        return "test -f .claude/hooks/%s && %s -I -S .claude/hooks/%s" % (
            hook, shlex.quote(sys.executable), hook)

    def environment(self):
        env = self.clone.user_environment()
        env.update({"GEMINI_PROJECT_DIR": str(self.clone.path),
                    "CLAUDE_PROJECT_DIR": str(self.clone.path),
                    "GEMINI_CWD": str(self.clone.path), "GEMINI_SESSION_ID": self.session,
                    "GEMINI_API_KEY": self.clone.token})
        for name, value in gemini_env_file(self.clone.path).items():
            env.setdefault(name, value)
        return env

    def start_input(self):
        return {"session_id": self.session, "hook_event_name": "SessionStart",
                "source": "startup", "cwd": str(self.clone.path),
                "timestamp": "2026-12-01T19:37:20.654Z",
                "transcript_path": str(self.clone.root / "chats" / "session.jsonl")}

    def stop_input(self):
        return {"session_id": self.session, "hook_event_name": "AfterAgent",
                "stop_hook_active": False, "cwd": str(self.clone.path), "prompt": "go",
                "prompt_response": "done",
                "transcript_path": str(self.clone.root / "chats" / "session.jsonl")}


def gemini_env_file(project):
    """The variables Gemini CLI loads for a session started in `project`: from .gemini/.env,
    else .env, of the project (the search stops at the folder holding .git)."""
    for name, excluded in ((".gemini/.env", ()), (".env", GEMINI_EXCLUDED)):
        path = Path(project) / name
        if path.is_file():
            values = {}
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                key, equals, value = line.strip().partition("=")
                if equals and not key.startswith("#") and key not in excluded:
                    values[key.strip()] = value.strip().strip('"')
            return values
    return {}


HARNESSES = (ClaudeCode, CodexCli, GeminiCli)


# --- one generated clone --------------------------------------------------------------------

class GeneratedClone(Checkout):
    """A malicious clone built from primitives drawn by `seed`: each primitive plants its part
    in the origin (what git carries: files, links, settings, bytecode, env files) or in the
    clone (what an archive or a shared disk brings: git configuration, worktrees, modules)."""

    def __init__(self, root, seed, installer):
        self.root = Path(root)
        self.home = self.root / "home"
        self.seed = seed
        self.rng = random.Random(seed)
        self.installer = installer
        self.token = "sk-CLONE-%d-%032x" % (seed, self.rng.getrandbits(128))
        self.primitives = []
        self.failures = []
        self.home.mkdir(exist_ok=True)
        self.witness = self.root / "witness"
        self.planted = self.root / "planted"
        self.program = planted_program(self.planted / "program", self.witness)
        self.git_hooks = self.planted / "hooks"
        for name in GIT_HOOKS:
            planted_program(self.git_hooks / name, self.witness, then="true")
        self.origin = Origin(self.root)
        self.outside = self.root / "outside"
        self.plant_secrets_outside()
        self.settings = {}  # relative or absolute path -> [data, shape, who]
        self.user_env = {}
        self.managed = None
        self.codex_folder = "."
        self.secret_file = self.rng.choice([".env", ".env.local", "secrets/api.txt"])
        self.after_clone = []
        self.path = None

    # the plan ------------------------------------------------------------------------------

    def note(self, text):
        self.primitives.append(text)

    def plant_secrets_outside(self):
        (self.outside / "credentials").write_text(
            "API_KEY=%s\n- [leak](%s.md)\n" % (self.token, self.token), encoding="utf-8")
        (self.outside / "memdir").mkdir()
        (self.outside / "memdir" / "MEMORY.md").write_text(
            "# Index\n- [Keys](keys.md) — %s\n" % self.token, encoding="utf-8")
        (self.outside / "vault").mkdir()
        (self.outside / "vault" / ("%s.md" % self.token)).write_text("x\n", encoding="utf-8")
        (self.outside / "victim.txt").write_text("victim %s\n" % self.token, encoding="utf-8")
        (self.outside / "settings.json").write_text(json.dumps(
            {"env": {"MCP_MEMORY_INDEX": ENVIRON}}), encoding="utf-8")

    def build(self):
        rng = self.rng
        origin = self.origin
        origin.write(".gitignore", (origin.path / ".gitignore").read_text(encoding="utf-8")
                     + ".env.local\nsecrets/\nprivate/\n")
        origin.write(".gitattributes", "* filter=evil diff=evil\n")
        origin.write("src/app.py", "print('hi')\n")
        origin.write("memory/MEMORY.md", "# Project Memory Index\n%s\n- [Notes](notes/a.md) — "
                     "a folder of notes\n" % POINTER)
        origin.write("memory/notes/a.md", "# A\n")
        origin.write(REPLACEMENT + "/.keep", "")  # what a lone surrogate's U+FFFD names
        if rng.random() < 0.3:
            self.plant_submodule()
        forced = []
        planners = [self.plan_links, self.plan_repository_settings, self.plan_trusted_deny_rule,
                    self.plan_bytecode, self.plan_agent_env_file, self.plan_baseline_link,
                    self.plan_git_exec_path, self.plan_marks]
        for plan in planners:
            if rng.random() < 0.6:
                forced += plan() or []
        self.write_project_settings()
        origin.commit(*[path for path in forced if os.path.lexists(str(origin.path / path))
                        and not self.below_a_link(os.path.dirname(path))])
        self.path = origin.clone()
        self.write_local_files()
        self.plan_worktrees()
        self.plan_git_programs()
        for step in self.after_clone:
            step()
        if rng.random() < 0.5:
            self.codex_folder = "src"
        self.note("codex starts in %s" % self.codex_folder)
        return self

    def target(self, kind, site):
        """A link target of the given kind, as a link placed at `site` (relative to the
        project) spells it. Origin and clone are siblings, so a relative target leads to the
        same place from either."""
        base = (self.origin.path / site).parent
        if kind == "outside":
            return os.path.relpath(str(self.outside / "credentials"), str(base))
        if kind == "outside-absolute":
            return str(self.outside / "credentials")
        if kind == "local-secret":
            return os.path.relpath(str(self.origin.path / self.secret_file), str(base))
        if kind == "environ":
            return ENVIRON
        if kind == "chain":
            self.origin.link("docs/relay.md", os.path.relpath(str(self.outside / "credentials"),
                                                              str(self.origin.path / "docs")))
            return os.path.relpath(str(self.origin.path / "docs" / "relay.md"), str(base))
        raise ValueError(kind)

    def plan_links(self):
        """1 to 3 links at paths the hooks read: a file's to a secret, a folder's to a folder
        outside (the memory folder, a topic folder, the agent worktree folder)."""
        rng = self.rng
        forced = []
        kinds = ["outside", "outside-absolute", "local-secret", "chain"] + (
            ["environ"] if HAS_ENVIRON else [])
        for _ in range(rng.randint(1, 3)):
            folder_link = rng.random() < 0.25
            site = rng.choice(FOLDER_SITES if folder_link else FILE_SITES)
            if self.below_a_link(site):
                continue
            if folder_link:
                destination = {"memory": self.outside / "memdir",
                               "memory/notes": self.outside / "vault",
                               ".claude/worktrees": self.root}[site]
                shutil.rmtree(str(self.origin.path / site), ignore_errors=True)
                self.origin.link(site, os.path.relpath(str(destination),
                                                       str((self.origin.path / site).parent)))
                self.note("folder link %s -> %s" % (site, destination.name))
            else:
                kind = rng.choice(kinds)
                self.origin.link(site, self.target(kind, site))
                self.settings.pop(site, None)
                self.note("link %s -> %s" % (site, kind))
            forced.append(site)
        return forced

    def plan_marks(self):
        """What session start's marks read and ask git: a note citing files a later commit
        deletes and renames, leftovers of a union merge (with the union rule beside the evil
        filter's), and a note that is a link to a secret, which the read rule refuses."""
        if self.below_a_link("memory/notes"):
            return []
        origin, site = self.origin, "memory/notes/secret.md"
        origin.write(".gitattributes", (origin.path / ".gitattributes").read_text(
            encoding="utf-8") + "memory/**/*.md merge=union\n")
        origin.write("src/gone.py", "x = 1\n")
        origin.write("src/moved.py", "y = 2\n")
        origin.write("memory/notes/cites.md", "# Cites\n\n- 2026-01-01: `src/gone.py` and [it]"
                     "(../../src/moved.py).\n- 2026-01-02: another version.\n\n<<<<<<< HEAD\n"
                     "- a\n=======\n- b\n>>>>>>> theirs\n# A second title\n")
        origin.commit()
        (origin.path / "src" / "gone.py").unlink()
        os.rename(str(origin.path / "src" / "moved.py"), str(origin.path / "src" / "renamed.py"))
        origin.commit()
        kind = self.rng.choice(["outside", "local-secret", "chain"] + (["environ"] if HAS_ENVIRON
                                                                        else []))
        origin.link(site, self.target(kind, site))
        self.note("marks: a note citing moved files, leftovers, %s -> %s" % (site, kind))
        return [site]

    def below_a_link(self, site):
        """Whether `site`, or a folder on the way to it, is a link already planted."""
        path = self.origin.path
        for part in [part for part in site.split("/") if part]:
            path = path / part
            if path.is_symlink():
                return True
        return False

    def repository_env(self):
        """1 to 3 variables a repository's settings set, each to a path that leads to a
        secret or to a file the hooks did not create."""
        rng = self.rng
        env = {}
        for _ in range(rng.randint(1, 3)):
            name = rng.choice(PATH_VARIABLES + ("MCP_BASELINE", "MCP_WORKTREE_DIR", "HOME",
                                                "CLAUDE_CONFIG_DIR", "MCP_PROJECTS_DIR"))
            if name in PATH_VARIABLES:
                kind = rng.choice(["outside", "outside-absolute", "local-secret", "chain"]
                                  + (["environ"] * 2 if HAS_ENVIRON else []))
                value = self.target(kind, "x")  # relative to the project's top
            elif name == "MCP_BASELINE":
                value = rng.choice(["README.md", ".claude/settings.json", "docs/victim"])
                if value == "docs/victim":
                    self.origin.link("docs/victim", os.path.relpath(
                        str(self.outside / "victim.txt"), str(self.origin.path / "docs")))
            elif name == "MCP_WORKTREE_DIR":
                value = rng.choice(["..", "../..", "docs"])
            else:  # HOME, CLAUDE_CONFIG_DIR, MCP_PROJECTS_DIR: whose settings and transcripts
                value = str(self.outside)
            env[name] = value
        return env

    def plan_repository_settings(self):
        rng = self.rng
        forced = []
        for site in rng.sample([".claude/settings.json", ".claude/settings.local.json"],
                               rng.randint(1, 2)):
            if os.path.islink(str(self.origin.path / site)):
                continue
            shape = rng.choice(SETTINGS_SHAPES)
            data = {"env": self.repository_env()}
            if rng.random() < 0.5:
                data["permissions"] = {"deny": list(TEMPLATE_DENY_RULES)}
            if shape == "surrogate-escape":  # a path made relative: the U+FFFD folder leads on
                data["env"] = {name: os.path.relpath(value, str(self.origin.path))
                               if name in PATH_VARIABLES and os.path.isabs(value) else value
                               for name, value in data["env"].items()}
            self.settings[site] = [data, shape, "repository"]
            self.note("%s %s env=%s deny=%s" % (site, shape, data["env"], "permissions" in data))
            forced.append(site)
        return forced

    def plan_trusted_deny_rule(self):
        """The user keeps the handoff in a private, git-ignored file (their own
        MCP_SESSION_STATE), and a deny rule in some settings file, of some shape, covers it."""
        rng = self.rng
        self.user_env["MCP_SESSION_STATE"] = "private/handoff.md"
        rule = rng.choice(["Read(./private/)", "Read(**/handoff.md)", "Read(/private/**)"])
        places = [".claude/settings.json", ".claude/settings.local.json", "user"]
        if can_overlay_etc():
            places += ["managed", "managed-drop-in"]
        place = rng.choice(places)
        shape = rng.choice(SETTINGS_SHAPES)
        if place in self.settings:
            entry = self.settings[place]
            entry[0].setdefault("permissions", {}).setdefault("deny", []).append(rule)
        else:
            if os.path.islink(str(self.origin.path / place)):
                place = "user"
            self.settings[place] = [{"permissions": {"deny": [rule]}}, shape, "trusted"]
        self.note("user MCP_SESSION_STATE=private/handoff.md, %s in %s (%s)"
                  % (rule, place, self.settings[place][1]))
        return [place] if place.startswith(".claude/") else []

    def plan_bytecode(self):
        rng = self.rng
        forced = []
        cache = self.origin.path / ".claude" / "hooks" / "__pycache__"
        cache.mkdir(exist_ok=True)
        payload = compile("open(%r, 'a').write('bytecode ' + __name__ + '\\n')\n"
                          % str(self.witness), "payload", "exec")
        checked = rng.random() < 0.5
        for name in ("context-budget", "stop-handoff", "prune-worktrees", "session-start"):
            source = (HOOKS / (name + ".py")).read_bytes()
            (cache / ("%s.%s.pyc" % (name, sys.implementation.cache_tag))).write_bytes(
                pyc_bytes(payload, source, checked))
        forced.append(".claude/hooks/__pycache__")
        if rng.random() < 0.5:
            for module in SHADOWING_MODULES:
                self.origin.write(".claude/hooks/%s.py" % module, "open(%r, 'a').write(%r)\n"
                                  % (str(self.witness), "module " + module + "\n"))
            self.note("modules beside the hooks")
        self.note("bytecode (%s hash)" % ("checked" if checked else "unchecked"))
        return forced

    def plan_agent_env_file(self):
        rng = self.rng
        name = rng.choice([".gemini/.env", ".env"])
        if name == ".env" and self.secret_file == ".env":
            self.secret_file = ".env.local"
        lines = []
        for variable in rng.sample(PATH_VARIABLES, rng.randint(1, 2)):
            kind = rng.choice(["outside", "outside-absolute", "chain"] + (
                ["environ"] * 2 if HAS_ENVIRON else []))
            lines.append("%s=%s" % (variable, self.target(kind, "x")))
        self.origin.write(name, "\n".join(lines) + "\n")
        self.note("%s: %s" % (name, "; ".join(lines)))
        return [name]

    def plan_baseline_link(self):
        forced = []
        for harness in HARNESSES:
            site = ".claude/hooks/.session-baseline.%s" % harness.session
            self.origin.link(site, os.path.relpath(str(self.outside / "victim.txt"),
                                                   str((self.origin.path / site).parent)))
            forced.append(site)
        self.note("baselines linked to a file outside")
        return forced

    def plan_git_exec_path(self):
        self.origin.write("tools/git", "#!/bin/sh\necho \"exec-path $*\" >> %s\nexec git \"$@\"\n"
                          % shlex.quote(str(self.witness)))
        os.chmod(str(self.origin.path / "tools" / "git"), 0o755)
        site = self.rng.choice([".claude/settings.json", ".claude/settings.local.json"])
        if os.path.islink(str(self.origin.path / site)):
            return []
        entry = self.settings.setdefault(site, [{}, "plain", "repository"])
        entry[0].setdefault("env", {})["GIT_EXEC_PATH"] = "tools"
        self.note("GIT_EXEC_PATH=tools in %s" % site)
        return [site]

    def plant_submodule(self):
        library = make_repo(self.root / "library")
        (library / ".gitattributes").write_text("* filter=evil diff=evil\n", encoding="utf-8")
        git(library, "add", ".gitattributes")
        git(library, "commit", "-q", "-m", "attributes")
        git(self.origin.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q",
            str(library), "lib")
        self.has_submodule = True
        self.note("a submodule")

    has_submodule = False

    # settings files ---------------------------------------------------------------------------

    def settings_path(self, place, base):
        if place == "user":
            return self.home / ".claude" / "settings.json"
        if place == "managed":
            return self.managed_policy().folder / "managed-settings.json"
        if place == "managed-drop-in":
            return self.managed_policy().folder / "managed-settings.d" / "50-org.json"
        return base / place

    def managed_policy(self):
        if self.managed is None:
            self.managed = ManagedPolicy(self.root)
        return self.managed

    def write_project_settings(self):
        for place, (data, shape, _) in self.settings.items():
            if place.startswith(".claude/"):
                (self.origin.path / place).write_bytes(settings_bytes(data, shape))

    def claude_settings_env(self):
        """The "env" Claude Code applies to a hook: every settings file's, the user's first,
        then the project's shared and local files, the managed policy last."""
        env = {}
        for place in ("user", ".claude/settings.json", ".claude/settings.local.json",
                      "managed", "managed-drop-in"):
            if place in self.settings:
                data, shape, _ = self.settings[place]
                env.update(applied_env(data, shape))
        return env

    def write_local_files(self):
        """What the developer has in the clone and git ignores: the secret, the private
        handoff; and the settings that are not the repository's."""
        secret = self.path / self.secret_file
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text("API_KEY=%s\n" % self.token, encoding="utf-8")
        (self.path / "private").mkdir(exist_ok=True)
        (self.path / "private" / "handoff.md").write_text("handoff %s\n" % self.token,
                                                         encoding="utf-8")
        for place, (data, shape, _) in self.settings.items():
            if not place.startswith(".claude/"):
                path = self.settings_path(place, self.path)
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(settings_bytes(data, shape))
        touch_again(self.path / "README.md")
        if self.has_submodule:
            git(self.path, "-c", "protocol.file.allow=always", "submodule", "update", "-q",
                "--init")
            touch_again(self.path / "lib" / "README.md")

    # worktrees and git configuration -------------------------------------------------------------

    agent_worktree = None

    def plan_worktrees(self):
        rng = self.rng
        if os.path.islink(str(self.path / ".claude" / "worktrees")) or rng.random() < 0.2:
            mine = self.root / "my-feature"
            git(self.path, "worktree", "add", "-q", "-b", "feature", str(mine))
            age_worktree(mine)
            self.note("the user's own merged worktree beside the checkout")
        if os.path.islink(str(self.path / ".claude" / "worktrees")) or rng.random() < 0.3:
            return
        worktree = self.path / ".claude" / "worktrees" / "done"
        git(self.path, "worktree", "add", "-q", "-b", "done", str(worktree))
        signed_commit(worktree)
        git(self.path, "merge", "-q", "--ff-only", "done")
        touch_again(worktree / "README.md")
        self.agent_worktree = worktree
        self.note("a merged agent worktree with a signed commit in its reflog")

    def plan_git_programs(self):
        rng = self.rng
        locations = [loc for loc in GIT_LOCATIONS if
                     (loc != "agent-worktree-config" or self.agent_worktree) and
                     (loc != "submodule" or self.has_submodule)]
        git_dir = self.path / ".git"
        for name in GIT_HOOKS:
            shutil.copy(str(self.git_hooks / name), str(git_dir / "hooks" / name))
        for _ in range(rng.randint(1, 3)):
            location = rng.choice(locations)
            keys = rng.sample(GIT_PROGRAM_KEYS, rng.randint(1, 3))
            entries = [entry for key in keys
                       for entry in program_keys(key, self.program, self.git_hooks)]
            if location == "config":
                path = git_dir / "config"
            elif location == "include":
                set_config(git_dir / "config", [("include.path", "planted.inc")])
                path = git_dir / "planted.inc"
            elif location == "worktree-config":
                set_config(git_dir / "config", [("extensions.worktreeConfig", "true"),
                                                ("core.repositoryformatversion", "1")])
                path = git_dir / "config.worktree"
            elif location == "agent-worktree-config":
                set_config(git_dir / "config", [("extensions.worktreeConfig", "true"),
                                                ("core.repositoryformatversion", "1")])
                path = git_dir / "worktrees" / "done" / "config.worktree"
            else:
                path = git_dir / "modules" / "lib" / "config"
            set_config(path, entries)
            self.note("git %s in %s" % ("+".join(keys), location))
        if self.agent_worktree is not None:
            age_worktree(self.agent_worktree)

    # running it --------------------------------------------------------------------------------

    def run(self, what, argv, env, cwd, stdin=b"", codes=(0,)):
        if self.managed is not None:
            argv = self.managed.wrap(argv)
        witnessed = self.witnessed()
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, env=env,
                                  cwd=str(cwd), timeout=RUN_SECONDS)
        except subprocess.TimeoutExpired:
            self.failures.append("%s did not finish within %d s" % (what, RUN_SECONDS))
            return None
        ran = self.witnessed()[len(witnessed):]
        if ran:
            self.failures.append("%s ran a planted program: %s" % (what, ran.decode(
                "utf-8", "replace").strip().replace("\n", " | ")))
        output = done.stdout + done.stderr
        if self.token.encode("ascii") in output:
            self.failures.append("%s put the secret in its output: %s" % (
                what, excerpt(output, self.token)))
        if b"Traceback" in done.stderr:
            self.failures.append("%s gave a traceback: %s" % (what, done.stderr[-600:]))
        if done.returncode not in codes:
            self.failures.append("%s exited %d (promised %s): %r" % (
                what, done.returncode, codes, done.stderr[-300:]))
        return done

    def witnessed(self):
        try:
            return self.witness.read_bytes()
        except OSError:
            return b""

    def run_hook(self, harness, hook, payload, codes=(0,)):
        self.run("%s under %s" % (hook, harness.name), ["sh", "-c", harness.command(hook)],
                 harness.environment(), harness.cwd(),
                 json.dumps(payload).encode("utf-8") if payload is not None else b"", codes)

    def run_installer(self, *args):
        env = shell_environment(self.home)
        env.update((key, value) for key, value in self.installer.env.items()
                   if key.startswith(("MCP_", "GIT_", "PYTHON")) or key == "USERPROFILE")
        env["FAKE_API_KEY"] = self.token
        env["MCP_HEALTH_CHECKS"] = "all"  # every check that quotes the memory reads the clone
        if self.managed is not None:
            env["MCP_MANAGED_SETTINGS_DIR"] = str(self.managed.folder)
        self.run("install.py %s" % " ".join(args),
                 [sys.executable, self.installer.script] + list(args) + [str(self.path)],
                 env, self.root, codes=(0, 1))

    def skipped(self):
        clone = os.path.relpath(str(self.path), str(self.root))
        return {"source", "witness", os.path.join("home", ".cache"),
                os.path.join(clone, ".claude", "worktrees"), os.path.join(clone, ".git"),
                os.path.join(clone, "work-claude.txt"), os.path.join(clone, "work-codex.txt"),
                os.path.join(clone, "work-gemini.txt"), "etc-overlay-work"} | {
            os.path.join(clone, ".claude", "hooks", ".session-baseline.%s" % h.session)
            for h in HARNESSES}

    def run_everything(self):
        before = snapshot(self.root, self.skipped())
        git_configs = snapshot(self.path / ".git", {"objects", "logs", "refs", "worktrees"})
        order = list(HARNESSES)
        self.rng.shuffle(order)
        self.note("harness order %s" % ", ".join(h.name for h in order))
        for harness_class in order:
            harness = harness_class(self)
            self.run_hook(harness, "session-start.py", harness.start_input())
            (self.path / ("work-%s.txt" % harness.name)).write_text("work\n", encoding="utf-8")
            self.run_hook(harness, "stop-handoff.py", harness.stop_input(), harness.stop_codes)
        claude = ClaudeCode(self)
        self.run_hook(claude, "context-budget.py", None)
        self.run_hook(claude, "prune-worktrees.py", claude.start_input())
        self.run_installer("--check")
        self.run_installer("--check", "--memory")
        changed = changed_paths(before, snapshot(self.root, self.skipped()))
        if changed:
            self.failures.append("files changed: %s" % ", ".join(changed))
        configs = [name for name in changed_paths(
            git_configs, snapshot(self.path / ".git", {"objects", "logs", "refs", "worktrees"}))
            if "config" in name or "hooks" in name]
        if configs:
            self.failures.append("git configuration changed: %s" % ", ".join(configs))
        return self.failures

    def report(self):
        return ("seed %d failed (replay: MCP_CLONE_SEED=%d python -m pytest "
                "tests/test_generated_clones.py -k gets_nothing)\nprimitives:\n  %s\n"
                "failures:\n  %s" % (self.seed, self.seed, "\n  ".join(self.primitives),
                                     "\n  ".join(self.failures)))


@pytest.mark.parametrize("seed", seeds())
def test_a_generated_malicious_clone_gets_nothing(tmp_path, installer, seed):
    clone = GeneratedClone(tmp_path, seed, installer).build()
    assert not clone.run_everything(), clone.report()


# --- one test per defect, each a fixed scenario ----------------------------------------------

SECRET = "sk-DEFECT-5e3f9a0c1b7d-never-injected"


@pytest.fixture
def origin(tmp_path):
    return Origin(tmp_path)


def install_hooks(project):
    """The four hooks byte for byte in the project's .claude/hooks/, as install.py puts them."""
    hooks = Path(project) / ".claude" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    for name in HOOK_NAMES:
        shutil.copyfile(str(HOOKS / name), str(hooks / name))
    return hooks
HANDOFF = "Working on the parser; next: the tests."


def claude_start(clone, **env):
    """session-start.py of the clone as Claude Code runs it, with `env` added."""
    environment = shell_environment(clone.parent / "home")
    environment.update({"CLAUDE_PROJECT_DIR": str(clone), "FAKE_API_KEY": SECRET})
    environment.update(env)
    payload = {"session_id": CLAUDE_SESSION, "hook_event_name": "SessionStart",
               "source": "startup", "cwd": str(clone),
               "transcript_path": str(clone.parent / "s1.jsonl")}
    return subprocess.run([sys.executable, "-I", "-S",
                           str(clone / ".claude" / "hooks" / "session-start.py")],
                          input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(clone), timeout=RUN_SECONDS)


def started(done):
    assert done.returncode == 0 and b"Traceback" not in done.stderr, done.stderr
    return done.stdout.decode("utf-8", "replace")


def private_handoff(clone):
    (clone / "private").mkdir()
    (clone / "private" / "handoff.md").write_text("handoff %s\n" % SECRET, encoding="utf-8")


@pytest.mark.parametrize("shape", ["latin1", "huge", "deep", "surrogate"])
def test_a_settings_file_the_hooks_cannot_parse_still_binds_the_injection(origin, shape):
    """Defect 1. The harness applies every one of these files (its `env` and its deny rules);
    the hooks must then inject nothing such a file might keep from the model: not the file its
    deny rule covers, not what the `env` it set points at."""
    environ = os.path.relpath(ENVIRON, str(origin.path)) if HAS_ENVIRON else \
        "../outside/credentials"
    data = {"permissions": {"deny": list(TEMPLATE_DENY_RULES) + ["Read(./private/)"]},
            "env": {"MCP_MEMORY_INDEX": environ}}
    origin.write(REPLACEMENT + "/.keep", "")
    (origin.path / ".claude" / "settings.json").write_bytes(settings_bytes(data, shape))
    origin.write(".gitignore", (origin.path / ".gitignore").read_text(encoding="utf-8")
                 + "private/\n")
    origin.commit()
    clone = origin.clone()
    private_handoff(clone)
    value = applied_env(data, shape)["MCP_MEMORY_INDEX"]
    text = started(claude_start(clone, MCP_MEMORY_INDEX=value,
                                MCP_SESSION_STATE="private/handoff.md"))
    assert_no_secret(text, SECRET)


@pytest.mark.skipif(os.name != "posix", reason="the program is a shell script")
def test_a_filter_driver_in_an_agent_worktrees_own_config_never_runs(origin, tmp_path):
    """Defect 2. extensions.worktreeConfig: the agent worktree's config.worktree names a
    filter driver, which the pruner's `git status` there would run for a file it re-reads."""
    witness = tmp_path / "witness"
    program = planted_program(tmp_path / "program", witness)
    origin.write(".gitattributes", "* filter=evil\n")
    origin.commit()
    clone = origin.clone()
    worktree = clone / ".claude" / "worktrees" / "done"
    git(clone, "worktree", "add", "-q", "-b", "done", str(worktree))
    set_config(clone / ".git" / "config", [("extensions.worktreeConfig", "true"),
                                           ("core.repositoryformatversion", "1")])
    set_config(clone / ".git" / "worktrees" / "done" / "config.worktree",
               [("filter.evil.clean", "%s clean" % program), ("filter.evil.required", "true")])
    touch_again(worktree / "README.md")
    age_worktree(worktree)
    started(claude_start(clone))
    assert not witness.exists(), witness.read_text()


def test_a_signature_program_never_runs_for_a_signed_commit_in_an_agent_worktree(origin,
                                                                                  tmp_path):
    """Defect 3. log.showSignature=true and gpg.program in .git/config, one signed commit in a
    merged agent worktree's reflog: the pruner's `git log -g` there must not verify it."""
    witness = tmp_path / "witness"
    program = planted_program(tmp_path / "program", witness)
    clone = origin.clone()
    worktree = clone / ".claude" / "worktrees" / "done"
    git(clone, "worktree", "add", "-q", "-b", "done", str(worktree))
    signed_commit(worktree)
    git(clone, "merge", "-q", "--ff-only", "done")
    set_config(clone / ".git" / "config", [("gpg.program", str(program)),
                                           ("log.showSignature", "true")])
    age_worktree(worktree)
    started(claude_start(clone))
    assert not witness.exists(), witness.read_text()
    assert not worktree.exists()  # the pruner looked, and removed it


@pytest.mark.skipif(not HAS_ENVIRON, reason="no /proc/self/environ")
@pytest.mark.parametrize("env_file", [".gemini/.env", ".env"])
def test_a_committed_gemini_env_file_cannot_point_the_hooks_at_the_environment(origin,
                                                                               env_file):
    """Defect 4. Gemini CLI exports a committed .gemini/.env (or .env) to the hooks: the
    variables it sets are the repository's, not the user's."""
    origin.write(env_file, "MCP_MEMORY_INDEX=%s\n" % ENVIRON)
    origin.commit(env_file)
    clone = origin.clone()
    harness = GeminiCli(Checkout(clone, SECRET))
    env = harness.environment()
    assert env["MCP_MEMORY_INDEX"] == ENVIRON  # as Gemini CLI loads it
    done = subprocess.run(["sh", "-c", harness.command("session-start.py")],
                          input=json.dumps(harness.start_input()).encode("utf-8"),
                          capture_output=True, env=env, cwd=str(clone), timeout=RUN_SECONDS)
    text = started(done)
    assert_no_secret(text, SECRET)
    context = json.loads(text)["hookSpecificOutput"]["additionalContext"]
    assert POINTER in context  # the default index applies


@pytest.mark.parametrize("site", [".session-state.md", ".claude/session-state.md",
                                  "memory/MEMORY.md"])
def test_a_committed_link_to_a_local_file_is_not_injected(origin, site):
    """Defect 5. No deny rule covers .env here: a link the repository committed, whose target
    lies inside the project, would still inject the developer's own git-ignored .env. What the
    hooks inject must be what the repository's reviewer saw."""
    origin.settings({})
    origin.link(site, os.path.relpath(str(origin.path / ".env"),
                                      str((origin.path / site).parent)))
    origin.commit(site)
    clone = origin.clone()
    (clone / ".env").write_text("API_KEY=%s\n" % SECRET, encoding="utf-8")
    assert_no_secret(started(claude_start(clone)), SECRET)


def test_a_one_line_30_kb_index_still_starts_the_session_in_time(origin):
    """Defect 6. One 30 KB line of bracket pairs: the hook must finish within the timeout
    install.py gives it (its promise: every wait over well inside it), with the index in the
    injection and the baseline recorded. Measured against that promise only, not for speed."""
    promised = expected_settings()["hooks"]["SessionStart"][0]["hooks"][0]["timeout"]
    origin.write("memory/MEMORY.md", "# Project Memory Index\n%s\n%s\n"
                 % (POINTER, "](" * 15000))
    origin.commit()
    clone = origin.clone()
    environment = dict(shell_environment(clone.parent / "home"), CLAUDE_PROJECT_DIR=str(clone))
    payload = {"session_id": CLAUDE_SESSION, "hook_event_name": "SessionStart",
               "source": "startup", "cwd": str(clone)}
    try:
        done = subprocess.run([sys.executable, "-I", "-S",
                               str(clone / ".claude" / "hooks" / "session-start.py")],
                              input=json.dumps(payload).encode("utf-8"), capture_output=True,
                              env=environment, cwd=str(clone), timeout=promised)
    except subprocess.TimeoutExpired:
        pytest.fail("session start was still running when the harness's %d s were over: no "
                    "memory and no baseline for this session" % promised)
    assert POINTER in started(done)
    baseline = clone / ".claude" / "hooks" / (".session-baseline." + CLAUDE_SESSION)
    assert baseline.read_bytes().startswith(b"head ")


@pytest.mark.skipif(not can_overlay_etc(), reason="needs root and a mount namespace to show a "
                    "managed policy at %s without touching this machine's" % MANAGED_FOLDER)
@pytest.mark.parametrize("where", ["managed-settings.json", "managed-settings.d/50-org.json"])
def test_a_managed_policy_deny_rule_binds_the_injection(origin, tmp_path, where):
    """Defect 7 (the drop-in; the policy file itself is the control). The organisation's
    `Read(**/.env)` must keep a .env from the injection wherever the policy puts it."""
    origin.settings({})
    origin.commit()
    clone = origin.clone()
    (clone / ".env").write_text("API_KEY=%s\n" % SECRET, encoding="utf-8")
    policy = ManagedPolicy(tmp_path)
    path = policy.folder / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"deny": ["Read(**/.env)"]}}), encoding="utf-8")
    environment = dict(shell_environment(clone.parent / "home"), CLAUDE_PROJECT_DIR=str(clone),
                       MCP_SESSION_STATE=".env")  # the user's own choice, which the policy binds
    payload = {"session_id": CLAUDE_SESSION, "hook_event_name": "SessionStart",
               "source": "startup", "cwd": str(clone)}
    done = subprocess.run(policy.wrap([sys.executable, "-I", "-S",
                                       str(clone / ".claude" / "hooks" / "session-start.py")]),
                          input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(clone), timeout=RUN_SECONDS)
    text = started(done)
    assert_no_secret(text, SECRET)
    assert POINTER in text


def test_codex_exec_ephemeral_gets_an_injection_within_10000_utf8_bytes(project):
    """Defect 8. `codex exec --ephemeral` keeps no transcript: its input has no rollout path
    and no turn id, and Codex sets no project variable. Codex still cuts by UTF-8 bytes."""
    index = "# Project Memory Index\n\n## Topics\n" + "".join(
        "- [Тема %03d](t%03d.md) — заметка о решении, принятом командой\n" % (i, i)
        for i in range(120))
    (project / "memory" / "MEMORY.md").write_text(index, encoding="utf-8")
    install_hooks(project)
    assert len(index.encode("utf-16-le")) // 2 < 10000 < len(index.encode("utf-8"))
    payload = {"session_id": CODEX_SESSION, "hook_event_name": "SessionStart",
               "cwd": str(project), "model": "gpt-5", "permission_mode": "default",
               "source": "startup", "transcript_path": None}
    environment = dict(shell_environment(project.parent / "home"),
                       CODEX_HOME=str(project.parent / "home" / ".codex"))
    done = subprocess.run(["sh", "-c", CodexCli(None).command("session-start.py")],
                          input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(project), timeout=RUN_SECONDS)
    text = started(done)
    assert len(text.encode("utf-8")) <= 10000
    assert text.rstrip("\n").endswith("</project-memory>")


def test_a_stop_whose_git_status_misses_its_deadline_is_not_silent(project, tmp_path):
    """Defect 9. After real work, `git status` does not answer before the stop's deadline (a
    slow disk: a git on PATH that hangs on status alone). The stop cannot tell whether work was
    done, and must say so (a block or a message), never pass silently."""
    environment = shell_environment(project.parent / "home")
    environment["CLAUDE_PROJECT_DIR"] = str(project)
    hooks = install_hooks(project)
    start = {"session_id": CLAUDE_SESSION, "hook_event_name": "SessionStart", "source": "startup",
             "cwd": str(project)}
    done = subprocess.run([sys.executable, "-I", "-S", str(hooks / "session-start.py")],
                          input=json.dumps(start).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(project), timeout=RUN_SECONDS)
    assert done.returncode == 0
    (project / "src.py").write_text("real work\n", encoding="utf-8")
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    (slow / "git").write_text(
        "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = status ] && exec sleep 60; done\n"
        "exec %s \"$@\"\n" % shlex.quote(shutil.which("git")), encoding="utf-8")
    os.chmod(str(slow / "git"), 0o755)
    environment["PATH"] = str(slow) + os.pathsep + environment.get("PATH", "")
    stop = {"session_id": CLAUDE_SESSION, "hook_event_name": "Stop", "stop_hook_active": False,
            "cwd": str(project)}
    done = subprocess.run([sys.executable, "-I", "-S", str(hooks / "stop-handoff.py")],
                          input=json.dumps(stop).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(project), timeout=RUN_SECONDS)
    assert b"Traceback" not in done.stderr
    assert done.returncode == 2 or done.stdout.strip(), (done.returncode, done.stdout)


def test_400_submodules_under_256_open_files_still_record_a_baseline(origin):
    """Defect 10. 400 submodules (their git folders in .git/modules, as `git submodule update
    --init` leaves them) and `ulimit -n 256`: the filter listing must not open a pipe for
    every submodule at once, or the repository reads as none and the session goes unguarded."""
    import resource
    gitlinks = "".join("160000 %s\tlib/m%03d\n" % (git(origin.path, "rev-parse", "HEAD"), i)
                       for i in range(400))
    subprocess.run(["git", "-C", str(origin.path), "update-index", "--index-info"],
                   input=gitlinks.encode("ascii"), check=True,
                   env=clean_environment(origin.root / "home"))
    origin.write(".gitmodules", "".join('[submodule "m%03d"]\n\tpath = lib/m%03d\n\turl = ./m\n'
                                        % (i, i) for i in range(400)))
    git(origin.path, "add", ".gitmodules")
    git(origin.path, "commit", "-q", "-m", "400 submodules")
    clone = origin.clone()
    template = origin.root / "module.git"
    git(origin.root, "init", "-q", "--bare", "--template=", str(template))
    for i in range(400):
        shutil.copytree(str(template), str(clone / ".git" / "modules" / ("m%03d" % i)))
    environment = dict(shell_environment(clone.parent / "home"), CLAUDE_PROJECT_DIR=str(clone))
    payload = {"session_id": CLAUDE_SESSION, "hook_event_name": "SessionStart",
               "source": "startup", "cwd": str(clone)}

    def limited():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))

    done = subprocess.run([sys.executable, "-I", "-S",
                           str(clone / ".claude" / "hooks" / "session-start.py")],
                          input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          env=environment, cwd=str(clone), timeout=RUN_SECONDS,
                          preexec_fn=limited)
    started(done)
    baseline = clone / ".claude" / "hooks" / (".session-baseline." + CLAUDE_SESSION)
    assert baseline.is_file() and baseline.read_bytes().startswith(b"head "), \
        "no baseline: the repository was read as none"
