"""session-start.py: the read path injects what the next turn needs, within the harness's limit."""
import json
import marshal
import os
import shutil
import stat
import sys

import pytest

from conftest import (HOOK_NAMES, HOOKS, MIB, age_worktree, git, harness_length, load_hook,
                      run_hook, set_age, write_bytes, write_lines)

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
    state = project / ".session-state.md"
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
    set_age(project_with_history / ".session-state.md", 2 * 86400 - 120)
    assert "days old" not in inject(project_with_history)


def test_handoff_of_two_days_is_flagged(project_with_history):
    set_age(project_with_history / ".session-state.md", 2 * 86400 + 120)
    assert "2 days old" in inject(project_with_history)


def test_handoff_excerpt_is_forty_lines(project):
    write_lines(project / ".session-state.md", 60, "state line {i}")
    text = inject(project)
    assert "state line 39" in text and "state line 40" not in text


def test_asks_for_catchup(project_with_history):
    assert "Start with /catchup" in inject(project_with_history)


def test_repeats_nothing_of_git_the_harness_sends_itself(project):
    (project / "README.md").write_text("changed\n", encoding="utf-8")
    text = inject(project)
    assert "## Git" not in text and "protocol files" not in text and "README.md" not in text


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
    assert text.index("Context budget") < text.index("## Memory index")


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
    assert "pointer 2" in text
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


def test_characters_beyond_the_basic_plane_count_as_their_bytes(project):
    write_lines(project / "memory" / "MEMORY.md", 60, "- [T{i}](t.md) — " + "😀" * 100)
    text = inject(project)
    assert len(text.encode("utf-16-le")) // 2 < harness_length(text) <= LIMIT < len(text) * 4


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
    state = project / ".session-state.md"
    state.write_text("".join("handoff line %02d %s\n" % (n, "h" * 225) for n in range(45)),
                     encoding="utf-8")
    write_lines(project / "memory" / "MEMORY.md", 60, "- [Topic {i}](topic.md) — x")
    text = inject(project)
    assert "read .session-state.md in full]" in text
    assert "read memory/MEMORY.md in full]" in text
    assert text.rstrip("\n").endswith("</project-memory>") and "/catchup" in text
    assert "is over the harness's limit of 10000 characters" in text


def test_an_index_far_over_the_limit_is_reported_without_a_wrong_size(project):
    write_lines(project / "memory" / "MEMORY.md", 1200, "- [Topic {i}](topic.md) — " + "z" * 100)
    text = inject(project)
    assert "is over the harness's limit of 10000 characters" in text
    assert "would be" not in text


# --- a cut never leaves a fenced code block open ------------------------------------------

def fence_open_at_each_line(text):
    """For each line of `text`, the fence (character, length) open after it, or None: read as
    CommonMark reads fences, written here apart from the hook: an opening line is at most three
    spaces, then three or more backticks or tildes (a backtick fence's info string holds no
    backtick); a closing line is the same character, at least as long, then only spaces."""
    states, open_fence = [], None
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        mark = stripped[:1]
        run = len(stripped) - len(stripped.lstrip(mark)) if mark in ("`", "~") else 0
        if indent <= 3 and run >= 3:
            rest = stripped[run:]
            if open_fence is None and not (mark == "`" and "`" in rest):
                open_fence = (mark, run)
            elif open_fence and mark == open_fence[0] and run >= open_fence[1] and not rest.strip():
                open_fence = None
        states.append(open_fence)
    return states


def lines_outside_fences(text):
    lines = text.split("\n")
    return [line for line, before in zip(lines, [None] + fence_open_at_each_line(text)[:-1])
            if before is None]


@pytest.mark.parametrize("opening", ["```", "```python", "~~~", "````", "  ~~~~~ text"])
def test_a_cut_inside_a_fenced_block_closes_it_before_the_notice(project_with_history, opening):
    mark = opening.strip()[0]
    fence = mark * (len(opening.strip()) - len(opening.strip().lstrip(mark)))
    body = "".join("    line %04d of the example %s\n" % (n, "c" * 40) for n in range(400))
    inner = "```\n" if len(fence) > 3 and fence[0] == "`" else ""  # a shorter run closes nothing
    (project_with_history / "memory" / "MEMORY.md").write_text(
        "# Index\n- [Topic](topic.md) — the pointer\n" + opening + "\n" + inner + body + fence
        + "\n- [After](after.md) — past the block\n", encoding="utf-8")
    text = inject(project_with_history)
    assert "read memory/MEMORY.md in full]" in text
    outside = lines_outside_fences(text)
    assert any("read memory/MEMORY.md in full]" in line for line in outside)
    assert "Working on X" in outside and "</project-memory>" in outside
    assert fence_open_at_each_line(text)[-1] is None


