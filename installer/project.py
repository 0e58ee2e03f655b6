"""--project and --update: the plan that puts the protocol into a project or brings it up to date.

Why it exists: this is the installer's main work, each part planned by one function: the hooks
and commands (replaced only when they are a released version, or with --force), the memory index
and .claudeignore (never overwritten), the .gitignore and .gitattributes blocks, the settings
entries and permission rules, the move from an earlier release's handoff path and of a memory in
the stamped format to the team format, the before-install record, and the hooks' executable bit
in git's index.
"""

import hashlib
import json
import os
import re
import shutil

from .errors import Refusal
from .files import (
    encode_text, file_mode_for, is_an_empty_folder, is_executable, lf_endings,
    move_without_overwriting, read_bytes, read_text, same_content, why_unsafe_to_change,
    why_unwritable,
)
from .protocol import (
    CLAUDEIGNORE, COMMANDS, COMMAND_DIR, DEFAULT_PYTHON, GITIGNORE, HOOKS, HOOK_DIR,
    MARKED_BLOCKS, MEMORY_INDEX, OLD_SESSION_STATE, SESSION_STATE, SETTINGS, SKILL_PERMISSIONS,
    TEMPLATE_CLAUDEIGNORE, TEMPLATE_MEMORY, command_for, wirings_of,
)
from .releases import RELEASED_CLAUDEIGNORE_DIGESTS, RETIRED_COMMANDS, is_the_installers
from .plan import Plan, Step
from .settings import SettingsError, load_settings, parse_settings, settings_bytes
from .interpreter import interpreter_in, interpreter_program
from .permissions import deny_rules, grant, our_deny_rules, revoke
from .wiring import (
    installed_interpreters, is_on_a_released_matcher, our_handlers, protocol_is_installed, wire,
)
from .blocks import with_block, with_final_newline_as
from .bash_edition import (
    moved_from_the_bash_edition, plan_bash_edition_hooks_note, take_over_the_bash_edition,
    the_bash_edition_is_here,
)
from .repository import (
    ignoring_lines, index_entries, mark_executable_in_index, why_index_cannot_change,
)
from .before_install import BEFORE_INSTALL, INSTALL_FOLDERS, read_before_install
from .uninstall import block_after_uninstall, settings_after_uninstall
from .memory_move import plan_memory_format_move
from .agents import (
    agent_files, agents_for, before_install_entries, interpreters_wired_for, plan_agent_wiring,
    plan_agents_md,
)


class Options(object):
    def __init__(self, force=False, update=False, python=None, agents=None):
        self.force = force
        self.update = update
        self.python = python
        self.agents = agents  # the agents asked for besides those already wired


def plan_install(source, project, options):
    """The plan for --project (and, with options.update, for --update)."""
    plan = Plan(project)
    if options.python is not None:
        plan_interpreter_note(plan, options.python)
    known = installed_interpreters(plan)
    python = command_interpreter(known, options)
    ours = [name for name in HOOKS
            if plan_owned_file(plan, source, HOOK_DIR + "/" + name, source.hook(name), options,
                               hook=True)]
    for name in COMMANDS:
        plan_owned_file(plan, source, COMMAND_DIR + "/" + name, command_for(source, name, python),
                        options, hook=False, pythons=known + [python, DEFAULT_PYTHON])
    plan_retired_commands(plan, source, options)
    if not options.update:
        plan_copy_if_absent(plan, MEMORY_INDEX, source.bytes_of(TEMPLATE_MEMORY))
    ignore_text = plan_claudeignore(plan, source, options)
    for rel, template, lines_are in MARKED_BLOCKS:
        plan_marked_block(plan, rel, source.marked_template(template), lines_are)
    if options.update:
        plan_session_state_move(plan)
        plan_memory_format_move(plan, source)
    plan_settings_wiring(plan, options, wirings_of(ours), source, ignore_text)
    agents = plan_other_agents(plan, source, options, python, known)
    plan_before_install_record(plan, source, ours, ignore_text, agents, options.update)
    plan_git_index(plan, project, ours)
    return plan


def plan_other_agents(plan, source, options, python, known):
    """The agents besides Claude Code asked for or already wired: their command files, then
    their hooks files. Returns them."""
    agents = agents_for(plan.root, options.agents)
    pythons = known + interpreters_wired_for(plan.root) + [python, DEFAULT_PYTHON]
    for rel, data, is_ours in agent_files(agents, source, python, pythons):
        plan_owned_file(plan, source, rel, data, options, hook=False, is_ours=is_ours)
    for agent in agents:
        plan_agent_wiring(plan, agent, python, options.update)
    plan_agents_md(plan, source, "agents-md" in (options.agents or ()), options.force)
    return agents


