"""What a cloned repository cannot make the hooks do.

The hooks run by themselves in every clone whose folder was trusted once, so everything a
repository carries is read as an attacker would write it: committed bytecode, symbolic links,
the settings' "env", even a .git/config that came in an archive. Each test here builds the
malicious repository, commits it with every hook byte for byte the release, clones it afresh
(or, for what git cannot carry, changes the clone as an archive would), runs the hooks as the
harness runs them, and fails if the attack works: a program of the repository ran, a secret
reached the hooks' output, or a file the hooks did not create was overwritten. Where the hooks
refuse something, the refusal is one line that names it, and the rest of the injection is there.
SECURITY.md lists these tests beside the claims they back.
"""
import json
import marshal
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import HOOK_NAMES, HOOKS, age_worktree, clean_environment, git, make_repo, run_hook
from installtools import TEMPLATE_DENY_RULES, installer  # noqa: F401  (a fixture)

SECRET = "sk-FAKE-0123456789-secret-that-must-never-be-injected"
POINTER = "- [Topic](topic.md) — the pointer"
HANDOFF = "Working on the parser; next: the tests."
PROTOCOL_GITIGNORE = (
    "/.session-state.md\n.claude/hooks/.session-baseline*\n.claude/hooks/__pycache__/\n"
    ".claude/settings.local.json\n.claude/worktrees/\n")


class Origin:
    """A repository with the protocol installed as install.py --project leaves it (the four
    hooks byte for byte, the settings with the template's deny rules, an index and a topic
    file), a secret outside it, and the means to commit something malicious and clone it."""

    def __init__(self, root):
        self.root = Path(root)
        self.path = make_repo(self.root / "origin")
        self.secret = self.root / "outside" / "credentials"
        self.secret.parent.mkdir()
        self.secret.write_text("API_KEY=%s\n- [leak](%s)\n" % (SECRET, SECRET), encoding="utf-8")
        hooks = self.path / ".claude" / "hooks"
        hooks.mkdir(parents=True)
        for name in HOOK_NAMES:
            shutil.copyfile(str(HOOKS / name), str(hooks / name))
            os.chmod(str(hooks / name), 0o755)
        self.settings({"permissions": {"deny": list(TEMPLATE_DENY_RULES)}})
        self.write("memory/MEMORY.md", "# Project Memory Index\n%s\n" % POINTER)
        self.write("memory/topic.md", "# Topic\nA note.\n")
        self.write(".gitignore", PROTOCOL_GITIGNORE + ".env\n")
        self.commit()

    def write(self, relative, text):
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def link(self, relative, target):
        path = self.path / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if os.path.lexists(str(path)):
            path.unlink()
        os.symlink(target, str(path))

    def settings(self, settings):
        self.write(".claude/settings.json", json.dumps(settings, indent=2) + "\n")

    def commit(self, *forced):
        git(self.path, "add", "-A")
        if forced:
            git(self.path, "add", "-f", *forced)
        git(self.path, "commit", "-q", "--allow-empty", "-m", "change")

    def clone(self):
        clone = self.root / "clone"
        git(self.root, "clone", "-q", str(self.path), str(clone))
        return clone


@pytest.fixture
def origin(tmp_path):
    return Origin(tmp_path)


def hook_input(clone, **changes):
    payload = {"session_id": "s1", "source": "startup", "cwd": str(clone),
               "hook_event_name": "SessionStart", "transcript_path": "/nonexistent/t.jsonl"}
    payload.update(changes)
    return payload


def run_in(clone, hook="session-start.py", stdin=None, env=None):
    """A hook of the clone's own .claude/hooks/, run as the harness runs it."""
    done = run_hook(hook, clone, stdin=hook_input(clone) if stdin is None else stdin, env=env,
                    hooks_dir=clone / ".claude" / "hooks")
    assert done.stderr == b"" or hook == "stop-handoff.py", done.stderr  # a block's message
    return done, done.stdout.decode("utf-8")


def start(clone, env=None):
    done, text = run_in(clone, env=env)
    assert done.returncode == 0
    return text


