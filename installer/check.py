"""--check: one project's report, the memory alone, or every repository under a folder.

Why it exists: the check gathers the findings (findings.py), the budgets (the session-start
hook's own context-budget.py) and the memory's health (memory_health.py), both loaded by their
paths, and prints them in one form: one line per finding, one printer for the text, the same as
JSON, and a worst-first table for a whole estate. Memory-health warnings alone never fail a check.
"""

import json
import os
import shlex
import shutil
import sys

from .errors import EXIT_FINDINGS, EXIT_OK, Refusal
from .settings import session_environment
from .findings import Finding, hook_findings

# Folders --check --recursive never descends into.
SKIPPED_FOLDERS = frozenset((
    ".git", "node_modules", ".venv", "venv", "vendor", "target", "dist", "build",
    "__pycache__", ".tox",
))
RANKS = {"broken": 4, "over": 3, "drift": 2, "unwired": 2, "unshared": 2, "clash": 2,
         "unread": 1, "missing": 1, "warn": 0}
LABELS = {"broken": "BROKEN", "over": "OVER", "drift": "DRIFT", "unwired": "UNWIRED",
          "unshared": "UNSHARED", "clash": "CLASH", "unread": "UNREAD", "missing": "NONE",
          "warn": "WARN", None: "ok"}
SUMMARY_WORDS = {"broken": "broken", "over": "over budget", "drift": "drifted",
                 "unwired": "not wired", "unshared": "not shared",
                 "clash": "with a name clash", "missing": "without the protocol",
                 "warn": "with warnings", "unread": "folder(s) not readable", None: "ok"}
# Memory-health severities as check findings; a warning alone does not fail the check.
HEALTH_KINDS = (("broken", "broken"), ("over", "over"), ("warning", "warn"))


def load_budget_module(source):
    """hooks/context-budget.py of this version, imported by its path."""
    return source.module("hooks/context-budget.py", "mcp_context_budget",
                         ("budget_points", "format_report"))


def load_health_module(source):
    """memory_health.py of this version, beside install.py, imported by its path."""
    return source.module("memory_health.py", "mcp_memory_health",
                         ("memory_health", "format_health"))


def inspect_everything(source, budget, project, health=None):
    """(findings, budget points, memory-health report) for one project, in the
    environment its hooks see in a session. Without the health module only the
    memory defects found at every session start are looked for (no git)."""
    env = session_environment(project)
    findings, points = inspect_project(source, budget, project, env)
    if health is None:
        return findings + session_start_defects(budget, project, env), points, None
    memory_findings, report = inspect_memory(health, project, env)
    return findings + memory_findings, points, report


def exit_code_for(findings):
    """Memory-health warnings alone do not fail a check."""
    return EXIT_FINDINGS if any(finding.kind != "warn" for finding in findings) else EXIT_OK


def inspect_project(source, budget, project, env):
    """(findings, budget points) for one project."""
    try:
        findings = hook_findings(source, project, env)
    except Refusal as error:
        findings = [Finding("broken", str(error))]
    try:
        points = list(budget.budget_points(project, env))
    except Exception as error:  # one unreadable project must not stop a whole estate
        return findings + [Finding("broken", "budget check failed: {}".format(error))], []
    if points:
        findings.insert(0, Finding("over", "over budget on {} point(s)".format(len(points)),
                                   "the repair on each line of the budget report below"))
    return findings, points


def session_start_defects(budget, project, env):
    """The memory defects session start reports, as one broken finding."""
    try:
        defects = list(budget.memory_defects(project, env))
    except Exception as error:
        return [Finding("broken", "memory check failed: {}".format(error))]
    if not defects:
        return []
    return [Finding("broken", "memory: {} defect(s) found at session start".format(len(defects)),
                    "--check --memory names each defect with its repair")]


def inspect_memory(health, project, env):
    """(findings, report) from memory_health(): one summary finding per severity."""
    try:
        report = health.memory_health(project, env)
    except Exception as error:
        return [Finding("broken", "memory health check failed: {}".format(error))], None
    findings = []
    for severity, kind in HEALTH_KINDS:
        found = [item for item in report["findings"] if item["severity"] == severity]
        if found:
            checks = sorted(set(item["check"] for item in found))
            findings.append(Finding(kind, "memory health: {} {} ({})".format(
                len(found), "warning(s)" if kind == "warn" else severity, ", ".join(checks)),
                "the repair on each line of the memory report below (/dream makes most)"))
    return findings, report


def worst_kind(findings):
    kinds = [finding.kind for finding in findings]
    return max(kinds, key=RANKS.get) if kinds else None


def check_one(source, project, out, as_json=False):
    budget = load_budget_module(source)
    health_module = load_health_module(source)
    findings, points, health = inspect_everything(source, budget, project, health_module)
    code = exit_code_for(findings)
    if as_json:
        out(json.dumps({
            "project": project, "status": SUMMARY_WORDS[worst_kind(findings)], "exit": code,
            "findings": [{"kind": finding.kind, "text": finding.text,
                          "fix": repair_of(finding, project)} for finding in findings],
            "budget_points": points, "memory_health": health,
        }, indent=2, ensure_ascii=False))
        return code
    if not findings:
        out("ok: {} - hooks installed, wired and current; every budget within its limit".format(
            project))
        return EXIT_OK
    print_findings(out, project, findings)
    if points:
        out(budget.format_report(points).rstrip("\n"))
    if health:
        out(health_module.format_health(health).rstrip("\n"))
    return code