def test_an_index_whose_fence_never_closes_leaves_the_handoff_outside_it(project_with_history):
    (project_with_history / "memory" / "MEMORY.md").write_text(
        "# Index\n- [Topic](topic.md) — the pointer\n```\nan example never closed\n",
        encoding="utf-8")
    text = inject(project_with_history)
    outside = lines_outside_fences(text)
    assert "Working on X" in outside and "</project-memory>" in outside
    assert "an example never closed" in text


def test_a_fence_the_cut_leaves_whole_is_not_closed_twice(project_with_history):
    (project_with_history / "memory" / "MEMORY.md").write_text(
        "# Index\n```\nshort example\n```\n" + "".join(
            "- [Topic %d](topic.md) — %s\n" % (n, "x" * 60) for n in range(300)), encoding="utf-8")
    text = inject(project_with_history)
    assert "read memory/MEMORY.md in full]" in text
    assert text.count("\n```\n") == 2 and fence_open_at_each_line(text)[-1] is None


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


def test_without_the_git_file_the_injection_is_shown_without_pruning_or_baseline(project, tmp_path):
    hooks = tmp_path / "partial-hooks"
    hooks.mkdir()
    for name in HOOK_NAMES:
        if name != "prune-worktrees.py":
            shutil.copy(str(HOOKS / name), str(hooks / name))
    write_lines(project / "memory" / "MEMORY.md", 100)
    done = run_hook("session-start.py", project, stdin={"session_id": "s1"}, hooks_dir=hooks)
    assert done.returncode == 0 and done.stderr == b""
    assert b"line 99" in done.stdout and b"/catchup" in done.stdout
    assert not list((project / ".claude" / "hooks").glob(".session-baseline*"))


@pytest.mark.parametrize("missing", ["stop-handoff.py", "context-budget.py"])
def test_without_the_loader_or_the_reading_nothing_is_shown(project, tmp_path, missing):
    """stop-handoff.py holds the loader, and context-budget.py decides what may be shown:
    without either, nothing is, and the start goes on without a word."""
    hooks = tmp_path / "partial-hooks"
    hooks.mkdir()
    for name in HOOK_NAMES:
        if name != missing:
            shutil.copy(str(HOOKS / name), str(hooks / name))
    (project / ".session-state.md").write_text("the handoff\n", encoding="utf-8")
    done = run_hook("session-start.py", project, stdin={"session_id": "s1"}, hooks_dir=hooks)
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def test_preview_shows_the_injection_without_writing(project_with_history):
    module = load_hook("session-start.py")
    before = sorted(p.name for p in (project_with_history / ".claude" / "hooks").iterdir())
    text = module.preview_injection(str(project_with_history))
    assert "- [Topic](topic.md) — the pointer" in text and "Working on X" in text
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


def test_siblings_leave_no_bytecode_beside_them(project):
    hooks = project / ".claude" / "hooks"
    for name in HOOK_NAMES:
        shutil.copy(str(HOOKS / name), str(hooks / name))
    (project / ".claude" / "worktrees").mkdir()  # so that the pruner is loaded too
    done = run_hook("session-start.py", project, stdin={"session_id": "s1"}, hooks_dir=hooks)
    assert done.returncode == 0 and b"the pointer" in done.stdout
    assert not (hooks / "__pycache__").exists()


# --- where the handoff is read ------------------------------------------------------------

def test_reads_the_handoff_at_the_project_root(project):
    (project / ".session-state.md").write_text("root handoff\n", encoding="utf-8")
    text = inject(project)
    assert "## Last handoff (.session-state.md" in text and "root handoff" in text


def test_reads_the_older_default_while_the_project_root_has_none(project):
    (project / ".claude" / "session-state.md").write_text("older handoff\n", encoding="utf-8")
    text = inject(project)
    assert "## Last handoff (.claude/session-state.md" in text and "older handoff" in text