def assert_refused(text, line):
    assert SECRET not in text
    assert line in text.splitlines(), text


# --- committed bytecode --------------------------------------------------------------------

def pyc_bytes(code, source, checked):
    """A PEP 552 hash-based .pyc: the magic number, the flags (hash-based; checked or not),
    the SipHash of `source` that a checked .pyc is validated by, then the code."""
    import importlib.util
    flags = 0b11 if checked else 0b01
    return (importlib.util.MAGIC_NUMBER + flags.to_bytes(4, "little")
            + importlib.util.source_hash(source) + marshal.dumps(code))


@pytest.mark.parametrize("checked", [False, True], ids=["unchecked-hash", "checked-hash"])
def test_committed_bytecode_of_a_sibling_never_runs(origin, tmp_path, checked):
    """A checked-hash .pyc is no defence either: its hash is of the reviewed source, and
    Python compares only that hash, never the code, with the source."""
    marker = tmp_path / "bytecode-ran"
    cache = origin.path / ".claude" / "hooks" / "__pycache__"
    cache.mkdir()
    payload = compile("open(%r, 'a').write(__name__ + '\\n')\n" % str(marker), "payload", "exec")
    for name in ("context-budget", "stop-handoff", "prune-worktrees"):
        source = (HOOKS / (name + ".py")).read_bytes()
        (cache / ("%s.%s.pyc" % (name, sys.implementation.cache_tag))).write_bytes(
            pyc_bytes(payload, source, checked))
    origin.write(".claude/worktrees/.keep", "")  # so that the pruner is loaded too
    origin.commit(".claude/hooks/__pycache__", ".claude/worktrees/.keep")
    clone = origin.clone()
    assert sorted(p.name for p in (clone / ".claude" / "hooks" / "__pycache__").iterdir())
    text = start(clone)
    assert not marker.exists(), marker.read_text()
    assert POINTER in text  # the siblings ran from their source: the index is there


# The modules the hooks import once they run, which a module committed beside them would replace
# if their folder were on the import path.
SHADOWING_MODULES = ("_json", "json", "select", "_blake2", "hashlib", "subprocess", "threading",
                     "marshal", "pwd")


@pytest.mark.parametrize("hook", HOOK_NAMES)
def test_modules_committed_beside_the_hooks_never_run(origin, tmp_path, hook):
    """The commands run `python3 .claude/hooks/context-budget.py`, and a user may run any hook
    so, without -I: Python then puts the hook's folder first on the import path."""
    marker = tmp_path / "module-ran"
    for name in SHADOWING_MODULES:
        origin.write(".claude/hooks/%s.py" % name, "open(%r, 'a').write(%r)\n" % (str(marker),
                                                                               name + "\n"))
    origin.write(".claude/worktrees/.keep", "")
    origin.write("memory/MEMORY.md", "# Index\n%s\n" % POINTER)
    origin.settings({"permissions": {"deny": list(TEMPLATE_DENY_RULES)},
                     "autoMemoryEnabled": True})
    origin.commit(".claude/worktrees/.keep")
    clone = origin.clone()
    (clone / "README.md").write_text("changed\n", encoding="utf-8")
    stdin = hook_input(clone, hook_event_name="Stop") if hook == "stop-handoff.py" else None
    done = run_hook(hook, clone, stdin=hook_input(clone) if stdin is None else stdin,
                    hooks_dir=clone / ".claude" / "hooks", isolated=False)
    assert done.returncode in (0, 2)
    assert not marker.exists(), marker.read_text()


# --- what the injection reads: symbolic links, special files, deny rules -------------------

@pytest.mark.skipif(not os.path.exists("/proc/self/environ"), reason="no /proc/self/environ")
def test_an_index_linked_to_the_process_environment_is_refused(origin):
    origin.link("memory/MEMORY.md", "/proc/self/environ")
    origin.commit()
    clone = origin.clone()
    (clone / ".session-state.md").write_text(HANDOFF + "\n", encoding="utf-8")
    text = start(clone, env={"FAKE_API_KEY": SECRET})
    assert_refused(text, "- memory/MEMORY.md was not read: it is reached through a symbolic "
                         "link; the hooks show only plain files.")
    assert HANDOFF in text


