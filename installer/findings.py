"""What --check finds wrong with a project's install, each kind of finding in one function.

Why it exists: --check must fail on every install that cannot run, cannot fire or will not reach
teammates, and say what repairs it. Each function here reads the project (its files, its settings
as the harness reads them, git) and returns Findings: hooks missing or drifted, entries unwired,
silenced, run twice or not trusted in Codex CLI's review, an interpreter that cannot run the
hooks, parts git would not share, a saved file the agent could not write unattended, and what
--update would change, read from --update's own plan so that the check and the repair never
disagree.
"""

import json
import os
import re
import shlex

from .errors import Refusal
from .files import read_bytes, same_content
from .protocol import (
    CLAUDEIGNORE, GITATTRIBUTES, BASELINE_PREFIX, COMMANDS, COMMAND_DIR, DEFAULT_PYTHON, HOOKS, HOOK_DIR, LOCAL_SETTINGS,
    MEMORY_INDEX,
    RECORD, SESSION_STATE, SETTINGS, SKILL_PERMISSIONS, WIRINGS, is_exec_form, skill_rule,
)
from .releases import RETIRED_COMMANDS
from .plan import VERBS
from .settings import harness_settings, is_managed, project_settings, skipped_entries
from .interpreter import (
    NOT_RUN, a_working_python, instead, interpreter_and_flags, shell_word,
    why_interpreter_fails, why_the_settings_path_lacks_it,
)
from .permissions import claudeignore_text, deny_rules, rules_in_force
from .wiring import handlers_where, our_handlers, wired_events
from .bash_edition import bash_edition_wiring, the_bash_edition_is_here
from .repository import (
    ignoring_lines, index_entries, is_in_a_repository, tracked_files_under, why_git_gives_no_answer,
)
from .agents import (
    CODEX, GEMINI, is_wired_for, settings_of as agent_settings_of, shared_parts_of, written_form,
)
from .gemini_trust import verdict_for
from .git import repository_top
from .codex_review import review_of
from .record import Ownership
from .project import Options, plan_install


class Finding(object):
    """One thing wrong, and its own repair (fix): an install.py option that makes it (--check
    prints the command), or what to do, in words."""

    def __init__(self, kind, text, fix=None):
        self.kind = kind
        self.text = text
        self.fix = fix


def hook_findings(source, project, env):
    if os.path.islink(os.path.join(project, ".claude")):
        return [claude_folder_link_finding(project)]
    present = [name for name in HOOKS if os.path.lexists(os.path.join(project, HOOK_DIR, name))]
    wired = wired_events(project)
    if not present and not wired and not os.path.lexists(os.path.join(project, RECORD)):
        bash = bash_edition_wiring(project)
        if bash:
            return [bash_edition_finding(bash)]
        return [Finding("missing", "protocol not installed", "--project")]
    plan = plan_install(source, project, Options(update=True))  # what --update would do
    owned = Ownership(project, source)
    clashes = [rel for rel in plan.clashes if rel.startswith(HOOK_DIR + "/")]
    # What --update would refuse to touch (an agent's hooks file that is no JSON, a link where
    # a file should be): no repair is offered, and nothing below may call the install sound.
    findings = [Finding("broken", reason) for reason in plan.refusals]
    missing = [name for name in HOOKS if name not in present]
    if missing:
        findings.append(Finding("drift", "hooks missing: " + ", ".join(missing), "--update"))
    installed = {name: read_bytes(os.path.join(project, HOOK_DIR, name), HOOK_DIR + "/" + name)
                 for name in present}
    drifted = [name for name in present if installed[name] is None
               or (not same_content(installed[name], source.hook(name))
                   and HOOK_DIR + "/" + name not in clashes)]
    if drifted:
        edited = [name for name in drifted if installed[name] is not None and
                  not owned.owns(HOOK_DIR + "/" + name, installed[name])]
        findings.append(Finding("drift", "hooks differ from this version: {}{}".format(
            ", ".join(drifted), " (edited by you)" if edited else ""),
            "--update --force" if edited else "--update"))
    findings += clash_findings(project, plan.clashes)
    # session start and the Stop guard are wired together or not at all (wired_together)
    theirs = [wiring.event for wiring in WIRINGS] if any(
        HOOK_DIR + "/" + wiring.hook in clashes for wiring in WIRINGS) else []
    unwired = [wiring.event for wiring in WIRINGS
               if wiring.event not in wired and wiring.event not in theirs]
    if unwired:
        findings.append(Finding("unwired", "not wired in settings.json: " + ", ".join(unwired),
                                "--update"))
    findings += record_findings(owned) + skipped_entry_findings(project)
    findings += local_only_wiring_findings(project, wired)
    findings += double_wiring_findings(project)
    findings += repair_findings(plan) + silenced_findings(project, wired) + \
        codex_review_findings(project) + gemini_findings(project, plan.agents) + \
        codex_folder_findings(project, plan.agents) + untracked_hook_findings(
            project, plan.agents, plan.clashes) + \
        interpreter_findings(project, env) + sharing_findings(project, plan.agents) + \
        committed_local_files_findings(project) + unattended_save_findings(project, env)
    if unwired:  # --update writes the permissions with the entries; one finding says so
        return findings
    return findings + permission_findings(project, owned, plan)


