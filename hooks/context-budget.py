#!/usr/bin/env python3
"""context-budget: the context budgets of one project, checked where its sessions start.

Why it exists: every file that loads at session start is a standing tax on every request, and a
budget binds only where it is checked. This hook weighs the files that make a session expensive:
the memory index, the root instruction file, the live transcript and the agent worktrees.

What it promises:
- Silence while every budget holds; otherwise one heading that counts the points over budget,
  then one line per point naming the file, its measure, the budget and the repair.
- Exit status 0 on every path. It reads no standard input and writes nothing.
- Its cost does not grow with the transcript (one stat call) or with the index (one streaming
  count); only the worktree budget walks a tree, and only when that folder exists.
- Standard library only; Python 3.8 or newer; runs as `python3 -I -S context-budget.py`.

Configuration is by environment, with the names and defaults of the bash reference:
MCP_MEM_LINES (80), MCP_CLAUDE_KB (8), MCP_TRANSCRIPT_MB (60), MCP_WORKTREE_MB (100),
MCP_MEMORY_INDEX (memory/MEMORY.md), MCP_CLAUDE_MD (CLAUDE.md), MCP_PROJECTS_DIR
(~/.claude/projects), MCP_TRANSCRIPT_PATH, MCP_WORKTREE_DIR (.claude/worktrees).
A numeric override that is not a whole number falls back to its default.
"""
import os
import stat
import sys

MIB = 1024 * 1024
DEFAULT_INDEX = "memory/MEMORY.md"
DEFAULT_INSTRUCTION_FILE = "CLAUDE.md"
ALTERNATE_INSTRUCTION_FILE = os.path.join(".claude", "CLAUDE.md")
DEFAULT_WORKTREE_DIR = ".claude/worktrees"
# The harness truncates long encoded folder names and appends a hash it does not document.
ENCODED_NAME_LIMIT = 200


def number_setting(env, name, default):
    value = (env.get(name) or "").strip()
    if value.isascii() and value.isdigit():
        return int(value)
    return default


def project_path(project, env, name, default):
    return os.path.join(project, env.get(name) or default)


def shown_path(project, path):
    """The path as the reader knows it: relative to the project when it lies inside."""
    try:
        relative = os.path.relpath(path, project)
    except ValueError:  # another drive on Windows
        return path
    return path if relative.startswith(os.pardir) else relative.replace(os.sep, "/")


def regular_file_size(path):
    """Size of a regular file, or None. Checked before any open: a FIFO must never be read."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def count_newlines(path):
    """Newline characters in a file, the arithmetic of `wc -l`, whatever its encoding."""
    if regular_file_size(path) is None:
        return None
    count = 0
    try:
        with open(path, "rb") as stream:
            for chunk in iter(lambda: stream.read(MIB), b""):
                count += chunk.count(b"\n")
    except OSError:
        return None
    return count


def mib_rounded_up(size):
    return -(-size // MIB)


def index_point(project, env):
    budget = number_setting(env, "MCP_MEM_LINES", 80)
    index = project_path(project, env, "MCP_MEMORY_INDEX", DEFAULT_INDEX)
    lines = count_newlines(index)
    if lines is None or lines <= budget:
        return None
    return (
        "- %s is %d lines (budget %d). It is an index and loads at every session start: one "
        "pointer line per topic, the detail in topic files. Repair it with /dream."
        % (shown_path(project, index), lines, budget)
    )


def instruction_file(project, env):
    named = env.get("MCP_CLAUDE_MD")
    if named:
        return os.path.join(project, named)
    default = os.path.join(project, DEFAULT_INSTRUCTION_FILE)
    if os.path.lexists(default):
        return default
    return os.path.join(project, ALTERNATE_INSTRUCTION_FILE)


def instruction_file_point(project, env):
    budget = number_setting(env, "MCP_CLAUDE_KB", 8)
    path = instruction_file(project, env)
    size = regular_file_size(path)
    if size is None or size // 1024 <= budget:
        return None
    return (
        "- %s is %d KB (budget %d KB) and loads at every session start. Move reference "
        "material into a skill (.claude/skills/) or into memory/, where it loads on demand."
        % (shown_path(project, path), size // 1024, budget)
    )


def projects_dir(env):
    named = env.get("MCP_PROJECTS_DIR")
    if named:
        return named
    config = env.get("CLAUDE_CONFIG_DIR")
    if config:
        return os.path.join(config, "projects")
    home = os.path.expanduser("~")
    return None if home == "~" else os.path.join(home, ".claude", "projects")


def encoded_name(path):
    """The harness's folder name for a project: every character but ASCII letters and digits is '-'."""
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def transcript_folders(project, env):
    """Folders that may hold this project's transcripts, most likely first."""
    root = projects_dir(env)
    if not root:
        return []
    spellings = []
    for path in (os.path.abspath(project), os.path.realpath(project)):
        name = encoded_name(path)
        if name not in spellings:
            spellings.append(name)
    folders = [os.path.join(root, name) for name in spellings]
    if any(len(name) > ENCODED_NAME_LIMIT for name in spellings):
        folders.extend(truncated_name_folders(root, spellings))
    return folders


