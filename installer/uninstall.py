"""--uninstall: take out what --project added, and give every file of the user's back byte for byte.

Why it exists: removing the protocol must leave the project as it was. Only the installer's own
files go (a hook or command in a version a release shipped, the hooks' baselines and bytecode,
the template's .claudeignore); the settings.json, .gitignore and .gitattributes lose only the
protocol's parts and come back in the bytes they had, from the before-install record or HEAD;
memory/ and the handoff always stay; a folder goes only when the run empties it and it was not
there, empty, before.
"""

import os
import re

from .errors import Refusal
from .files import encode_text, newline_of, read_bytes, read_text, same_content
from .protocol import (
    BASELINE_PREFIX, CLAUDEIGNORE, COMMANDS, COMMAND_DIR, DEFAULT_PYTHON, HOOKS, HOOK_DIR,
    LOCAL_SETTINGS, MARKED_BLOCKS, OLD_SESSION_STATE, SESSION_STATE, SETTINGS, SKILL_PERMISSIONS,
    TEMPLATE_CLAUDEIGNORE, WIRINGS, wirings_of,
)
from .releases import RETIRED_COMMANDS, is_the_installers
from .plan import Plan
from .settings import (
    SettingsError, load_settings, parse_settings, project_settings, settings_bytes,
    settings_mean_the_same, settings_text,
)
from .interpreter import interpreter_in
from .permissions import claudeignore_text, grant, our_deny_rules, revoke, rules_of
from .wiring import installed_interpreters, our_handlers, unwire, wire
from .blocks import appended, with_final_newline_as, without_block
from .bash_edition import (
    bash_edition_handlers, plan_bash_edition_hooks_note, the_bash_edition_is_here,
    unwire_the_bash_editions_missing_hooks,
)
from .repository import committed_version, is_tracked_by_git
from .before_install import INSTALL_FOLDERS, plan_before_install_removal, read_before_install


def plan_uninstall(source, project):
    plan = Plan(project)
    hook_dir = plan.path(HOOK_DIR)
    record = read_before_install(project)
    users = []
    for name in HOOKS:
        rel = HOOK_DIR + "/" + name
        if plan_remove_if_unmodified(plan, rel, lambda data, rel=rel: is_the_installers(
                source, rel, data), "not a version the installer shipped; left in place"):
            users.append(name)
    wirings = wirings_of([name for name in HOOKS if name not in users])
    for name in sorted(leftovers_of_the_hooks(hook_dir)):
        plan.remove(HOOK_DIR + "/" + name, "local file the hooks wrote")
    if plan.will_be_emptied(HOOK_DIR + "/__pycache__"):
        plan.remove(HOOK_DIR + "/__pycache__", "now empty")
    plan_before_install_removal(plan, record)
    pythons = installed_interpreters(plan) + [DEFAULT_PYTHON]
    for name in COMMANDS + tuple(sorted(RETIRED_COMMANDS)):
        rel = COMMAND_DIR + "/" + name
        plan_remove_if_unmodified(plan, rel, lambda data, rel=rel: is_the_installers(
            source, rel, data, pythons), "edited by you; left in place")
    try:
        ignore_text = claudeignore_text(project)
    except Refusal:
        ignore_text = None
    template = source.bytes_of(TEMPLATE_CLAUDEIGNORE)
    plan_remove_if_unmodified(plan, CLAUDEIGNORE, lambda data: same_content(data, template),
                              "differs from the template; left in place")
    before = (record or {}).get("files", {})
    settings = plan_settings_unwiring(plan, wirings, our_deny_rules(source, ignore_text),
                                      before.get(SETTINGS))
    plan_local_wiring_note(plan, wirings)
    if settings is not None:
        plan_bash_edition_hooks_note(plan, settings)
    for rel, template, lines_are in MARKED_BLOCKS:
        plan_unblocking(plan, rel, source.marked_template(template), lines_are, before.get(rel))
    kept_folders = (record or {}).get("folders", [])
    for rel in INSTALL_FOLDERS:
        if rel not in kept_folders and os.path.isdir(plan.path(rel)) and \
                plan.will_be_emptied(rel):
            plan.remove(rel, "now empty")
    if os.path.isdir(plan.path("memory")):
        plan.keep("memory/", "your memory; never removed")
    for rel in (SESSION_STATE, OLD_SESSION_STATE):
        if os.path.lexists(plan.path(rel)):
            plan.keep(rel, "your handoff; never removed")
    return plan


