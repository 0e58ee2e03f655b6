"""The fault suite: every hook, on broken input, broken files, a broken environment and broken
repositories, keeps its promises. Seeded (random.Random(2026)), so every run sees the same faults.

The properties, checked on every run by fault_tools.run_every_hook: session-start, context-budget
and prune-worktrees exit 0, stop-handoff exits 0 or 2; no traceback on stderr; stdout at most
10,000 UTF-16 code units; nothing changed outside the project's .claude/ (the project tree
without .claude/ and .git/, HOME, and a sentinel folder outside the project); every run ends
within a few seconds.
"""
import json
import os
import random
import shutil
import subprocess
import threading

import pytest

from conftest import HOOK_NAMES, MIB, git, make_repo, set_age, write_lines
from fault_tools import (code_cache, Estate, assert_run_properties, describe_changes, launch,
                         outside_claude, run_every_hook)

SEED = 2026
STATE = ".claude/session-state.md"
BASELINE = ".claude/hooks/.session-baseline.fault-session"


# --- fixtures -------------------------------------------------------------------------------

def protocol_project(root):
    """A committed project with the hooks installed, a stale handoff, work in the tree and one
    unmerged agent worktree, so every hook has its whole path to walk."""
    project = make_repo(root / "project")
    (project / "memory").mkdir()
    write_lines(project / "memory" / "MEMORY.md", 20, "- [Topic {i}](topic.md) — pointer {i}")
    (project / "memory" / "topic.md").write_text("# Topic\n", encoding="utf-8")
    (project / "CLAUDE.md").write_text("# Fixture\nA small instruction file.\n", encoding="utf-8")
    (project / ".gitignore").write_text(
        ".claude/session-state.md\n.claude/hooks/.session-baseline*\n"
        ".claude/hooks/__pycache__/\n.claude/worktrees/\n", encoding="utf-8")
    estate = Estate(root, project).install()
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "protocol files")
    agent = project / ".claude" / "worktrees" / "agent-1"
    git(project, "worktree", "add", "-q", "-b", "agent-1", str(agent))
    (agent / "WORK.md").write_text("unmerged work\n", encoding="utf-8")
    git(agent, "add", "WORK.md")
    git(agent, "commit", "-q", "-m", "agent work")
    state = project / STATE
    state.write_text("## Handoff: 2026-01-01 09:00\nWorking on X\n", encoding="utf-8")
    set_age(state, 86400)
    (project / "work-in-progress.txt").write_text("changed by the session\n", encoding="utf-8")
    return estate


@pytest.fixture
def estate(tmp_path):
    return protocol_project(tmp_path)


@pytest.fixture(scope="session")
def hundred_mb_line(tmp_path_factory):
    """100 MB of 'x' and no newline, written once per test session in 1 MiB chunks."""
    path = tmp_path_factory.mktemp("big") / "one-line.txt"
    chunk = b"x" * MIB
    with open(str(path), "wb") as stream:
        for _ in range(100):
            stream.write(chunk)
    yield path
    os.unlink(str(path))  # with the tests' links gone too, the 100 MB is freed at once