def test_an_index_linked_to_a_file_outside_the_project_is_refused(origin):
    origin.link("memory/MEMORY.md", "../../outside/credentials")
    origin.commit()
    clone = origin.clone()
    (clone / ".session-state.md").write_text(HANDOFF + "\n", encoding="utf-8")
    refusal = ("- memory/MEMORY.md was not read: it is reached through a symbolic link; the "
               "hooks show only plain files.")
    text = start(clone)
    assert_refused(text, refusal)
    assert HANDOFF in text
    done, report = run_in(clone, "context-budget.py", stdin=b"")
    assert_refused(report, refusal)


@pytest.mark.parametrize("deny", [True, False], ids=["deny-rule", "no-deny-rule"])
def test_a_handoff_linked_to_the_env_file_is_refused(origin, deny):
    """The developer's own .env, git-ignored, read through a committed link: what the hooks show
    must be what the repository's reviewer saw, and a committed link is not a handoff, whether
    or not a deny rule covers its target."""
    if not deny:
        origin.settings({})
    origin.link(".session-state.md", ".env")
    origin.commit(".session-state.md")  # git-ignored: a forced add
    clone = origin.clone()
    (clone / ".env").write_text("API_KEY=%s\n" % SECRET, encoding="utf-8")
    text = start(clone)
    assert_refused(text, "- .session-state.md was not read: it is reached through a symbolic "
                         "link; the hooks show only plain files.")
    assert POINTER in text


def test_a_topic_file_linked_outside_the_project_is_never_read(origin):
    origin.link("memory/topic.md", "../../outside/credentials")
    origin.write("memory/MEMORY.md", "# Project Memory Index\n%s\n- [Other](other.md) — gone\n"
                 % POINTER)
    origin.commit()
    clone = origin.clone()
    text = start(clone)
    assert SECRET not in text and POINTER in text
    done, report = run_in(clone, "context-budget.py", stdin=b"")
    assert SECRET not in report and "other.md" in report  # the dead pointer is still reported


def test_a_fifo_in_place_of_the_index_is_refused(origin):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    clone = origin.clone()
    (clone / "memory" / "MEMORY.md").unlink()
    os.mkfifo(str(clone / "memory" / "MEMORY.md"))  # git cannot carry one; an archive can
    (clone / ".session-state.md").write_text(HANDOFF + "\n", encoding="utf-8")
    text = start(clone)
    assert_refused(text, "- memory/MEMORY.md was not read: it is not a regular file (a FIFO, "
                         "a device, a socket or a folder).")
    assert HANDOFF in text


@pytest.mark.parametrize("rule", [
    "Read(./notes/handoff.md)", "Read(notes/*.md)", "Read(/notes/handoff.md)",
    "Read(**/handoff.md)", "Read(./notes/)", "Read(//{project}/notes/**)",
    "Read(~/{name}/notes/**)",
])
def test_a_handoff_a_deny_rule_covers_is_refused(origin, rule):
    """The handoff moved (by the user's own MCP_SESSION_STATE) into a file the project's deny
    rules keep from the agent, spelt in each form of the harness's Read rules."""
    clone = origin.clone()
    rule = rule.format(project=str(clone.resolve()).lstrip("/"), name=clone.name)
    (clone / ".claude" / "settings.local.json").write_text(
        json.dumps({"permissions": {"deny": [rule]}}), encoding="utf-8")
    (clone / "notes").mkdir()
    (clone / "notes" / "handoff.md").write_text(SECRET + "\n", encoding="utf-8")
    text = start(clone, env={"MCP_SESSION_STATE": "notes/handoff.md", "HOME": str(clone.parent)})
    assert_refused(text, "- notes/handoff.md was not read: the deny rule %s in "
                         ".claude/settings.local.json covers it." % rule)
    assert POINTER in text  # the index still goes in


