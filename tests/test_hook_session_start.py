"""session-start.py: the read path injects what the next turn needs, within the harness's limit."""
import json
import os
import shutil

import pytest

from conftest import (HOOKS, MIB, age_worktree, git, harness_length, load_hook, run_hook, set_age,
                      write_bytes, write_lines)

LIMIT = 10000


def inject(project, stdin=None, **env):
    payload = {"session_id": "s1", "source": "startup", "cwd": str(project),
               "hook_event_name": "SessionStart", "transcript_path": "/nonexistent/t.jsonl"}
    done = run_hook("session-start.py", project, stdin=payload if stdin is None else stdin,
                    env=env)
    assert done.returncode == 0
    assert done.stderr == b""
    text = done.stdout.decode("utf-8")
    assert harness_length(text) <= LIMIT
    return text


@pytest.fixture
def project_with_history(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# Index\n"
        "<!-- Session 41: private history\n"
        "more history -->\n"
        "- [Topic](topic.md) — the pointer\n", encoding="utf-8")
    state = project / ".claude" / "session-state.md"
    state.write_text("## Handoff: 2026-01-01 09:00\nWorking on X\n", encoding="utf-8")
    set_age(state, 400 * 86400)
    return project


def test_injects_the_memory_index(project_with_history):
    assert "- [Topic](topic.md) — the pointer" in inject(project_with_history)


def test_strips_comment_history(project_with_history):
    text = inject(project_with_history)
    assert "private history" not in text and "more history" not in text


def test_injects_the_last_handoff(project_with_history):
    assert "Working on X" in inject(project_with_history)


def test_warns_when_the_handoff_is_old(project_with_history):
    assert "400 days old" in inject(project_with_history)


def test_handoff_of_just_under_two_days_is_not_flagged(project_with_history):
    set_age(project_with_history / ".claude" / "session-state.md", 2 * 86400 - 120)
    assert "days old" not in inject(project_with_history)


def test_handoff_of_two_days_is_flagged(project_with_history):
    set_age(project_with_history / ".claude" / "session-state.md", 2 * 86400 + 120)
    assert "2 days old" in inject(project_with_history)


def test_handoff_excerpt_is_forty_lines(project):
    write_lines(project / ".claude" / "session-state.md", 60, "state line {i}")
    text = inject(project)
    assert "state line 39" in text and "state line 40" not in text


def test_asks_for_catchup(project_with_history):
    assert "/catchup" in inject(project_with_history)


def test_shows_recent_commits_and_status(project):
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    text = inject(project)
    assert "## Git" in text and "protocol files" in text and " M README.md" in text


def test_status_is_cut_at_fifteen_lines(project):
    for i in range(20):
        (project / ("new-%02d.txt" % i)).write_text("x", encoding="utf-8")
    text = inject(project)
    assert "new-14.txt" in text and "new-15.txt" not in text
    assert "and 5 more changed paths" in text


def test_writes_the_baseline_for_the_stop_hook(project):
    inject(project)
    baseline = project / ".claude" / "hooks" / ".session-baseline.s1"
    assert baseline.is_file() and baseline.stat().st_size > 0


def test_no_budget_section_when_healthy(project_with_history):
    assert "Context budget" not in inject(project_with_history)


def test_budget_report_comes_first_with_the_instruction(project_with_history):
    write_lines(project_with_history / "memory" / "MEMORY.md", 100)
    text = inject(project_with_history)
    assert "over on 1 point(s)" in text
    assert "in one line before the first answer" in text
    assert text.index("Context budget") < text.index("## Git")


def test_measures_the_transcript_named_on_stdin(project, tmp_path):
    live = write_bytes(tmp_path / "live-from-stdin.jsonl", 2 * MIB)
    text = inject(project, stdin={"session_id": "s1", "transcript_path": str(live),
                                  "cwd": str(project), "hook_event_name": "SessionStart",
                                  "source": "resume"}, MCP_TRANSCRIPT_MB="1")
    assert "live transcript is 2 MB" in text


def test_transcript_path_with_escapes_is_decoded(project, tmp_path):
    folder = tmp_path / 'odd "dir" é'
    live = write_bytes(folder / "t.jsonl", 2 * MIB)
    raw = json.dumps({"session_id": "s1", "transcript_path": str(live)}, ensure_ascii=True)
    assert "\\u00e9" in raw and '\\"' in raw
    assert "live transcript is 2 MB" in inject(project, stdin=raw.encode(), MCP_TRANSCRIPT_MB="1")


