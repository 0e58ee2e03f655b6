"""context-budget.py: silent while every budget holds, specific when one does not."""
import os
import struct
import subprocess
import sys

import pytest

from conftest import MIB, InstalledHooks, clean_environment, load_hook, run_hook, set_age, \
    write_bytes, write_lines


def budget(project, **env):
    done = run_hook("context-budget.py", project, env=env)
    assert done.returncode == 0
    assert done.stderr == b""
    return done.stdout.decode("utf-8")


def encoded(path):
    """The harness's folder name, by its own rule as its JavaScript states it:
    `p.replace(/[^a-zA-Z0-9]/g, "-")` works on UTF-16 code units; a result over 200 characters
    is `slice(0, 200) + "-" + Math.abs(hash(p)).toString(36)`, where the hash folds each unit in
    as `h = (h << 5) - h + unit | 0`."""
    text = str(path)
    units = struct.unpack("<%dH" % (len(text.encode("utf-16-le")) // 2), text.encode("utf-16-le"))
    name = "".join(chr(u) if chr(u) in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789" else "-" for u in units)
    if len(name) <= 200:
        return name
    folded = 0
    for unit in units:
        folded = struct.unpack("<i", struct.pack("<I", ((folded << 5) - folded + unit) % 2 ** 32))[0]
    number, digits = abs(folded), []
    while True:
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[number % 36])
        number //= 36
        if number == 0:
            break
    return name[:200] + "-" + "".join(reversed(digits))


def test_silent_when_every_budget_holds(project):
    assert budget(project) == ""


def test_index_of_80_lines_is_silent(project):
    write_lines(project / "memory" / "MEMORY.md", 80)
    assert budget(project) == ""


def test_index_of_81_lines_fires(project):
    write_lines(project / "memory" / "MEMORY.md", 81)
    report = budget(project)
    assert "## Context budget — over on 1 point(s)" in report
    assert "memory/MEMORY.md is 81 lines (budget 80)" in report
    assert "/dream" in report


def test_index_counts_newlines_like_wc(project):
    index = project / "memory" / "MEMORY.md"
    index.write_text("\n".join("- line %d" % i for i in range(81)), encoding="utf-8")
    assert budget(project) == ""  # 81 lines of text, 80 newline characters


def test_index_report_names_the_measure(project):
    write_lines(project / "memory" / "MEMORY.md", 120)
    assert "memory/MEMORY.md is 120 lines (budget 80)" in budget(project)


def test_index_that_is_not_utf8_is_still_measured(project):
    (project / "memory" / "MEMORY.md").write_bytes(b"\xff\xfe\x00bad\n" * 90)
    assert "is 90 lines (budget 80)" in budget(project)


def test_index_path_can_be_overridden(project):
    write_lines(project / "notes" / "INDEX.md", 85)
    assert "notes/INDEX.md is 85 lines" in budget(project, MCP_MEM_LINES="80",
                                                   MCP_MEMORY_INDEX="notes/INDEX.md")


@pytest.mark.parametrize("kind", ["dangling-link", "link-loop"])
def test_index_that_leads_nowhere_is_skipped(project, kind):
    index = project / "memory" / "MEMORY.md"
    index.unlink()
    if kind == "dangling-link":
        index.symlink_to(project / "nowhere.md")
    else:
        index.symlink_to(index)
    assert budget(project) == ""


@pytest.mark.parametrize("kind", ["directory", "fifo"])
def test_index_that_is_not_a_regular_file_is_refused_in_one_line(project, kind):
    index = project / "memory" / "MEMORY.md"
    index.unlink()
    if kind == "directory":
        index.mkdir()
    else:
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        os.mkfifo(str(index))
    assert budget(project).splitlines() == [
        "## Not read — 1 refused",
        "- memory/MEMORY.md was not read: it is not a regular file (a FIFO, a device, a socket "
        "or a folder)."]


def test_claude_md_at_9215_bytes_is_silent(project):
    write_bytes(project / "CLAUDE.md", 9215)
    assert budget(project) == ""


def test_claude_md_at_9216_bytes_fires(project):
    write_bytes(project / "CLAUDE.md", 9216)
    report = budget(project)
    assert "CLAUDE.md is 9 KB (budget 8 KB)" in report
    assert "skill" in report


def test_claude_md_under_dot_claude_is_measured(project):
    (project / "CLAUDE.md").unlink()
    write_bytes(project / ".claude" / "CLAUDE.md", 20000)
    assert ".claude/CLAUDE.md is 19 KB (budget 8 KB)" in budget(project)


def test_instruction_file_path_can_be_overridden(project):
    write_bytes(project / "docs" / "AGENT.md", 9216)
    assert "docs/AGENT.md is 9 KB" in budget(project, MCP_CLAUDE_MD="docs/AGENT.md")


@pytest.fixture
def transcripts(project, tmp_path):
    """The harness's transcript folder for this project: an old, large file and a live one."""
    folder = tmp_path / "projects" / encoded(project)
    write_bytes(folder / "old.jsonl", 5 * MIB)
    set_age(folder / "old.jsonl", 400 * 86400)
    write_bytes(folder / "live.jsonl", 2 * MIB)
    return folder


def test_live_transcript_over_budget_fires(project, transcripts):
    report = budget(project, MCP_PROJECTS_DIR=str(transcripts.parent), MCP_TRANSCRIPT_MB="1")
    assert "live transcript is 2 MB (budget 1 MB)" in report
    assert "/handoff, then /clear" in report


def test_only_the_newest_transcript_counts(project, transcripts):
    (transcripts / "live.jsonl").write_bytes(b"x" * 100)
    assert budget(project, MCP_PROJECTS_DIR=str(transcripts.parent), MCP_TRANSCRIPT_MB="1") == ""


def test_transcript_budget_boundary_is_whole_mebibytes(project, tmp_path):
    live = tmp_path / "t" / "live.jsonl"
    write_bytes(live, MIB)
    assert budget(project, MCP_TRANSCRIPT_PATH=str(live), MCP_TRANSCRIPT_MB="1") == ""
    write_bytes(live, MIB + 1)
    assert "live transcript is 2 MB" in budget(project, MCP_TRANSCRIPT_PATH=str(live),
                                               MCP_TRANSCRIPT_MB="1")


def test_transcript_of_a_path_with_dot_underscore_and_space(tmp_path):
    project = tmp_path / "enc test.dir_x"
    write_lines(project / "memory" / "MEMORY.md", 2)
    write_bytes(tmp_path / "projects" / encoded(project) / "live.jsonl", 2 * MIB)
    report = budget(project, MCP_PROJECTS_DIR=str(tmp_path / "projects"), MCP_TRANSCRIPT_MB="1")
    assert "live transcript is 2 MB" in report


def test_claude_config_dir_locates_the_transcripts(project, tmp_path):
    write_bytes(tmp_path / "config" / "projects" / encoded(project) / "s.jsonl", 2 * MIB)
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "config"), "MCP_TRANSCRIPT_MB": "1"}
    done = run_hook("context-budget.py", project, env=env)
    assert b"live transcript is 2 MB" not in done.stdout  # MCP_PROJECTS_DIR still wins
    env["MCP_PROJECTS_DIR"] = ""
    done = run_hook("context-budget.py", project, env=env)
    assert b"live transcript is 2 MB" in done.stdout