@pytest.mark.parametrize("name,value", [
    ("MCP_MEMORY_INDEX", "../outside/credentials"),
    ("MCP_SESSION_STATE", "../outside/credentials"),
    ("MCP_SESSION_STATE", "/proc/self/environ"),
    ("MCP_MEMORY_INDEX", "memory/../../outside/credentials"),
])
def test_a_committed_settings_env_cannot_point_the_hooks_outside(origin, name, value):
    """The harness applies a project's settings "env" to the hooks: the test passes the value
    in the hook's environment, as the harness would, and commits it in .claude/settings.json."""
    origin.settings({"permissions": {"deny": list(TEMPLATE_DENY_RULES)}, "env": {name: value}})
    origin.commit()
    clone = origin.clone()
    (clone / ".session-state.md").write_text(HANDOFF + "\n", encoding="utf-8")
    text = start(clone, env={name: value, "FAKE_API_KEY": SECRET})
    assert_refused(text, "- %s=%s was ignored: .claude/settings.json may set it, and it leads "
                         "outside the project; only a value you set yourself is taken."
                   % (name, value))
    assert POINTER in text and HANDOFF in text  # the defaults apply


@pytest.mark.parametrize("value", ["../outside/handoff.md", "~/.bashrc", "/tmp/anywhere.md"])
def test_a_committed_settings_env_cannot_aim_the_saves_block_outside(origin, value):
    """The Stop guard's block tells the agent where to write the handoff, without asking the
    user: a path a file of the repository set may not lead it to write outside the project."""
    origin.settings({"permissions": {"deny": list(TEMPLATE_DENY_RULES)},
                     "env": {"MCP_SESSION_STATE": value}})
    origin.commit()
    clone = origin.clone()
    start(clone, env={"MCP_SESSION_STATE": value})
    (clone / "README.md").write_text("work of the session\n", encoding="utf-8")
    done, _ = run_in(clone, "stop-handoff.py", stdin=hook_input(clone, hook_event_name="Stop"),
                     env={"MCP_SESSION_STATE": value})
    message = done.stderr.decode("utf-8")
    assert done.returncode == 2 and "write .session-state.md with" in message
    assert value not in message


def test_a_path_the_user_sets_may_lead_outside_the_project(origin):
    """The same variable set by the user, not by the repository: the user's own choice."""
    outside = origin.root / "outside" / "handoff.md"
    outside.write_text(HANDOFF + "\n", encoding="utf-8")
    clone = origin.clone()
    text = start(clone, env={"MCP_SESSION_STATE": str(outside)})
    assert HANDOFF in text and "Not read" not in text


# --- what the hooks write -------------------------------------------------------------------

@pytest.mark.parametrize("target", [".claude/hooks/stop-handoff.py", ".claude/settings.json"])
@pytest.mark.parametrize("hook", ["session-start.py", "stop-handoff.py"])
def test_a_baseline_setting_cannot_overwrite_a_file_the_hooks_did_not_create(origin, hook,
                                                                              target):
    """MCP_BASELINE naming a file of the project, and a hook input without a session id, which
    would make that path the baseline itself."""
    clone = origin.clone()
    before = (clone / target).read_bytes()
    (clone / "README.md").write_text("work\n", encoding="utf-8")  # the stop would record
    stdin = {"hook_event_name": "SessionStart" if hook == "session-start.py" else "Stop"}
    done, _ = run_in(clone, hook, stdin=stdin, env={"MCP_BASELINE": target})
    assert done.returncode in (0, 2)
    assert (clone / target).read_bytes() == before


# --- git configuration ----------------------------------------------------------------------

PROGRAM_KEYS = {
    "core.fsmonitor": "fsmonitor",
    "core.pager": "pager",
    "diff.external": "external-diff",
    "filter.evil.clean": "clean-filter",
    "filter.evil.smudge": "smudge-filter",
    "filter.evil.process": "process-filter",
    "diff.evil.textconv": "textconv",
    "diff.evil.command": "diff-driver",
    "core.editor": "editor",
    "gpg.program": "gpg",
}
GIT_HOOKS = ("reference-transaction", "post-checkout", "post-index-change", "pre-commit",
             "post-commit", "post-rewrite", "pre-auto-gc")


