"""bench/team.py runs a small case, and its figures follow the rules of the two formats.

The stamped format rewrites the index's `Last dream` line at every save, so of two branches that
each saved, the second to land conflicts in every mode where git merges without the union
attribute. The team format writes no line every save writes: its branches land without a
conflict wherever git honours the committed union attribute, and on a forge the only conflicts
left are the merges of a branch that changed a fact another merged branch changed too. In every
mode the team format loses no fact and leaves every memory file reached by exactly one pointer."""
import json
import subprocess
import sys

from conftest import ROOT


def run_bench(tmp_path, *args):
    out = tmp_path / "team.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "team.py"), "--json", str(out)]
                          + list(args), capture_output=True, timeout=600, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return done.stdout.decode("utf-8"), json.loads(out.read_text(encoding="utf-8"))


def test_a_small_team_run_measures_both_formats_in_every_mode(tmp_path):
    table, data = run_bench(tmp_path, "-k", "2", "-m", "2", "--orders", "1",
                            "--formats", "stamped,team", "--strict")  # exit 0: no team defect
    assert "| format" in table and "| stamped " in table and "| team " in table
    stamped, team = data["results"]["stamped"], data["results"]["team"]
    assert sorted(stamped) == sorted(team) == ["forge", "merge", "rebase", "squash"]
    for mode, figures in stamped.items():
        assert figures["merges"] == 2 and figures["conflicted"] == 1, (mode, figures)
    for mode, figures in team.items():
        allowed = figures["same_fact"] if mode == "forge" else 0
        assert figures["conflicted"] == allowed, (mode, figures)
        for defect in ("lost", "unreached", "twice", "dead", "stamps", "titles", "markers"):
            assert figures[defect] == 0, (mode, defect, figures)
        assert figures["found"] >= figures["doubled"], (mode, figures)
        assert figures["facts"] > 0


def test_an_unknown_format_or_mode_is_one_line_and_exit_2(tmp_path):
    for option in (["--formats", "nope"], ["--modes", "octopus"]):
        done = subprocess.run([sys.executable, str(ROOT / "bench" / "team.py")] + option,
                              capture_output=True, timeout=60)
        assert done.returncode == 2
        assert b"unknown" in done.stderr and b"Traceback" not in done.stderr
