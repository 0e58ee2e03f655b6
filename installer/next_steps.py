"""What the user does after a writing run: commit what it wrote and, after an install, start the
agent once in the project to trust it.

Why it exists: an install is not finished when its files are written. Teammates get the protocol
only through a commit, and Claude Code applies a project's permissions (the Skill rules that let
the save at a stop run without a person) only in a folder the user has trusted. The run says
both, just before its last line: one `git add` line that covers every path of the run git sees
as changed (the hooks with their executable bit), read from git after the changes, so it names
nothing git ignores and nothing already committed; then the agent step. An uninstall gives the
`git add` line that stages the removal.
"""

import os
import shlex

from .git import git
from .protocol import HOOK_DIR, HOOKS, RECORD
from .repository import repository_top
from .project import EDIT_COPY

# The steps of a plan that name no path: a note's text, the hooks named in git's index.
NOT_A_PATH = ("note", "index")

# What each agent needs once before it runs the protocol's hooks, by the name --agents takes.
AGENT_STEPS = {
    "claude": "start Claude Code in the project ({}claude) and accept its trust prompt once: "
              "it applies the project's Skill rules, which let the save at a stop run without "
              "you, only in a folder you trusted",
    "codex": "start Codex CLI there ({}codex), trust the project and review the protocol's "
             "hooks once when it asks: until then it runs none",
    "gemini": "start Gemini CLI at the project's top ({}gemini) and trust the folder: it runs "
              "a project's hooks only in a trusted folder",
}


def paths_of(plan):
    """The project-relative paths a plan writes, keeps or removes, in its order, once each, and
    the record of what the protocol added, which a run that changes nothing does not name; not
    a file of the user's under one of the protocol's names, which the run leaves alone, nor the
    copies of the user's edits --force kept, which are for the user to read, not to share."""
    paths = [RECORD] if os.path.lexists(plan.path(RECORD)) else []
    for step in plan.steps:
        if step.verb not in NOT_A_PATH and step.shown not in paths and " " not in step.shown \
                and EDIT_COPY not in step.shown and step.shown not in plan.clashes:
            paths.append(step.shown)
    return paths


def uncommitted(project, paths):
    """Those of paths git sees as not committed as they are (new, changed, deleted); [] outside
    git, or when git gives no answer. Ignored files are not listed: git add would refuse them."""
    top = repository_top(project)
    if top is None:
        return []
    prefix = os.path.relpath(project, top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    code, out = git(project, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                    "--ignore-submodules=all", "--", *paths)
    if code != 0:
        return []
    changed = set(entry[3:] for entry in out.split("\0") if len(entry) > 3)
    return [rel for rel in paths if prefix + rel in changed]


def in_project(project, command):
    """command, run from the project folder: prefixed with a cd unless it is the current one."""
    try:
        here = os.path.samefile(os.getcwd(), project)
    except OSError:
        here = False
    return command if here else "cd {} && {}".format(shlex.quote(project), command)


def git_add_line(project, paths, executable_hooks=True):
    """One line that stages paths (a removed one as removed): the protocol's hooks with their
    executable bit when executable_hooks (named one by one: a glob would set it on the user's
    own hooks too), then the rest."""
    hooks = [rel for rel in paths if executable_hooks and
             rel in [HOOK_DIR + "/" + name for name in HOOKS]]
    rest = [rel for rel in paths if rel not in hooks]
    commands = []
    if hooks:
        commands.append("git add --chmod=+x " + " ".join(map(shlex.quote, hooks)))
    if rest:
        commands.append("git add " + " ".join(map(shlex.quote, rest)))
    return in_project(project, " && ".join(commands))


def next_steps(plan, project, mode, changes, agents=()):
    """What comes next, one line each: the git add line, then, after an install that changed
    something, what each agent wired (agents: their names besides claude) needs once."""
    steps = []
    changed = uncommitted(project, paths_of(plan))
    if changed:
        after = "then commit the removal" if mode == "uninstall" else \
            "then commit: teammates get the protocol with it"
        steps.append("{} ({})".format(git_add_line(project, changed, mode != "uninstall"),
                                      after))
    if mode == "project" and changes:
        for agent in ["claude"] + [name for name in agents if name in AGENT_STEPS]:
            steps.append(AGENT_STEPS[agent].format(in_project(project, "")))
    return steps