def test_named_transcript_is_measured(project, transcripts):
    report = budget(project, MCP_TRANSCRIPT_PATH=str(transcripts / "live.jsonl"),
                    MCP_TRANSCRIPT_MB="1")
    assert "live transcript is 2 MB" in report


def test_named_transcript_that_does_not_exist_yet_is_silent(project, transcripts):
    report = budget(project, MCP_PROJECTS_DIR=str(transcripts.parent), MCP_TRANSCRIPT_MB="1",
                    MCP_TRANSCRIPT_PATH=str(transcripts / "not-yet.jsonl"))
    assert report == ""


def opened_by_the_hook(project, env):
    """(output, every path the hook opened), run as the harness runs it, with an audit hook."""
    driver = ("import runpy, sys\n"
              "opened = []\n"
              "sys.addaudithook(lambda event, args: opened.append(str(args[0])) "
              "if event == 'open' else None)\n"
              "try:\n    runpy.run_path(sys.argv[1], run_name='__main__')\n"
              "except SystemExit:\n    pass\n"
              "sys.stderr.write('\\n'.join(opened))\n")
    environment = clean_environment(project.parent / "home")
    environment.update(env, CLAUDE_PROJECT_DIR=str(project))
    hook = InstalledHooks.folder() / "context-budget.py"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", driver, str(hook)],
                          capture_output=True, cwd=str(project), env=environment, timeout=30)
    return done.stdout.decode("utf-8"), done.stderr.decode("utf-8").split("\n")


def test_sparse_two_gibibyte_transcript_is_measured_by_size_without_opening_it(project, tmp_path):
    live = tmp_path / "big.jsonl"
    with open(str(live), "wb") as stream:
        stream.truncate(2 * 1024 * MIB)
    output, opened = opened_by_the_hook(project, {"MCP_TRANSCRIPT_PATH": str(live),
                                                  "MCP_PROJECTS_DIR": str(tmp_path / "none")})
    assert "live transcript is 2048 MB" in output
    assert str(project / "memory" / "MEMORY.md") in opened  # the audit sees what the hook opens
    assert str(live) not in opened


