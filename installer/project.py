"""--project and --update: the plan that puts the protocol into a project or brings it up to date.

Why it exists: this is the installer's main work, each part planned by one function: the hooks
and commands (the protocol's brought up to date, one the user edited replaced only with --force,
one of the user's never taken over), the memory index and .claudeignore (never overwritten), the
.gitignore and .gitattributes blocks, the settings entries and permission rules (the user's own
never touched), the move from an earlier release's handoff path and of a memory in the stamped
format to the team format, and the hooks' executable bit in git's index. Each part tells the
ownership record (record.py) what the run leaves the protocol's, and the record is written before
anything else.
"""

import copy
import os

from .errors import Refusal
from .files import (
    encode_text, file_mode_for, is_executable, move_without_overwriting, read_bytes, read_text,
    same_content, why_unsafe_to_change, why_unwritable,
)
from .protocol import (
    CLAUDEIGNORE, COMMANDS, COMMAND_DIR, DEFAULT_PYTHON, HOOKS, HOOK_DIR, LOCAL_SETTINGS,
    MARKED_BLOCKS, MEMORY_INDEX, OLD_SESSION_STATE, SESSION_STATE, SETTINGS,
    SKILL_PERMISSIONS, TEMPLATE_CLAUDEIGNORE, WIRINGS, command_for, skill_rule, wired_together,
)
from .releases import RETIRED_COMMANDS
from .plan import Plan, Step
from .settings import SettingsError, load_settings, project_settings, settings_bytes
from .interpreter import interpreter_in, why_the_interpreter_is_missing
from .permissions import deny_rule_lines, grant, revoke, rules_of
from .wiring import (
    installed_interpreters, is_on_a_released_matcher, our_handlers, unwire, wire,
    why_entries_cannot_go_in, withheld_entries,
)
from .blocks import with_block, with_final_newline_as
from .bash_edition import (
    moved_from_the_bash_edition, plan_bash_edition_hooks_note, take_over_the_bash_edition,
    the_bash_edition_is_here,
)
from .repository import (
    index_entries, mark_executable_in_index, why_index_cannot_change,
)
from .memory_move import plan_memory_format_move
from .memory_index import index_for
from .agents import (
    OTHER_AGENTS, agent_files, agents_for, interpreters_wired_for, plan_agent_wiring, plan_agents_md,
)
from .record import Ownership


class Options(object):
    def __init__(self, force=False, update=False, python=None, agents=None):
        self.force = force
        self.update = update
        self.python = python
        self.agents = agents  # the agents asked for besides those already wired


def plan_install(source, project, options):
    """The plan for --project (and, with options.update, for --update)."""
    plan = Plan(project)
    owned = Ownership(project, source)
    if options.python is not None:
        plan_interpreter_note(plan, options.python)
    known = installed_interpreters(plan.root)
    python = command_interpreter(known, options)
    ours = [name for name in HOOKS
            if plan_owned_file(plan, owned, HOOK_DIR + "/" + name, source.hook(name), options,
                               hook=True)]
    commands = [name for name in COMMANDS
                if plan_owned_file(plan, owned, COMMAND_DIR + "/" + name,
                                   command_for(source, name, python), options, hook=False,
                                   pythons=known + [python, DEFAULT_PYTHON])]
    plan_retired_commands(plan, owned, options)
    if not options.update:
        plan_memory_index(plan, owned, index_for(source, project))
    ignore_text = plan_claudeignore(plan, owned, source, options)
    for rel, template, lines_are in MARKED_BLOCKS:
        plan_marked_block(plan, owned, rel, source.marked_template(template), lines_are)
    if options.update:
        plan_session_state_move(plan)
        plan_memory_format_move(plan, owned, source)
    wirings = wired_together(ours)
    owned.hooks_owned = ours
    plan_settings_wiring(plan, owned, options, wirings, commands, ignore_text)
    plan.agents = plan_other_agents(plan, owned, source, options, python, known,
                                    [wiring.hook for wiring in wirings])
    plan_git_index(plan, project, ours)
    owned.plan_writes(plan)
    return plan


