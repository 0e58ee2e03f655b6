"""--uninstall: take out what the protocol added, and give every file of the user's back byte for byte.

Why it exists: removing the protocol must leave the project as it was. What goes is what the
ownership record (record.py) says the protocol added and nobody changed since: its hooks,
commands, .claudeignore and memory index as it wrote them, the hooks' baselines and bytecode,
the settings entries and rules it added, its .gitignore and .gitattributes blocks. A file the
user edited stays, and so does everything of the user's, whatever its name. settings.json,
.gitignore and .gitattributes come back in the bytes they had before the first install when what
is left means the same; a file the install created goes when nothing of the user's is left in
it; a folder goes only when the run empties it and it was not there, empty, before. The handoff
always stays. The records go last, so a run that stops half-way can be run again.
"""

import copy
import os
import re

from .errors import Refusal
from .files import encode_text, read_bytes, read_text
from .protocol import (
    AGENTS_MD, AGENT_FOLDERS, BASELINE_PREFIX, BEFORE_INSTALL, CLAUDEIGNORE, COMMANDS,
    COMMAND_DIR, DEFAULT_PYTHON, HOOKS, HOOK_DIR, LOCAL_SETTINGS, MARKED_BLOCKS, MEMORY_INDEX,
    OLD_SESSION_STATE, RECORD, SESSION_STATE, SETTINGS, SKILL_PERMISSIONS,
    TEMPLATE_AGENTS_SECTION, WIRINGS, wirings_of,
)
from .releases import RETIRED_COMMANDS
from .plan import Plan
from .settings import (
    SettingsError, load_settings, project_settings, settings_bytes, settings_mean_the_same,
)
from .permissions import revoke, rules_of
from .wiring import installed_interpreters, our_handlers, unwire
from .blocks import line_texts, with_final_newline_as, without_block, without_section
from .bash_edition import (
    bash_edition_handlers, plan_bash_edition_hooks_note, the_bash_edition_is_here,
    unwire_the_bash_editions_missing_hooks,
)
from .agents import OTHER_AGENTS, agent_files, interpreters_wired_for, settings_of
from .record import INSTALL_FOLDERS, Ownership


def plan_uninstall(source, project):
    plan = Plan(project)
    owned = Ownership(project, source)
    hooks = [name for name in HOOKS
             if plan_remove_if_ours(plan, owned, HOOK_DIR + "/" + name, "hook")]
    wirings = wirings_of(hooks + [name for name in HOOKS if not os.path.lexists(
        plan.path(HOOK_DIR + "/" + name))])
    for name in sorted(leftovers_of_the_hooks(plan.path(HOOK_DIR))):
        plan.remove(HOOK_DIR + "/" + name, "local file the hooks wrote")
    if plan.will_be_emptied(HOOK_DIR + "/__pycache__"):
        plan.remove(HOOK_DIR + "/__pycache__", "now empty")
    pythons = installed_interpreters(plan.root) + [DEFAULT_PYTHON]
    for name in COMMANDS + tuple(sorted(RETIRED_COMMANDS)):
        plan_remove_if_ours(plan, owned, COMMAND_DIR + "/" + name, "command", pythons)
    plan_remove_if_ours(plan, owned, CLAUDEIGNORE, "file")
    plan_remove_if_ours(plan, owned, MEMORY_INDEX, "memory index")
    settings = plan_settings_unwiring(plan, owned, wirings)
    plan_local_wiring_note(plan, wirings)
    if settings is not None:
        plan_bash_edition_hooks_note(plan, settings)
    for rel, template, lines_are in MARKED_BLOCKS:
        plan_unblocking(plan, owned, rel, source.marked_template(template), lines_are)
    plan_agents_removal(plan, owned, source, pythons)
    plan_record_removal(plan, owned)
    for rel in INSTALL_FOLDERS:
        if rel not in owned.folders_before() and os.path.isdir(plan.path(rel)) and \
                plan.will_be_emptied(rel):
            plan.remove(rel, "now empty")
    if os.path.isdir(plan.path("memory")) and not plan.will_be_emptied("memory"):
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


def plan_remove_if_ours(plan, owned, rel, kind, pythons=(DEFAULT_PYTHON,), is_ours=None):
    """Remove the file at rel when it is the protocol's as it wrote it; keep it, saying why,
    when it is the protocol's file edited since, or the user's own under the name. Returns
    whether the run removes it."""
    existing = read_bytes(plan.path(rel), rel)
    if existing is None:
        return False
    if owned.owns(rel, existing, pythons, is_ours):
        plan.remove(rel)
        return True
    if kind == "memory index":
        return False  # the user's memory: said once, for the folder
    if owned.wrote(rel):
        plan.keep(rel, "edited by you; left in place")
    else:
        plan.keep(rel, "your own {}, not the protocol's; left in place".format(kind))
    return False