def claude_folder_link_finding(project):
    """A .claude that is a symbolic link: the installer writes through none, so no mode of it
    can install, repair or remove anything there, and proposing one would only be refused."""
    target = os.readlink(os.path.join(project, ".claude"))
    return Finding("broken", ".claude is a symbolic link (to {}); install.py never writes "
                   "through one, so it neither installs nor repairs the protocol here: make "
                   ".claude a folder of the project's own, then run --project".format(target))


# What a command of the user's under one of the protocol's names stops, by name.
CLASHING = {
    "catchup.md": "a new session is told to start with /catchup, which would run yours",
    "handoff.md": "the Stop hook asks for /handoff after work, which would run yours",
    "dream.md": "the Stop hook asks for /dream after work, which would run yours",
    "memory-status.md": "the protocol's /memory-status is not there",
    "update-context.md": "the protocol's /update-context is not there",
}


def clash_findings(project, clashes):
    """A hook or command of the user's under one of the protocol's names is theirs: never
    replaced, wired or granted, so the protocol's is not installed. Each is named, with what
    it stops and the way out: renaming theirs lets --update install the protocol's."""
    try:
        allowed = rules_in_force(project)["allow"]
    except Refusal:
        allowed = []
    findings = []
    for rel in clashes:
        name = os.path.basename(rel)
        if rel.startswith(HOOK_DIR + "/"):
            events = [wiring.event for wiring in WIRINGS if wiring.hook == name]
            stops = ("neither the protocol's session start nor its Stop guard is wired for "
                     "any agent (they work only together): no memory is loaded and no save is "
                     "asked for" if events else "session start runs it in place of the "
                     "protocol's")
            what = "your own file, not the protocol's {}: {}".format(name, stops)
        elif name == "SKILL.md":
            skill = rel.split("/")[-2]
            what = "your own skill, so the protocol's {} skill is not installed: Codex CLI and " \
                "Gemini CLI run yours when the hooks ask for {}".format(skill, skill)
            # an agent finds a skill by its folder's SKILL.md and calls it by the name inside
            findings.append(Finding("clash", "{} is {}; move its folder (e.g. to {}/) and give "
                                    "it that name inside (name: {}), then --update installs "
                                    "the protocol's".format(rel, what, own_name(rel.rsplit(
                                        "/", 1)[0]), skill + "-own")))
            continue
        else:
            rule = skill_rule(name)
            what = "your own command, so the protocol's /{} is not installed: {}".format(
                name[:-3], CLASHING[name])
            if rule in allowed:
                what += "; {} is allowed, so the model runs it without asking (remove that rule " \
                    "unless you mean it)".format(rule)
        findings.append(Finding("clash", "{} is {}; rename yours (e.g. to {}), then --update "
                                "installs the protocol's".format(
                                    rel, what, own_name(rel))))
    return findings


def own_name(rel):
    """A name for the user's file that the protocol does not use: -own before the extension."""
    stem, extension = os.path.splitext(rel)
    return stem + "-own" + extension


def skipped_entry_findings(project):
    """The hook entries of the project's settings files that Claude Code skips while it applies
    the rest, named as its debug log names them: a warning, for they cost the protocol nothing,
    and every mode leaves them as they are."""
    try:
        files = project_settings(project)
    except Refusal:
        return []  # a file that cannot be read is named on its own
    return [Finding("warn", "{}: {}: {} (Claude Code skips it and applies the rest of the file; "
                    "install.py leaves it as it is)".format(rel, where, why))
            for rel, settings in files for where, why in skipped_entries(settings)]


