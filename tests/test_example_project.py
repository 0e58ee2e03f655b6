"""The shipped example project: its installed files equal a fresh install (so it cannot drift),
the installer's check passes on it, its memory follows the file format, and the files its hooks
write at run time stay out of this repository."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from installtools import REPO, sealed_env

EXAMPLE = os.path.join(REPO, "examples", "example-project")
HOOKS = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
COMMANDS = ("handoff.md", "dream.md", "catchup.md", "memory-status.md", "update-context.md")
INSTALLED = ([".claude/hooks/" + name for name in HOOKS]
             + [".claude/commands/" + name for name in COMMANDS]
             + [".claude/settings.json", ".claude/memory-context-protocol.json", ".claudeignore",
                ".gitignore", ".gitattributes", "memory/MEMORY.md"])
RUNTIME = ("__pycache__", "session-state.md", ".session-state.md", "settings.local.json", "worktrees")
POINTER = re.compile(r"- \[[^\]]+\]\(([^)\s]+)\) — \S")
ISO_DATE = r"(20\d\d)-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"


def path_in(root, rel):
    return os.path.join(root, *rel.split("/"))


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def text(rel):
    with open(path_in(EXAMPLE, rel), encoding="utf-8") as handle:
        return handle.read()


def runtime_files(folder, names):
    return [name for name in names if name in RUNTIME or name.startswith(".session-baseline")]


def run(args, env, cwd=REPO):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env, cwd=cwd)


def git_checkout():
    done = subprocess.run(["git", "-C", REPO, "rev-parse", "--show-toplevel"],
                          stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, universal_newlines=True)
    return done.returncode == 0 and os.path.realpath(done.stdout.strip()) == os.path.realpath(REPO)


# ------------------------------------------------------------------ no drift

def test_installed_files_equal_a_fresh_install(tmp_path):
    copy = str(tmp_path / "example-project")
    shutil.copytree(EXAMPLE, copy, ignore=runtime_files)
    for rel in INSTALLED:
        if rel not in (".gitignore", "memory/MEMORY.md"):
            os.remove(path_in(copy, rel))
    block = read(path_in(REPO, "templates/gitignore"))
    gitignore = read(path_in(copy, ".gitignore"))
    assert gitignore.endswith(block), "the protocol's lines must close the example's .gitignore"
    with open(path_in(copy, ".gitignore"), "wb") as handle:
        handle.write(gitignore[:-len(block)])

    done = run([sys.executable, os.path.join(REPO, "install.py"), "--project", copy, "--allow-no-git"],
               sealed_env(str(tmp_path / "home")))
    assert done.returncode == 0, done.stdout + done.stderr

    for rel in INSTALLED:
        assert read(path_in(EXAMPLE, rel)) == read(path_in(copy, rel)), (
            "{} differs from a fresh install; run: python3 examples/refresh.py".format(rel))
    if os.name != "nt":
        for name in HOOKS:
            mode = os.stat(path_in(EXAMPLE, ".claude/hooks/" + name)).st_mode
            assert mode & stat.S_IXUSR, name + " is not executable"


def test_install_check_is_healthy_on_the_example(tmp_path):
    done = run([sys.executable, "install.py", "--check", "examples/example-project"],
               sealed_env(str(tmp_path / "home")))
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_examples_memory_passes_the_health_check(tmp_path):
    done = run([sys.executable, "install.py", "--check", "--json", "examples/example-project"],
               sealed_env(str(tmp_path / "home")))
    report = json.loads(done.stdout)
    health = report.get("memory_health")
    if health is None:
        pytest.skip("this install.py reports no memory health")
    assert health["findings"] == [], (
        "the example's memory should be a clean model; if a cited file changed, re-check the fact "
        "against it and update its date: {}".format(health["findings"]))


def test_refresh_script_agrees_that_the_example_is_current():
    done = run([sys.executable, os.path.join("examples", "refresh.py"), "--check"],
               dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "example project already current"


# ------------------------------------------------------------------ the method

def test_claude_md_is_within_budget_and_stamped():
    data = read(path_in(EXAMPLE, "CLAUDE.md"))
    assert len(data) < 8192
    assert data.count(b"\n") <= 200
    assert re.search(r"<!-- Last context update: " + ISO_DATE + r" — .+ -->", data.decode("utf-8"))


def test_index_is_pointers_that_resolve_and_covers_every_topic_file():
    index = text("memory/MEMORY.md")
    assert index.count("\n") <= 80
    assert "Last dream" not in index and "## Active Context" not in index  # the team format
    linked = []
    for line in index.splitlines():
        if not line.strip() or line.startswith(("# ", "## ", "<!--")):
            continue
        match = POINTER.match(line)
        assert match, "not a pointer line: " + line
        linked.append(match.group(1))
    for target in linked:
        assert os.path.isfile(path_in(EXAMPLE, "memory/" + target)), target + " does not resolve"
    topics = sorted(name for name in os.listdir(path_in(EXAMPLE, "memory"))
                    if name != "MEMORY.md" and name.endswith(".md"))
    assert sorted(linked) == topics
    assert "decisions.md" in topics and "gotchas.md" in topics
    assert any(name.startswith("feedback_") for name in topics)


def memory_files():
    """Every memory file but the index: the topic files and the notes of the topic folders."""
    found = []
    for name in sorted(os.listdir(path_in(EXAMPLE, "memory"))):
        if name.endswith(".md") and name != "MEMORY.md":
            found.append(name)
        elif os.path.isdir(path_in(EXAMPLE, "memory/" + name)):
            found += [name + "/" + note for note in sorted(os.listdir(path_in(EXAMPLE, "memory/" + name)))]
    return found


def test_the_memory_holds_a_note_in_a_topic_folder_as_the_team_format_adds_facts():
    notes = [name for name in memory_files() if "/" in name]
    assert notes and all(re.match(r"[a-z0-9-]+/[a-z0-9-]+\.md\Z", name) for name in notes)


def test_memory_files_hold_dated_facts_a_blank_line_apart_and_no_stamp():
    for name in memory_files():
        body = text("memory/" + name)
        assert "Last updated" not in body, name
        assert body.startswith("# "), name
        if not name.startswith("feedback_"):
            lines = body.splitlines()
            facts = [n for n, line in enumerate(lines) if line.startswith("- ")]
            assert facts, name
            for number in facts:
                assert re.match(r"- " + ISO_DATE + r": \S", lines[number]), lines[number]
                assert number - 1 not in facts, "facts on adjacent lines in " + name


def test_feedback_file_has_lesson_why_and_how_to_apply():
    names = [n for n in os.listdir(path_in(EXAMPLE, "memory")) if n.startswith("feedback_")]
    assert len(names) == 1 and re.match(r"feedback_[a-z0-9-]+\.md\Z", names[0])
    body = text("memory/" + names[0])
    for label in ("**The lesson.**", "**Why:**", "**How to apply:**"):
        assert label in body
    assert re.search(ISO_DATE, body.split("**Why:**")[1])


def test_the_example_service_passes_its_own_tests(tmp_path):
    copy = str(tmp_path / "service")
    shutil.copytree(EXAMPLE, copy, ignore=runtime_files)
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = run([sys.executable, "-m", "unittest", "discover", "-s", "tests"], env, cwd=copy)
    assert done.returncode == 0, done.stdout + done.stderr
    quoted = run([sys.executable, "-m", "quotes", "8899 ab", "1000"], env, cwd=copy)
    assert quoted.stdout.startswith("EUR 9.45"), quoted.stdout + quoted.stderr


# ------------------------------------------------------------------ this repository

RUNTIME_PATHS = (".session-state.md", ".claude/session-state.md", ".claude/hooks/.session-baseline",
                 ".claude/hooks/.session-baseline.abc123", ".claude/hooks/__pycache__/x.cpython-38.pyc",
                 ".claude/settings.local.json", ".claude/worktrees/agent-1/file.txt")


def test_root_gitignore_names_the_examples_runtime_files():
    with open(os.path.join(REPO, ".gitignore"), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    for line in ("/examples/example-project/.session-state.md",
                 "/examples/example-project/.claude/session-state.md",
                 "/examples/example-project/.claude/hooks/.session-baseline*",
                 "/examples/example-project/.claude/settings.local.json",
                 "/examples/example-project/.claude/worktrees/"):
        assert line in lines
    assert "__pycache__/" in lines


@pytest.mark.skipif(not git_checkout(), reason="needs this repository's git checkout")
def test_runtime_files_are_ignored_and_hooks_are_tracked_executable():
    paths = ["examples/example-project/" + rel for rel in RUNTIME_PATHS]
    done = subprocess.run(["git", "-C", REPO, "check-ignore", "--no-index"] + paths,
                          stdout=subprocess.PIPE, universal_newlines=True)
    assert sorted(done.stdout.split()) == sorted(paths)
    staged = subprocess.run(["git", "-C", REPO, "ls-files", "-s", "examples/example-project/.claude/hooks"],
                            stdout=subprocess.PIPE, universal_newlines=True).stdout
    for line in staged.splitlines():
        assert line.startswith("100755 "), line