@pytest.fixture
def configured_clone(origin, tmp_path):
    """A clone whose .git/config (as an archive or a shared disk would bring it) names a
    program for every key that runs one, for files of every name (.gitattributes, committed),
    whose hooks folder, committed, holds every hook, and which has a merged agent worktree, so
    that the pruner removes it. Every program appends its name to one marker file."""
    marker = tmp_path / "programs-that-ran"
    program = tmp_path / "program"
    program.write_text("#!/bin/sh\necho \"$0 $*\" >> '%s'\ncat\n" % marker, encoding="utf-8")
    os.chmod(str(program), 0o755)
    origin.write(".gitattributes", "* filter=evil diff=evil\n")
    for name in GIT_HOOKS:
        origin.write(".githooks/" + name, "#!/bin/sh\necho hook %s >> '%s'\n" % (name, marker))
        os.chmod(str(origin.path / ".githooks" / name), 0o755)
    origin.commit()
    clone = origin.clone()
    worktree = clone / ".claude" / "worktrees" / "done"
    git(clone, "worktree", "add", "-q", "-b", "done", str(worktree))
    age_worktree(worktree)
    for key, label in PROGRAM_KEYS.items():
        git(clone, "config", key, "%s %s" % (program, label))
    git(clone, "config", "filter.evil.required", "true")
    git(clone, "config", "core.hooksPath", ".githooks")
    git(clone, "config", "log.showSignature", "true")
    for name in GIT_HOOKS:
        shutil.copy(str(clone / ".githooks" / name), str(clone / ".git" / "hooks" / name))
    (clone / "README.md").write_text("changed, so that git compares its content\n",
                                     encoding="utf-8")
    (clone / "new-file.txt").write_text("untracked\n", encoding="utf-8")
    return clone, marker


@pytest.mark.skipif(os.name != "posix", reason="the programs are shell scripts")
@pytest.mark.parametrize("hook", ["session-start.py", "context-budget.py", "stop-handoff.py"])
def test_a_repository_git_configuration_runs_no_program(configured_clone, hook):
    clone, marker = configured_clone
    stdin = hook_input(clone, hook_event_name="Stop") if hook == "stop-handoff.py" else None
    done, _ = run_in(clone, hook, stdin=b"" if hook == "context-budget.py" else stdin)
    assert done.returncode in (0, 2)
    assert not marker.exists(), marker.read_text()
    if hook == "session-start.py":
        assert not (clone / ".claude" / "worktrees" / "done").exists()  # the pruner did run


@pytest.mark.skipif(os.name != "posix", reason="the program is a shell script")
@pytest.mark.parametrize("ignore", [None, "all"])
@pytest.mark.parametrize("hook", ["session-start.py", "stop-handoff.py"])
def test_a_submodules_git_configuration_runs_no_program(origin, tmp_path, hook, ignore):
    """Looking into a submodule, `git status` starts another git there, which reads the
    submodule's own config (in .git/modules/, as an archive would bring it): a filter driver it
    names for the submodule's files is switched off too, whatever .gitmodules says."""
    marker = tmp_path / "submodule-filter-ran"
    library = make_repo(tmp_path / "library")
    (library / ".gitattributes").write_text("* filter=evil\n", encoding="utf-8")
    git(library, "add", ".gitattributes")
    git(library, "commit", "-q", "-m", "attributes")
    git(origin.path, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library),
        "lib")
    if ignore:
        git(origin.path, "config", "-f", ".gitmodules", "submodule.lib.ignore", ignore)
    origin.commit()
    clone = origin.clone()
    git(clone, "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init")
    program = tmp_path / "program"
    program.write_text("#!/bin/sh\necho \"$0 $*\" >> '%s'\ncat\n" % marker, encoding="utf-8")
    os.chmod(str(program), 0o755)
    config = clone / ".git" / "modules" / "lib" / "config"
    with open(str(config), "a", encoding="utf-8") as stream:
        stream.write('[filter "evil"]\n\tclean = %s clean\n\trequired = true\n' % program)
    readme = clone / "lib" / "README.md"
    readme.write_bytes(readme.read_bytes())  # the same bytes, a new time: git compares content
    os.utime(str(readme), (1, 1))
    # As a user's shell has it: no GIT_CONFIG_* variable, which alone has every config listed.
    env = {key: value for key, value in clean_environment(tmp_path / "user").items()
           if not key.startswith("GIT_CONFIG")}
    env["CLAUDE_PROJECT_DIR"] = str(clone)
    payload = hook_input(clone, hook_event_name="Stop" if hook == "stop-handoff.py" else
                         "SessionStart")
    done = subprocess.run([sys.executable, "-I", "-S", str(clone / ".claude" / "hooks" / hook)],
                          input=json.dumps(payload).encode("utf-8"), capture_output=True,
                          env=env, cwd=str(clone), timeout=60)
    assert done.returncode in (0, 2) and b"Traceback" not in done.stderr
    assert not marker.exists(), marker.read_text()


