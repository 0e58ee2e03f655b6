#!/usr/bin/env python3
"""Where the start-up time of the hooks goes, measured rather than guessed.

Four measurements, on a 1,000-file repository built at run time (clean, no worktrees):

1. compile  - each hook's source compiled in a fresh interpreter. A script run as
               `python -I -S hook.py` is compiled on every run, which is why the two wired files
               are small; the two they load come from the user's code cache (stop-handoff.py's
               loader), compiled only when their source changed.
2. imports  - the modules each hook imports beyond the bare interpreter (`-X importtime`).
3. wired    - the wired hooks against their floors, interleaved (median ms), and what loading
               one library from the code cache costs in-process.
4. worktree walk - context-budget's disk_usage() per entry, on one real worktree.

Usage: python3 bench/profile.py [--python PATH] [--runs N]
Standard library only; Python 3.8 or newer.
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench  # noqa: E402  (bench/run.py: fixtures, runner, interpreter resolution)

COMPILE_PROBE = '''\
import sys, time
source = open(sys.argv[1], "rb").read()
started = time.perf_counter()
compile(source, sys.argv[1], "exec")
sys.stdout.write("%.4f" % ((time.perf_counter() - started) * 1000.0))
'''


def median_of(values):
    return statistics.median(values) if values else float("nan")


def measure_compile(python, hooks, runs):
    """Compile cost in a fresh interpreter, less the cost of compiling an empty file there
    (the compiler's first use, which `-c pass` pays too)."""
    empty = os.path.join(hooks, "..", "empty.py")
    with open(empty, "w", encoding="utf-8") as stream:
        stream.write("pass\n")
    results = {}
    for name in bench.HOOK_FILES + ("empty",):
        path = empty if name == "empty" else os.path.join(hooks, name)
        samples = []
        for _ in range(runs):
            done = subprocess.run([python, "-I", "-S", "-c", COMPILE_PROBE, path],
                                  stdout=subprocess.PIPE)
            samples.append(float(done.stdout))
        results[name] = (os.path.getsize(path), median_of(samples))
    base = results.pop("empty")[1]
    return {name: (size, ms - base) for name, (size, ms) in results.items()}


IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)")