def command_interpreter(known, options):
    """The interpreter the commands name: the one the hooks run with after this
    run (--project leaves an existing entry's interpreter as it is)."""
    if options.python is not None and (options.update or not known):
        return options.python
    return known[0] if known else options.python or DEFAULT_PYTHON


def plan_retired_commands(plan, source, options):
    """A command an earlier release installed under a name this version no
    longer uses: --update (or --force) removes an unedited copy; an edited one
    stays, and the line says what replaced it."""
    for name, successor in sorted(RETIRED_COMMANDS.items()):
        rel = COMMAND_DIR + "/" + name
        existing = read_bytes(plan.path(rel), rel)
        if existing is None:
            continue
        renamed = "/{} is now /{}".format(name[:-3], successor[:-3])
        if not is_the_installers(source, rel, existing):
            plan.hold(rel, "edited by you; {}, and this file shadows the CLI's own /{}".format(
                renamed, name[:-3]))
        elif options.update or options.force:
            plan.remove(rel, renamed)
        else:
            plan.keep(rel, "{}; --update removes it".format(renamed))


def plan_claudeignore(plan, source, options):
    """Write the template where there is no .claudeignore; --update replaces a
    copy of a released template nobody edited. Returns the text the file holds
    after the run (its lines become the settings' deny rules)."""
    template = source.bytes_of(TEMPLATE_CLAUDEIGNORE)
    try:
        existing = read_bytes(plan.path(CLAUDEIGNORE), CLAUDEIGNORE)
    except Refusal:
        existing = None
    if existing is None and os.path.lexists(plan.path(CLAUDEIGNORE)):
        plan.keep(CLAUDEIGNORE, "exists; never overwritten")
        return None
    if existing is None:
        if not options.update:
            plan.write("write", CLAUDEIGNORE, template)
            return template.decode("utf-8")
        return None
    if options.update and not same_content(existing, template) and \
            hashlib.sha256(lf_endings(existing)).hexdigest() in RELEASED_CLAUDEIGNORE_DIGESTS:
        plan.write("replace", CLAUDEIGNORE, template, "was an older version", whole=True)
        return template.decode("utf-8")
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


def plan_owned_file(plan, source, rel, data, options, hook, pythons=(DEFAULT_PYTHON,),
                    is_ours=None):
    """A hook or command: the installer's own file, replaced only when allowed.
    A file of the user's under the same name is kept unless --force says
    otherwise (for a hook, --update --force, since a hook runs at every
    session). Returns whether the file is the installer's after the run.
    is_ours tells the installer's own bytes for a file no release has listed
    (another agent's skill or command)."""
    path = plan.path(rel)
    existing = read_bytes(path, rel)
    if existing is None:  # absent, or a link to nothing, which the write refuses
        plan.write("write", rel, data, executable=hook, whole=True)
        return True
    if same_content(existing, data):
        if hook and not is_executable(path):
            mode = file_mode_for(path, executable=True)
            plan.change("chmod", rel, "", lambda: os.chmod(path, mode))
        else:
            plan.keep(rel, "up to date")
        return True
    if (is_ours(existing) if is_ours else is_the_installers(source, rel, existing, pythons)):
        if options.update or options.force:
            plan.write("replace", rel, data, "was an older version", executable=hook, whole=True)
            return True
        plan.hold(rel, "differs from this version; --update or --force replaces it")
        return True
    if options.force and (options.update or not hook):
        plan.write("replace", rel, data, "--force", executable=hook, whole=True)
        return True
    plan.hold(rel, "not a version the installer shipped; --update --force replaces it" if hook
              else "edited by you; --force replaces it")
    return False


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
    untracked = [rel for rel in rels if rel not in entries]
    if untracked:  # git add refuses an ignored path: then the sharing note comes first
        plan.note("the hooks are not in git yet; {}add them with: git add --chmod=+x "
                  ".claude/hooks/*.py".format("once .gitignore no longer ignores them, "
                                              if ignoring_lines(project, untracked) else ""))


def plan_interpreter_note(plan, python):
    program = interpreter_program(python)
    if shutil.which(os.path.expanduser(program)) is None:
        where = "does not exist on this machine" if re.search(r"[/\\]", program) \
            else "is not on this machine's PATH"
        plan.note("{} {}; the hooks fail wherever it is missing".format(program, where))