def plan_other_agents(plan, owned, source, options, python, known, hooks):
    """The agents besides Claude Code asked for, wired, or recorded as wired: their skills, then
    their hooks files, wired to the hooks Claude Code's entries run (hooks), then AGENTS.md.
    Returns them."""
    agents = agents_for(plan.root, options.agents, owned.known.wired)
    for agent in OTHER_AGENTS:  # one the user took out is no longer the protocol's to wire
        if agent not in agents and owned.after.wired.pop(agent.settings, None) is not None:
            owned.after.created = [rel for rel in owned.after.created if rel != agent.settings]
    pythons = known + interpreters_wired_for(plan.root) + [python, DEFAULT_PYTHON]
    for rel, data, is_ours in agent_files(agents, source, python, pythons):
        plan_owned_file(plan, owned, rel, data, options, hook=False, is_ours=is_ours)
    for agent in agents:
        plan_agent_wiring(plan, owned, agent, python, options.update, hooks)
    plan_agents_md(plan, owned, source, "agents-md" in (options.agents or ()), options.force)
    return agents


def command_interpreter(known, options):
    """The interpreter the commands name: the one the hooks run with after this
    run (--project leaves an existing entry's interpreter as it is)."""
    if options.python is not None and (options.update or not known):
        return options.python
    return known[0] if known else options.python or DEFAULT_PYTHON


def plan_retired_commands(plan, owned, options):
    """A command an earlier release installed under a name this version no
    longer uses: --update (or --force) removes an unedited copy; an edited one
    stays, and the line says what replaced it; a file of the user's under that
    name is not the protocol's, and nothing is said of it."""
    for name, successor in sorted(RETIRED_COMMANDS.items()):
        rel = COMMAND_DIR + "/" + name
        existing = read_bytes(plan.path(rel), rel)
        if existing is None:
            continue
        renamed = "/{} is now /{}".format(name[:-3], successor[:-3])
        if not owned.owns(rel, existing):
            if owned.wrote(rel):
                plan.hold(rel, "edited by you; {}, and this file shadows the CLI's own /{}"
                          .format(renamed, name[:-3]))
                plan.edited.append(rel)
        elif options.update or options.force:
            plan.remove(rel, renamed)
            owned.disown(rel)
        else:
            plan.keep(rel, "{}; --update removes it".format(renamed))


def plan_claudeignore(plan, owned, source, options):
    """Write the template where there is no .claudeignore; --update replaces
    the protocol's copy of an earlier template that nobody edited. Returns the
    text the file holds after the run (its lines become the settings' deny
    rules), or False when there is something there that cannot be read (its
    rules are then left as they are)."""
    template = source.bytes_of(TEMPLATE_CLAUDEIGNORE)
    try:
        existing = read_bytes(plan.path(CLAUDEIGNORE), CLAUDEIGNORE)
    except Refusal:
        plan.keep(CLAUDEIGNORE, "exists; never overwritten")
        return False
    if existing is None and os.path.lexists(plan.path(CLAUDEIGNORE)):
        plan.keep(CLAUDEIGNORE, "exists; never overwritten")
        return False
    if existing is None:
        owned.disown(CLAUDEIGNORE)
        if not options.update:
            plan.write("write", CLAUDEIGNORE, template)
            owned.own(CLAUDEIGNORE, template)
            return template.decode("utf-8")
        return None
    if options.update and not same_content(existing, template) and \
            owned.owns(CLAUDEIGNORE, existing):
        plan.write("replace", CLAUDEIGNORE, template, "was an older version", whole=True)
        owned.own(CLAUDEIGNORE, template)
        return template.decode("utf-8")
    if owned.owns(CLAUDEIGNORE, existing):
        owned.own(CLAUDEIGNORE, existing)
    plan.keep(CLAUDEIGNORE, "exists; never overwritten")
    return existing.decode("utf-8", "surrogateescape")


def plan_session_state_move(plan):
    """Move the handoff from 0.1.0's default path to this version's: the new
    name appears with the whole file at once, and a handoff already at the new
    path is never overwritten."""
    old, new = plan.path(OLD_SESSION_STATE), plan.path(SESSION_STATE)
    if not os.path.isfile(old) or os.path.islink(old):
        return
    if os.path.lexists(new):
        plan.keep(OLD_SESSION_STATE, "{} exists and is the one read; delete this older "
                  "handoff once nothing in it is needed".format(SESSION_STATE))
        return
    reason = why_unsafe_to_change(plan.root, SESSION_STATE, None) or \
        why_unwritable(plan.root, SESSION_STATE, None)
    if reason:
        plan.refuse(reason)
        return
    plan.change("move", OLD_SESSION_STATE, "to " + SESSION_STATE,
                lambda: move_without_overwriting(old, new))