@pytest.mark.skipif(os.name != "posix", reason="the program is a shell script")
@pytest.mark.parametrize("hook", ["session-start.py", "stop-handoff.py"])
def test_a_committed_settings_env_cannot_move_the_programs_git_runs(origin, tmp_path, hook):
    """GIT_EXEC_PATH, set by the settings "env", would make `git worktree remove` run the
    `git status` it starts from the repository's own folder."""
    marker = tmp_path / "git-helper-ran"
    origin.write("tools/git", "#!/bin/sh\necho \"$*\" >> '%s'\nexec git \"$@\"\n" % marker)
    os.chmod(str(origin.path / "tools" / "git"), 0o755)
    origin.settings({"permissions": {"deny": list(TEMPLATE_DENY_RULES)},
                     "env": {"GIT_EXEC_PATH": "tools"}})
    origin.commit()
    clone = origin.clone()
    worktree = clone / ".claude" / "worktrees" / "done"
    git(clone, "worktree", "add", "-q", "-b", "done", str(worktree))
    age_worktree(worktree)
    (clone / "README.md").write_text("changed\n", encoding="utf-8")
    stdin = hook_input(clone, hook_event_name="Stop") if hook == "stop-handoff.py" else None
    done, _ = run_in(clone, hook, stdin=stdin, env={"GIT_EXEC_PATH": "tools"})
    assert done.returncode in (0, 2)
    assert not marker.exists(), marker.read_text()
    assert worktree.exists() == (hook == "stop-handoff.py")  # the pruner did run at the start


def test_a_committed_settings_env_cannot_point_git_at_another_repository(origin):
    """GIT_DIR, set by the settings "env" to a repository committed inside the project, would
    have the baseline describe that repository, or nothing, instead of the checkout."""
    other = make_repo(origin.root / "other")
    git(origin.root, "clone", "-q", "--bare", str(other), str(origin.path / "vendor" / "other.git"))
    origin.settings({"permissions": {"deny": list(TEMPLATE_DENY_RULES)},
                     "env": {"GIT_DIR": "vendor/other.git"}})
    origin.commit()
    clone = origin.clone()
    start(clone, env={"GIT_DIR": "vendor/other.git"})
    baseline = (clone / ".claude" / "hooks" / ".session-baseline.s1").read_bytes()
    assert baseline.startswith(b"head " + git(clone, "rev-parse", "HEAD").encode() + b"\0")


def test_a_committed_worktree_folder_linked_outside_is_not_pruned(origin, tmp_path):
    """.claude/worktrees committed as a link to the folder above the checkout, where the
    user's own worktrees of the repository live: the pruner keeps to the project."""
    origin.link(".claude/worktrees", "../..")
    origin.commit(".claude/worktrees")
    clone = origin.clone()
    mine = origin.root / "my-feature"
    git(clone, "worktree", "add", "-q", "-b", "feature", str(mine))
    age_worktree(mine)
    text = start(clone)
    assert mine.is_dir() and "pruned" not in text


# --- what install.py --check --memory reads --------------------------------------------------