def record_findings(owned):
    """What the shared record says that is not believed (claims.py), and a record git left in
    conflict: both are read, and --update writes the record whole again."""
    findings = []
    if owned.record_conflicted:
        findings.append(Finding("drift", "{} holds git's conflict markers: both sides' claims "
                                "are read; --update writes it whole, then commit it".format(
                                    RECORD), "--update"))
    if owned.unbelieved:
        findings.append(Finding("drift", "{} claims what the installer could not have made: {}; "
                                "none of it is taken for the protocol's, and --update writes the "
                                "record without it".format(RECORD, some_of(owned.unbelieved)),
                                "--update"))
    return findings


def local_only_wiring_findings(project, wired):
    """Events wired only in the local settings file, which the CLI keeps out of
    git. --update writes the shared entry as --project does: where the local
    command is that same command, the harness runs the two once; where it is
    another (another interpreter), both would run, so the local one must go."""
    shared = wired_events(project, (SETTINGS,))
    local_only = [wiring for wiring in WIRINGS if wiring.event in wired and
                  wiring.event not in shared]
    if not local_only:
        return []
    try:
        [(_, local)] = project_settings(project, (LOCAL_SETTINGS,))
    except Refusal:
        local = {}
    others = [wiring.event for wiring in local_only
              if any(handler.get("command") != wiring.handler(DEFAULT_PYTHON)["command"]
                     or "args" in handler for _, handler in our_handlers(local, wiring))]
    events = " and ".join(wiring.event for wiring in local_only)
    then = ("; then delete {} from {}, whose command differs and would run as well".format(
        " and ".join(others), LOCAL_SETTINGS) if others
        else " (the same command in both runs once)")
    return [Finding("unshared", "{} wired only in {}, which teammates do not get; --update "
                    "wires {} in {} too{}".format(events, LOCAL_SETTINGS,
                                                   "them" if len(local_only) > 1 else "it",
                                                   SETTINGS, then), "--update")]


def bash_edition_finding(bash):
    """What --check says of a project the bash edition alone is wired in."""
    events = [wiring.event for wiring in WIRINGS if any(wiring.event in found for _, found in bash)]
    return Finding("drift", "the bash edition is installed ({} wired to its .sh hooks in {}); "
                   "--update moves the project to this edition".format(
                       " and ".join(events), " and ".join(rel for rel, _ in bash)), "--update")


def permission_findings(project, owned, plan):
    """The Skill permissions of the protocol's installed commands missing from the project's
    settings, .claudeignore lines without their deny rule, and deny rules the protocol added
    for lines no longer there. A rule the protocol did not add is the user's, never drift."""
    findings = []
    shared = rules_in_force(project, (SETTINGS,))
    local = rules_in_force(project, (LOCAL_SETTINGS,))
    rules = {key: shared[key] + local[key] for key in shared}
    commands = [name for name in COMMANDS if COMMAND_DIR + "/" + name not in plan.clashes]
    skills = [rule for rule in SKILL_PERMISSIONS if rule in map(skill_rule, commands)]
    # what --update would grant: the rules the user removed or moved to "ask" stay so
    missing = [rule for rule in skills if rule not in rules["allow"]
               and rule in plan.grantable]
    if missing:
        findings.append(Finding("unwired", "not allowed in settings.json: {} (the CLI asks "
                                "before the model runs that command)".format(", ".join(missing)),
                                "--update"))
    try:
        text = claudeignore_text(project)
    except Refusal:
        return findings
    wanted = deny_rules(text)[0]
    denied = rules["deny"]
    unenforced = [rule for rule in wanted if rule not in denied]
    local_only = [rule for rule in skills if rule in rules["allow"]
                  and rule not in shared["allow"] and rule in plan.grantable] + \
        [rule for rule in wanted if rule in denied and rule not in shared["deny"]]
    if local_only:
        findings.append(Finding("unshared", "only in {}, which teammates do not get: {}; "
                                "--update writes them into {}".format(
                                    LOCAL_SETTINGS, some_of(local_only), SETTINGS), "--update"))
    stale = [rule for rule in shared["deny"] if owned.owns_rule("deny", rule)
             and rule not in wanted]
    if unenforced:
        findings.append(Finding("drift", ".claudeignore lines without their permissions.deny "
                                "rule (the file tools may open them): " + some_of(unenforced),
                                "--update"))
    if stale:
        findings.append(Finding("drift", "permissions.deny rules the protocol added for lines "
                                "gone from .claudeignore: " + some_of(stale), "--update"))
    return findings


def some_of(rules, shown=4):
    """The first rules, and how many more there are: a finding stays one line."""
    more = len(rules) - shown
    return ", ".join(rules[:shown]) + (" and {} more".format(more) if more > 0 else "")


