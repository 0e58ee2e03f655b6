"""bench/team.py runs a small case, and its figures follow the rules of the two formats.

The stamped format rewrites the index's `Last dream` line at every save, so of two branches that
each saved, the second to land conflicts in every mode where git merges without the union
attribute. The team format writes no line every save writes: its branches land without a
conflict wherever git honours the committed union attribute, and on a forge the only conflicts
left are the merges of a branch that changed or deleted a fact another merged branch changed
too (or wrote a note under a name one did), each settled by the one local step of spec §4.5.6.
In every mode the team format loses no fact, brings no deleted fact back unmarked, leaves every
memory file reached by exactly one pointer, and every leftover it keeps is marked in the
session-start injection and named by --check, with no mark elsewhere. On the memory whose cited
files moved, every stale file is marked in the injection and no fresh one, and a second start on
the same state reads no memory file and runs no git of its own. In a memory of many notes in many
folders, every note is one step away from the injection."""
import json
import subprocess
import sys

from conftest import ROOT


def run_bench(tmp_path, *args):
    out = tmp_path / "team.json"
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "team.py"), "--json", str(out)]
                          + list(args), capture_output=True, timeout=900, cwd=str(tmp_path))
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return done.stdout.decode("utf-8"), json.loads(out.read_text(encoding="utf-8"))


def test_a_small_team_run_measures_both_formats_in_every_mode(tmp_path):
    # seeds 3 and 4 of 3 developers x 3 saves hold disagreements (the rules need some to judge)
    table, data = run_bench(tmp_path, "-k", "3", "-m", "3", "--orders", "1", "--seed", "3",
                            "--seeds", "2", "--formats", "stamped,team", "--strict",
                            "--notes", "600", "--folders", "60")
    assert "| format" in table and "| stamped " in table and "| team " in table
    stamped, team = data["results"]["stamped"], data["results"]["team"]
    assert sorted(stamped) == sorted(team) == ["forge", "merge", "rebase", "squash"]
    for mode, figures in stamped.items():
        assert figures["merges"] == 6 and figures["conflicted"] == 4, (mode, figures)
    for mode, figures in team.items():
        allowed = figures["disagree"] if mode == "forge" else 0
        assert figures["conflicted"] <= allowed, (mode, figures)
        assert figures["settled"] == (figures["conflicted"] if mode == "forge" else 0)
        for defect in ("lost", "back", "unreached", "twice", "dead", "stamps", "markers", "wrong"):
            assert figures[defect] == 0, (mode, defect, figures)
        assert figures["leftovers"] > 0 and figures["deleted"] > 0, (mode, figures)
        assert figures["marked"] == figures["named"] == figures["leftovers"], (mode, figures)
    assert team["forge"]["conflicted"] > 0
    stale = data["stale_citations"]
    assert stale["stale"] > 0 and stale["files"] > stale["stale"]
    assert stale["marked"] == stale["named"] == stale["stale"], stale
    for defect in ("marked_fresh", "named_fresh", "new_path_wrong", "reads_again", "git_again"):
        assert stale[defect] == 0, (defect, stale)
    many = data["many_notes"]
    assert many["notes"] == many["reachable"] == 600 and many["injection_bytes"] <= 10000, many


def test_an_unknown_format_or_mode_is_one_line_and_exit_2(tmp_path):
    for option in (["--formats", "nope"], ["--modes", "octopus"]):
        done = subprocess.run([sys.executable, str(ROOT / "bench" / "team.py")] + option,
                              capture_output=True, timeout=60)
        assert done.returncode == 2
        assert b"unknown" in done.stderr and b"Traceback" not in done.stderr