def plan_copy_if_absent(plan, rel, data):
    if os.path.lexists(plan.path(rel)):
        plan.keep(rel, "exists; never overwritten")
    else:
        plan.write("write", rel, data)


def plan_marked_block(plan, rel, block, lines_are):
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


def plan_settings_wiring(plan, options, wirings, source, ignore_text):
    path = plan.path(SETTINGS)
    try:
        settings, original = load_settings(path, SETTINGS)
    except SettingsError as error:
        plan.refuse(str(error))
        return
    if options.python is not None and not options.update:
        plan_kept_interpreter_note(plan, settings, options.python, wirings)
    moved = take_over_the_bash_edition(settings, options.python, wirings) \
        if the_bash_edition_is_here(plan.root) else []
    changed = wire(settings, options.python, options.update, wirings)
    if options.update:
        plan_shared_matcher_note(plan, settings, wirings)
    notes = ["wired " + " and ".join(changed)] if changed else []
    notes += permission_changes(plan, settings, source, ignore_text)
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
    plan_bash_edition_hooks_note(plan, settings)


def permission_changes(plan, settings, source, ignore_text):
    """Allow the protocol's skills and bring the deny rules in line with the
    .claudeignore: add the missing ones, remove the installer's rules for
    lines no longer there; the user's own rules stay. Returns what changed,
    as notes."""
    notes = []
    allowed = grant(settings, "allow", SKILL_PERMISSIONS)
    if allowed:
        notes.append("allowed " + ", ".join(allowed))
    wanted, skipped = deny_rules(ignore_text)
    stale = [rule for rule in our_deny_rules(source, ignore_text) if rule not in wanted]
    dropped = revoke(settings, "deny", stale)
    added = grant(settings, "deny", wanted)
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


def plan_before_install_record(plan, source, ours, ignore_text, agents, update):
    """Write down what the uninstall could not tell once this run's changes
    are made (see BEFORE_INSTALL): folders there and empty, and the bytes of a
    file the uninstall would not give back. An earlier record keeps what it
    says: it was written before that install. Claude Code's parts are looked
    at by the first install only; another agent's, whenever a run first wires
    that agent."""
    earlier = read_before_install(plan.root)
    record = earlier or {"folders": [], "files": {}}
    for_agents = before_install_entries(plan, agents, record)
    if update or protocol_is_installed(plan.root):  # what is here is an install's
        plan_record(plan, earlier, record, for_agents["folders"], for_agents["files"])
        return
    folders = [rel for rel in INSTALL_FOLDERS
               if rel not in record["folders"] and is_an_empty_folder(plan.path(rel))]
    deny = our_deny_rules(source, ignore_text)
    blocks = dict((rel, source.marked_template(template)) for rel, template, _ in MARKED_BLOCKS)

    def given_back(rel, text, use_head):
        """What the uninstall would give back of the installed text: with HEAD as it is now,
        and without it, as once the user commits the installed file."""
        if rel == SETTINGS:
            return settings_after_uninstall(
                plan.root, text, parse_settings(text.lstrip("\ufeff"), SETTINGS),
                wirings_of(ours), deny, None, use_head)[0]
        return block_after_uninstall(plan.root, rel, text, blocks[rel], None, use_head)

    files = {}
    for rel in [SETTINGS] + sorted(blocks):
        if rel in record["files"] or rel not in plan.planned:
            continue
        original = read_bytes(plan.path(rel), rel)
        if original is None:
            continue
        installed = plan.planned[rel].decode("utf-8", "surrogateescape")
        if any((given_back(rel, installed, use_head) or (None,))[0] != original
               for use_head in (True, False)):
            files[rel] = original.decode("utf-8", "surrogateescape")
    plan_record(plan, earlier, record, folders + for_agents["folders"],
                dict(files, **for_agents["files"]))


def plan_record(plan, earlier, record, folders, files):
    if not folders and not files:
        return
    if earlier is None and os.path.lexists(plan.path(BEFORE_INSTALL)):
        plan.refuse("{} is there and is not a record the installer wrote; move it away, so the "
                    "install can write down what --uninstall must leave as it was"
                    .format(BEFORE_INSTALL))
        return
    record["folders"] += folders
    record["files"].update(files)
    plan.write("write" if not os.path.lexists(plan.path(BEFORE_INSTALL)) else "merge",
               BEFORE_INSTALL, encode_text(json.dumps(record, indent=2, sort_keys=True) + "\n"),
               "what --uninstall must leave as it was: " + ", ".join(folders + sorted(files)),
               mode=0o600)  # it may hold a copy of settings with secrets in their "env"