# A name the hooks give what they write beside themselves: after the baseline's
# own name, nothing (the baseline shared by sessions without an id), a session
# id (letters, digits, - and _, at most 128), and for a temporary file a
# process id and ".tmp" (stop-handoff.py's baseline_path and
# write_inside_claude_folder). A file holds what they write when it starts as
# every state does, or is a temporary file still empty.
BASELINE_NAME = re.compile(re.escape(BASELINE_PREFIX) +
                           r"(?:\.[A-Za-z0-9_-]{1,128})?(?P<temporary>\.[0-9]+\.tmp)?\Z")
BASELINE_START = b"head "

# The bytecode Python caches for a hook loaded by its path, in __pycache__
# beside it: <hook>.<interpreter tag>[.opt-N].pyc.
HOOK_BYTECODE = re.compile(r"(?:{})\.[\w.-]+\.pyc\Z".format(
    "|".join(re.escape(name[:-len(".py")]) for name in HOOKS)))


def leftovers_of_the_hooks(hook_dir):
    """What the hooks wrote beside themselves: their baselines and their cached
    bytecode (as names under hook_dir). A file of the user's that only looks
    like one (another name, other contents, a cache folder that is a link)
    stays."""
    try:
        names = os.listdir(hook_dir)
    except OSError:
        return []
    found = [name for name in names if is_a_baseline(os.path.join(hook_dir, name))]
    cache = os.path.join(hook_dir, "__pycache__")
    if "__pycache__" in names and os.path.isdir(cache) and not os.path.islink(cache):
        try:
            found += ["__pycache__/" + name for name in os.listdir(cache)
                      if HOOK_BYTECODE.match(name)]
        except OSError:
            pass
    return found


def is_a_baseline(path):
    """Whether path is a baseline the hooks wrote: its name, and what it holds.
    A symbolic link under that name goes too (never what it points to): the
    hooks themselves replace one planted there."""
    match = BASELINE_NAME.match(os.path.basename(path))
    if match is None:
        return False
    if os.path.islink(path):
        return True
    try:
        with open(path, "rb") as stream:
            head = stream.read(len(BASELINE_START))
    except OSError:  # a folder, or unreadable: not the hooks'
        return False
    return head == BASELINE_START or (match.group("temporary") is not None and head == b"")


def plan_remove_if_unmodified(plan, rel, unmodified, kept_note):
    """Remove rel when unmodified(its bytes) holds; keep it, saying so, otherwise.
    Returns whether the file stays as the user's."""
    existing = read_bytes(plan.path(rel), rel)
    if existing is None:
        return False
    if unmodified(existing):
        plan.remove(rel)
        return False
    plan.keep(rel, kept_note)
    return True


def plan_settings_unwiring(plan, wirings, deny, before=None):
    """Take the protocol's entries and rules out of the shared settings; returns
    the settings as the run leaves them (None when they cannot be read)."""
    try:
        settings, original = load_settings(plan.path(SETTINGS), SETTINGS)
    except SettingsError as error:
        plan.refuse(str(error))
        return None
    if original is None:
        return settings
    outcome, notes = settings_after_uninstall(plan.root, original, settings, wirings, deny,
                                              before)
    if outcome is not None:
        plan_what_is_left(plan, SETTINGS, outcome, "; ".join(notes),
                          "held only the protocol's entries")
    return settings


def settings_after_uninstall(root, text, settings, wirings, deny, before, use_head=True):
    """(what --uninstall leaves of a settings text, see what_uninstall_leaves;
    notes on what it took out), taking the protocol's parts out of settings,
    the text's settings. (None, []) when the text holds nothing of the
    protocol's. What the settings held before the install (before) stays:
    a rule or an entry the user had is theirs, even where it is the
    protocol's too."""
    created = is_as_the_installer_creates_it(text, settings, wirings, deny)
    had = settings_before(before)
    wirings = [wiring for wiring in wirings if not our_handlers(had, wiring)]
    changed = unwire(settings, wirings)
    notes = ["unwired " + " and ".join(changed)] if changed else []
    gone = unwire_the_bash_editions_missing_hooks(settings, root)
    if gone:
        notes.append("unwired the bash edition's {} entry, whose script is gone".format(
            " and ".join(gone)))
    if revoke(settings, "allow", [rule for rule in SKILL_PERMISSIONS
                                  if rule not in rules_of(had, "allow")]):
        notes.append("removed the protocol's Skill permissions")
    dropped = revoke(settings, "deny", [rule for rule in deny
                                        if rule not in rules_of(had, "deny")])
    if dropped:
        notes.append("removed {} .claudeignore deny rule(s)".format(len(dropped)))
    if not notes:
        return None, []
    return what_uninstall_leaves(
        root, SETTINGS, text, settings_bytes(settings, text), created and settings == {},
        lambda other: settings_mean_the_same(settings, other), before, use_head), notes