# A memory file whose content would show in the report if it were read: a home path (named by
# machine-local-path) and a line twice (quoted by doubled-line), each carrying the secret.
OUTSIDE_MEMORY = ("# Private notes\n\n- 2026-01-05: the key file is `/home/alice/vault/%s.txt`\n\n"
                  "- 2026-01-05: the token is %s, kept for the deploys\n\n"
                  "- 2026-01-05: the token is %s, kept for the deploys\n" % (SECRET, SECRET, SECRET))


@pytest.mark.parametrize("how", ["topic-linked-outside", "topic-a-deny-rule-covers",
                                 "index-named-outside-by-the-settings-env",
                                 "memory-folder-linked-outside"])
def test_memory_report_reads_no_file_outside_the_project(origin, installer, how):
    """install.py --check --memory runs on clones nobody has trusted yet, and its report quotes
    what it reads: it reads the memory through the hooks' rule, so a file outside the project,
    or one a deny rule covers, shows in the report only by its name, as not read."""
    outside = origin.root / "outside" / "notes.md"
    outside.write_text(OUTSIDE_MEMORY, encoding="utf-8")
    deny = list(TEMPLATE_DENY_RULES)
    if how == "topic-linked-outside":
        origin.link("memory/topic.md", "../../outside/notes.md")
        refused = ("memory/topic.md", "it is reached through a symbolic link")
    elif how == "topic-a-deny-rule-covers":
        origin.write("memory/topic.md", OUTSIDE_MEMORY)
        deny.append("Read(./memory/topic.md)")
        refused = ("memory/topic.md", "the deny rule Read(./memory/topic.md) in "
                                      ".claude/settings.json covers it")
    elif how == "memory-folder-linked-outside":
        shutil.rmtree(str(origin.path / "memory"))
        (origin.root / "outside" / "memory").mkdir()
        (origin.root / "outside" / "memory" / "MEMORY.md").write_text(OUTSIDE_MEMORY,
                                                                      encoding="utf-8")
        origin.link("memory", "../outside/memory")
        refused = ("memory", "memory was not read: it is a symbolic link whose target lies "
                             "outside the project")
    else:
        origin.settings({"permissions": {"deny": deny},
                         "env": {"MCP_MEMORY_INDEX": "../outside/notes.md"}})
        refused = (".claude/settings.json", "MCP_MEMORY_INDEX=../outside/notes.md was ignored")
    if how != "index-named-outside-by-the-settings-env":
        origin.settings({"permissions": {"deny": deny}})
    origin.commit()
    clone = origin.clone()
    every_check = {"MCP_HEALTH_CHECKS": "all"}  # machine-local-path would quote the home path
    text = installer.run("--check", "--memory", clone, env=every_check)
    assert SECRET not in text.stdout + text.stderr and "/home/alice" not in text.stdout
    assert refused[0] in text.stdout and refused[1] in text.stdout, text.stdout
    done = installer.run("--check", "--memory", "--json", clone, env=every_check)
    assert SECRET not in done.stdout + done.stderr and "/home/alice" not in done.stdout
    report = json.loads(done.stdout)["memory_health"]
    named = [f for f in report["findings"] if f["check"] == "not-read"]
    assert [(f["file"], refused[1] in f["message"]) for f in named] == [(refused[0], True)]


def test_every_test_security_md_names_exists():
    """SECURITY.md backs each claim with a test by name: a claim whose test is gone, renamed
    or never written (and not marked pending) is no longer backed."""
    import re
    root = Path(__file__).resolve().parent.parent
    text = (root / "SECURITY.md").read_text(encoding="utf-8")
    defined = set()
    for path in root.joinpath("tests").rglob("test_*.py"):
        defined.update(re.findall(r"^def (test_\w+)\(", path.read_text(encoding="utf-8"), re.M))
    named = re.findall(r"`(test_\w+)`( \*\(pending\)\*)?", text)
    assert named
    missing = [name for name, pending in named if not pending and name not in defined]
    written = [name for name, pending in named if pending and name in defined]
    assert missing == [] and written == [], (missing, written)
