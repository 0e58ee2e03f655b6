"""The init prompt carries exact copies of the hooks, commands, templates and settings entries.
These tests prove every copy equals its source, that a one-byte drift is caught, that the
fences nest when rendered, and that init/sync_hooks.py is idempotent."""
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from installtools import REPO, expected_settings, sealed_env

PROMPT = os.path.join(REPO, "init", "claude-context-init.md")
SYNC = os.path.join(REPO, "init", "sync_hooks.py")
HOOKS = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
COMMANDS = ("handoff.md", "dream.md", "catchup.md", "memory-status.md", "update-context.md")
TEMPLATES = {
    "Create `memory/MEMORY.md` (only when it does not exist):": "templates/MEMORY.md",
    "Template for a module `CLAUDE.md`:": "templates/module-CLAUDE.md",
    "Skeleton for `.claude/skills/architecture/SKILL.md`:": "templates/skills/architecture/SKILL.md",
    "Skeleton for `.claude/skills/domain/SKILL.md`:": "templates/skills/domain/SKILL.md",
    "Lines for `.gitignore`:": "templates/gitignore",
    "Create `.claudeignore`:": "templates/claudeignore",
}
SETTINGS_INTRO = "Entries for `.claude/settings.json`:"
DIGEST_INTRO = "SHA-256 of the hooks and commands above:"


def source_bytes(rel):
    with open(os.path.join(REPO, *rel.split("/")), "rb") as handle:
        return handle.read()


def prompt_bytes(path=PROMPT):
    with open(path, "rb") as handle:
        return handle.read()


def lines_of(data):
    """Lines with their endings, split on b"\\n" only."""
    return re.findall(rb"[^\n]*\n|[^\n]+\Z", data)


# A fence parser written for these tests, independent of init/sync_hooks.py, following the
# CommonMark rules that matter here: an opening fence is three or more backticks or tildes
# after at most three spaces (a backtick fence's info string holds no backtick); it is closed
# by a line of the same character, at least as long, with nothing after it but spaces.
OPENER = re.compile(rb"( {0,3})(`{3,}|~{3,})(.*)\Z")


def opening_fence(line):
    match = OPENER.match(line.rstrip(b"\r\n"))
    if not match:
        return None
    fence, info = match.group(2), match.group(3)
    if fence.startswith(b"`") and b"`" in info:
        return None
    return fence


def closes(line, fence):
    text = line.rstrip(b"\r\n")
    match = re.match(rb" {0,3}(" + re.escape(fence[:1]) + rb"+)[ \t]*\Z", text)
    return bool(match) and len(match.group(1)) >= len(fence)


def fenced_blocks(lines):
    """[(fence, first line index, closing line index or None)] at the top level."""
    blocks = []
    index = 0
    while index < len(lines):
        fence = opening_fence(lines[index])
        if fence is None:
            index += 1
            continue
        start = index
        index += 1
        while index < len(lines) and not closes(lines[index], fence):
            index += 1
        blocks.append((fence, start, index if index < len(lines) else None))
        index += 1
    return blocks


def embedded(data, intro):
    """The bytes of the block right after the exact line `intro`."""
    lines = lines_of(data)
    positions = [i for i, line in enumerate(lines) if line.rstrip(b"\r\n") == intro.encode("utf-8")]
    assert len(positions) == 1, "{!r} appears {} times".format(intro, len(positions))
    opener = positions[0] + 1
    fence = opening_fence(lines[opener])
    assert fence is not None, "no fence after {!r}".format(intro)
    for closer in range(opener + 1, len(lines)):
        if closes(lines[closer], fence):
            return b"".join(lines[opener + 1:closer])
    raise AssertionError("block after {!r} never closes".format(intro))


def run_sync(*args):
    return subprocess.run([sys.executable, SYNC] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))


# ------------------------------------------------------------------ the copies

@pytest.mark.parametrize("name", HOOKS)
def test_each_embedded_hook_is_byte_identical_to_its_source(name):
    copy = embedded(prompt_bytes(), "Create `.claude/hooks/{}`:".format(name))
    assert copy == source_bytes("hooks/" + name)