def test_fresh_startup_transcript_is_not_replaced_by_an_old_one(project, tmp_path):
    encoded = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(project))
    write_bytes(tmp_path / "projects" / encoded / "old.jsonl", 2 * MIB)
    text = inject(project, stdin={"session_id": "s1", "source": "startup",
                                  "transcript_path": str(tmp_path / "projects" / "new.jsonl")},
                  MCP_PROJECTS_DIR=str(tmp_path / "projects"), MCP_TRANSCRIPT_MB="1")
    assert "Context budget" not in text


def test_outside_git_injects_memory_without_git(plain_dir):
    write_lines(plain_dir / "memory" / "MEMORY.md", 3, "- [T{i}](t{i}.md) — pointer {i}")
    text = inject(plain_dir)
    assert "## Git" not in text and "pointer 2" in text
    assert not (plain_dir / ".claude").exists()


def test_missing_project_directory_is_silent(tmp_path):
    done = run_hook("session-start.py", tmp_path / "gone", stdin={})
    assert done.returncode == 0 and done.stdout == b"" and done.stderr == b""


def test_runs_without_isolated_mode_too(project_with_history):
    done = run_hook("session-start.py", project_with_history, stdin={"session_id": "s1"},
                    isolated=False)
    assert done.returncode == 0 and b"the pointer" in done.stdout


def test_shows_what_was_pruned(project):
    path = project / ".claude" / "worktrees" / "finished"
    git(project, "worktree", "add", "-q", "-b", "finished", str(path))
    age_worktree(path)
    text = inject(project)
    assert "pruned 1 merged agent worktree(s): finished" in text
    assert not path.exists()


def test_keeps_the_worktree_the_session_runs_in(project):
    path = project / ".claude" / "worktrees" / "current"
    git(project, "worktree", "add", "-q", "-b", "current", str(path))
    age_worktree(path)
    text = inject(project, stdin={"session_id": "s1", "cwd": str(path)})
    assert "pruned" not in text and path.is_dir()


# --- comment stripping --------------------------------------------------------------------

def index_as_injected(project, index_text):
    (project / "memory" / "MEMORY.md").write_text(index_text, encoding="utf-8")
    text = inject(project)
    start = text.index("## Memory index")
    return text[start:].split("\n\n")[0].split("\n")[1:]


def test_inline_comment_keeps_its_pointer(project):
    lines = index_as_injected(project, "- [A](a.md) — kept <!-- note to self -->\n")
    assert lines == ["- [A](a.md) — kept"]


def test_lines_after_a_closed_block_are_kept(project):
    lines = index_as_injected(project, "# I\n<!-- one\ntwo\nthree -->\n- [B](b.md) — after\n")
    assert lines == ["# I", "- [B](b.md) — after"]


def test_unclosed_comment_does_not_hide_the_rest(project):
    lines = index_as_injected(project, "# I\n- [C](c.md) — uses <!-- oops\n- [D](d.md) — still seen\n")
    assert "- [D](d.md) — still seen" in lines


def test_comment_marker_inside_a_code_span_is_text(project):
    lines = index_as_injected(project, "- [E](e.md) — strip `<!--` markers\n- [F](f.md) — next\n")
    assert lines == ["- [E](e.md) — strip `<!--` markers", "- [F](f.md) — next"]


def test_stray_closing_marker_is_text(project):
    assert index_as_injected(project, "- [G](g.md) — arrow --> here\n") == [
        "- [G](g.md) — arrow --> here"]


def test_index_file_is_not_changed(project):
    original = "# I\n<!-- history -->\n- [H](h.md) — x\n"
    (project / "memory" / "MEMORY.md").write_text(original, encoding="utf-8")
    inject(project)
    assert (project / "memory" / "MEMORY.md").read_text(encoding="utf-8") == original


def test_non_utf8_index_is_injected_without_crashing(project):
    (project / "memory" / "MEMORY.md").write_bytes(b"# I\n- [X](x.md) \xff\xfe bytes\n")
    assert "- [X](x.md)" in inject(project)


# --- the 10,000-character limit -----------------------------------------------------------

def test_large_index_is_cut_and_the_cut_is_reported(project_with_history):
    write_lines(project_with_history / "memory" / "MEMORY.md", 2000, "- [Topic {i}](topic.md) — x")
    text = inject(project_with_history)
    assert harness_length(text) <= LIMIT
    assert "over on 2 point(s)" in text  # the 2,000-line index, and the cut itself
    assert "read memory/MEMORY.md in full" in text
    assert "Working on X" in text  # the handoff keeps its room
    assert "/catchup" in text
    assert text.index("Context budget") < text.index("## Memory index")