def place_big_file(source, target):
    """The 100 MB file at `target` without writing 100 MB again: a hard link, else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(str(target)):
        os.unlink(str(target))
    try:
        os.link(str(source), str(target))
    except OSError:
        shutil.copyfile(str(source), str(target))


# --- standard input -------------------------------------------------------------------------

def _random_bytes(rng, size):
    return bytes(rng.getrandbits(8) for _ in range(size))


def stdin_cases():
    rng = random.Random(SEED)
    valid = json.dumps({"session_id": "fault-session", "source": "startup",
                        "hook_event_name": "SessionStart",
                        "transcript_path": "/nonexistent/t.jsonl"}).encode()
    cases = [
        ("empty", b""),
        ("whitespace-only", b"  \n\t  \r\n"),
        ("random-bytes-1k", _random_bytes(rng, 1024)),
        ("random-bytes-64k", _random_bytes(rng, 65536)),
        ("random-bytes-ending-in-brace", _random_bytes(rng, 4096) + b"}"),
    ]
    for cut in sorted(rng.sample(range(1, len(valid) - 1), 4)):
        cases.append(("truncated-json-at-%d" % cut, valid[:cut]))
    cases += [
        ("json-array", b'[{"session_id": "a", "source": "startup"}]'),
        ("json-string", b'"{\\"session_id\\": \\"a\\"}"'),
        ("json-number", b"42"),
        ("json-null", b"null"),
        ("json-true", b"true"),
        ("two-objects", valid + valid),
        ("stop-hook-active-yes", b'{"session_id": "fault-session", "stop_hook_active": "yes"}'),
        ("session-id-number", b'{"session_id": 7, "stop_hook_active": false}'),
        ("wrong-types-everywhere",
         b'{"session_id": ["a"], "cwd": 5, "transcript_path": {"a": 1}, "source": 3,'
         b' "hook_event_name": null, "stop_hook_active": []}'),
        ("session-id-path-traversal", b'{"session_id": "../../../sentinel/keep.txt"}'),
        ("session-id-with-nul", b'{"session_id": "a\\u0000b", "cwd": "x\\u0000y"}'),
        ("session-id-of-a-megabyte", json.dumps({"session_id": "a" * MIB}).encode()),
        ("lone-surrogates", b'{"session_id": "\\ud800", "cwd": "\\udfff",'
                            b' "transcript_path": "\\ud83d"}'),
        ("cwd-is-root", b'{"session_id": "fault-session", "cwd": "/"}'),
        ("transcript-is-dev-zero", b'{"session_id": "fault-session", "transcript_path": "/dev/zero"}'),
        ("transcript-is-a-folder", b'{"session_id": "fault-session", "transcript_path": "/"}'),
        ("ten-megabyte-object",
         json.dumps({"session_id": "fault-session", "padding": "x" * (10 * MIB)}).encode()),
        ("deep-nesting-unclosed", b"[" * 100000),
        ("deep-nesting-closed", b'{"a":' * 50000 + b"1" + b"}" * 50000),
        ("invalid-utf8", b'{"session_id": "\xff\xfe\xfd", "source": "\xc3\x28"}'),
        ("utf16-with-bom", valid.decode().encode("utf-16")),
        ("utf8-with-bom", b"\xef\xbb\xbf" + valid),
        ("duplicate-keys", b'{"session_id": "a", "session_id": "b"}'),
        ("nan-infinity-and-long-number",
         b'{"session_id": NaN, "a": Infinity, "b": 1e999999, "c": ' + b"7" * 5000 + b"}"),
    ]
    return cases


STDIN_CASES = stdin_cases()


@pytest.mark.parametrize("payload", [c[1] for c in STDIN_CASES], ids=[c[0] for c in STDIN_CASES])
def test_standard_input(estate, payload):
    run_every_hook(estate, stdin=payload)


@pytest.mark.parametrize("mode", ["devnull", "closed"])
def test_no_standard_input_at_all(estate, mode):
    run_every_hook(estate, stdin=mode)


@pytest.mark.parametrize("data", [b"", b'{"session_id": "fault-session", "sour'],
                         ids=["nothing", "half-an-object"])
def test_standard_input_held_open(estate, data):
    """A harness that never closes the pipe: no hook may wait for end of file for long."""
    run_every_hook(estate, stdin=("open", data), parallel=True)


def test_reader_of_stdout_gone(estate):
    """The harness closed its end of the pipe: writing the injection fails, quietly."""
    run_every_hook(estate, reader_gone=True)


def test_started_without_stdout_and_stderr(estate):
    run_every_hook(estate, close=(1, 2))


def test_started_without_any_standard_stream(estate):
    run_every_hook(estate, stdin="closed", close=(1, 2))


def test_stop_hook_active_as_text_lets_the_stop_through(estate):
    done = run_every_hook(estate, stdin=b'{"session_id": "s", "stop_hook_active": "yes"}',
                          hooks=["stop-handoff.py"])
    assert done["stop-handoff.py"].returncode == 0


def test_path_traversal_in_session_id_stays_in_the_hooks_folder(estate):
    run_every_hook(estate, stdin=b'{"session_id": "../../../../escaped", "source": "startup"}')
    hooks = estate.project / ".claude" / "hooks"
    written = [p.name for p in hooks.iterdir() if p.name.startswith(".session-baseline")]
    assert written == [".session-baseline.escaped"]


# --- files ----------------------------------------------------------------------------------

FILE_TARGETS = {
    "index": "memory/MEMORY.md",
    "state": STATE,
    "instructions": "CLAUDE.md",
    "baseline": BASELINE,
    "transcript": None,  # outside the project, in the sentinel folder
    "settings": ".claude/settings.local.json",  # read for the auto-memory keys at session start
}
TYPE_KINDS = ["directory", "fifo", "symlink-loop", "dangling-symlink", "link-to-dev-zero"]
CONTENT_KINDS = ["100mb-single-line", "crlf", "bom", "nul-bytes", "invalid-utf8",
                 "unclosed-comment", "random-bytes", "astral-lines", "lone-cr"]
FILE_CASES = (
    [(target, kind) for target in ("index", "state") for kind in TYPE_KINDS + CONTENT_KINDS]
    + [("instructions", kind) for kind in TYPE_KINDS + ["100mb-single-line", "nul-bytes",
                                                         "invalid-utf8"]]
    + [("baseline", kind) for kind in TYPE_KINDS + ["100mb-single-line", "nul-bytes",
                                                     "invalid-utf8", "random-bytes"]]
    + [("transcript", kind) for kind in TYPE_KINDS + ["100mb-single-line"]]
    + [("settings", kind) for kind in TYPE_KINDS + ["100mb-single-line", "invalid-utf8",
                                                     "deep-nesting", "wrong-types"]]
)


def content_for(kind, rng):
    lines = ["# Project Memory Index"] + ["- [Topic %d](topic.md) — pointer %d" % (i, i)
                                         for i in range(30)]
    if kind == "crlf":
        return "\r\n".join(lines).encode("utf-8") + b"\r\n"
    if kind == "lone-cr":
        return "\r".join(lines).encode("utf-8") + b"\r"
    if kind == "bom":
        return b"\xef\xbb\xbf" + "\n".join(lines).encode("utf-8") + b"\n"
    if kind == "nul-bytes":
        return b"\0" * 100 + b"\n".join(l.encode("utf-8") + b"\0" for l in lines) + b"\n\0\0\n"
    if kind == "invalid-utf8":
        return b"# Index\n- \xff\xfe broken \xc3\x28 bytes \xed\xa0\x80 surrogate\n" * 40
    if kind == "unclosed-comment":
        return ("\n".join(lines[:5]) + "\n<!-- never closed\n" + "\n".join(lines[5:]) + "\n"
                + "`<!--` in code\n<!-- <!-- nested -->\n").encode("utf-8")
    if kind == "random-bytes":
        return _random_bytes(rng, 20000)
    if kind == "deep-nesting":
        return b'{"autoMemoryDirectory": ' + b"[" * 200000
    if kind == "wrong-types":
        return b'{"autoMemoryEnabled": "no", "autoMemoryDirectory": {"\\u0000": [7]}}'
    if kind == "astral-lines":
        return ("\U0001F600" * 400 + "\n").encode("utf-8") * 200
    raise AssertionError(kind)


def make_fault(estate, target, kind, big_file):
    """Turn the named file into the named fault; returns the path."""
    rng = random.Random("%d:%s:%s" % (SEED, target, kind))
    relative = FILE_TARGETS[target]
    path = estate.sentinel / "transcript.jsonl" if relative is None else estate.project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(str(path)):
        os.unlink(str(path))
    if kind == "directory":
        path.mkdir()
        (path / "inside.md").write_text("a file inside\n", encoding="utf-8")
    elif kind == "fifo":
        os.mkfifo(str(path))
    elif kind == "symlink-loop":
        other = path.with_name(path.name + ".loop")
        os.symlink(str(other), str(path))
        os.symlink(str(path), str(other))
    elif kind == "dangling-symlink":
        os.symlink(str(path.with_name("no-such-file")), str(path))
    elif kind == "link-to-dev-zero":
        os.symlink("/dev/zero", str(path))
    elif kind == "100mb-single-line":
        place_big_file(big_file, path)
    else:
        path.write_bytes(content_for(kind, rng))
    return path


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs POSIX FIFOs and symlinks")
@pytest.mark.parametrize("target,kind", FILE_CASES, ids=["%s-%s" % c for c in FILE_CASES])
def test_broken_file(estate, request, target, kind):
    big = request.getfixturevalue("hundred_mb_line") if kind == "100mb-single-line" else None
    path = make_fault(estate, target, kind, big)
    transcript = str(estate.sentinel / "transcript.jsonl")
    try:
        results = run_every_hook(estate, stdin=estate.standard_input(transcript_path=transcript),
                                 env={"MCP_TRANSCRIPT_PATH": transcript})
    finally:
        if big is not None and path.is_file() and path.stat().st_ino == big.stat().st_ino:
            path.unlink()
    injected = results["session-start.py"].stdout.decode("utf-8")
    if kind in TYPE_KINDS and target in ("index", "state"):
        # Not a regular file: nothing of it is shown, and nothing else is lost for it.
        assert ("## Memory index" if target == "index" else "## Last handoff") not in injected
        assert ("Working on X" if target == "index" else "pointer 0") in injected
        assert "/catchup" in injected


@pytest.mark.parametrize("seed", range(8))
def test_random_unicode_index_stays_within_the_limit(estate, seed):
    """Indexes of random text (astral characters, combining marks, controls, comment and code
    markers, long lines): the injection is still at most 10,000 UTF-16 units."""
    rng = random.Random(SEED * 100 + seed)
    alphabet = (["a", "b", " ", "-", "\t", "\r", "\0", "`", "``", "<!--", "-->", "\n", "\n\n",
                 "\u0301", "\u200f", "\ufeff", "\u2028", "é", "中", "\U0001F600", "\U00010348",
                 "\x1b[31m"] + ["x" * 50, "\U0001F680" * 30])
    text = "".join(rng.choice(alphabet) for _ in range(rng.randint(2000, 40000)))
    (estate.project / "memory" / "MEMORY.md").write_text(text, encoding="utf-8",
                                                          errors="surrogatepass")
    (estate.project / STATE).write_text(text[:5000], encoding="utf-8", errors="surrogatepass")
    run_every_hook(estate, hooks=["session-start.py", "context-budget.py"])


# --- the .claude folder, HOME, PATH ---------------------------------------------------------

def elsewhere(estate):
    """The hooks run from a folder outside the project, so .claude/ itself can be broken."""
    hooks = estate.root / "hooks-elsewhere"
    shutil.copytree(str(estate.hooks_dir), str(hooks), ignore=shutil.ignore_patterns("__pycache__"))
    estate.hooks_dir = hooks
    return estate


def test_missing_claude_folder(estate):
    elsewhere(estate)
    git(estate.project, "worktree", "remove", "--force",
        str(estate.project / ".claude" / "worktrees" / "agent-1"))
    shutil.rmtree(str(estate.project / ".claude"))
    run_every_hook(estate)


@pytest.mark.parametrize("which", [".claude", ".claude/hooks"])
def test_claude_folder_that_is_a_file(estate, which):
    elsewhere(estate)
    git(estate.project, "worktree", "remove", "--force",
        str(estate.project / ".claude" / "worktrees" / "agent-1"))
    shutil.rmtree(str(estate.project / which))
    (estate.project / which).write_text("not a folder\n", encoding="utf-8")
    results = run_every_hook(estate)
    # The baseline cannot be recorded, so the guard must not block: it could never stop blocking.
    assert results["stop-handoff.py"].returncode == 0


def make_unwritable(folders):
    """chmod 0o500; as root that stops nothing, so use the immutable attribute instead.
    Returns an undo function, or None when neither works here."""
    for folder in folders:
        os.chmod(str(folder), 0o500)
    probe = folders[-1] / ".probe"
    try:
        probe.write_text("x", encoding="utf-8")
    except OSError:
        return lambda: [os.chmod(str(f), 0o700) for f in folders]
    probe.unlink()
    for folder in folders:
        os.chmod(str(folder), 0o700)
    chattr = shutil.which("chattr")
    if not chattr:
        return None
    done = []
    for folder in reversed(folders):
        if subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode != 0:
            for undo in done:
                subprocess.run([chattr, "-i", str(undo)], capture_output=True)
            return None
        done.append(folder)
    try:
        probe.write_text("x", encoding="utf-8")
    except OSError:
        return lambda: [subprocess.run([chattr, "-i", str(f)], capture_output=True) for f in done]
    probe.unlink()
    for undo in done:
        subprocess.run([chattr, "-i", str(undo)], capture_output=True)
    return None


def test_unwritable_claude_folder(estate):
    claude = estate.project / ".claude"
    # Compile the siblings' bytecode first, as a real install would have after its first start.
    launch(estate, "session-start.py", stdin=estate.standard_input(session_id="warm-up"))
    (claude / "hooks" / ".session-baseline.warm-up").unlink()
    undo = make_unwritable([claude, claude / "hooks"])
    if undo is None:
        pytest.skip("cannot make a folder unwritable here: running privileged and no usable "
                    "immutable attribute (chattr)")
    try:
        results = run_every_hook(estate)
        assert results["stop-handoff.py"].returncode == 0, "blocked without a baseline it can advance"
        assert not (claude / "hooks" / ".session-baseline.fault-session").exists()
    finally:
        undo()


@pytest.mark.parametrize("unset,extra", [
    (("HOME",), {}),
    (("HOME", "MCP_PROJECTS_DIR"), {}),
    ((), {"HOME": "/nonexistent/home"}),
    ((), {"HOME": ""}),
], ids=["home-unset", "home-and-projects-dir-unset", "home-missing", "home-empty"])
def test_home(estate, unset, extra):
    run_every_hook(estate, unset=unset, env=extra)


def test_git_absent_from_path(estate, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    results = run_every_hook(estate, env={"PATH": str(empty)})
    assert results["stop-handoff.py"].returncode == 0


def test_path_unset(estate):
    run_every_hook(estate, unset=("PATH",))


@pytest.mark.skipif(os.name != "posix", reason="fake git is a shell script")
@pytest.mark.parametrize("script", [
    "head -c 3000000 /dev/urandom",
    "exit 1",
    "head -c 100000 /dev/urandom >&2; exit 0",
    "printf 'worktree %s\\nHEAD 0\\nbranch refs/heads/x\\n\\n' \"$PWD\"; exit 0",
], ids=["garbage-output", "fails", "garbage-on-stderr", "lying-worktree-list"])
def test_git_that_misbehaves(estate, tmp_path, script):
    fake = tmp_path / "fake-bin"
    fake.mkdir()
    program = fake / "git"
    program.write_text("#!/bin/sh\n%s\n" % script, encoding="utf-8")
    program.chmod(0o755)
    run_every_hook(estate, env={"PATH": "%s:%s" % (fake, os.environ.get("PATH", ""))})


@pytest.mark.skipif(os.name != "posix", reason="fake git is a shell script")
def test_git_that_never_answers_costs_less_than_the_harness_timeout(estate, tmp_path):
    fake = tmp_path / "hanging-bin"
    fake.mkdir()
    program = fake / "git"
    program.write_text("#!/bin/sh\nexec sleep 40\n", encoding="utf-8")
    program.chmod(0o755)
    stdin = estate.standard_input()
    before = outside_claude(estate)
    outcomes = {}

    def work(name):
        try:
            outcomes[name] = launch(estate, name, stdin=stdin,
                                    env={"PATH": "%s:%s" % (fake, os.environ.get("PATH", ""))})
        except AssertionError as error:  # killed at KILL_SECONDS
            outcomes[name] = error

    threads = [threading.Thread(target=work, args=(name,))
               for name in ("session-start.py", "stop-handoff.py")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name, done in sorted(outcomes.items()):
        assert not isinstance(done, AssertionError), done
        assert_run_properties(done)
    assert outside_claude(estate) == before


@pytest.mark.parametrize("name,value", [
    ("MCP_MEMORY_INDEX", "/dev/zero"),
    ("MCP_SESSION_STATE", "/dev/stdin"),
    ("MCP_BASELINE", "/dev/null"),
    ("MCP_BASELINE", "../sentinel/planted"),
    ("MCP_WORKTREE_DIR", "."),
    ("MCP_THROTTLE_MIN", "99999999999999999999999"),
    ("MCP_THROTTLE_MIN", "\u0663"),
    ("MCP_MEM_LINES", "-1"),
    ("MCP_CLAUDE_KB", "1e9"),
    ("MCP_TRANSCRIPT_MB", ""),
    ("MCP_PROJECTS_DIR", "/dev/null"),
    ("CLAUDE_PROJECT_DIR", "."),
], ids=lambda v: v if len(v) < 30 else v[:12])
def test_strange_settings(estate, name, value):
    run_every_hook(estate, env={name: value})


def test_project_folder_that_is_a_file(estate):
    target = estate.root / "a-file"
    target.write_text("x\n", encoding="utf-8")
    run_every_hook(estate, env={"CLAUDE_PROJECT_DIR": str(target)})


def test_corrupt_code_cache(estate):
    """Every compiled sibling in the user's code cache cut short, or garbage after its start."""
    launch(estate, "session-start.py", stdin=estate.standard_input(session_id="warm-up"))
    entries = sorted(code_cache().glob("*.code"))
    assert entries
    for number, path in enumerate(entries):
        data = path.read_bytes()
        path.write_bytes(data[:16] + b"\x00garbage" * 64 if number else data[:len(data) // 2])
    results = run_every_hook(estate)
    assert "pointer 0" in results["session-start.py"].stdout.decode("utf-8")
    assert (estate.project / BASELINE).is_file()  # the guard, compiled from source, recorded it


def test_project_path_with_undecodable_bytes_and_shell_characters(tmp_path):
    name = os.fsdecode(b"pr\xffoj \xc3\xa9 'q' \"d\" $x `y` \xf0\x9f\x98\x80")
    estate = protocol_project(tmp_path / name)
    (estate.project / os.fsdecode(b"changed-\xfe.txt")).write_text("x\n", encoding="utf-8")
    results = run_every_hook(estate, env={"LC_ALL": "C", "LANG": "C"})
    assert "pointer 0" in results["session-start.py"].stdout.decode("utf-8")
    assert (estate.project / BASELINE).is_file()


# --- repositories ---------------------------------------------------------------------------

def test_repository_mid_rebase_with_a_conflict(estate):
    project = estate.project
    git(project, "checkout", "-q", "-b", "feature")
    (project / "README.md").write_text("# feature side\n", encoding="utf-8")
    git(project, "commit", "-q", "-am", "feature edit")
    git(project, "checkout", "-q", "main")
    (project / "README.md").write_text("# main side\n", encoding="utf-8")
    git(project, "commit", "-q", "-am", "main edit")
    git(project, "checkout", "-q", "feature")
    git(project, "rebase", "main", check=False)
    assert (project / ".git" / "rebase-merge").is_dir() or (project / ".git" / "rebase-apply").is_dir()
    assert "UU README.md" in git(project, "status", "--porcelain")
    results = run_every_hook(estate)
    assert "pointer 0" in results["session-start.py"].stdout.decode("utf-8")
    assert (estate.project / BASELINE).is_file()


def test_corrupt_index(estate):
    rng = random.Random(SEED)
    (estate.project / ".git" / "index").write_bytes(_random_bytes(rng, 4096))
    assert git(estate.project, "status", check=False) == ""  # git itself refuses the index
    run_every_hook(estate)


def test_unborn_branch(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    git(project, "init", "-q", "-b", "main")
    estate = Estate(tmp_path, project).install()
    (project / "memory").mkdir()
    write_lines(project / "memory" / "MEMORY.md", 5)
    results = run_every_hook(estate)
    assert "line 4" in results["session-start.py"].stdout.decode("utf-8")
    assert (estate.project / BASELINE).is_file()


def test_git_file_pointing_nowhere(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").write_text("gitdir: /nonexistent/worktree\n", encoding="utf-8")
    estate = Estate(tmp_path, project).install()
    run_every_hook(estate)


def test_detached_head(estate):
    git(estate.project, "checkout", "-q", "--detach", "HEAD")
    run_every_hook(estate)


def test_thousands_of_changed_paths_with_long_astral_names(estate):
    for number in range(1500):  # at the top, so git lists each one rather than a folder
        name = "%04d-%s.txt" % (number, "\U0001F600" * 55)
        (estate.project / name).write_text("x\n", encoding="utf-8")
    results = run_every_hook(estate)
    assert "pointer 0" in results["session-start.py"].stdout.decode("utf-8")
    assert (estate.project / BASELINE).is_file()


def test_huge_commit_subjects(estate):
    subject = "\U0001F680" * 20000
    for number in range(5):
        git(estate.project, "commit", "-q", "--allow-empty", "-m", "%d %s" % (number, subject))
    run_every_hook(estate)


def test_stop_settles_while_the_installed_hooks_are_not_yet_committed(tmp_path):
    """Right after an install into a project that already tracks .claude/settings.json, the hooks
    folder is untracked and git lists it as one collapsed entry. A session that changes nothing
    must be let through, at the first stop and at every stop after it."""
    project = make_repo(tmp_path / "project")
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text("{}\n", encoding="utf-8")
    (project / ".gitignore").write_text(
        ".claude/session-state.md\n.claude/hooks/.session-baseline*\n"
        ".claude/hooks/__pycache__/\n.claude/settings.local.json\n.claude/worktrees/\n",
        encoding="utf-8")
    git(project, "add", ".gitignore", ".claude/settings.json")
    git(project, "commit", "-q", "-m", "settings")
    estate = Estate(tmp_path, project).install()
    state = project / STATE
    state.write_text("## Handoff: 2026-01-01 09:00\n", encoding="utf-8")
    set_age(state, 86400)
    assert git(project, "status", "--porcelain") == "?? .claude/hooks/"
    started = launch(estate, "session-start.py", stdin=estate.standard_input(session_id="s1"))
    assert_run_properties(started)
    stops = []
    for _ in range(3):
        done = launch(estate, "stop-handoff.py", stdin=json.dumps(
            {"session_id": "s1", "hook_event_name": "Stop", "stop_hook_active": False}).encode())
        assert_run_properties(done)
        stops.append(done.returncode)
    assert stops == [0, 0, 0]


# --- concurrency ----------------------------------------------------------------------------

def run_together(jobs):
    """Start every job at the same moment on its own thread; returns their results in order."""
    barrier = threading.Barrier(len(jobs))
    results = [None] * len(jobs)
    errors = []

    def work(position, job):
        try:
            barrier.wait(timeout=30)
            results[position] = job()
        except BaseException as error:  # reported on the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return results


def test_ten_sessions_at_once_in_one_checkout(estate):
    hooks = estate.project / ".claude" / "hooks"
    for entry in code_cache().glob("*.code"):  # they race to compile too; the rest stays
        entry.unlink()
    def start(session):
        return lambda: launch(estate, "session-start.py",
                              stdin=estate.standard_input(session_id=session))

    def stop(session):
        return lambda: launch(estate, "stop-handoff.py", stdin=json.dumps(
            {"session_id": session, "hook_event_name": "Stop", "stop_hook_active": False}).encode())

    before = outside_claude(estate)
    first = run_together([start("s%d" % i) for i in range(10)])
    after = outside_claude(estate)
    assert after == before, describe_changes(before, after)
    (estate.project / "README.md").write_text("changed while ten sessions ran\n", encoding="utf-8")
    before = outside_claude(estate)
    second = run_together([stop("s%d" % i) for i in range(10)]
                          + [start("t%d" % i) for i in range(10)]
                          + [stop("t%d" % i) for i in range(10)])
    after = outside_claude(estate)
    assert after == before, describe_changes(before, after)
    for done in first + second:
        assert_run_properties(done)
    assert [d.returncode for d in second[:10]] == [2] * 10  # every session saw the change

    baselines = sorted(p for p in hooks.iterdir() if p.name.startswith(".session-baseline"))
    names = sorted(p.name for p in baselines)
    expected = sorted(".session-baseline.%s%d" % (prefix, i) for prefix in "st" for i in range(10))
    assert names == expected, "stray or missing files: %s" % names
    for path in baselines:
        data = path.read_bytes()
        assert data.startswith(b"head ") and data.endswith(b"\n"), (path.name, data[:80])
        assert data.count(b"\n") == 1, (path.name, data[:200])
    leftovers = [p.name for p in hooks.iterdir() if p.name not in names and p.name not in HOOK_NAMES]
    assert leftovers == []
    cached = os.listdir(str(code_cache()))
    assert any(name.endswith(".code") for name in cached), cached
    assert not [name for name in cached if name.endswith(".tmp")], cached  # every write whole
