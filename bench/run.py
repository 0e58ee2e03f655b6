#!/usr/bin/env python3
"""Benchmark of the four hooks against the floor they cannot go below.

For each fixture the hooks run as the harness runs them (`<python> -I -S <project>/.claude/hooks/
<hook>.py`, the hook input as JSON on a pipe), after a warm-up, N times, interleaved with the
floor measured on the same fixture in the same run:

  floor (python)      `<python> -I -S -c pass`: the interpreter with nothing to do.
  floor (python+git)  that, then `git status --porcelain` and `git log -5`, run bare, one after
                      the other: what any hook that reports the repository must pay.

The fixtures are generated at run time in a temporary folder: one git repository per size
(about 1,000, 10,000 and 50,000 files), made dirty (200 changed files) and given five unmerged
agent worktrees in place; transcripts of 1 KB and 2 GiB (sparse); indexes of 80, 1,000 and
10,000 lines; and, on the smallest repository, 100,000 untracked files nobody ignored (a
node_modules left out of .gitignore), timed against git listing every one of them. Results go to a table on stdout and to JSON (--json, default
bench/results/latest.json). See bench/README.md for the columns and the targets.

Standard library only; Python 3.8 or newer. Run it with the interpreter you want measured, or
name one with --python (a pyenv shim is resolved to the real binary it would run).
"""
import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HOOKS_SOURCE = os.path.join(ROOT, "hooks")
HOOK_FILES = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
DEFAULT_JSON = os.path.join(ROOT, "bench", "results", "latest.json")
GIB = 1024 ** 3
INJECTION_LIMIT = 10000
DIRTY_MODIFIED = 150
DIRTY_UNTRACKED = 50
WORKTREES = 5
FILES_PER_FOLDER = 100
SEED = 2026
MANY_UNTRACKED = 100000

TARGETS = {
    "session-start": 1.5,          # x floor (python+git)
    "stop-handoff (git)": 1.5,     # x floor (python+git status)
    "stop-handoff (throttled)": 1.3,  # x floor (python)
    "stop-handoff (many untracked)": 2.0,  # x floor (python+git, every untracked file listed)
    "context-budget": 0.10,        # relative change against its 80-line, 1 KB case
}

GITIGNORE = """\
# memory-context-protocol — local-only files (per developer, never shared)
/.session-state.md
.claude/hooks/.session-baseline*
.claude/hooks/__pycache__/
.claude/settings.local.json
.claude/worktrees/
# memory-context-protocol — end
"""


# --- small helpers ------------------------------------------------------------------------

def injection_length(text):
    """UTF-8 bytes: the hooks' measure, which no harness's count exceeds."""
    return len(text.encode("utf-8"))


def percentile(values, fraction):
    """Linear interpolation between closest ranks (numpy's default)."""
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summary(samples):
    if not samples:
        return {"median_ms": None, "p10_ms": None, "p90_ms": None, "mad_ms": None, "runs": 0}
    median = statistics.median(samples)
    return {
        "median_ms": round(median, 3),
        "p10_ms": round(percentile(samples, 0.10), 3),
        "p90_ms": round(percentile(samples, 0.90), 3),
        "mad_ms": round(statistics.median(abs(s - median) for s in samples), 3),
        "runs": len(samples),
    }


def is_script(path):
    try:
        with open(path, "rb") as stream:
            return stream.read(2) == b"#!"
    except OSError:
        return False


def resolve_python(command):
    """The interpreter binary itself: a pyenv shim is a bash script that costs ~40 ms a start."""
    path = sys.executable if command is None else (shutil.which(command) or command)
    real = os.path.realpath(path)
    if is_script(real):
        done = subprocess.run([real, "-c", "import sys; print(sys.executable)"],
                              stdout=subprocess.PIPE, check=True)
        real = os.path.realpath(done.stdout.decode().strip())
    return real


def file_sha256(path):
    with open(path, "rb") as stream:
        return hashlib.sha256(stream.read()).hexdigest()


# --- running a command and timing it -------------------------------------------------------