# The protocol's parts that a teammate's clone needs.
SHARED_PARTS = (SETTINGS, HOOK_DIR + "/" + HOOKS[0], COMMAND_DIR + "/" + COMMANDS[0], MEMORY_INDEX,
                RECORD, GITATTRIBUTES, CLAUDEIGNORE)


def sharing_findings(project, agents):
    """Why the protocol would not reach teammates: no git at all, or parts git ignores, the
    given agents' among them."""
    if not is_in_a_repository(project):  # the memory loads, but nothing guards or reaches anyone
        return [Finding("unshared", NOT_A_REPOSITORY)]
    refused = why_git_gives_no_answer(project)
    if refused:  # then every answer below would be a silent "nothing ignored"
        return [Finding("unshared", refused)]
    ignored = ignoring_lines(project, SHARED_PARTS + shared_parts_of(agents))
    if not ignored:
        return []
    return [Finding("unshared", "git ignores {} ({}), so teammates never get them; remove or "
                    "narrow that line".format(", ".join(sorted(ignored)),
                                              "; ".join(sorted(set(ignored.values())))))]


def committed_local_files_findings(project):
    """Files git tracks that only the hooks write, on each machine for itself: bytecode in
    .claude/hooks/__pycache__/ and the Stop hook's baselines. Committed, they come into every
    clone as the repository made them: bytecode the hooks never run (they load only their
    source) but another program might, a baseline that is another machine's state."""
    committed = [rel for rel in tracked_files_under(project, HOOK_DIR)
                 if rel.startswith(HOOK_DIR + "/__pycache__/")
                 or rel.startswith(HOOK_DIR + "/" + BASELINE_PREFIX)]
    if not committed:
        return []
    return [Finding("broken", "git tracks {} file(s) only the hooks write, each machine its "
                    "own (bytecode, baselines): {}; they are not the protocol's, so remove "
                    "them from git (git rm --cached) and look at who committed them".format(
                        len(committed), some_of(committed)))]


NOT_A_REPOSITORY = ("not a git repository: the Stop hook's save check and the worktree pruner "
                    "need git, and nothing is shared; run git init")


def repair_findings(plan):
    """What --update would change or keeps only for want of --force, read from
    its own plan (so the check and the repair never disagree), apart from
    what the findings above name more precisely: the hooks' files, the
    settings file, whose entries and permission rules they name one by one,
    the record, which goes with the changes it speaks of, and the move of a
    memory to the team format, which memory health advises."""
    repairs = []
    memory = os.path.dirname(MEMORY_INDEX) + "/"
    for step in plan.steps:
        hook_file = step.shown.startswith(HOOK_DIR + "/") and step.verb in ("write", "replace")
        # A memory in the stamped format works; the move to the team format is memory health's
        # advice (stamped-format), not a fault of the install.
        moved_memory = step.shown.startswith(memory)
        if step.change is not None and not hook_file and not moved_memory \
                and step.shown not in (SETTINGS, RECORD):
            repairs.append("{} {}{}".format(VERBS[step.verb][1].replace("would ", "", 1),
                                            step.shown, " ({})".format(step.note) if step.note
                                            else ""))
    retired = [rel for rel in plan.edited if os.path.basename(rel) in RETIRED_COMMANDS]
    edited = [rel for rel in plan.edited if rel.startswith(COMMAND_DIR + "/") or
              rel.endswith("/SKILL.md")]
    edited = [rel for rel in edited if rel not in retired]
    findings = []
    if repairs:
        findings.append(Finding("drift", "--update would: " + "; ".join(repairs), "--update"))
    if edited:
        findings.append(Finding("drift", "edited by you, so --update keeps them: {}; "
                                "--update --force replaces them".format(", ".join(edited)),
                                "--update --force"))
    for rel in retired:  # no mode removes an edited command under a retired name
        name = os.path.basename(rel)[:-3]
        findings.append(Finding("drift", "{} is edited by you and shadows the CLI's own /{} (the "
                                "protocol's is now /{}): rename or delete it".format(
                                    rel, name, RETIRED_COMMANDS[name + ".md"][:-3])))
    return findings


# The sources a SessionStart hook is started for.
SESSION_SOURCES = ("startup", "resume", "clear", "compact", "fork")