def test_the_project_root_handoff_wins_over_the_older_one(project):
    (project / ".session-state.md").write_text("root handoff\n", encoding="utf-8")
    (project / ".claude" / "session-state.md").write_text("older handoff\n", encoding="utf-8")
    text = inject(project)
    assert "root handoff" in text and "older handoff" not in text


def test_no_handoff_anywhere_means_no_handoff_part(project):
    assert "## Last handoff" not in inject(project)


@pytest.mark.parametrize("absolute", [False, True], ids=["relative", "absolute"])
def test_the_configured_handoff_path_wins_over_both_defaults(project, absolute):
    (project / ".session-state.md").write_text("root handoff\n", encoding="utf-8")
    (project / ".claude" / "session-state.md").write_text("older handoff\n", encoding="utf-8")
    (project / "notes").mkdir()
    (project / "notes" / "state.md").write_text("configured handoff\n", encoding="utf-8")
    setting = str(project / "notes" / "state.md") if absolute else "notes/state.md"
    text = inject(project, MCP_SESSION_STATE=setting)
    assert "configured handoff" in text
    assert "root handoff" not in text and "older handoff" not in text


# --- what each kind of start is given -----------------------------------------------------

def start(project, source, session="s1"):
    return inject(project, stdin={"session_id": session, "source": source, "cwd": str(project),
                                  "hook_event_name": "SessionStart",
                                  "transcript_path": "/nonexistent/t.jsonl"})


def baseline_of(project, session="s1"):
    return project / ".claude" / "hooks" / (".session-baseline." + session)


@pytest.mark.parametrize("source", ["startup", "clear"])
def test_a_new_conversation_gets_the_memory_and_is_sent_to_catchup(project_with_history, source):
    text = start(project_with_history, source)
    assert "the pointer" in text and "Working on X" in text
    assert "Start with /catchup before answering the first prompt." in text


@pytest.mark.parametrize("source", [None, "", "reload", 7])
def test_a_start_of_unknown_kind_is_treated_as_a_new_conversation(project_with_history, source):
    stdin = {"session_id": "s1", "cwd": str(project_with_history)}
    if source is not None:
        stdin["source"] = source
    text = inject(project_with_history, stdin=stdin)
    assert "Working on X" in text and "Start with /catchup" in text


def test_a_compacted_conversation_gets_the_memory_and_carries_on(project_with_history):
    start(project_with_history, "startup")
    text = start(project_with_history, "compact")
    assert "the pointer" in text and "Working on X" in text
    assert "Start with /catchup" not in text and "compacted" in text


def test_a_resumed_conversation_is_not_shown_the_handoff_it_started_with(project_with_history):
    start(project_with_history, "startup")
    text = start(project_with_history, "resume")
    assert "the pointer" in text  # the index: shared, and changed by other sessions meanwhile
    assert "## Last handoff" not in text and "Working on X" not in text
    assert "Start with /catchup" not in text and "resumed" in text


def test_a_resumed_conversation_is_shown_a_handoff_written_since_it_began(project_with_history):
    start(project_with_history, "startup")
    set_age(baseline_of(project_with_history), 3600)
    state = project_with_history / ".session-state.md"
    state.write_text("## Handoff: later\nWritten after the session began\n", encoding="utf-8")
    set_age(state, 1800)
    text = start(project_with_history, "resume")
    assert "Written after the session began" in text and "Start with /catchup" not in text


def test_a_handoff_written_the_moment_the_baseline_was_is_taken_as_seen(project_with_history):
    start(project_with_history, "startup")
    stamp = baseline_of(project_with_history).stat().st_mtime
    os.utime(str(project_with_history / ".session-state.md"), (stamp, stamp))
    assert "Working on X" not in start(project_with_history, "resume")


def test_a_resumed_session_without_a_baseline_is_shown_the_handoff(project_with_history):
    text = start(project_with_history, "resume")
    assert "Working on X" in text and "Start with /catchup" not in text


def test_a_fork_is_shown_the_handoff_and_is_not_sent_to_catchup(project_with_history):
    start(project_with_history, "startup", session="parent")
    text = start(project_with_history, "fork", session="child")
    assert "the pointer" in text and "Working on X" in text
    assert "Start with /catchup" not in text and "forked" in text
    assert baseline_of(project_with_history, "child").is_file()