def test_characters_beyond_the_basic_plane_count_twice(project):
    write_lines(project / "memory" / "MEMORY.md", 60, "- [T{i}](t.md) — " + "😀" * 100)
    text = inject(project)
    assert harness_length(text) <= LIMIT < len(text) * 2


def test_injection_of_exactly_the_limit_is_not_cut(project):
    index = project / "memory" / "MEMORY.md"
    index.write_text("# I\n- [A](topic.md) — x\n", encoding="utf-8")
    natural = harness_length(inject(project))
    index.write_text("# I\n- [A](topic.md) — x" + "y" * (LIMIT - natural) + "\n", encoding="utf-8")
    at_limit = inject(project)
    assert harness_length(at_limit) == LIMIT and "Context budget" not in at_limit
    index.write_text("# I\n- [A](topic.md) — x" + "y" * (LIMIT - natural + 1) + "\n", encoding="utf-8")
    over = inject(project)
    assert "over on 1 point(s)" in over and "in full" in over


def test_a_handoff_that_fills_the_room_still_leaves_every_notice_and_the_close(project):
    state = project / ".claude" / "session-state.md"
    state.write_text("".join("handoff line %02d %s\n" % (n, "h" * 225) for n in range(45)),
                     encoding="utf-8")
    write_lines(project / "memory" / "MEMORY.md", 60, "- [Topic {i}](topic.md) — x")
    text = inject(project)
    assert "read .claude/session-state.md in full]" in text
    assert "read memory/MEMORY.md in full]" in text
    assert text.rstrip("\n").endswith("</project-memory>") and "/catchup" in text
    assert "is over the harness's limit of 10000 characters" in text


def test_an_index_far_over_the_limit_is_reported_without_a_wrong_size(project):
    write_lines(project / "memory" / "MEMORY.md", 1200, "- [Topic {i}](topic.md) — " + "z" * 100)
    text = inject(project)
    assert "is over the harness's limit of 10000 characters" in text
    assert "would be" not in text


# --- what it writes -----------------------------------------------------------------------

def test_planted_symlink_baseline_is_replaced_not_followed(project, tmp_path):
    victim = tmp_path / "dotfile"
    victim.write_text("precious\n", encoding="utf-8")
    baseline = project / ".claude" / "hooks" / ".session-baseline.s1"
    baseline.symlink_to(victim)
    inject(project)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert baseline.is_file() and not baseline.is_symlink()


def test_an_old_baseline_of_a_session_still_writing_its_transcript_is_kept(project, tmp_path):
    hooks = project / ".claude" / "hooks"
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    (transcripts / "long-runner.jsonl").write_text("{}\n", encoding="utf-8")
    (transcripts / "ended.jsonl").write_text("{}\n", encoding="utf-8")
    set_age(transcripts / "ended.jsonl", 8 * 86400)
    for name in ("long-runner", "ended"):
        (hooks / (".session-baseline." + name)).write_text("head x\n", encoding="utf-8")
        set_age(hooks / (".session-baseline." + name), 8 * 86400)
    inject(project, stdin={"session_id": "s1", "source": "startup",
                           "transcript_path": str(transcripts / "s1.jsonl")})
    assert (hooks / ".session-baseline.long-runner").exists()
    assert not (hooks / ".session-baseline.ended").exists()


def test_only_files_shaped_like_baselines_are_ever_cleaned_up(project):
    claude = project / ".claude"
    keep = {"settings.json": '{"hooks": {}}\n', "settings.local.json": "{}\n",
            "settings.a-b": "not a state\n", "settings.x.1.tmp": "partial\n", "settings.empty": ""}
    for name, text in keep.items():
        (claude / name).write_text(text, encoding="utf-8")
        set_age(claude / name, 30 * 86400)
    (claude / "settings.old-session").write_text("head x\n", encoding="utf-8")
    (claude / "settings.old-session.77.tmp").write_bytes(b"")
    (claude / "settings.4242.tmp").write_bytes(b"head x\n")  # the shared baseline's leftover
    for name in ("settings.old-session", "settings.old-session.77.tmp", "settings.4242.tmp"):
        set_age(claude / name, 30 * 86400)
    inject(project, MCP_BASELINE=".claude/settings")
    left = sorted(p.name for p in claude.iterdir() if p.name.startswith("settings"))
    assert left == sorted(list(keep) + ["settings.s1"])