@pytest.mark.parametrize("name", COMMANDS)
def test_each_embedded_command_is_byte_identical_to_its_source(name):
    copy = embedded(prompt_bytes(), "Create `.claude/commands/{}`:".format(name))
    assert copy == source_bytes("commands/" + name)


@pytest.mark.parametrize("intro", sorted(TEMPLATES))
def test_templates_shown_equal_the_template_files(intro):
    assert embedded(prompt_bytes(), intro) == source_bytes(TEMPLATES[intro])


def test_gitignore_and_claudeignore_lists_equal_the_templates():
    data = prompt_bytes()
    assert embedded(data, "Lines for `.gitignore`:") == source_bytes("templates/gitignore")
    assert embedded(data, "Create `.claudeignore`:") == source_bytes("templates/claudeignore")


def test_settings_shown_equal_what_install_writes(tmp_path):
    project = tmp_path / "fresh"
    project.mkdir()
    done = subprocess.run([sys.executable, os.path.join(REPO, "install.py"), "--project", str(project),
                           "--allow-no-git"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=sealed_env(str(tmp_path / "home")))
    assert done.returncode == 0, done.stderr
    written = (project / ".claude" / "settings.json").read_bytes()
    shown = embedded(prompt_bytes(), SETTINGS_INTRO)
    assert shown == written
    assert json.loads(shown.decode("utf-8")) == expected_settings()


def test_digest_list_matches_the_sources():
    expected = []
    for rel in sorted([".claude/commands/" + n for n in COMMANDS] + [".claude/hooks/" + n for n in HOOKS]):
        folder = "commands" if "/commands/" in rel else "hooks"
        data = source_bytes(folder + "/" + rel.rsplit("/", 1)[1])
        expected.append("{}  {}\n".format(hashlib.sha256(data).hexdigest(), rel))
    assert embedded(prompt_bytes(), DIGEST_INTRO).decode("utf-8") == "".join(expected)


# ------------------------------------------------------------------ drift

def test_a_one_byte_difference_in_a_hook_is_caught_and_repaired(tmp_path):
    original = prompt_bytes()
    source = source_bytes("hooks/session-start.py")
    copy = embedded(original, "Create `.claude/hooks/session-start.py`:")
    at = original.index(copy) + len(copy) // 2
    mutated = original[:at] + (b"X" if original[at:at + 1] != b"X" else b"Y") + original[at + 1:]
    path = tmp_path / "prompt.md"
    path.write_bytes(mutated)

    assert embedded(mutated, "Create `.claude/hooks/session-start.py`:") != source
    checked = run_sync("--check", "--prompt", str(path))
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "hooks/session-start.py" in checked.stdout
    assert path.read_bytes() == mutated, "--check must change nothing"

    synced = run_sync("--prompt", str(path))
    assert synced.returncode == 0, synced.stderr
    assert synced.stdout.strip() == "init prompt updated"
    assert path.read_bytes() == original


def test_changed_settings_entries_are_caught(tmp_path):
    original = prompt_bytes()
    shown = embedded(original, SETTINGS_INTRO)
    path = tmp_path / "prompt.md"
    path.write_bytes(original.replace(shown, shown.replace(b'"timeout": 15', b'"timeout": 16')))
    checked = run_sync("--check", "--prompt", str(path))
    assert checked.returncode == 1
    assert "install.py" in checked.stdout


def test_sync_is_idempotent_and_the_prompt_is_in_sync(tmp_path):
    path = tmp_path / "prompt.md"
    shutil.copyfile(PROMPT, str(path))
    first = run_sync("--prompt", str(path))
    second = run_sync("--prompt", str(path))
    assert first.stdout.strip() == "init prompt already in sync", first.stdout + first.stderr
    assert second.stdout.strip() == "init prompt already in sync"
    assert path.read_bytes() == prompt_bytes()
    assert run_sync("--check").returncode == 0


def test_sync_refuses_a_prompt_without_an_introduction_line(tmp_path):
    path = tmp_path / "prompt.md"
    path.write_bytes(prompt_bytes().replace(b"Create `.claude/hooks/context-budget.py`:",
                                            b"Create the budget hook:"))
    done = run_sync("--prompt", str(path))
    assert done.returncode == 2
    assert "context-budget.py" in done.stderr


# ------------------------------------------------------------------ rendering

def test_the_outer_fence_holds_the_whole_prompt_and_is_longer_than_every_inner_fence():
    lines = lines_of(prompt_bytes())
    top = fenced_blocks(lines)
    assert len(top) == 1, "the prompt must be exactly one fenced block at the top level"
    fence, start, end = top[0]
    assert end is not None, "the outer fence is never closed"
    assert all(not line.strip() for line in lines[end + 1:]), "text after the outer fence"
    inner = fenced_blocks(lines[start + 1:end])
    assert inner, "no inner blocks found"
    for inner_fence, inner_start, inner_end in inner:
        assert inner_end is not None, "inner block at line {} never closes".format(start + 2 + inner_start)
        assert len(inner_fence) < len(fence)
    intros = ["Create `.claude/hooks/{}`:".format(n) for n in HOOKS]
    body = b"".join(lines[start + 1:end])
    for intro in intros:
        assert embedded(body, intro) == source_bytes("hooks/" + intro.split("/")[-1][:-2])


# ------------------------------------------------------------------ content

def prompt_text():
    return prompt_bytes().decode("utf-8")


def test_ten_phases_then_five_update_phases_in_order():
    text = prompt_text()
    titles = ["Phase 1 — Inventory", "Phase 2 — Component map", "Phase 3 — Domain",
              "Phase 4 — Conventions", "Phase 5 — Root `CLAUDE.md`",
              "Phase 6 — Module `CLAUDE.md` files", "Phase 7 — Skills, commands and the memory index",
              "Phase 8 — Hooks", "Phase 9 — `.claudeignore`", "Phase 10 — Verification",
              "Phase U1", "Phase U2", "Phase U3", "Phase U4", "Phase U5"]
    positions = [text.find("## " + title) for title in titles]
    assert all(position >= 0 for position in positions), dict(zip(titles, positions))
    assert positions == sorted(positions)


def test_mode_detection_uses_the_protocols_own_files_not_the_claude_folder():
    text = prompt_text()
    section = text[text.index("## Choose the mode"):text.index("# INIT MODE")]
    assert "`.claude/hooks/session-start.py`" in section
    assert "`memory/MEMORY.md`" in section
    assert "settings.local.json" in section
    assert "A `.claude/` folder proves nothing" in section


def test_git_commands_are_safe_in_a_young_repository():
    assert "HEAD~" not in re.sub(r"never `HEAD~<n>`", "", prompt_text().split("# Appendix")[0])


def test_root_claude_md_guidance_names_the_byte_budget():
    text = prompt_text()
    phase5 = text[text.index("## Phase 5"):text.index("## Phase 6")]
    assert "8,192 bytes" in phase5 and "9,216" in phase5 and "200 lines" in phase5


def test_phase_8_offers_install_and_the_manual_route():
    text = prompt_text()
    phase8 = text[text.index("## Phase 8"):text.index("## Phase 9")]
    for needle in ("install.py --project .", "git update-index --chmod=+x", "git add --chmod=+x",
                   "echo '{}' | python3 -I -S .claude/hooks/session-start.py",
                   "never overwrite", SETTINGS_INTRO, "Lines for `.gitignore`:"):
        assert needle in phase8, needle


def test_the_setup_check_describes_the_read_path_as_it_prints():
    """The injection has no git part (the harness sends its own status), so the check must not
    send the user looking for one."""
    step = next(line for line in prompt_text().splitlines()
                if line.startswith("2. **The read path.**"))
    holds = step[step.index(" holds "):].split(". ")[0]
    assert "memory index" in holds
    assert "git" not in holds.lower()