@pytest.mark.parametrize("source", ["resume", "compact"])
def test_a_continued_session_keeps_its_baseline(project, source):
    start(project, "startup")
    baseline = baseline_of(project)
    recorded = baseline.read_bytes()
    set_age(baseline, 600)
    stamp = baseline.stat().st_mtime
    (project / "README.md").write_text("changed since\n", encoding="utf-8")
    start(project, source)
    assert baseline.read_bytes() == recorded and baseline.stat().st_mtime == stamp


@pytest.mark.parametrize("source", ["startup", "clear", "fork"])
def test_a_new_conversation_records_a_baseline_of_now(project, source):
    baseline = baseline_of(project)
    baseline.write_text("head 0000\n", encoding="utf-8")
    (project / "README.md").write_text("changed before\n", encoding="utf-8")
    start(project, source)
    recorded = baseline.read_bytes()
    assert recorded != b"head 0000\n" and recorded.startswith(b"head ")


def test_a_resumed_session_without_a_baseline_gets_one(project):
    start(project, "resume")
    assert baseline_of(project).is_file()


# --- everything shown is printable and encodes ------------------------------------------------

def test_a_pruned_worktree_whose_name_is_not_utf8_is_shown_printable(project):
    name = os.fsdecode(b"done-\xff\x1b[31m\x07")
    path = project / ".claude" / "worktrees" / name
    git(project, "worktree", "add", "-q", "-b", "done", str(path))
    for admin in (project / ".git" / "worktrees").iterdir():  # git's own name for it, also odd
        for entry in (admin / "HEAD", admin / "index", admin / "logs" / "HEAD", admin):
            if entry.exists():
                set_age(entry, 2 * 3600)
    text = inject(project)  # decodes as strict UTF-8
    assert not path.exists()
    assert "pruned 1 merged agent worktree(s): done-??[31m?" in text
    assert "the pointer" in text and text.endswith("</project-memory>\n")


def test_a_budget_point_naming_control_characters_shows_them_as_question_marks(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# I\n- [Gone](gone\x1b[2J\x07.md) — a link to nothing\n", encoding="utf-8")
    text = inject(project)
    assert "gone?[2J?.md" in text and "\x1b" not in text and "\x07" not in text


def test_only_unprintable_characters_other_than_tab_become_question_marks():
    module = load_hook("context-budget.py")
    unprintable = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\x9f", "\u200d", "\u00a0", "\u2028",
                   "\udcff", "\ud83d"]
    for character in unprintable:
        assert module.as_text(["a" + character + "b"]) == "a?b\n"
    kept = "tab\there é 中 😀 — …"
    assert module.as_text([kept]) == kept + "\n"
    module.as_text(["\udcff" * 3]).encode("utf-8")  # strict: no surrogate reaches the encoder


# --- the frame holds whatever a line holds ------------------------------------------------

def report_line_of(text, start):
    return next(line for line in text.split("\n") if line.startswith(start))


def test_a_ten_thousand_character_dead_link_keeps_the_memory_and_the_close(project):
    (project / "memory" / "MEMORY.md").write_text(
        "# I\n- [Topic](topic.md) — the pointer\n- [Long](" + "a" * 10000 + ".md) — long\n",
        encoding="utf-8")
    text = inject(project)
    assert "the pointer" in text and "read memory/MEMORY.md in full]" in text
    assert text.endswith("Start with /catchup before answering the first prompt.\n"
                         "</project-memory>\n")
    point = report_line_of(text, "- memory/MEMORY.md points to 1 file(s)")
    assert len(point) == 1001 and point.endswith("a…")  # clipped to the rule's 1,000 characters


def test_a_budget_point_of_the_cap_is_kept_and_one_more_is_clipped():
    module = load_hook("context-budget.py")
    cap = 1000
    whole = "- " + "p" * (cap - 2)
    text = module.injection([whole], [], [], "close")
    assert report_line_of(text, "- p") == whole
    longer = "- " + "q" * (cap - 1)
    assert report_line_of(module.injection([longer], [], [], "close"), "- q") == longer[:cap] + "…"
    note = "pruned " + "n" * cap
    assert report_line_of(module.injection([], [note], [], "close"), "pruned") == note[:cap] + "…"


def test_a_frame_of_many_long_points_keeps_the_opening_and_the_close():
    module = load_hook("context-budget.py")
    points = ["- point %02d %s" % (n, "x" * 2000) for n in range(30)]
    index = module.Section("## Memory index", ["- [A](a.md) — x"] * 50, "memory/MEMORY.md", 1)
    text = module.injection(points, ["pruned 1 merged agent worktree(s): a"], [index], "close")
    assert harness_length(text) <= LIMIT
    assert text.startswith('<project-memory source="SessionStart hook">\n## Context budget')
    assert text.endswith("\nclose\n</project-memory>\n")