def test_stale_baselines_are_cleaned_up(project):
    hooks = project / ".claude" / "hooks"
    old = hooks / ".session-baseline.old-session"
    recent = hooks / ".session-baseline.recent-session"
    for path in (old, recent):
        path.write_text("head x\n", encoding="utf-8")
    set_age(old, 8 * 86400)
    set_age(recent, 6 * 86400)
    inject(project)
    assert not old.exists() and recent.exists()


def test_leaves_no_temporary_files(project):
    inject(project)
    assert sorted(p.name for p in (project / ".claude" / "hooks").iterdir()) == [
        ".session-baseline.s1"]


def test_pycache_symlink_is_never_written_through(project, tmp_path):
    hooks = project / ".claude" / "hooks"
    for name in ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py"):
        shutil.copy(str(HOOKS / name), str(hooks / name))
    trap = tmp_path / "trap"
    trap.mkdir()
    (hooks / "__pycache__").symlink_to(trap, target_is_directory=True)
    done = run_hook("session-start.py", project, stdin={"session_id": "s1"}, hooks_dir=hooks)
    assert done.returncode == 0 and b"the pointer" in done.stdout
    assert os.listdir(str(trap)) == []


def test_a_missing_sibling_costs_only_its_part(project, tmp_path):
    hooks = tmp_path / "partial-hooks"
    hooks.mkdir()
    shutil.copy(str(HOOKS / "session-start.py"), str(hooks / "session-start.py"))
    write_lines(project / "memory" / "MEMORY.md", 100)
    done = run_hook("session-start.py", project, stdin={"session_id": "s1"}, hooks_dir=hooks)
    assert done.returncode == 0
    assert b"line 99" in done.stdout and b"/catchup" in done.stdout


def test_preview_shows_the_injection_without_writing(project_with_history):
    module = load_hook("session-start.py")
    before = sorted(p.name for p in (project_with_history / ".claude" / "hooks").iterdir())
    text = module.preview_injection(str(project_with_history))
    assert "- [Topic](topic.md) — the pointer" in text and "## Git" in text
    after = sorted(p.name for p in (project_with_history / ".claude" / "hooks").iterdir())
    assert before == after == []


def test_control_characters_in_the_index_are_shown_as_question_marks(project):
    (project / "memory" / "MEMORY.md").write_text("- [A](topic.md) — bell\x07 and escape\x1b[31m\n",
                                                   encoding="utf-8")
    text = inject(project)
    assert "- [A](topic.md) — bell? and escape?[31m" in text and "\x07" not in text


def test_a_cut_uses_all_the_room_there_is(project_with_history):
    write_lines(project_with_history / "memory" / "MEMORY.md", 2000, "- [Topic {i}](t{i}.md) — x")
    text = inject(project_with_history)
    assert LIMIT - 40 < harness_length(text) <= LIMIT


def test_length_counts_characters_outside_the_bmp_twice():
    module = load_hook("session-start.py")
    for text in ("plain ascii", "é → ü", "emoji 😀 and 𝄞 twice", "lone \udc80 surrogate", ""):
        assert module.harness_length(text) == len(text.encode("utf-16-le", "surrogatepass")) // 2


def test_siblings_run_from_bytecode_cached_beside_them(project):
    hooks = project / ".claude" / "hooks"
    for name in ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py"):
        shutil.copy(str(HOOKS / name), str(hooks / name))
    done = run_hook("session-start.py", project, stdin={"session_id": "s1"}, hooks_dir=hooks)
    assert done.returncode == 0 and b"## Git" in done.stdout
    cached = sorted(name.split(".")[0] for name in os.listdir(str(hooks / "__pycache__")))
    assert cached == ["context-budget", "stop-handoff"]  # no worktree folder: no pruner loaded


def test_a_pycache_that_resolves_elsewhere_is_detected(tmp_path):
    module = load_hook("session-start.py")
    assert not module.leads_elsewhere(str(HOOKS / "no-such-folder"))
    assert not module.leads_elsewhere(str(HOOKS))
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "__pycache__").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert module.leads_elsewhere(str(tmp_path / "__pycache__"))
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "linked").symlink_to(tmp_path / "inside", target_is_directory=True)
    assert module.leads_elsewhere(str(tmp_path / "inside" / "linked"))