def plan_owned_file(plan, owned, rel, data, options, hook, pythons=(DEFAULT_PYTHON,),
                    is_ours=None):
    """A hook, command or skill, data being this version's. The protocol's file
    (the record's, or a copy of this version) is brought up to date by --update
    or --force; one the user edited stays unless --force (for a hook, --update
    --force, since a hook runs at every session). A file of the user's under
    the name is never taken over, not even with --force: it is named as a
    clash. is_ours tells an earlier version's bytes, for a file no release
    lists (another agent's skill), in an install made before the record.
    Returns whether the file is the protocol's after the run."""
    path = plan.path(rel)
    existing = read_bytes(path, rel)
    if existing is None:  # absent, or a link to nothing, which the write refuses
        plan.write("write", rel, data, executable=hook, whole=True)
        owned.own(rel, data)
        return True
    if same_content(existing, data):
        if hook and not is_executable(path):
            mode = file_mode_for(path, executable=True)
            plan.change("chmod", rel, "", lambda: os.chmod(path, mode))
        else:
            plan.keep(rel, "up to date")
        owned.own(rel, data)
        return True
    forced = options.force and (options.update or not hook)
    if owned.owns(rel, existing, pythons, is_ours):
        if options.update or options.force:
            plan.write("replace", rel, data, "was an older version", executable=hook, whole=True)
            owned.own(rel, data)
        else:
            plan.hold(rel, "differs from this version; --update or --force replaces it")
            owned.own(rel, existing)
        return True
    if owned.wrote(rel):
        if forced:
            kept = plan_copy_of_the_edit(plan, rel, existing)
            plan.write("replace", rel, data, "--force; your edit is kept in " + kept,
                       executable=hook, whole=True)
            owned.own(rel, data)
        else:
            plan.hold(rel, "edited by you; {} replaces it".format(
                "--update --force" if hook else "--force"))
            plan.edited.append(rel)
        return True
    plan.keep(rel, "your own {}, not the protocol's: it stays, and the protocol's {} is not "
              "installed (see --check)".format(*what_it_is(rel, hook)))
    plan.clashes.append(rel)
    return False


# What a copy of an edited file --force replaces is named: the file's name with this after it,
# which no agent loads as a command, skill or hook.
EDIT_COPY = ".mine"


def plan_copy_of_the_edit(plan, rel, existing):
    """Keep the user's edited version of a protocol file --force is about to replace, beside it
    (rel.mine, or rel.mine-2 and on when that holds something else): --force brings the file up
    to date, never throws an edit away. Returns the copy's path. The copy is the user's: no mode
    removes it."""
    number = 1
    while True:
        copy = rel + EDIT_COPY + ("" if number == 1 else "-{}".format(number))
        there = read_bytes(plan.path(copy), copy)
        if there is None and not os.path.lexists(plan.path(copy)):
            plan.write("write", copy, existing, "your edited version, before --force")
            return copy
        if there is not None and there == existing:
            plan.keep(copy, "your edited version, already kept")
            return copy
        number += 1


def plan_git_index(plan, project, ours):
    """Mark the installer's tracked hooks 100755 in git's index; never stage
    new files or content, nor touch the mode of a hook of the user's or of an
    entry that is no plain file (a symbolic link, a conflict)."""
    rels = [HOOK_DIR + "/" + name for name in HOOKS]
    entries = index_entries(project, rels)
    if entries is None:
        return
    tracked = [entries.get(HOOK_DIR + "/" + name) for name in ours]
    to_mark = [entry for entry in tracked if entry is not None and entry.is_a_plain_file()]
    if to_mark:
        problem = why_index_cannot_change(project)
        if problem:
            plan.refuse(problem)
            return
        plan.steps.append(Step("index", ", ".join(
            os.path.basename(entry.top_path) for entry in to_mark),
            "mode 100755 in git's index", lambda: mark_executable_in_index(project, to_mark)))
    # What is not in git yet (the new hooks, the record) is named after the changes, in the
    # one git add line of the run's next steps (next_steps.py).