# --- each sibling call fails alone --------------------------------------------------------

SIBLING_NAMES = {"prune-worktrees.py": ["prune", "Guard", "uses"]}
PRUNING_PART = {"prune", "uses"}
BASELINE_PART = {"Guard", "uses"}


def hooks_without(tmp_path, sibling, name, how):
    """The four hooks, with `name` taken out of `sibling` (a copy from another release) or made
    to raise."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py"):
        shutil.copy(str(HOOKS / hook), str(hooks / hook))
    if how == "missing":
        tail = "\ndel %s\n" % name
    else:
        tail = "\ndef %s(*args, **kwargs):\n    raise RuntimeError('broken')\n" % name
    with open(str(hooks / sibling), "a", encoding="utf-8") as stream:
        stream.write(tail)
    return hooks


@pytest.mark.parametrize("how", ["missing", "raising"])
@pytest.mark.parametrize("sibling,name", [(sibling, name) for sibling, names in SIBLING_NAMES.items()
                                          for name in names])
def test_a_part_that_fails_costs_only_itself(project, tmp_path, sibling, name, how):
    (project / "memory" / "MEMORY.md").write_text(
        "# I\n<!-- hidden note -->\n- [Topic](topic.md) — the pointer\n", encoding="utf-8")
    (project / ".session-state.md").write_text("Working on X\n", encoding="utf-8")
    worktree = project / ".claude" / "worktrees" / "finished"
    git(project, "worktree", "add", "-q", "-b", "finished", str(worktree))
    age_worktree(worktree)
    hooks = hooks_without(tmp_path, sibling, name, how)
    done = run_hook("session-start.py", project, hooks_dir=hooks, env={"MCP_MEM_LINES": "1"},
                    stdin={"session_id": "s1", "source": "startup", "cwd": str(project)})
    assert done.returncode == 0 and done.stderr == b""
    text = done.stdout.decode("utf-8")
    assert "- [Topic](topic.md) — the pointer" in text and "Working on X" in text
    assert text.endswith("Start with /catchup before answering the first prompt.\n"
                         "</project-memory>\n")
    assert "over on 1 point(s)" in text and "hidden note" not in text
    assert ("pruned 1 merged agent worktree(s): finished" in text) == (name not in PRUNING_PART)
    baselines = list((project / ".claude" / "hooks").glob(".session-baseline*"))
    assert bool(baselines) == (name not in BASELINE_PART)


@pytest.mark.parametrize("source,stale", [("startup", False), ("clear", False), ("compact", False),
                                          ("resume", True), ("fork", True)])
def test_only_a_continued_conversation_is_told_its_git_snapshot_is_old(project, source, stale):
    """The harness snapshots git status at a conversation's start and after a compaction, and
    sends the stored snapshot again on resume and fork."""
    text = start(project, source)
    assert ("dates from this conversation's start" in text) == stale


# --- the code cache: compiled siblings kept in the user's cache, never beside the hooks -------

@pytest.fixture
def compiler(monkeypatch, tmp_path):
    """stop-handoff.py, the loader, in-process, with the account's home in the test's folder,
    counting the compilations it makes."""
    import pwd
    import types
    module = load_hook("stop-handoff.py")
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setattr(pwd, "getpwuid", lambda uid: types.SimpleNamespace(pw_dir=str(home)))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # as in a hook's own process
    compiled = []

    def counting_compile(source, path, mode):
        compiled.append(path)
        return compile(source, path, mode)

    monkeypatch.setattr(module, "compile", counting_compile, raising=False)
    module.compiled = compiled
    module.cache = home / ".cache" / "memory-context-protocol"
    return module


SOURCE = b"ANSWER = 42\n"


def test_a_sibling_compiled_once_is_taken_from_the_users_cache(compiler):
    first = compiler.code_for(SOURCE, "sibling.py")
    second = compiler.code_for(SOURCE, "sibling.py")
    assert compiler.compiled == ["sibling.py"] and first == second
    entries = list(compiler.cache.iterdir())
    assert len(entries) == 1 and stat.S_IMODE(entries[0].stat().st_mode) == 0o600
    assert stat.S_IMODE(compiler.cache.stat().st_mode) == 0o700


def test_a_changed_source_never_meets_an_old_entry(compiler):
    compiler.code_for(SOURCE, "sibling.py")
    namespace = {}
    exec(compiler.code_for(b"ANSWER = 43\n", "sibling.py"), namespace)
    assert namespace["ANSWER"] == 43 and len(compiler.compiled) == 2


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_an_entry_others_can_write_is_never_used(compiler):
    compiler.code_for(SOURCE, "sibling.py")
    entry = next(compiler.cache.iterdir())
    entry.write_bytes(marshal.dumps(compile("ANSWER = 'planted'\n", "x", "exec")))
    os.chmod(str(entry), 0o666)
    namespace = {}
    exec(compiler.code_for(SOURCE, "sibling.py"), namespace)
    assert namespace["ANSWER"] == 42 and len(compiler.compiled) == 2


@pytest.mark.skipif(os.name != "posix", reason="file modes")
def test_a_cache_folder_that_is_a_link_or_open_to_others_is_not_used(compiler, tmp_path):
    compiler.cache.parent.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    os.symlink(str(elsewhere), str(compiler.cache))
    assert compiler.code_cache_folder() is None
    compiler.cache.unlink()
    compiler.cache.mkdir()
    os.chmod(str(compiler.cache), 0o777)
    assert compiler.code_cache_folder() is None
    os.chmod(str(compiler.cache), 0o700)
    assert compiler.code_cache_folder() == str(compiler.cache)


def test_the_cache_is_in_the_accounts_home_whatever_home_says(compiler, tmp_path, monkeypatch):
    """A project's settings "env" could move HOME into a folder the repository fills, with an
    entry it compiled: the cache folder is the account's, which no setting moves."""
    planted = tmp_path / "planted"
    monkeypatch.setenv("HOME", str(planted))
    assert compiler.code_cache_folder() == str(compiler.cache)
    compiler.code_for(SOURCE, "sibling.py")
    assert not planted.exists() and len(list(compiler.cache.iterdir())) == 1