@pytest.mark.parametrize("name", ["proj \U0001F9E0 brain", "caf\u00e9 \U0001F600\U0001F600"])
def test_transcript_folder_of_a_path_outside_the_bmp_follows_the_harness(tmp_path, name):
    project = tmp_path / name
    write_lines(project / "memory" / "MEMORY.md", 2)
    assert "--" in encoded(project)[-len(name) * 2:]  # the emoji is two units, so two dashes
    write_bytes(tmp_path / "projects" / encoded(project) / "live.jsonl", 2 * MIB)
    report = budget(project, MCP_PROJECTS_DIR=str(tmp_path / "projects"), MCP_TRANSCRIPT_MB="1")
    assert "live transcript is 2 MB" in report


def long_project(tmp_path, tail):
    return tmp_path / ("x" * 120) / ("y" * 120) / tail


def test_a_long_path_finds_its_own_hashed_folder(tmp_path):
    project = long_project(tmp_path, "mine")
    write_lines(project / "memory" / "MEMORY.md", 2)
    assert len(encoded(project)) > 200
    write_bytes(tmp_path / "projects" / encoded(project) / "live.jsonl", 2 * MIB)
    report = budget(project, MCP_PROJECTS_DIR=str(tmp_path / "projects"), MCP_TRANSCRIPT_MB="1")
    assert "live transcript is 2 MB" in report


def test_a_long_path_never_takes_a_sibling_projects_folder(tmp_path):
    project = long_project(tmp_path, "mine")
    sibling = long_project(tmp_path, "theirs")
    write_lines(project / "memory" / "MEMORY.md", 2)
    assert encoded(project)[:200] == encoded(sibling)[:200]
    write_bytes(tmp_path / "projects" / encoded(sibling) / "live.jsonl", 2 * MIB)
    assert budget(project, MCP_PROJECTS_DIR=str(tmp_path / "projects"), MCP_TRANSCRIPT_MB="1") == ""