def plan_interpreter_note(plan, python):
    missing = why_the_interpreter_is_missing(python)
    if missing:
        plan.note("{}; the hooks fail wherever it is missing".format(missing))


def plan_memory_index(plan, owned, data):
    """The memory index where there is none: the template, with a pointer to each note already
    beside it (memory_index.py); one that is there is the user's memory, never overwritten."""
    if os.path.lexists(plan.path(MEMORY_INDEX)):
        plan.keep(MEMORY_INDEX, "exists; never overwritten")
    else:
        plan.write("write", MEMORY_INDEX, data)
        owned.own(MEMORY_INDEX, data)


def plan_marked_block(plan, owned, rel, block, lines_are):
    """The block once in the file at rel (.gitignore, .gitattributes), among the user's lines,
    which stay as they were; the file is written new when there is none."""
    text = read_text(plan.path(rel), rel)
    new_text, how = with_block(text or "", block)
    new_text = with_final_newline_as(text or "", new_text)
    if how is None:
        plan.keep(rel, lines_are + " present")
    else:
        verb, note = {"append": ("append", "added the " + lines_are),
                      "replace": ("repair", "restored the " + lines_are),
                      "take over": ("merge", "took over the bash edition's " + lines_are)}[how]
        plan.write("write" if text is None else verb, rel, encode_text(new_text), note)
    if text is None:
        owned.after.created.append(rel)


def plan_settings_wiring(plan, owned, options, wirings, commands, ignore_text):
    path = plan.path(SETTINGS)
    try:
        settings, original = load_settings(path, SETTINGS)
    except SettingsError as error:
        plan.refuse(str(error))
        return
    problem = why_entries_cannot_go_in(settings, wirings, SETTINGS)
    if problem:
        plan.refuse(problem)
        return
    read = copy.deepcopy(settings)
    if options.python is not None and not options.update:
        plan_kept_interpreter_note(plan, settings, options.python, wirings)
    withheld = unwire(settings, withheld_entries(settings, owned, wirings, WIRINGS))
    # an entry that runs a hook of the user's is theirs, whatever the record says
    owned.after.hooks = [wiring.event for wiring in wirings if wiring.event in owned.after.hooks]
    moved = take_over_the_bash_edition(settings, options.python, wirings) \
        if the_bash_edition_is_here(plan.root) else []
    present = [wiring.event for wiring in wirings if our_handlers(settings, wiring)]
    updatable = [event for event in present if owned.owns_event(event)]
    changed = wire(settings, options.python, options.update, wirings, updatable)
    owned.after.hooks += [event for event in changed if event not in present] + \
        [wiring.event for wiring, replaced in moved if replaced]
    if options.update:
        plan_shared_matcher_note(plan, settings, wirings)
    notes = ["wired " + " and ".join(changed)] if changed else []
    if withheld:
        notes.append(TOOK_BACK.format(" and ".join(withheld)))
    notes += permission_changes(plan, owned, settings, commands, ignore_text)
    # One line for each event moved from the bash edition, one for the rest;
    # the first carries the file's one write, the others say what it holds.
    lines = [moved_from_the_bash_edition(wiring, replaced) for wiring, replaced in moved]
    lines += ["; ".join(notes)] if notes else []
    if not lines:
        plan.keep(SETTINGS, "hooks already wired")
    else:
        verb = "write" if original is None else "merge"
        plan.write(verb, SETTINGS, settings_bytes(settings, original), lines[0])
        plan.steps += [Step(verb, SETTINGS, line, None) for line in lines[1:]]
    if original is None:
        owned.after.created.append(SETTINGS)
    owned.note_containers(read, settings, [wiring.event for wiring, _ in moved])
    plan_bash_edition_hooks_note(plan, settings)


TOOK_BACK = ("took back the protocol's {} entry: session start and the Stop guard are wired "
             "together or not at all, and one of them is not the protocol's here (see --check)")