def truncated_name_folders(root, spellings):
    prefixes = tuple(name[:ENCODED_NAME_LIMIT] for name in spellings)
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [os.path.join(root, name) for name in names if name.startswith(prefixes)]


def newest_transcript(folder):
    newest = None
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    for entry in entries:
        if not entry.name.endswith(".jsonl"):
            continue
        try:
            info = entry.stat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            key = (info.st_mtime_ns, entry.name)
            if newest is None or key > newest[0]:
                newest = (key, entry.path)
    return newest[1] if newest else None


def live_transcript(project, env):
    """The transcript that rides along on every request: the one the harness named, else the newest.

    A named transcript that does not exist yet is a fresh startup: nothing to measure, and
    falling back to an older file would warn about a session that has already ended.
    """
    named = env.get("MCP_TRANSCRIPT_PATH")
    if named:
        return named
    for folder in transcript_folders(project, env):
        found = newest_transcript(folder)
        if found:
            return found
    return None


def transcript_point(project, env):
    budget = number_setting(env, "MCP_TRANSCRIPT_MB", 60)
    path = live_transcript(project, env)
    size = regular_file_size(path) if path else None
    if size is None or mib_rounded_up(size) <= budget:
        return None
    return (
        "- This project's live transcript is %d MB (budget %d MB). Every request carries the "
        "conversation, so this session now pays its ceiling on every answer. Finish with "
        "/handoff, then /clear: the memory files carry the continuity, the transcript does not."
        % (mib_rounded_up(size), budget)
    )


def disk_usage(folder):
    """Bytes allocated under a folder, as `du` counts them: blocks, hard links once, links not followed."""
    total = 0
    seen = set()
    pending = [folder]
    while pending:
        current = pending.pop()
        try:
            entries = list(os.scandir(current))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if info.st_nlink > 1 and not stat.S_ISDIR(info.st_mode):
                if (info.st_dev, info.st_ino) in seen:
                    continue
                seen.add((info.st_dev, info.st_ino))
            total += allocated_bytes(info)
            if stat.S_ISDIR(info.st_mode):
                pending.append(entry.path)
    try:
        total += allocated_bytes(os.stat(folder))
    except OSError:
        pass
    return total


def allocated_bytes(info):
    blocks = getattr(info, "st_blocks", None)
    return blocks * 512 if blocks is not None else info.st_size


def worktree_point(project, env):
    budget = number_setting(env, "MCP_WORKTREE_MB", 100)
    folder = project_path(project, env, "MCP_WORKTREE_DIR", DEFAULT_WORKTREE_DIR)
    if not os.path.isdir(folder):
        return None
    size = mib_rounded_up(disk_usage(folder))
    if size <= budget:
        return None
    return (
        "- %s is %d MB (budget %d MB). Each agent worktree is a full checkout. Merged, clean "
        "ones are pruned at session start, so what is left holds unmerged commits, uncommitted "
        "or ignored files, or a lock: finish that work, then `git worktree remove` it."
        % (shown_path(project, folder), size, budget)
    )


CHECKS = (index_point, instruction_file_point, transcript_point, worktree_point)


def budget_points(project, env):
    """Every point over budget, each a line starting with '- '."""
    points = []
    for check in CHECKS:
        try:
            point = check(project, env)
        except Exception:  # one broken measurement must not hide the others
            point = None
        if point:
            points.append(point)
    return points


def format_report(points):
    if not points:
        return ""
    heading = "## Context budget — over on %d point(s)" % len(points)
    return "\n".join([heading] + list(points)) + "\n"


def project_dir():
    try:
        path = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    except OSError:
        return None
    return path if os.path.isdir(path) else None


def write_stdout(text):
    """UTF-8 whatever the locale; a reader that went away is not an error worth a traceback."""
    try:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    except (OSError, ValueError, AttributeError):
        silence_stdout()


def silence_stdout():
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    except OSError:
        pass


def main():
    project = project_dir()
    if project:
        report = format_report(budget_points(project, os.environ))
        if report:
            write_stdout(report)


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # a budget check must never take the session down
        pass
    sys.exit(0)