# What the agent writes when it saves, by the variable that moves it: the
# handoff (outside the project, or under .claude/, the CLI asks before the
# write), and the memory index's folder (under .claude/ only: the CLI lets
# the agent write its own auto memory outside the project).
AGENT_WRITTEN = (("MCP_SESSION_STATE", SESSION_STATE, True), ("MCP_MEMORY_INDEX", MEMORY_INDEX, False))


def unattended_save_findings(project, env):
    """The save needs nobody only where the CLI lets the agent write without
    asking in acceptEdits mode: in the project or a folder the settings add
    to it (permissions.additionalDirectories), and outside .claude/, which it
    write-protects. A setting that moves a saved file elsewhere makes every
    save wait for someone to approve it."""
    findings = []
    top = os.path.abspath(project)
    writable = [top] + added_folders(project)
    for name, default, inside_only in AGENT_WRITTEN:
        value = env.get(name)
        if not value:
            continue
        if value.startswith("~"):  # no shell reads it: the hooks take it as a folder named ~
            findings.append(Finding("broken", "{}={} starts with ~, which the hooks do not "
                                    "expand: they look in a folder named ~ in the project, the "
                                    "agent in your home folder; give a path relative to the "
                                    "project, or an absolute one".format(name, value)))
            continue
        where = where_the_cli_asks_before_a_write(top, writable, os.path.join(top, value),
                                                  inside_only)
        if where:
            findings.append(Finding("broken", "{}={} puts what the agent saves {}, so every save "
                                    "waits for someone to approve it; unset it (default {}) or "
                                    "choose a path in the project outside .claude/"
                                    .format(name, value, where, default)))
    return findings


def added_folders(project):
    """The folders the settings files add to the project's (permissions.additionalDirectories)."""
    folders = []
    for _, settings in harness_settings(project):
        permissions = settings.get("permissions")
        added = permissions.get("additionalDirectories") if isinstance(permissions, dict) else None
        if isinstance(added, list):
            folders += [os.path.abspath(os.path.join(project, os.path.expanduser(folder)))
                        for folder in added if isinstance(folder, str) and folder]
    return folders


def is_within(path, folder):
    try:
        rel = os.path.relpath(os.path.normcase(path), os.path.normcase(folder))
    except ValueError:  # another drive on Windows
        return False
    return rel.split(os.sep)[0] != os.pardir


def where_the_cli_asks_before_a_write(top, writable, path, inside_only):
    """Why the CLI would ask before the agent writes path, or None."""
    path = os.path.normpath(path)
    if is_within(path, os.path.join(top, ".claude")):
        return "under .claude/, which the CLI write-protects"
    if inside_only and not any(is_within(path, folder) for folder in writable):
        return "outside the project"
    return None


def silenced_findings(project, wired):
    """Hooks that are wired but that the harness never runs, or that cannot do
    their job: a managed policy under which no project hook runs, all hooks
    switched off, and, when no entry of the event's hook runs, why each one
    does not."""
    files = harness_settings(project)
    policy = managed_policy_finding(files)
    if policy:
        return [policy]
    switch = [(shown, settings["disableAllHooks"]) for shown, settings in files
              if "disableAllHooks" in settings]
    if switch and switch[-1][1] is True:  # the file of highest precedence decides
        where = switch[-1][0]
        return [Finding("unwired", '"disableAllHooks": true in {}: no hook runs; {}'.format(
            where, "ask whoever manages this machine" if is_managed(where)
            else "remove the key"))]
    findings = []
    for wiring in WIRINGS:
        if wiring.event not in wired:
            continue
        reasons = [(shown, why_handler_never_does_its_job(wiring, group, handler))
                   for shown, settings in files for group, handler in our_handlers(settings, wiring)]
        if reasons and all(reason for _, reason in reasons):
            findings.append(Finding("unwired", "{} hook never runs as it should: {}".format(
                wiring.event, "; ".join("{} in {}".format(reason, shown)
                                        for shown, reason in reasons))))
    return findings


# Why Codex CLI runs no hook of the project for the user, and what to do.
BLOCKED = {
    "off": "Codex CLI runs no hook at all for you: {config} says hooks = false under [features]; "
           "remove that line",
    "unlisted": "Codex CLI runs none of this project's hooks for you until you trust the project: "
                "{config} does not list it; start `codex` in the project and trust it, then its "
                "hooks, when it asks",
    "untrusted": "Codex CLI runs none of this project's hooks for you: {config} marks the project "
                 "untrusted; set its trust_level to \"trusted\" there, then start `codex` in the "
                 "project and trust its hooks when it asks",
}