def measure_imports(python, argv, env, cwd, stdin):
    """Top-level modules the command imports that `-c pass` does not, with cumulative µs."""
    def imported(command):
        done = subprocess.run([python, "-I", "-S", "-X", "importtime"] + command, input=stdin,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
        found = {}
        for line in done.stderr.decode("utf-8", "replace").splitlines():
            match = IMPORT_LINE.match(line)
            if match and len(match.group(3)) == 1:  # top level: one space after the bar
                found[match.group(4)] = int(match.group(2))
        return found
    bare = imported(["-c", "pass"])
    return {name: us for name, us in imported(argv).items() if name not in bare}


def measure_wired(python, repo, runner, runs):
    """Interleaved timings: the floors and the hooks as wired."""
    hooks = os.path.join(repo.path, ".claude", "hooks")
    env = dict(repo.ws.env, CLAUDE_PROJECT_DIR=repo.path)
    start_in = json.dumps({"session_id": "profile", "source": "startup", "cwd": repo.path,
                           "hook_event_name": "SessionStart",
                           "transcript_path": repo.ws.transcripts["1KB"]}).encode()
    stop_in = json.dumps({"session_id": "profile-stop", "cwd": repo.path,
                          "hook_event_name": "Stop", "stop_hook_active": False}).encode()
    runner.run([python, "-I", "-S", os.path.join(hooks, "session-start.py")], env, repo.path,
               start_in.replace(b'"profile"', b'"profile-stop"'))

    def hook(name):
        return [python, "-I", "-S", os.path.join(hooks, name)]

    cases = [
        ("floor (python)", [([python, "-I", "-S", "-c", "pass"], b"")], True),
        ("floor (python+git status)", [([python, "-I", "-S", "-c", "pass"], b""),
                                       (["git", "status", "--porcelain"], b"")], True),
        ("floor (python+git)", [([python, "-I", "-S", "-c", "pass"], b""),
                                (["git", "status", "--porcelain"], b""),
                                (["git", "log", "-5"], b"")], True),
        ("session-start", [(hook("session-start.py"), start_in)], True),
        ("stop-handoff, nothing changed", [(hook("stop-handoff.py"), stop_in)], True),
        ("stop-handoff, throttled", [(hook("stop-handoff.py"), stop_in)], False),
    ]
    samples = {label: [] for label, _, _ in cases}
    order = list(cases)
    rng = random.Random(bench.SEED)
    for round_number in range(runs + 1):
        rng.shuffle(order)
        for label, steps, stale in order:
            bench.set_state_age(repo, stale)
            total = sum(runner.run(argv, env, repo.path, stdin)[0] for argv, stdin in steps)
            if round_number:
                samples[label].append(total)
    bench.set_state_age(repo, True)
    return [(label, median_of(samples[label])) for label, _, _ in cases]


LOAD_PROBE = '''\
import os, sys, time
path = sys.argv[1]
namespace = {"__name__": "loader", "__file__": path}
exec(compile(open(path, "rb").read(), path, "exec"), namespace)
for name in ("context-budget.py", "prune-worktrees.py"):
    started = time.perf_counter()
    namespace["load_sibling"](name)
    sys.stdout.write("%s %.4f\\n" % (name, (time.perf_counter() - started) * 1000.0))
'''


def measure_loading(python, repo):
    """Milliseconds to load each library through the loader, from a warm code cache."""
    loader = os.path.join(repo.path, ".claude", "hooks", "stop-handoff.py")
    samples = {}
    for _ in range(9):
        done = subprocess.run([python, "-I", "-S", "-c", LOAD_PROBE, loader],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for line in done.stdout.decode("ascii", "replace").splitlines():
            name, _, ms = line.partition(" ")
            samples.setdefault(name, []).append(float(ms))
    return {name: median_of(values) for name, values in samples.items()}


WALK_PROBE = '''\
import os, sys, time
from importlib.machinery import SourceFileLoader
module = type(sys)("cb")
module.__file__ = sys.argv[1]
SourceFileLoader("cb", sys.argv[1]).exec_module(module)
entries = sum(len(dirs) + len(files) for _, dirs, files in os.walk(sys.argv[2]))
started = time.perf_counter()
module.disk_usage(sys.argv[2])
sys.stdout.write("%d %.4f" % (entries, (time.perf_counter() - started) * 1000.0))
'''


def measure_walk(python, repo):
    repo.add_worktrees(1)
    folder = os.path.join(repo.path, ".claude", "worktrees")
    hook = os.path.join(repo.path, ".claude", "hooks", "context-budget.py")
    samples, entries = [], 0
    for _ in range(7):
        done = subprocess.run([python, "-I", "-S", "-c", WALK_PROBE, hook, folder],
                              stdout=subprocess.PIPE)
        entries, ms = done.stdout.split()
        samples.append(float(ms))
    return int(entries), median_of(samples)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="interpreter to measure (default: this one, resolved)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per case (default 30)")
    args = parser.parse_args(argv)
    python = bench.resolve_python(args.python)
    root = tempfile.mkdtemp(prefix="mcp-profile-")
    try:
        workspace = bench.Workspace(root, settle=1.1)
        repo = bench.Repository(workspace, 1000)
        hooks = os.path.join(repo.path, ".claude", "hooks")
        scratch = os.path.join(root, "scratch")
        os.makedirs(scratch)
        runner = bench.Runner(scratch)

        print("1. compile cost in a fresh interpreter (beyond compiling an empty file)")
        for name, (size, ms) in measure_compile(python, hooks, 9).items():
            print("   %-20s %6d bytes  %5.2f ms" % (name, size, ms))

        print("\n2. modules imported beyond `python -I -S -c pass` (cumulative µs)")
        env = dict(workspace.env, CLAUDE_PROJECT_DIR=repo.path)
        stop_in = json.dumps({"session_id": "x", "stop_hook_active": False}).encode()
        for label, name, stale in (("stop-handoff, throttled", "stop-handoff.py", False),
                                   ("stop-handoff, git", "stop-handoff.py", True),
                                   ("session-start", "session-start.py", True),
                                   ("context-budget", "context-budget.py", True)):
            bench.set_state_age(repo, stale)
            found = measure_imports(python, [os.path.join(hooks, name)], env, repo.path, stop_in)
            shown = ", ".join("%s %d" % item for item in sorted(found.items(), key=lambda i: -i[1]))
            print("   %-24s %s" % (label, shown or "(none)"))
        bench.set_state_age(repo, True)

        print("\n3. the wired hooks against their floors (median ms, %d runs)" % args.runs)
        results = measure_wired(python, repo, runner, args.runs)
        floors = dict(results)
        for label, ms in results:
            floor = floors["floor (python+git)"] if label == "session-start" else \
                floors["floor (python+git status)"] if "nothing changed" in label else \
                floors["floor (python)"]
            print("   %-40s %6.2f ms  x%.2f" % (label, ms, ms / floor))
        for name, ms in measure_loading(python, repo).items():
            print("   %-40s %6.2f ms  (in-process, from the code cache)" % ("loading " + name, ms))

        print("\n4. context-budget disk_usage() over one worktree")
        entries, ms = measure_walk(python, repo)
        print("   %d entries in %.2f ms: %.2f µs per entry" % (entries, ms, ms * 1000.0 / entries))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
