"""bench/run.py still runs: one tiny fixture, one run, no timing assertions."""
import json
import subprocess
import sys

from conftest import HOOK_NAMES, ROOT


def test_benchmark_runs_in_smoke_mode(tmp_path):
    results = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--smoke", "--json", str(results),
         "--workdir", str(tmp_path / "fixtures")],
        capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    table = done.stdout.decode("utf-8")
    assert "| hook" in table and "targets met" in table
    data = json.loads(results.read_text(encoding="utf-8"))
    hooks = {row["hook"] for row in data["rows"]}
    for name in ("session-start.py", "context-budget.py", "stop-handoff.py"):  # the pruner runs in the start
        assert name[:-len(".py")] in hooks
    assert {"floor (python)", "floor (python+git status)", "floor (python+git)"} <= hooks
    for row in data["rows"]:
        assert row["runs"] == 1 and row["median_ms"] is not None, row
        if row["hook"] == "session-start":
            silent = row["case"].startswith("start-up only")  # no project: it exits at once
            assert row["exit_codes"] == [0] and (row["stdout_bytes_max"] == 0) == silent
    assert set(data["meta"]["hooks_sha256"]) == set(HOOK_NAMES)