def permission_changes(plan, owned, settings, commands, ignore_text):
    """Allow the skills of the protocol's commands that are installed, and take back a grant
    the protocol made for one that is not (a command of the user's under its name is not the
    protocol's to grant); bring the protocol's deny rules in line with the .claudeignore: add
    a rule for each line that has none, and take out the rules the protocol added for lines no
    longer there. A rule the protocol did not add is the user's, and stays. Returns what
    changed, as notes."""
    notes = []
    wanted = [rule for rule in SKILL_PERMISSIONS if rule in map(skill_rule, commands)]
    taken_back = revoke(settings, "allow", [rule for rule in owned.after.allow
                                            if rule not in wanted])
    owned.after.allow = [rule for rule in owned.after.allow if rule in wanted]
    plan.grantable = grants_to_make(plan, owned, settings, commands)
    allowed = grant(settings, "allow", plan.grantable)
    owned.after.allow += allowed
    if allowed:
        notes.append("allowed " + ", ".join(allowed))
    if taken_back:
        notes.append("took back {}, since that command is not the protocol's".format(
            ", ".join(taken_back)))
    if ignore_text is False:  # a .claudeignore that cannot be read: its rules stay as they are
        return notes
    lines, skipped = deny_rule_lines(ignore_text)
    dropped = revoke(settings, "deny", [rule for rule in owned.after.deny if rule not in lines])
    owned.after.deny = dict((rule, lines[rule]) for rule in owned.after.deny if rule in lines)
    added = grant(settings, "deny", list(lines))
    owned.after.deny.update((rule, lines[rule]) for rule in added)
    if added:
        notes.append("denied the file tools {} .claudeignore pattern(s)".format(len(added)))
    if dropped:
        notes.append("dropped {} deny rule(s) for lines gone from .claudeignore".format(
            len(dropped)))
    if skipped:
        plan.note("{} has no deny form (a negation, a backslash or parentheses), so the agent's "
                  "file tools may still open what it names: {}".format(
                      CLAUDEIGNORE, ", ".join(skipped)))
    return notes


def grants_to_make(plan, owned, settings, commands):
    """The Skill rules a run may add: one for each of the protocol's commands that holds bytes
    the installer wrote (one the user edited, or that only the record calls the protocol's,
    gets none it did not have), unless the user decided otherwise: a rule the protocol granted
    and the user took out of "allow", or one they put in "ask" or "deny", stays as they left it."""
    vetted = [name for name in commands if COMMAND_DIR + "/" + name not in plan.edited]
    try:
        files = [settings] + [local for _, local in project_settings(plan.root, (LOCAL_SETTINGS,))]
    except SettingsError:
        files = [settings]
    decided = [rule for each in files for key in ("ask", "deny") for rule in rules_of(each, key)]
    return [rule for rule in SKILL_PERMISSIONS if rule in map(skill_rule, vetted)
            and rule not in decided and not owned.owns_rule("allow", rule)]


def plan_shared_matcher_note(plan, settings, wirings):
    """After wire(), a group still on an earlier release's matcher is one the
    user's own handlers share: say what that costs and how to fix it."""
    for wiring in wirings:
        kept = [group["matcher"] for group, _ in our_handlers(settings, wiring)
                if is_on_a_released_matcher(group, wiring)]
        if kept:
            missing = [source for source in wiring.matcher.split("|")
                       if source not in kept[0].split("|")]
            plan.note("the {} group shared with hooks of your own keeps its matcher, so the "
                      "protocol's hook misses {}; add it there, or move that hook to a group "
                      "of its own".format(wiring.event, "|".join(missing)))


def plan_kept_interpreter_note(plan, settings, python, wirings):
    """--project never changes an existing entry, so a new --python would be
    silently ignored: say how to apply it."""
    wired = set(interpreter_in(str(handler.get("command", "")))
                for wiring in wirings for _, handler in our_handlers(settings, wiring))
    kept = sorted(wired - {python, None}) + (["a command of your own"] if None in wired else [])
    if kept:
        shown = '"{}"'.format(python) if " " in python else python
        plan.note("the hooks stay wired to {}; --update --python {} changes that".format(
            " and ".join(kept), shown))


def what_it_is(rel, hook):
    """(what kind of file rel is, how the protocol's is called) for the line that keeps a file of
    the user's under one of the protocol's names."""
    if hook:
        return "hook", os.path.basename(rel)
    if rel.endswith("/SKILL.md"):
        return "skill", rel.split("/")[-2]
    return "command", "/" + os.path.basename(rel)[:-3]
