"""The protocol's hook entries in a settings object: adding, updating and removing them.

Why it exists: the entries that run the protocol's hooks sit among the user's own, in the user's
groups. This module finds the protocol's (by the one reading in protocol.Wiring), adds the
missing ones, brings an earlier release's command or matcher to this version's, drops copies the
harness would run twice, and takes them out again, leaving every other field and entry as the
user wrote it.
"""

import os

from .protocol import (
    DEFAULT_PYTHON, HOOKS, HOOK_DIR, LOCAL_SETTINGS, RECORD, SETTINGS, SKILL_PERMISSIONS,
    WIRINGS, is_exec_form,
)
from .releases import RELEASED_MATCHERS
from .settings import SettingsError, groups_of, handlers_in, load_settings, project_settings
from .interpreter import interpreter_in
from .permissions import grant


def our_handlers(settings, wiring):
    """(group, handler) for every handler of ours under the wiring's event."""
    return handlers_where(settings, wiring.event, wiring.is_ours)


def handlers_where(settings, event, test):
    """(group, handler) for every handler test selects among those the harness loads under the
    event; an entry of another shape is the harness's to skip, and stays as it is."""
    return [(group, handler) for group in groups_of(settings, event)
            for handler in handlers_in(group) if test(handler)]


def why_entries_cannot_go_in(settings, wirings, shown):
    """Why the wirings' missing entries cannot be added to a hooks file (settings, as shown):
    an event whose value is not a list, which the harness ignores, would have to be replaced;
    None when they can. The rest of the file is no concern of the install's."""
    for wiring in wirings:
        value = settings.get("hooks", {}).get(wiring.event)
        if value is not None and not isinstance(value, list) and \
                not our_handlers(settings, wiring):
            return ('{}: "hooks.{}" is not a list of groups (the harness ignores it), and the '
                    "protocol's entry cannot go beside it without replacing it: make it a list "
                    "([ ... ]) or take it out".format(shown, wiring.event))
    return None


def wire(settings, python, update, wirings=WIRINGS, updatable=None):
    """Add the wirings' entries where missing. With update, also bring the command of
    each entry of ours (of the events in updatable, when given: those the protocol
    added) to this version's form, keeping its interpreter unless
    python is given (without python, a command whose interpreter cannot be
    read stays as written), and a matcher an earlier release wrote to this
    version's in a group of the protocol's alone; an entry wired more than
    once (which the harness would run as often) keeps only its first copy.
    Every other field of an entry (its timeout, a matcher of the user's, its
    status message) is the user's to change and stays. Returns the names of
    the events that changed."""
    changed = []
    for wiring in wirings:
        found = our_handlers(settings, wiring)
        if not found:
            hooks = settings.setdefault("hooks", {})
            if isinstance(hooks.setdefault(wiring.event, []), list):  # else refused before
                hooks[wiring.event].append(wiring.group(python or DEFAULT_PYTHON))
                changed.append(wiring.event)
            continue
        if not update or (updatable is not None and wiring.event not in updatable):
            continue
        group, handler = found[0]
        updated = [update_command(handler, wiring, python), update_matcher(group, wiring)]
        drop_handlers(settings, wiring.event, found[1:])
        if any(updated) or found[1:]:
            changed.append(wiring.event)
    return changed


def update_command(handler, wiring, python):
    """Bring the handler's command to this version's form, unless no python is
    given and its own cannot be read; whether it changed."""
    old = str(handler.get("command", ""))
    python = python or interpreter_in(old)
    if python is None or is_exec_form(handler):  # exec form is the user's choice, kept
        return False
    new = wiring.handler(python)["command"]
    if old == new:
        return False
    handler["command"] = new
    return True


def update_matcher(group, wiring):
    """Bring a matcher an earlier release wrote to this version's, unless the
    group also holds handlers of the user's, which would then run for more
    sources than the user chose; whether it changed."""
    if not is_on_a_released_matcher(group, wiring) or \
            not all(isinstance(handler, dict) and wiring.is_ours(handler)
                    for handler in group["hooks"]):
        return False
    group["matcher"] = wiring.matcher
    return True


def is_on_a_released_matcher(group, wiring):
    return group.get("matcher") in RELEASED_MATCHERS.get(wiring.event, ())


def withheld_entries(settings, owned, wirings, every, rel=SETTINGS):
    """The protocol's entries in a hooks file (settings, rel) that the install no longer wires
    (every: the file's wirings; wirings: those it wires): a Stop guard without the protocol's
    session start, or an entry the record says the protocol added for a hook that is the
    user's. An entry an install made before the record may have had is taken for the
    protocol's only where it runs the protocol's hook (wirings name them all, or none)."""
    wired = [wiring.event for wiring in wirings]
    return [wiring for wiring in every if wiring.event not in wired
            and owned.owns_event(wiring.event, rel) and our_handlers(settings, wiring)
            and (owned.record is not None or wiring.hook in owned.hooks_owned)]


def unwire(settings, wirings):
    """Remove the wirings' entries, then whatever they leave empty. Returns the
    events changed."""
    changed = []
    for wiring in wirings:
        found = our_handlers(settings, wiring)
        if not found:
            continue
        drop_handlers(settings, wiring.event, found)
        changed.append(wiring.event)
    if changed and settings.get("hooks") == {}:
        del settings["hooks"]
    return changed


def drop_handlers(settings, event, found):
    """Remove the (group, handler) pairs found, then the groups they emptied.
    A handler goes by identity: an equal copy elsewhere in the group stays."""
    for group, handler in found:
        group["hooks"][:] = [other for other in group["hooks"] if other is not handler]
    if found:
        drop_emptied_groups(settings, event, [group for group, _ in found])


def drop_emptied_groups(settings, event, touched):
    """Remove the touched groups that lost their last handler, and the event
    when no group is left; groups the user left empty stay as they are."""
    hooks = settings["hooks"]
    groups = [group for group in hooks[event]
              if not any(group is other for other in touched) or group["hooks"]]
    if groups:
        hooks[event] = groups
    else:
        del hooks[event]


def wired_events(project, files=(SETTINGS, LOCAL_SETTINGS)):
    """Events whose hooks are wired in the project's settings (shared or local)."""
    return set(wiring.event for _, settings in project_settings(project, files)
               for wiring in WIRINGS if our_handlers(settings, wiring))


def new_settings(python, wirings, deny):
    """What --project writes where there is no settings file: the hook entries,
    the protocol's skills allowed, and the deny rules of its .claudeignore."""
    settings = {}
    wire(settings, python, False, wirings)
    grant(settings, "allow", SKILL_PERMISSIONS)
    grant(settings, "deny", deny)
    return settings


def installed_interpreters(project):
    """The interpreters the protocol's wired hooks name in the project's
    settings, first found first; an unreadable file names none (the settings
    step refuses it)."""
    try:
        settings, _ = load_settings(os.path.join(project, *SETTINGS.split("/")), SETTINGS)
    except SettingsError:
        return []
    found = [interpreter_in(str(handler.get("command", "")))
             for wiring in WIRINGS for _, handler in our_handlers(settings, wiring)]
    return list(dict.fromkeys(python for python in found if python is not None))


def protocol_is_installed(project):
    """Whether anything of the protocol's is here: one of its hooks, an entry that runs one, or
    the record of an install."""
    if os.path.lexists(os.path.join(project, *RECORD.split("/"))):
        return True
    if any(os.path.lexists(os.path.join(project, HOOK_DIR, name)) for name in HOOKS):
        return True
    try:
        return bool(wired_events(project))
    except SettingsError:
        return True