def codex_review_findings(project):
    """The protocol's Codex hooks that Codex will not run for the user who runs the check: those
    the user has not trusted, as they are now, in Codex's own review (codex_review.py). The
    review is the user's to give, never the installer's: the finding says how, and fails the
    check as any other hook that cannot fire does. Said only where Codex is configured."""
    review = review_of(project, CODEX)
    if review is None:
        return []
    if review.unread:
        return [Finding("warn", "Codex CLI: cannot read {} ({}), so whether Codex runs the "
                        "protocol's hooks for you is not checked".format(review.config,
                                                                          review.unread))]
    if review.blocked:
        return [Finding("unwired", BLOCKED[review.blocked].format(config=review.config))]
    events = list(dict.fromkeys(review.new + review.changed + review.off))
    why, todo = [], []
    if review.new:
        why.append("{} records no review of {}".format(review.config, " and ".join(review.new)))
    if review.changed:
        why.append("{} changed since {} recorded your review".format(
            " and ".join(review.changed), review.config))
    if review.new or review.changed:
        todo.append("start `codex` in the project and trust {} when it asks (or in /hooks)".format(
            "them" if len(review.new + review.changed) > 1 else "it"))
    if review.off:
        why.append("{} switched off in {}".format(" and ".join(review.off), review.config))
        todo.append("switch {} back on in Codex's /hooks".format(
            "them" if len(review.off) > 1 else "it"))
    return [Finding("unwired", "Codex CLI will not run the {} hook{} for you: {}; {}".format(
        " and ".join(events), "s" if len(events) > 1 else "", "; ".join(why), "; ".join(todo)))]


def gemini_findings(project, agents):
    """Gemini CLI's switches and trust, which can keep it from running any of the project's
    hooks (gemini_trust.py); said only for a project the protocol wired for it."""
    if GEMINI not in agents or not is_wired_for(project, GEMINI):
        return []
    verdict = verdict_for(project)
    if verdict.unread:
        return [Finding("warn", "Gemini CLI: {}, so whether it runs the protocol's hooks for you "
                        "is not checked".format(verdict.unread))]
    return [Finding("unwired", verdict.reason)] if verdict.reason else []


def codex_folder_findings(project, agents):
    """Codex CLI's entries in the form the installer writes go to the top of the work tree, then
    to the project's folder in it: one written for another folder (the project is a package of a
    monorepo, or moved) looks for a hook where there is none, and never runs it."""
    if CODEX not in agents:
        return []
    try:
        settings, _ = agent_settings_of(project, CODEX)
    except Refusal:
        return []
    top = repository_top(project) or project
    findings = []
    for wiring in CODEX.wirings:
        for _, handler in our_handlers(settings, wiring):
            match = written_form(handler)
            if match is None or not match.group("top"):
                continue
            within = match.group("within") or ""
            folder = os.path.join(top, *shlex.split(within)) if within else top
            if not os.path.isfile(os.path.join(folder, *match.group("hook").split("/"))):
                findings.append(Finding("unwired", "Codex CLI's {} entry in {} runs {} from {}, "
                                        "where there is none, so it never runs; --update writes "
                                        "it for this folder".format(
                                            wiring.event, CODEX.settings, match.group("hook"),
                                            os.path.relpath(folder, project)), "--update"))
    return findings


def untracked_hook_findings(project, agents, clashes):
    """A hooks file git tracks whose protocol entries run hooks git does not: every other clone
    gets the entries without their files, and a hook Python cannot open fails (exit 2: a Stop
    guard that blocks and blocks again). The protocol's session start loads its two siblings, so
    they count with it; a hook of the user's under a protocol name is theirs to commit."""
    files = [SETTINGS] + [agent.settings for agent in agents]
    present = [name for name in HOOKS if os.path.isfile(os.path.join(project, HOOK_DIR, name))]
    entries = index_entries(project, files + [HOOK_DIR + "/" + name for name in present])
    if not entries:
        return []
    wiring, needed = [], []
    for rel in [rel for rel in files if rel in entries]:
        run = hooks_run_by(project, rel, agents)
        if run:
            wiring.append(rel)
            needed += [name for name in run if name not in needed]
    if HOOKS[0] in needed and HOOK_DIR + "/" + HOOKS[0] not in clashes:
        needed += [name for name in HOOKS[1:3] if name not in needed]
    untracked = [HOOK_DIR + "/" + name for name in HOOKS
                 if name in needed and name in present and HOOK_DIR + "/" + name not in entries
                 and HOOK_DIR + "/" + name not in clashes]
    if not untracked:
        return []
    return [Finding("broken", "git tracks {}, which run{} the protocol's hooks, but not {}: every "
                    "other clone gets the entries without the files, so no hook of the protocol's "
                    "runs there (Claude Code's fail at every session); git add --chmod=+x {}".format(
                        " and ".join(wiring), "" if len(wiring) > 1 else "s",
                        ", ".join(os.path.basename(rel) for rel in untracked),
                        " ".join(untracked)))]