def test_the_cache_keeps_a_bounded_number_of_entries(compiler):
    for number in range(compiler.CODE_CACHE_ENTRIES + 5):
        compiler.code_for(b"ANSWER = %d\n" % number, "sibling%d.py" % number)
    assert len(list(compiler.cache.iterdir())) == compiler.CODE_CACHE_ENTRIES


def test_the_account_entries_are_bounded_apart_from_the_code(compiler):
    """Every project the user opens adds listings, marks and verdicts: past CACHE_ENTRIES the
    least recently used go (the later of the access and the write), never a code entry or a
    folder; a write a crash left half done goes with the old entries."""
    compiler.code_for(SOURCE, "sibling.py")
    for entry in compiler.cache.iterdir():
        os.utime(str(entry), (1, 1))  # the oldest of all, and still kept
    (compiler.cache / "a-download").mkdir()
    left = compiler.cache / "marks-x.v1.123.tmp"
    left.write_bytes(b"")
    os.utime(str(left), (2, 2))
    daily = compiler.cache / "marks-daily.v1"
    compiler.account_cache(daily.name, "daily")
    for number in range(compiler.CACHE_ENTRIES + 5):
        name = "marks-%03d.v1" % number
        compiler.account_cache(name, number)
        os.utime(str(compiler.cache / name), (1e9 + number, 1e9 + number))
        os.utime(str(daily), (2e9, 3))  # read today, written long ago
    names = sorted(entry.name for entry in compiler.cache.iterdir())
    kept = ["marks-%03d.v1" % number for number in range(6, compiler.CACHE_ENTRIES + 5)]
    assert [name for name in names if name.endswith(".v1")] == kept + [daily.name]
    assert "a-download" in names and left.name not in names
    assert len([name for name in names if name.endswith(".code")]) == 1
    assert compiler.account_cache("marks-%03d.v1" % (compiler.CACHE_ENTRIES + 4)) == \
        compiler.CACHE_ENTRIES + 4


def test_a_caller_that_writes_no_bytecode_gets_no_cache_written(compiler, monkeypatch):
    """install.py --check previews the injection with bytecode writing off: it reads the cache
    but adds nothing to the user's home."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    compiler.code_for(SOURCE, "sibling.py")
    assert not compiler.cache.exists() or list(compiler.cache.iterdir()) == []
