"""Moving a project from the bash edition of the protocol to this one, in place.

Why it exists: the bash edition wires .sh scripts of the same names for the same events. A
project that has it must end with one entry per event, never both. The bash edition is
recognised by its marks, never by a script name alone, which hooks of the user's often share
(session-start.sh, context-budget.sh): a script of its name that says what only that edition's
script says, or one of its status messages in an entry. Its .sh files are that edition's and
are never removed; the run says whether anything still runs them.
"""

import os

from .errors import Refusal
from .files import read_bytes
from .protocol import DEFAULT_PYTHON, HOOKS, HOOK_DIR, SETTINGS, WIRINGS, bash_edition_name
from .settings import harness_settings, project_settings
from .wiring import drop_handlers, handlers_where, our_handlers


def bash_edition_handlers(settings, wiring):
    """(group, handler) for every handler of the bash edition's under the wiring's event."""
    return handlers_where(settings, wiring.event, wiring.is_the_bash_editions)


# What each of the bash edition's scripts says that no other script of its name is likely to:
# the tags of what session-start.sh prints and of the message stop-handoff.sh blocks with, and
# the variables that set the budgets of context-budget.sh and the folder prune-worktrees.sh prunes.
BASH_EDITION_MARKS = {
    "session-start.sh": b'<auto-catchup source="SessionStart hook">',
    "stop-handoff.sh": b"[auto-handoff hook]",
    "context-budget.sh": b"MCP_MEM_LINES",
    "prune-worktrees.sh": b"MCP_WORKTREE_DIR",
}
# How much of a script is read for its mark: the bash edition's are a few KB.
MARK_READ_LIMIT = 1 << 16


def bash_edition_scripts(project):
    """The hook files that are the bash edition's by their marks (as paths in the project)."""
    found = []
    for name, mark in sorted(BASH_EDITION_MARKS.items()):
        rel = HOOK_DIR + "/" + name
        path = os.path.join(project, *rel.split("/"))
        try:
            data = read_bytes(path, rel, MARK_READ_LIMIT) if not os.path.islink(path) else None
        except Refusal:
            data = None
        if data is not None and mark in data:
            found.append(rel)
    return found


def the_bash_edition_is_here(project):
    """Whether the project bears the bash edition's marks: one of its scripts (by what it
    says, not by its name), or one of its status messages in an entry of that edition's."""
    if bash_edition_scripts(project):
        return True
    return any(handler.get("statusMessage") == wiring.bash_status
               for _, settings in harness_settings(project) for wiring in WIRINGS
               for _, handler in bash_edition_handlers(settings, wiring))


def take_over_the_bash_edition(settings, python, wirings=WIRINGS):
    """Make the bash edition's entries this edition's, so that no event runs
    both: where this edition's hook is not wired yet, the first bash entry
    becomes its entry in place; every other bash entry goes. Returns
    [(wiring, replaced)] for each event changed, replaced False where the
    entries were only removed."""
    moved = []
    for wiring in wirings:
        found = bash_edition_handlers(settings, wiring)
        if not found:
            continue
        replaced = not our_handlers(settings, wiring)
        if replaced:
            run_this_editions_hook(found[0][1], wiring, python)
        drop_handlers(settings, wiring.event, found[1:] if replaced else found)
        moved.append((wiring, replaced))
    return moved


def run_this_editions_hook(handler, wiring, python):
    """Turn the bash edition's handler into this edition's: the command as
    --project writes it (shell form), and this edition's status message where
    the bash edition's own was; its group, timeout and every other field are
    the user's and stay."""
    ours = wiring.handler(python or DEFAULT_PYTHON)
    handler.pop("args", None)
    handler["command"] = ours["command"]
    if handler.get("statusMessage") == wiring.bash_status:
        handler["statusMessage"] = ours["statusMessage"]


def unwire_the_bash_editions_missing_hooks(settings, project):
    """Remove the bash edition's entries whose script is gone, which would
    fail at every session; an entry whose script is there is that edition,
    still working, and stays. Returns the events changed."""
    changed = []
    if not the_bash_edition_is_here(project):
        return changed
    for wiring in WIRINGS:
        found = bash_edition_handlers(settings, wiring)
        if found and not os.path.lexists(os.path.join(project, HOOK_DIR, wiring.bash_hook)):
            drop_handlers(settings, wiring.event, found)
            changed.append(wiring.event)
    if changed and settings.get("hooks") == {}:
        del settings["hooks"]
    return changed


def bash_edition_wiring(project):
    """[(settings file, events)] where the project's settings wire the bash edition."""
    found = []
    if not the_bash_edition_is_here(project):
        return found
    for rel, settings in project_settings(project):
        events = [wiring.event for wiring in WIRINGS if bash_edition_handlers(settings, wiring)]
        if events:
            found.append((rel, events))
    return found


def moved_from_the_bash_edition(wiring, replaced):
    if replaced:
        return "the bash edition's {} entry now runs {}, not {}".format(
            wiring.event, wiring.hook, wiring.bash_hook)
    return "removed the bash edition's {} entry, which ran {} beside {}".format(
        wiring.event, wiring.bash_hook, wiring.hook)


def plan_bash_edition_hooks_note(plan, settings):
    """The bash edition's hook files are that edition's (and may have been
    edited), so no mode removes them: say whether a settings file still runs
    them, settings being the project's shared file as this run leaves it."""
    present = [HOOK_DIR + "/" + bash_edition_name(name) for name in HOOKS
               if HOOK_DIR + "/" + bash_edition_name(name) in bash_edition_scripts(plan.root)]
    if not present:
        return
    files = [(SETTINGS, settings)] + [(shown, other) for shown, other in
                                      harness_settings(plan.root) if shown != SETTINGS]
    wired_in = [shown for shown, wired in files
                if any(bash_edition_handlers(wired, wiring) for wiring in WIRINGS)]
    plan.keep(", ".join(present), "the bash edition's hooks, " + (
        "still wired in {}: delete those entries, then these files".format(" and ".join(wired_in))
        if wired_in else "no longer wired; they may be deleted"))