def hooks_run_by(project, rel, agents):
    """The protocol's hooks the entries of the hooks file at rel run; [] for one that cannot be
    read (it is named on its own)."""
    try:
        if rel == SETTINGS:
            [(_, settings)] = project_settings(project, (SETTINGS,))
            wirings = WIRINGS
        else:
            agent = next(agent for agent in agents if agent.settings == rel)
            settings, _ = agent_settings_of(project, agent)
            wirings = agent.wirings
    except Refusal:
        return []
    return [wiring.hook for wiring in wirings if our_handlers(settings, wiring)]


def managed_policy_finding(files):
    """The managed policy's keys under which the harness runs no hook of the project's: only
    the policy's own hooks (allowManagedHooksOnly), or hooks from plugins and the policy alone
    (strictPluginOnlyCustomization: true, or a list that names "hooks"). Read from the policy's
    files only, the last one that sets a key deciding, as the harness merges them."""
    found = {}
    for shown, settings in files:
        if not is_managed(shown):
            continue
        for key in ("allowManagedHooksOnly", "strictPluginOnlyCustomization"):
            if key in settings:
                found[key] = (shown, settings[key])
    blocking = [(key, shown, value) for key, (shown, value) in sorted(found.items())
                if value is True or (key == "strictPluginOnlyCustomization"
                                     and isinstance(value, list) and "hooks" in value)]
    if not blocking:
        return None
    key, shown, value = blocking[0]
    return Finding("unwired", '"{}": {} in {}: the managed policy runs no hook of the '
                   "project's, so the memory is not loaded and no save is asked for; ask whoever "
                   "manages this machine".format(key, json.dumps(value), shown))


# What running an event's hook twice does.
TWICE = {"SessionStart": "the memory is injected twice",
         "Stop": "two Stop guards ask for the handoff"}


def double_wiring_findings(project):
    """Protocol hooks the harness runs twice for one event: the bash edition's
    beside this edition's, or this edition's in two commands. Handlers with
    the same command (and, in exec form, the same args) run once, in one
    group or across the user's, the shared and the local settings file; a
    copy that never runs does not count."""
    files = harness_settings(project)
    findings = []
    bash_here = the_bash_edition_is_here(project)
    for wiring in WIRINGS:
        ours = running_commands(files, wiring, wiring.is_ours, wiring.path_in_command)
        bash = running_commands(files, wiring, wiring.is_the_bash_editions,
                                wiring.bash_path_in_command) if bash_here else {}
        if ours and bash:
            gone = not os.path.lexists(os.path.join(project, HOOK_DIR, wiring.bash_hook))
            findings.append(both_editions_finding(wiring, sorted_files(sum(bash.values(), [])),
                                                  gone))
        elif len(ours) > 1:
            findings.append(twice_wired_finding(wiring, list(ours.values())))
    return findings


def running_commands(files, wiring, test, path):
    """{what the harness tells handlers apart by: [settings file, ...]} for the
    handlers test selects that run."""
    found = {}
    for shown, settings in files:
        for group, handler in handlers_where(settings, wiring.event, test):
            if why_handler_never_does_its_job(wiring, group, handler, path) is None:
                key = json.dumps([handler.get("command"), handler.get("args")])
                found.setdefault(key, []).append(shown)
    return found


def sorted_files(shown):
    """The settings files named once each, the shared one (which --update edits) first."""
    return sorted(dict.fromkeys(shown), key=lambda name: name != SETTINGS)


def both_editions_finding(wiring, files, gone):
    """gone: the bash edition's script is not there, so its entry fails instead."""
    others = [shown for shown in files if shown != SETTINGS]
    repairs = (["--update replaces it"] if SETTINGS in files else []) + \
        ["delete that entry from " + shown for shown in others]
    what = "is gone, so it fails at every {}".format(wiring.event) if gone \
        else "runs beside {}, so {}".format(wiring.hook, TWICE[wiring.event])
    text = "{} is wired in both editions: the bash edition's {} ({}) {}; {}".format(
        wiring.event, wiring.bash_hook, " and ".join(files), what, "; ".join(repairs))
    return Finding("drift", text, None if others else "--update")