class Runner:
    """Starts one command with stdin on a pipe and stdout/stderr in scratch files, and times it
    from spawn to exit. posix_spawn keeps the measuring process's own cost out of the numbers."""

    def __init__(self, scratch):
        self.out_path = os.path.join(scratch, "stdout")
        self.err_path = os.path.join(scratch, "stderr")
        self.in_path = os.path.join(scratch, "stdin")

    def run(self, argv, env, cwd, stdin=b""):
        if hasattr(os, "posix_spawnp"):
            return self._run_spawn(argv, env, cwd, stdin)
        return self._run_subprocess(argv, env, cwd, stdin)

    def _run_spawn(self, argv, env, cwd, stdin):
        out = os.open(self.out_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(self.err_path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        if len(stdin) < 60000:  # fits in a pipe buffer: written before the child starts
            read_end, write_end = os.pipe()
            os.write(write_end, stdin)
            os.close(write_end)
        else:
            with open(self.in_path, "wb") as stream:
                stream.write(stdin)
            read_end = os.open(self.in_path, os.O_RDONLY)
        actions = [(os.POSIX_SPAWN_DUP2, read_end, 0), (os.POSIX_SPAWN_DUP2, out, 1),
                   (os.POSIX_SPAWN_DUP2, err, 2)]
        previous = os.getcwd()
        os.chdir(cwd)
        try:
            started = time.perf_counter()
            pid = os.posix_spawnp(argv[0], argv, env, file_actions=actions)
            status = os.waitpid(pid, 0)[1]
            elapsed = (time.perf_counter() - started) * 1000.0
        finally:
            os.chdir(previous)
            os.close(read_end)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
        outputs = []
        for fd in (out, err):
            os.lseek(fd, 0, os.SEEK_SET)
            chunks = []
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            os.close(fd)
            outputs.append(b"".join(chunks))
        return elapsed, code, outputs[0], outputs[1]

    @staticmethod
    def _run_subprocess(argv, env, cwd, stdin):
        started = time.perf_counter()
        done = subprocess.run(argv, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              env=env, cwd=cwd)
        elapsed = (time.perf_counter() - started) * 1000.0
        return elapsed, done.returncode, done.stdout, done.stderr


# --- fixtures -------------------------------------------------------------------------------

def quiet_git(repo, *args, env=None):
    done = subprocess.run(["git", "-C", repo] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, env=env)
    if done.returncode != 0:
        raise RuntimeError("git %s failed: %s" % (" ".join(args), done.stderr.decode("utf-8", "replace")))
    return done.stdout.decode("utf-8", "replace")


TOPICS = 80


def index_text(lines):
    """An index of pointer lines, with an HTML comment block now and then, `lines` lines long.
    Every pointer resolves (to one of TOPICS topic files): a long index, not a broken one."""
    out = ["# Project Memory Index"]
    number = 0
    while len(out) < lines:
        if len(out) % 50 == 25 and len(out) + 3 <= lines:
            out += ["<!-- Session %d: what was folded in here" % number,
                    "and why; kept out of the injection -->"]
            continue
        out.append("- [Topic %d](topics/topic-%d.md) — how part %d works and where it lives"
                   % (number, number % TOPICS, number))
        number += 1
    return "\n".join(out[:lines]) + "\n"


def handoff_text():
    lines = ["## Handoff: 2026-11-28 17:40", "", "### Doing", "Benchmark fixture handoff.", "",
             "### Next"]
    lines += ["- step %d of the plan, with enough words to look like a real line" % i
              for i in range(34)]
    return "\n".join(lines) + "\n"


class Workspace:
    """Everything the benchmark generates, under one temporary folder."""

    def __init__(self, root, settle):
        self.root = root
        self.settle_seconds = settle
        self.home = os.path.join(root, "home")
        os.makedirs(self.home)
        with open(os.path.join(self.home, ".gitconfig"), "w", encoding="utf-8") as stream:
            stream.write("[user]\n\tname = Bench\n\temail = bench@example.invalid\n"
                         "[init]\n\tdefaultBranch = main\n[safe]\n\tdirectory = *\n")
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("MCP_", "CLAUDE_", "GIT_"))}
        self.env["HOME"] = self.home
        self.env["GIT_CONFIG_NOSYSTEM"] = "1"
        self.env.pop("PYTHONSTARTUP", None)
        transcripts = os.path.join(root, "transcripts")
        os.makedirs(transcripts)
        self.transcripts = {"1KB": os.path.join(transcripts, "small.jsonl"),
                            "2GiB": os.path.join(transcripts, "large.jsonl")}
        line = json.dumps({"type": "user", "message": {"role": "user", "content": "x" * 60}}) + "\n"
        with open(self.transcripts["1KB"], "w", encoding="utf-8") as stream:
            stream.write((line * (1024 // len(line) + 1))[:1023] + "\n")
        with open(self.transcripts["2GiB"], "wb") as stream:
            stream.truncate(2 * GIB)  # sparse: a size, no blocks

    def settle(self):
        """Wait out git's racy-timestamp window, then let a plain `git status` refresh the index,
        so the timed runs never re-hash files only because they were written a moment ago."""
        if self.settle_seconds:
            time.sleep(self.settle_seconds)


class Repository:
    """One project of a given size, with the protocol installed; dirtiness and worktrees are
    toggled in place so a 50,000-file tree is written once."""

    def __init__(self, workspace, files):
        self.ws = workspace
        self.files = files
        self.path = os.path.join(workspace.root, "repo-%d" % files)
        self.tracked = []
        self.dirty = False
        self.worktrees = 0
        self.untracked = 0
        self.primed_at = time.time()
        self._build()

    def git(self, *args):
        return quiet_git(self.path, *args, env=self.ws.env)

    def _build(self):
        path = self.path
        os.makedirs(path)
        count = max(self.files - 12 - TOPICS, 1)  # the protocol files below make up the rest
        for number in range(count):
            folder = os.path.join("src", "pkg%03d" % (number // FILES_PER_FOLDER))
            if number % FILES_PER_FOLDER == 0:
                os.makedirs(os.path.join(path, folder))
            relative = os.path.join(folder, "module_%05d.py" % number)
            with open(os.path.join(path, relative), "w", encoding="utf-8") as stream:
                stream.write('"""Module %d."""\n\n\ndef value():\n    return %d\n' % (number, number))
            self.tracked.append(relative)
        memory = os.path.join(path, "memory")
        os.makedirs(memory)
        self.indexes = {}
        for lines in (80, 1000, 10000):
            name = "MEMORY.md" if lines == 80 else "MEMORY-%d.md" % lines
            with open(os.path.join(memory, name), "w", encoding="utf-8") as stream:
                stream.write(index_text(lines))
            self.indexes[lines] = "memory/" + name
        os.makedirs(os.path.join(memory, "topics"))
        for number in range(TOPICS):
            with open(os.path.join(memory, "topics", "topic-%d.md" % number), "w",
                      encoding="utf-8") as stream:
                stream.write("# Topic %d\n\nWhat part %d does.\n" % (number, number))
        with open(os.path.join(path, "CLAUDE.md"), "w", encoding="utf-8") as stream:
            stream.write("# Project\n" + "Instruction line for the agent.\n" * 60)
        with open(os.path.join(path, ".gitignore"), "w", encoding="utf-8") as stream:
            stream.write(GITIGNORE)
        hooks = os.path.join(path, ".claude", "hooks")
        os.makedirs(hooks)
        for name in HOOK_FILES:
            shutil.copyfile(os.path.join(HOOKS_SOURCE, name), os.path.join(hooks, name))
        self.state = os.path.join(path, ".session-state.md")
        with open(self.state, "w", encoding="utf-8") as stream:
            stream.write(handoff_text())
        self.git("init", "-q", "-b", "main")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "fixture of %d files" % self.files)
        for number in range(4):
            with open(os.path.join(path, "CLAUDE.md"), "a", encoding="utf-8") as stream:
                stream.write("Commit %d.\n" % number)
            self.git("commit", "-q", "-a", "-m", "history commit %d" % number)
        self.refresh()

    def refresh(self):
        self.ws.settle()
        self.git("status", "--porcelain")

    def dirty_paths(self):
        rng = random.Random(SEED + self.files)
        chosen = rng.sample(self.tracked, min(DIRTY_MODIFIED, len(self.tracked)))
        untracked = [os.path.join("src", "new", "untracked_%03d.py" % i)
                     for i in range(DIRTY_UNTRACKED)]
        return chosen, untracked

    def dirty_count(self):
        modified, untracked = self.dirty_paths()
        return len(modified) + len(untracked)

    def set_dirty(self, dirty):
        if dirty == self.dirty:
            return
        modified, untracked = self.dirty_paths()
        if dirty:
            for relative in modified:
                with open(os.path.join(self.path, relative), "a", encoding="utf-8") as stream:
                    stream.write("# changed by the session\n")
            os.makedirs(os.path.join(self.path, "src", "new"), exist_ok=True)
            for relative in untracked:
                with open(os.path.join(self.path, relative), "w", encoding="utf-8") as stream:
                    stream.write("NEW = True\n")
        else:
            self.git("checkout", "--", *modified)
            shutil.rmtree(os.path.join(self.path, "src", "new"))
        self.dirty = dirty
        self.refresh()

    def add_worktrees(self, count):
        """Agent worktrees with a commit of their own each: unmerged, so the pruner keeps them."""
        for number in range(self.worktrees, count):
            name = "agent-%d" % number
            folder = os.path.join(self.path, ".claude", "worktrees", name)
            self.git("worktree", "add", "-q", "-b", name, folder)
            with open(os.path.join(folder, "AGENT_WORK.md"), "w", encoding="utf-8") as stream:
                stream.write("work of %s\n" % name)
            quiet_git(folder, "add", "AGENT_WORK.md", env=self.ws.env)
            quiet_git(folder, "commit", "-q", "-m", "agent work %d" % number, env=self.ws.env)
        self.worktrees = count
        self.refresh()

    def set_untracked(self, count):
        """`count` untracked files in node_modules/, 100 to a folder, that nothing ignores."""
        if count == self.untracked:
            return
        folder = os.path.join(self.path, "node_modules")
        shutil.rmtree(folder, ignore_errors=True)
        for number in range(count):
            package = os.path.join(folder, "pkg%04d" % (number // FILES_PER_FOLDER))
            if number % FILES_PER_FOLDER == 0:
                os.makedirs(package)
            with open(os.path.join(package, "index_%d.js" % number), "w") as stream:
                stream.write("module.exports = %d;\n" % number)
        self.untracked = count
        self.refresh()

    def describe(self):
        extra = ", %s untracked" % short_count(self.untracked) if self.untracked else ""
        return "%s files, %s, %d worktrees%s" % (short_count(self.files),
                                                  "dirty %d" % self.dirty_count() if self.dirty
                                                  else "clean",
                                                  self.worktrees, extra)


def short_count(number):
    return "%dk" % (number // 1000) if number >= 1000 and number % 1000 == 0 else str(number)


# --- cases ----------------------------------------------------------------------------------

class Case:
    """One thing to time on the current fixture: a hook with its input, or a floor."""

    def __init__(self, key, hook, label, steps, stale_state=True, target=None, base=None,
                 fixture=None, inner=False, floor=None):
        self.key = key
        self.floor = floor  # the key of the floor this case is set against, when not the usual
        self.inner = inner  # the sample is the time the command reports on stdout
        self.hook = hook
        self.label = label
        self.steps = steps  # [(argv, env, stdin)] run one after the other, times summed
        self.stale_state = stale_state
        self.target = target
        self.base = base
        self.fixture = fixture or {}
        self.samples = []
        self.codes = set()
        self.longest_stdout = 0
        self.stderr_tail = b""


def build_cases(repo, python, phase, session_id="bench"):
    """The cases for one phase of one repository."""
    project = repo.path
    hooks = os.path.join(project, ".claude", "hooks")
    env = dict(repo.ws.env)
    env["CLAUDE_PROJECT_DIR"] = project

    def hook_argv(name):
        return [python, "-I", "-S", os.path.join(hooks, name)]

    def with_env(**extra):
        copy = dict(env)
        copy.update(extra)
        return copy

    def start_input(transcript, session=session_id):
        return json.dumps({"session_id": session, "transcript_path": transcript, "cwd": project,
                           "hook_event_name": "SessionStart", "source": "startup"}).encode()

    stop_input = json.dumps({"session_id": "bench-stop", "transcript_path": repo.ws.transcripts["1KB"],
                             "cwd": project, "hook_event_name": "Stop",
                             "stop_hook_active": False}).encode()
    floor_python = [([python, "-I", "-S", "-c", "pass"], env, b"")]
    floor_status = floor_python + [(["git", "status", "--porcelain"], env, b"")]
    floor_git = floor_status + [(["git", "log", "-5"], env, b"")]

    def fixture(index=80, transcript="1KB"):
        return {"files": repo.files, "dirty": repo.dirty, "worktrees": repo.worktrees,
                "index_lines": index, "transcript": transcript}

    def variant(index, transcript):
        bits = []
        if index != 80:
            bits.append("index %d" % index)
        if transcript != "1KB":
            bits.append("transcript %s" % transcript)
        return ", ".join(bits) or "index 80, transcript 1KB"

    cases = [Case("floor-python", "floor (python)", "", floor_python, fixture=fixture()),
             Case("floor-status", "floor (python+git status)", "", floor_status,
                  fixture=fixture()),
             Case("floor-git", "floor (python+git)", "", floor_git, fixture=fixture())]
    prime = (hook_argv("session-start.py"), env, start_input(repo.ws.transcripts["1KB"], "bench-stop"))
    if phase.get("untracked"):
        # What git alone pays to list every untracked file, as the hooks must: the floor of
        # this phase. Only the two hooks that read the listing are timed.
        floor_all = floor_python + [(["git", "status", "--porcelain", "--untracked-files=all"],
                                     env, b""), (["git", "log", "-5"], env, b"")]
        cases.append(Case("floor-git-all", "floor (python+git -uall)", "", floor_all,
                          fixture=fixture()))
        cases.append(Case("session-start:untracked", "session-start", "index 80, transcript 1KB",
                          [(hook_argv("session-start.py"), env,
                            start_input(repo.ws.transcripts["1KB"]))],
                          fixture=fixture(), floor="floor-git-all"))
        cases.append(Case("stop-handoff:untracked", "stop-handoff",
                          "must look at git (handoff stale)",
                          [(hook_argv("stop-handoff.py"), env, stop_input)],
                          target="stop-handoff (many untracked)", fixture=fixture(),
                          floor="floor-git-all"))
        return cases, prime
    variants = phase["variants"]
    for index, transcript in variants:
        start_env = env if index == 80 else with_env(MCP_MEMORY_INDEX=repo.indexes[index])
        cases.append(Case(
            "session-start:%d:%s" % (index, transcript), "session-start", variant(index, transcript),
            [(hook_argv("session-start.py"), start_env, start_input(repo.ws.transcripts[transcript]))],
            target="session-start", fixture=fixture(index, transcript)))
    base_key = "context-budget:%d:%s" % variants[0]
    for index, transcript in variants:
        budget_env = with_env(MCP_TRANSCRIPT_PATH=repo.ws.transcripts[transcript])
        if index != 80:
            budget_env["MCP_MEMORY_INDEX"] = repo.indexes[index]
        key = "context-budget:%d:%s" % (index, transcript)
        cases.append(Case(
            key, "context-budget", variant(index, transcript),
            [(hook_argv("context-budget.py"), budget_env, b"")],
            target="context-budget", base=None if key == base_key else base_key,
            fixture=fixture(index, transcript)))
    for index, transcript in variants:
        budget_env = with_env(MCP_TRANSCRIPT_PATH=repo.ws.transcripts[transcript])
        if index != 80:
            budget_env["MCP_MEMORY_INDEX"] = repo.indexes[index]
        cases.append(Case(
            "budget-inproc:%d:%s" % (index, transcript), "context-budget (in-process)",
            variant(index, transcript),
            [([python, "-I", "-S", "-c", IN_PROCESS_BUDGET, os.path.join(hooks, "context-budget.py")],
              budget_env, b"")], fixture=fixture(index, transcript), inner=True))
    cases.append(Case("stop-handoff:git", "stop-handoff", "must look at git (handoff stale)",
                      [(hook_argv("stop-handoff.py"), env, stop_input)],
                      target="stop-handoff (git)", fixture=fixture(), floor="floor-status"))
    if phase.get("throttled", True):
        cases.append(Case("stop-handoff:throttled", "stop-handoff", "throttled (handoff fresh)",
                          [(hook_argv("stop-handoff.py"), env, stop_input)], stale_state=False,
                          target="stop-handoff (throttled)", fixture=fixture()))
    if phase.get("startup"):
        # The price of being a self-contained script: the hook compiled from source and `os`
        # imported, then an exit because the project folder does not exist. The rest of a hook's
        # time is its work.
        nowhere = with_env(CLAUDE_PROJECT_DIR=os.path.join(project, "no-such-folder"))
        for name, stdin in (("session-start", start_input(repo.ws.transcripts["1KB"])),
                            ("stop-handoff", stop_input)):
            cases.append(Case("%s:startup" % name, name, "start-up only (no project folder)",
                              [(hook_argv(name + ".py"), nowhere, stdin)], fixture=fixture()))
    return cases, prime


# budget_points() timed inside the interpreter: the check's own cost, without start-up. The module
# is loaded by path as session-start.py loads it, so its bytecode comes from __pycache__.
IN_PROCESS_BUDGET = """\
import os, sys, time
from importlib.machinery import SourceFileLoader
path = sys.argv[1]
module = type(sys)("mcp_context_budget")
module.__file__ = path
SourceFileLoader("mcp_context_budget", path).exec_module(module)
started = time.perf_counter()
module.budget_points(os.environ["CLAUDE_PROJECT_DIR"], os.environ)
sys.stdout.write("%.4f" % ((time.perf_counter() - started) * 1000.0))
"""


def set_state_age(repo, stale):
    """A day old, or fresh: written a second before the Stop hook's baseline was recorded, so
    the guard has already taken that handoff in and the throttle is the whole of its work."""
    stamp = time.time() - 86400 if stale else repo.primed_at - 1
    os.utime(repo.state, (stamp, stamp))


def measure_phase(runner, repo, cases, prime, runs, warmup, rng):
    """Warm-up, then `runs` rounds; in each round every case once, in a shuffled order."""
    # The Stop hook compares with its session's baseline: record it for the current state, as
    # the session's start would have, so the timed stops find the repository unchanged.
    set_state_age(repo, True)
    argv, env, stdin = prime
    repo.primed_at = time.time()
    runner.run(argv, env, repo.path, stdin)
    order = list(cases)
    for round_number in range(warmup + runs):
        rng.shuffle(order)
        for case in order:
            set_state_age(repo, case.stale_state)
            total = 0.0
            for argv, env, stdin in case.steps:
                elapsed, code, out, err = runner.run(argv, env, repo.path, stdin)
                total += elapsed
            if round_number < warmup:
                continue
            if case.inner:
                try:
                    total = float(out.decode("ascii"))
                except ValueError:  # the check failed to run: no sample, keep its stderr
                    case.stderr_tail = err[-300:]
                    continue
                out = b""
            case.samples.append(total)
            if not case.hook.startswith("floor"):
                case.codes.add(code)
                text = out.decode("utf-8", "replace")
                case.longest_stdout = max(case.longest_stdout, injection_length(text))
                if err and code not in (0, 2):
                    case.stderr_tail = err[-300:]
    set_state_age(repo, True)


# --- evaluation -----------------------------------------------------------------------------

def evaluate(cases, phase_name, repo_label):
    by_key = {c.key: c for c in cases}
    floor_python = summary(by_key["floor-python"].samples)
    floor_git = summary(by_key["floor-git"].samples)
    rows = []
    for case in cases:
        stats = summary(case.samples)
        row = {"hook": case.hook, "case": case.label, "fixture": dict(case.fixture),
               "fixture_label": "%s; %s" % (repo_label, case.label) if case.label else repo_label,
               "phase": phase_name}
        row.update(stats)
        if not case.hook.startswith("floor"):
            row["exit_codes"] = sorted(case.codes)
            row["stdout_bytes_max"] = case.longest_stdout
            if case.stderr_tail:
                row["stderr_tail"] = case.stderr_tail.decode("utf-8", "replace")
        floor = floor_git if case.target == "session-start" else floor_python
        floor_kind = "python+git" if floor is floor_git else "python"
        if case.floor:
            floor, floor_kind = summary(by_key[case.floor].samples), by_key[case.floor].hook[7:-1]
        if case.hook.startswith("floor"):
            floor, floor_kind = stats, case.hook[len("floor ("):-1]
        if case.inner or stats["median_ms"] is None:
            row.update(floor_kind=None, floor_ms=None, ratio=None)
            row["target"], row["pass"] = ("-", None) if stats["median_ms"] is not None \
                else ("failed to run", False)
            rows.append(row)
            continue
        row["floor_kind"] = floor_kind
        row["floor_ms"] = floor["median_ms"]
        row["ratio"] = round(stats["median_ms"] / floor["median_ms"], 3) if floor["median_ms"] else None
        row["target"], row["pass"] = judge(case, row, by_key)
        rows.append(row)
    return rows


def judge(case, row, by_key):
    if case.target in ("session-start", "stop-handoff (git)", "stop-handoff (throttled)",
                       "stop-handoff (many untracked)"):
        limit = TARGETS[case.target]
        text = "<= %.1fx %s" % (limit, row["floor_kind"])
        passed = row["ratio"] is not None and row["ratio"] <= limit
        if case.target == "session-start":
            text += "; inject <= %d" % INJECTION_LIMIT
            passed = passed and case.longest_stdout <= INJECTION_LIMIT
        return text, passed
    if case.target == "context-budget":
        if case.base is None:
            return "base of the flatness check", None
        base = statistics.median(by_key[case.base].samples)
        change = statistics.median(case.samples) / base - 1.0
        row["change_vs_base"] = round(change, 3)
        return "within 10%% of index 80, transcript 1KB (%+.1f%%)" % (change * 100), \
            abs(change) <= TARGETS["context-budget"]
    return "-", None


def format_table(rows):
    headers = ["hook", "fixture", "median ms", "p10-p90 ms", "MAD", "floor ms", "ratio",
               "inject", "target", "result"]
    lines = []
    for row in rows:
        result = "" if row["pass"] is None else ("pass" if row["pass"] else "MISS")
        inject = str(row.get("stdout_bytes_max", "")) if row["hook"] == "session-start" else ""
        def ms(value):
            return "" if value is None else "%.2f" % value if value < 10 else "%.1f" % value
        spread = "" if row["p10_ms"] is None else "%s-%s" % (ms(row["p10_ms"]), ms(row["p90_ms"]))
        lines.append([row["hook"], row["fixture_label"], ms(row["median_ms"]), spread,
                      ms(row["mad_ms"]), ms(row["floor_ms"]),
                      "%.2f" % row["ratio"] if row["ratio"] else "", inject, row["target"], result])
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h)
              for i, h in enumerate(headers)]
    out = ["| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for line in lines:
        out.append("| " + " | ".join(c.ljust(w) for c, w in zip(line, widths)) + " |")
    return "\n".join(out)


# --- the plan -------------------------------------------------------------------------------

FULL_VARIANTS = [(80, "1KB"), (1000, "1KB"), (10000, "1KB"), (80, "2GiB")]
BASE_ONLY = [(80, "1KB")]
WORST = [(80, "1KB"), (10000, "2GiB")]


def plan(mode):
    """(sizes, phases). Each phase: dirty or not, worktrees, which index/transcript variants."""
    phases = [
        {"name": "clean", "dirty": False, "worktrees": 0, "variants": FULL_VARIANTS,
         "startup": True},
        {"name": "dirty", "dirty": True, "worktrees": 0, "variants": BASE_ONLY},
        {"name": "dirty+worktrees", "dirty": True, "worktrees": WORKTREES, "variants": WORST},
        {"name": "clean+worktrees", "dirty": False, "worktrees": WORKTREES, "variants": BASE_ONLY,
         "throttled": False},
        {"name": "many-untracked", "dirty": False, "worktrees": 0, "variants": BASE_ONLY,
         "untracked": MANY_UNTRACKED, "smallest_only": True},
    ]
    if mode == "smoke":
        return [20], [phases[0], phases[2], dict(phases[4], untracked=200)]
    if mode == "quick":
        return [3000], phases
    return [10, 3000], phases


def git_version():
    try:
        return subprocess.run(["git", "--version"], stdout=subprocess.PIPE).stdout.decode().strip()
    except OSError:
        return None


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true",
                      help="only the 3,000-file repository, 5 runs (unless --runs)")
    mode.add_argument("--smoke", action="store_true",
                      help="a 20-file repository, 1 run, no warm-up: checks the script works")
    parser.add_argument("--sizes", help="comma-separated repository sizes in files "
                                        "(default 10,3000; 50000 for a large one)")
    parser.add_argument("--runs", type=int, help="timed runs per case (default 15)")
    parser.add_argument("--warmup", type=int, help="untimed runs per case first (default 1)")
    parser.add_argument("--python", help="interpreter to measure (default: this one, resolved)")
    parser.add_argument("--json", default=DEFAULT_JSON, help="where to write the results as JSON")
    parser.add_argument("--workdir", help="build the fixtures here instead of a temporary folder")
    parser.add_argument("--keep", action="store_true", help="keep the fixtures afterwards")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    sizes, phases = plan(mode)
    if args.sizes:
        sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    runs = args.runs or {"smoke": 1, "quick": 5}.get(mode, 15)
    warmup = args.warmup if args.warmup is not None else (0 if mode == "smoke" else 1)
    python = resolve_python(args.python)
    started = time.time()
    root = args.workdir or tempfile.mkdtemp(prefix="mcp-bench-")
    os.makedirs(root, exist_ok=True)
    scratch = os.path.join(root, "scratch")
    os.makedirs(scratch, exist_ok=True)
    workspace = Workspace(root, settle=0 if mode == "smoke" else 1.1)
    runner = Runner(scratch)
    rng = random.Random(SEED)
    version = subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"],
                             stdout=subprocess.PIPE).stdout.decode().strip()
    print("python %s (%s), %s, %d runs after %d warm-up, sizes %s"
          % (version, python, git_version(), runs, warmup, ",".join(map(str, sizes))),
          file=sys.stderr)
    rows = []
    try:
        for files in sizes:
            clock = time.time()
            repo = Repository(workspace, files)
            print("built %d-file repository in %.1f s" % (files, time.time() - clock), file=sys.stderr)
            for phase in phases:
                if phase.get("smallest_only") and files != min(sizes):
                    continue
                clock = time.time()
                repo.set_untracked(phase.get("untracked", 0))
                repo.set_dirty(phase["dirty"])
                if phase["worktrees"] > repo.worktrees:
                    repo.add_worktrees(phase["worktrees"])
                cases, prime = build_cases(repo, python, phase)
                label = repo.describe()
                measure_phase(runner, repo, cases, prime, runs, warmup, rng)
                rows += evaluate(cases, phase["name"], label)
                print("  %-16s %d cases in %.1f s" % (phase["name"], len(cases), time.time() - clock),
                      file=sys.stderr)
            if not args.keep:
                shutil.rmtree(repo.path, ignore_errors=True)
    finally:
        if not args.keep and not args.workdir:
            shutil.rmtree(root, ignore_errors=True)
    table = format_table(rows)
    print(table)
    judged = [r for r in rows if r["pass"] is not None]
    missed = [r for r in judged if not r["pass"]]
    print("\n%d of %d targets met" % (len(judged) - len(missed), len(judged)))
    result = {
        "meta": {
            "mode": mode, "runs": runs, "warmup": warmup, "sizes": sizes,
            "python": python, "python_version": version, "git": git_version(),
            "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(started)),
            "duration_s": round(time.time() - started, 1),
            "hooks_sha256": {name: file_sha256(os.path.join(HOOKS_SOURCE, name)) for name in HOOK_FILES},
            "targets": TARGETS,
        },
        "rows": rows,
        "table": table,
    }
    if args.json:
        folder = os.path.dirname(os.path.abspath(args.json))
        os.makedirs(folder, exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as stream:
            json.dump(result, stream, indent=2, ensure_ascii=False)
            stream.write("\n")
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