def plan_settings_unwiring(plan, owned, wirings):
    """Take the entries and rules the protocol added out of the shared settings; returns the
    settings as the run leaves them (None when they cannot be read)."""
    try:
        settings, original = load_settings(plan.path(SETTINGS), SETTINGS)
    except SettingsError as error:
        plan.refuse(str(error))
        return None
    if original is None:
        return settings
    read = copy.deepcopy(settings)
    changed = unwire(settings, [wiring for wiring in wirings if owned.owns_event(wiring.event)])
    notes = ["unwired " + " and ".join(changed)] if changed else []
    gone = unwire_the_bash_editions_missing_hooks(settings, plan.root)
    if gone:
        notes.append("unwired the bash edition's {} entry, whose script is gone".format(
            " and ".join(gone)))
    if revoke(settings, "allow", [rule for rule in SKILL_PERMISSIONS
                                  if owned.owns_rule("allow", rule)]):
        notes.append("removed the protocol's Skill permissions")
    dropped = revoke(settings, "deny", [rule for rule in rules_of(settings, "deny")
                                        if owned.owns_rule("deny", rule)])
    if dropped:
        notes.append("removed {} .claudeignore deny rule(s)".format(len(dropped)))
    if notes:
        owned.keep_the_users_containers(read, settings)
        before = owned.before_text(SETTINGS)
        if before is not None and settings_mean_the_same(settings, before):
            plan.write("merge", SETTINGS, encode_text(before), "; ".join(notes))
        elif owned.created(SETTINGS) and settings == {}:
            plan.remove(SETTINGS, "held only the protocol's entries")
        else:
            plan.write("merge", SETTINGS, settings_bytes(settings, original), "; ".join(notes))
    return settings


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


def plan_unblocking(plan, owned, rel, block, lines_are):
    """Take the protocol's block out of the file at rel (.gitignore, .gitattributes); lines the
    user wrote inside it stay."""
    text = read_text(plan.path(rel), rel)
    new_text = None if text is None else without_block(text, block)
    if new_text is None:
        return
    new_text = with_final_newline_as(text, new_text)
    before = owned.before_text(rel)
    if before is not None and before.splitlines() == new_text.splitlines():
        plan.write("merge", rel, encode_text(before), "removed the " + lines_are)
    elif owned.created(rel) and not new_text.strip():
        plan.remove(rel, "held only the " + lines_are)
    else:
        plan.write("merge", rel, encode_text(new_text), "removed the " + lines_are)


def plan_agents_removal(plan, owned, source, pythons):
    """Take the protocol's entries out of every other agent's hooks file, remove the skills as
    the protocol wrote them, take its section out of AGENTS.md, then remove the agents' folders
    that leaves empty, unless the local record says they were there, empty, before."""
    for agent in OTHER_AGENTS:
        plan_agent_unwiring(plan, owned, agent)
    pythons = list(dict.fromkeys(interpreters_wired_for(plan.root) + list(pythons)))
    for rel, _, is_ours in agent_files(OTHER_AGENTS, source, DEFAULT_PYTHON, pythons):
        plan_remove_if_ours(plan, owned, rel, "skill", pythons, is_ours)
    plan_agents_md_removal(plan, owned, source)
    for rel in AGENT_FOLDERS:
        if rel not in owned.folders_before() and os.path.isdir(plan.path(rel)) and \
                plan.will_be_emptied(rel):
            plan.remove(rel, "now empty")


def plan_agent_unwiring(plan, owned, agent):
    """The protocol's entries out of the agent's hooks file; the file's bytes from before the
    protocol wired it come back when what is left means the same, and a file the install created
    goes when nothing else is left in it. A hooks file that cannot be read is refused only when
    it names the protocol's hooks: one of the user's that the protocol never wired (Gemini reads
    comments in JSON, for one) is none of this run's business."""
    try:
        settings, original = settings_of(plan.root, agent)
    except SettingsError as error:
        data = read_bytes(plan.path(agent.settings), agent.settings) or b""
        if (HOOK_DIR + "/").encode("ascii") in data:
            plan.refuse(str(error))
        return
    if original is None:
        return
    changed = unwire(settings, [wiring for wiring in agent.wirings
                                if owned.owns_event(wiring.event, agent.settings)])
    if not changed:
        return
    note = "unwired {} for {}".format(" and ".join(changed), agent.shown)
    before = owned.before_text(agent.settings)
    if before is not None and settings_mean_the_same(settings, before):
        plan.write("merge", agent.settings, encode_text(before), note)
    elif owned.created(agent.settings) and settings == {}:
        plan.remove(agent.settings, "held only the protocol's entries")
    else:
        plan.write("merge", agent.settings, settings_bytes(settings, original), note)


def plan_agents_md_removal(plan, owned, source):
    """AGENTS.md as it was before the section came: the section and the line break that set it
    off go; the file goes when the install created it and nothing else is left in it. A
    section the user edited stays."""
    section = source.marked_template(TEMPLATE_AGENTS_SECTION)
    text = read_text(plan.path(AGENTS_MD), AGENTS_MD)
    try:
        found = None if text is None else without_section(text, section, AGENTS_MD)
    except Refusal as error:
        plan.refuse(str(error))
        return
    if found is None:
        return
    new_text, old_section = found
    if line_texts(old_section.splitlines()) != section:
        plan.keep(AGENTS_MD, "its protocol section is edited by you; left in place")
    elif new_text == "" and (owned.created(AGENTS_MD) or text.startswith(section[0])):
        plan.remove(AGENTS_MD, "held only the protocol section")
    else:
        plan.write("merge", AGENTS_MD, encode_text(new_text), "removed the protocol section")


def plan_record_removal(plan, owned):
    """The records go with the rest, last; a file of the user's under a record's name stays."""
    for rel, is_a_record, foreign in ((BEFORE_INSTALL, owned.before is not None,
                                       owned.foreign_before),
                                      (RECORD, owned.record is not None, owned.foreign)):
        if is_a_record:
            plan.remove(rel, "the record of what the protocol added" if rel == RECORD
                        else "what was here before the install")
        elif foreign:
            plan.keep(rel, "not a record the installer wrote; left in place")