def test_worktrees_over_budget_fire(project):
    write_bytes(project / ".claude" / "worktrees" / "agent-a" / "blob", MIB + MIB // 2)
    report = budget(project, MCP_WORKTREE_MB="1")
    assert ".claude/worktrees is 2 MB (budget 1 MB)" in report
    assert "git worktree remove" in report


def test_worktrees_under_budget_are_silent(project):
    write_bytes(project / ".claude" / "worktrees" / "agent-a" / "blob", 1000)
    assert budget(project, MCP_WORKTREE_MB="1") == ""


def test_worktree_dir_can_be_overridden(project):
    write_bytes(project / "scratch" / "agent-a" / "blob", 2 * MIB)
    assert "scratch is 3 MB" in budget(project, MCP_WORKTREE_MB="1", MCP_WORKTREE_DIR="scratch")


def test_hard_links_in_worktrees_count_once(project):
    blob = write_bytes(project / ".claude" / "worktrees" / "a" / "blob", 600 * 1024)
    os.link(str(blob), str(project / ".claude" / "worktrees" / "a" / "same-blob"))
    assert budget(project, MCP_WORKTREE_MB="1") == ""


@pytest.mark.parametrize("variable, fixture_text", [
    ("MCP_MEM_LINES", "(budget 80)"),
    ("MCP_CLAUDE_KB", "(budget 8 KB)"),
])
@pytest.mark.parametrize("value", ["eighty", "", "-5", "8.5", "١٢"])
def test_non_numeric_override_falls_back_to_the_default(project, variable, fixture_text, value):
    write_lines(project / "memory" / "MEMORY.md", 120)
    write_bytes(project / "CLAUDE.md", 20000)
    assert fixture_text in budget(project, **{variable: value})


def test_two_broken_budgets_are_two_points(project):
    write_lines(project / "memory" / "MEMORY.md", 90)
    write_bytes(project / "CLAUDE.md", 20000)
    report = budget(project)
    assert "over on 2 point(s)" in report
    assert len([line for line in report.splitlines() if line.startswith("- ")]) == 2


def test_missing_project_directory_exits_zero(tmp_path):
    assert budget(tmp_path / "does-not-exist") == ""


def test_folder_that_is_no_project_is_silent(plain_dir):
    assert budget(plain_dir) == ""


def test_reads_no_stdin_and_never_waits_for_it(project):
    """stdin stays open and empty, as a terminal's would: a hook that read it would wait."""
    environment = clean_environment(project.parent / "home")
    environment["CLAUDE_PROJECT_DIR"] = str(project)
    installed = InstalledHooks.folder() / "context-budget.py"
    hook = subprocess.Popen([sys.executable, "-I", "-S", str(installed)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=environment, cwd=str(project))
    try:
        hook.stdin.write(b"{not json")
        hook.stdin.flush()
        assert hook.wait(timeout=20) == 0  # exits with its stdin still open
        assert hook.stdout.read() == b"" and hook.stderr.read() == b""
    finally:
        if hook.poll() is None:
            hook.kill()
        hook.wait()
        for stream in (hook.stdin, hook.stdout, hook.stderr):
            stream.close()


# --- what the injection and the defect checks see of an index --------------------------------

def test_a_comment_marker_inside_a_fenced_block_hides_nothing(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n"
        "```text\n"
        "strip <!-- markers like this one\n"
        "```\n"
        "- [Gone one](gone-one.md) — after the fence\n"
        "- [Gone two](gone-two.md) — before the arrow\n"
        "nginx --> app\n", encoding="utf-8")
    report = budget(project)
    assert "points to 2 file(s) that do not exist" in report
    assert "opens an HTML comment" not in report


def test_an_empty_comment_hides_nothing_after_it(project):
    for empty in ("<!-->", "<!--->"):
        (project / "memory" / "MEMORY.md").write_text(
            "# Index %s\n- [Gone](gone.md) — the next line\n" % empty, encoding="utf-8")
        report = budget(project)
        assert "line 2 `gone.md`" in report and "opens an HTML comment" not in report


def test_a_four_backtick_fence_is_not_closed_by_three(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n````markdown\n```\n<!-- inside\n- [Example](example.md)\n````\n"
        "- [Topic](topic.md) — real\n", encoding="utf-8")
    assert budget(project) == ""


def test_session_start_shows_pointer_lines_after_a_fenced_comment_marker(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n```\nuse <!-- to start a comment\n```\n"
        "- [Topic](topic.md) — shown\n<!-->\n- [Topic again](topic.md) — shown too\n"
        "proxy --> app\n", encoding="utf-8")
    done = run_hook("session-start.py", project, stdin={"session_id": "s1", "source": "startup"})
    text = done.stdout.decode("utf-8")
    assert "- [Topic](topic.md) — shown" in text and "- [Topic again](topic.md) — shown too" in text


def test_a_fifo_as_a_worktrees_commondir_does_not_hang(project, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    env = clean_environment(tmp_path / "home")
    subprocess.run(["git", "-C", str(project), "commit", "-q", "--allow-empty", "-m", "start"],
                   check=True, env=env)
    linked = tmp_path / "linked"
    subprocess.run(["git", "-C", str(project), "worktree", "add", "-q", str(linked)],
                   check=True, env=env)
    gitdir = (linked / ".git").read_text().split(":", 1)[1].strip()
    commondir = os.path.join(gitdir, "commondir")
    os.remove(commondir)
    os.mkfifo(commondir)
    write_lines(linked / "memory" / "MEMORY.md", 2)
    done = run_hook("context-budget.py", linked, timeout=20)  # a read of the FIFO would block
    assert done.returncode == 0


def test_a_dead_pointer_is_a_defect_under_its_own_heading_not_a_budget_point(project):
    lines = ["- [Gone](gone.md) — a dead link"] + ["- [Topic](topic.md) — the pointer"] * 80
    (project / "memory" / "MEMORY.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = budget(project, MCP_MEM_LINES="90")
    assert report.startswith("## Memory defects — 1 found\n- memory/MEMORY.md points to 1 file(s)")
    assert "Context budget" not in report
    report = budget(project)  # 81 lines: one budget point, and the defect apart from it
    assert report.split("\n")[0] == "## Context budget — over on 1 point(s)"
    assert "\n## Memory defects — 1 found\n- memory/MEMORY.md points to 1 file(s)" in report


def test_python_interface_matches_the_command(project):
    write_lines(project / "memory" / "MEMORY.md", 81)
    module = load_hook("context-budget.py")
    points = module.budget_points(str(project), {"MCP_PROJECTS_DIR": "/nonexistent"})
    assert len(points) == 1 and points[0].startswith("- memory/MEMORY.md is 81 lines")
    assert module.format_report(points) == budget(project)
    assert module.format_report([]) == "" and module.memory_defects(str(project), {}) == []


def test_worktree_walk_stops_once_over_budget(project):
    for name in ("a", "b", "c"):
        write_bytes(project / ".claude" / "worktrees" / name / "blob", 2 * MIB)
    report = budget(project, MCP_WORKTREE_MB="1")
    assert ".claude/worktrees is over 1 MB (budget 1 MB)" in report