def twice_wired_finding(wiring, copies):
    """copies: the files wiring each distinct command. The shared file's
    first copy stays; --update removes the shared file's others, the other
    files are the user's to edit."""
    files = sorted_files(sum(copies, []))
    extra = sum(copies, [])
    extra.remove(files[0])
    others = sorted_files(shown for shown in extra if shown != SETTINGS)
    repairs = (["--update keeps one"] if SETTINGS in extra else []) + \
        ["delete it from " + shown for shown in others]
    return Finding("drift", "{} runs {} {} times: {} wire it in {} different commands, and the "
                   "harness runs each; {}".format(wiring.event, wiring.hook, len(copies),
                                                  " and ".join(files), len(copies),
                                                  "; ".join(repairs)),
                   None if others else "--update")


def why_handler_never_does_its_job(wiring, group, handler, path=None):
    """Why the harness never runs the handler, or runs it where it cannot do
    its job; None when it runs as the installer wires it. path finds the
    hook's script in the command (this edition's by default)."""
    if handler.get("type") != "command":
        return 'its type is {} (the harness runs a "command" only): make it "command"'.format(
            json.dumps(handler.get("type")))
    if "if" in handler:
        return 'it has an "if", which makes a {} hook never run: remove it'.format(wiring.event)
    if wiring.event == "Stop" and handler.get("async") is True:
        return 'it is "async": true, so it cannot stop the session: remove it'
    if not is_exec_form(handler) and not (path or wiring.path_in_command).search(
            without_shell_comment(str(handler.get("command", "")))):
        return "its command is commented out (#): remove the text before the hook's command"
    if wiring.event == "SessionStart" and not any(
            matcher_matches(group.get("matcher"), source) for source in SESSION_SOURCES):
        return "its matcher {} matches none of {}: use {}".format(
            json.dumps(group.get("matcher")), "|".join(SESSION_SOURCES), wiring.matcher)
    return None


def matcher_matches(matcher, source):
    """Whether a matcher selects the source, as the harness reads it: none, "" or
    "*" select all; letters, digits, _, -, spaces, commas and | name sources
    exactly; anything else is a regular expression searched for in the source."""
    if matcher is None or matcher in ("", "*"):
        return True
    if not isinstance(matcher, str):
        return False
    if re.match(r"[\w\- ,|]+\Z", matcher):
        return source in [name.strip() for name in re.split(r"[|,]", matcher)]
    try:
        return re.search(matcher, source) is not None
    except re.error:
        return False


def without_shell_comment(command):
    """The command without what sh takes as a comment: from a # that starts a
    word outside quotes to the end of the line."""
    quote = None
    for index, char in enumerate(command):
        if quote:
            if char == quote:
                quote = None
            elif char == "\\" and quote == '"':
                continue
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or command[index - 1].isspace()):
            return command[:index]
    return command


def interpreter_findings(project, env):
    """The interpreters the wired hook commands start, each probed (interpreter.py: only a
    Python found on the user's PATH, never a program the project chooses, in a minimal
    environment): one that is missing, too old or rejects the flags fails the hook at every
    session, and so does a PATH in the settings' env (env, as a session has it) that holds no
    program of that name, which is looked up without running anything. A command in a form
    the probe does not run is the user's own, and a warning says it was not checked."""
    prefixes = []
    for _, settings in project_settings(project):
        for wiring in WIRINGS:
            for group, handler in our_handlers(settings, wiring):
                if why_handler_never_does_its_job(wiring, group, handler):
                    continue  # never run, so its interpreter matters not; said on its own
                prefix = interpreter_and_flags(wiring, handler)
                if prefix is not None and prefix not in prefixes:
                    prefixes.append(prefix)
    findings = []
    for prefix in prefixes:
        problem = why_interpreter_fails(prefix, project)
        if problem is None:
            problem = why_the_settings_path_lacks_it(prefix, project, env)
        if problem and problem.startswith(NOT_RUN):
            findings.append(Finding("warn", "the hooks' command starts with {}, which {}; "
                                    "whether it runs the hooks is not checked".format(
                                        json.dumps(prefix), problem)))
        elif problem:
            python = a_working_python()
            repair = "--update --python {}".format(shell_word(python)) if python else None
            findings.append(Finding("broken", "the hooks' interpreter ({}) {}; {}".format(
                prefix, problem, instead()), repair))
    return findings