def check_memory(source, project, out, as_json=False):
    """The memory's health alone, whether or not the protocol is installed: for repositories
    and CI that keep memory without the hooks. Exit 1 only when the memory is broken or over."""
    health_module = load_health_module(source)
    findings, health = inspect_memory(health_module, project, session_environment(project))
    code = exit_code_for(findings)
    if as_json:
        out(json.dumps({"project": project, "status": health["status"] if health else "broken",
                        "exit": code, "memory_health": health}, indent=2, ensure_ascii=False))
        return code
    if not findings:
        out("ok: {} - memory healthy".format(project))
        return code
    print_findings(out, project, findings)
    if health:
        out(health_module.format_health(health).rstrip("\n"))
    return code


def print_findings(out, project, findings):
    """One line per finding, and under it the finding's own repair, where it has one: each
    repairs its finding alone, and none throws away an edit of the user's."""
    out("{} - {} finding(s):".format(project, len(findings)))
    for finding in findings:
        out("  {:<8} {}".format(LABELS[finding.kind], finding.text))
        repair = repair_of(finding, project)
        if repair:
            out("  {:<8} fix: {}".format("", repair))


# What --force does with a file the user edited, said where the check offers it.
KEEPS_THE_EDIT = " (keeps each edited file beside it as <file>.mine)"


def repair_of(finding, project):
    """The finding's repair as a line to run or to follow; None when its text says it (a clash,
    a setting to change by hand). An install.py option becomes the command, as it was typed."""
    if not finding.fix:
        return None
    if not finding.fix.startswith("--"):
        return finding.fix
    return "{} {} {}{}".format(invocation(), finding.fix, shlex.quote(project),
                               KEEPS_THE_EDIT if "--force" in finding.fix else "")


def invocation():
    """This script as it was run: the interpreter by the name it is found under
    on PATH (else its full path), then the script's path as it was typed."""
    python = os.path.basename(sys.executable or "python3")
    if not sys.executable or shutil.which(python) is None:
        python = sys.executable or "python3"
    return "{} {}".format(shlex.quote(python), shlex.quote(sys.argv[0] or "install.py"))


def find_repositories(root, unreadable):
    """Every folder under root with a .git entry, without descending into
    dependency folders, git's own folder or agent worktrees. A folder that
    cannot be listed is added to unreadable as (folder, reason, whether it
    lies in a repository found above it): what it holds is unknown, and a
    check that skipped it silently would vouch for it. A symbolic link to a
    folder is followed outside repositories (an estate often links its
    checkouts in) and, inside one, when it leads to a repository; each folder
    is visited once, by its real path, so a link back up is no loop and a
    repository linked twice is checked once."""
    seen = set()
    pending = [(root, False)]
    while pending:
        folder, inside = pending.pop()
        real = os.path.realpath(folder)
        if real in seen:
            continue
        seen.add(real)
        try:
            entries = list(os.scandir(folder))
        except OSError as error:
            unreadable.append((folder, error.strerror or type(error).__name__, inside))
            continue
        if any(entry.name == ".git" for entry in entries):
            inside = True
            yield folder
        for entry in entries:
            if entry.name in SKIPPED_FOLDERS or not is_a_folder_to_enter(entry, inside):
                continue
            if entry.name == "worktrees" and os.path.basename(folder) == ".claude":
                continue
            pending.append((entry.path, inside))


def is_a_folder_to_enter(entry, inside):
    """Whether the walk enters the directory entry: a folder, or a link to one (see
    find_repositories)."""
    try:
        if not entry.is_symlink():
            return entry.is_dir(follow_symlinks=False)
        return entry.is_dir() and (not inside or os.path.lexists(os.path.join(entry.path, ".git")))
    except OSError:
        return False


def unreadable_finding(reason, inside):
    """An unreadable folder inside a repository (a database volume, a folder
    of another user's) most likely holds data, not a repository: a warning.
    Outside one, repositories may be hiding there: the check cannot pass."""
    if inside:
        return Finding("warn", "cannot be read ({}); a repository nested there would not be "
                       "checked".format(reason))
    return Finding("unread", "cannot be read ({}): git repositories under it are not checked"
                   .format(reason))


def check_recursively(source, root, out):
    budget = load_budget_module(source)
    results, unreadable = [], []
    for repository in find_repositories(root, unreadable):
        findings, _, _ = inspect_everything(source, budget, repository)
        results.append((repository, findings))
    repositories = len(results)
    results += [(folder, [unreadable_finding(reason, inside)])
                for folder, reason, inside in unreadable]
    if not results:
        out("no git repositories under {}".format(root))
        return EXIT_OK
    results.sort(key=lambda item: (-RANKS.get(worst_kind(item[1]), 0), -len(item[1]),
                                   os.path.relpath(item[0], root)))
    width = min(48, max(len(os.path.relpath(folder, root)) for folder, _ in results))
    counts = {}
    unread = set(folder for folder, _, _ in unreadable)
    for folder, findings in results:
        kind = worst_kind(findings)
        if folder not in unread:
            counts[kind] = counts.get(kind, 0) + 1
        line = "{:<8} {:<{}}  {}".format(LABELS[kind], os.path.relpath(folder, root), width,
                                         "; ".join(finding.text for finding in findings))
        out(line.rstrip())
    order = sorted(counts, key=lambda kind: -RANKS.get(kind, 0))
    tally = ", ".join("{} {}".format(counts[kind], SUMMARY_WORDS[kind]) for kind in order)
    summary = ("{} repositories: {}".format(repositories, tally) if repositories
               else "no git repositories found")
    if unreadable:
        summary += "; {} {}".format(len(unreadable), SUMMARY_WORDS["unread"])
    out(summary)
    if repositories > counts.get(None, 0):
        out("details: {} --check <repository>".format(invocation()))
    return max(exit_code_for(findings) for _, findings in results)