def settings_before(before):
    """The settings the text from before the install held ({} when there is
    none, or it cannot be read as settings)."""
    if before is None:
        return {}
    try:
        settings = parse_settings(before.lstrip("\ufeff"), SETTINGS)
    except Refusal:
        return {}
    return settings if isinstance(settings, dict) else {}


def is_as_the_installer_creates_it(original, settings, wirings, deny):
    """Whether the settings text is exactly what --project writes where there
    was no settings file, with the interpreter its entries name and those of
    the installer's permission rules it holds (a release before them wrote
    none). Anything else (an empty "hooks" object, another layout) may be the
    user's."""
    pythons = set(interpreter_in(str(handler.get("command", "")))
                  for wiring in wirings for _, handler in our_handlers(settings, wiring))
    if len(pythons) != 1 or None in pythons:
        return False
    fresh = {}
    wire(fresh, pythons.pop(), False, wirings)
    for key, ours in (("allow", SKILL_PERMISSIONS), ("deny", deny)):
        grant(fresh, key, [rule for rule in rules_of(settings, key)
                           if rule in ours])
    return original == settings_text(fresh, None)


def plan_local_wiring_note(plan, wirings):
    """The local settings file is the user's, never changed; but hooks it still
    wires would fail at every session once the hook files are gone."""
    try:
        [(_, local)] = project_settings(plan.root, (LOCAL_SETTINGS,))
    except Refusal:
        return
    events = [wiring.event for wiring in wirings if our_handlers(local, wiring)]
    if events:
        plan.note("{} still wires {} to the removed hooks; delete those entries".format(
            LOCAL_SETTINGS, " and ".join(events)))
    gone = [wiring.event for wiring in WIRINGS if the_bash_edition_is_here(plan.root) and
            bash_edition_handlers(local, wiring) and
            not os.path.lexists(plan.path(HOOK_DIR + "/" + wiring.bash_hook))]
    if gone:
        plan.note("{} still wires {} to the bash edition's hooks, which are gone; delete those "
                  "entries".format(LOCAL_SETTINGS, " and ".join(gone)))


def plan_unblocking(plan, rel, block, lines_are, before=None):
    """Take the protocol's block out of the file at rel (.gitignore, .gitattributes)."""
    text = read_text(plan.path(rel), rel)
    outcome = None if text is None else block_after_uninstall(plan.root, rel, text, block, before)
    if outcome is not None:
        plan_what_is_left(plan, rel, outcome, "removed the " + lines_are,
                          "held only the " + lines_are)


def block_after_uninstall(root, rel, text, block, before, use_head=True):
    """What --uninstall leaves of the text of a file with a marked block (see
    what_uninstall_leaves); None when it holds no block."""
    new_text = without_block(text, block)
    if new_text is None:
        return None
    new_text = with_final_newline_as(text, new_text)
    return what_uninstall_leaves(root, rel, text, encode_text(new_text),
                                 text == appended("", block),
                                 lambda other: other.splitlines() == new_text.splitlines(),
                                 before, use_head)


def what_uninstall_leaves(root, rel, original, data, only_ours, same_as, before, use_head=True):
    """(bytes, note) for what is left of a file (its text was original) once
    the protocol's parts are out, which come to data; (None, note) when the
    file goes. The file's text from before the install (before, when --project
    wrote it down) comes back when what is left means the same (same_as says
    so); else HEAD's bytes, in the file's line endings, likewise. Only a file
    that held nothing but what the installer writes into a new one (only_ours)
    is removed, and never one that was there before, nor while git tracks it
    (committed or only staged) or cannot say. Without use_head, git is not
    asked: what the file alone gives back, as when HEAD moves on."""
    if before is not None and same_as(before):
        return encode_text(before), ""
    tracked = is_tracked_by_git(root, rel) if use_head else False
    head = committed_version(root, rel, newline_of(original)) if tracked else None
    if head is not None and same_as(head.decode("utf-8", "surrogateescape")):
        return head, ""
    if only_ours and before is None and tracked is False:
        return None, ""
    if only_ours and before is None and tracked is None:
        return data, "; kept, since git could not say whether it tracks the file"
    return data, ""


def plan_what_is_left(plan, rel, outcome, note, removed_note):
    data, how = outcome
    if data is None:
        plan.remove(rel, removed_note)
    else:
        plan.write("merge", rel, data, note + how)
