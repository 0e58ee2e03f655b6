"""The agents besides Claude Code that a project asks for: Codex CLI and Gemini CLI, wired to the
same hooks and given the protocol's flow commands.

Why it exists: a team's memory goes stale from the side of any teammate whose agent neither loads
it nor saves. The hooks serve every agent (they know each by what it sends); what differs is where
each agent reads its wiring and its commands, measured on the real clients (tests/e2e):
- Codex CLI reads .codex/hooks.json (SessionStart, Stop; timeouts in seconds), starts hooks where
  it was started, a subfolder perhaps, runs an entry only once its user trusted it as it is now
  (a run that writes one says so; codex_review.py reads the review for --check), and takes skills
  from .agents/skills/<name>/SKILL.md, which it lists to the model in every request and injects
  whole for `$name`;
- Gemini CLI reads the "hooks" of .gemini/settings.json (SessionStart, AfterAgent; timeouts in
  milliseconds), starts hooks in the project folder, and lists the skills of .agents/skills/ to
  the model too; `/name` typed in its terminal uses the skill of that name, so the protocol
  writes no custom command of its own there;
- every other agent reads AGENTS.md, if anything: "agents-md" adds the protocol's steps there as a
  marked section (templates/AGENTS.md-section.md): where the memory is, what to read at the start
  and what to save before finishing; never the memory itself, which would go stale there and be
  loaded twice by the agents with hooks.
A wired command runs the hook only where its file is: Python exits 2 for a file it cannot open,
and both CLIs read exit 2 as a block (a Codex stop loops on it).

What it promises: the entries join the user's own in those files and never change one of theirs;
what the protocol adds is written in the ownership record (record.py), as for Claude Code's parts:
the events it wired in each agent's hooks file, the skills it wrote, the files it created; the
bytes of a hooks file before the protocol first wired it stay in the local record, so
--uninstall (uninstall.py) gives each file back as it was. An entry is the protocol's by the same
reading as Claude Code's (protocol.Wiring.is_ours). A skill is the installer's while it holds
what the record says it wrote; one the user edited is kept, as .claude/commands/ are.
"""

import json
import os
import re
import shlex

from .errors import Refusal, UsageError
from .git import repository_top
from .files import encode_text, read_text, same_content
from .protocol import (
    AGENTS, AGENTS_MD, AGENT_COMMANDS, CODEX_HOOKS, GEMINI_SETTINGS, HOOK_DIR,
    HOOK_TIMEOUT_SECONDS, SKILL_DIR, TEMPLATE_AGENTS_SECTION, Wiring, command_for,
)
from .settings import SettingsError, load_settings, settings_bytes, settings_text
from .wiring import (
    drop_handlers, our_handlers, unwire, why_entries_cannot_go_in, wire, withheld_entries,
)
from .blocks import section_span, with_section


class AgentWiring(Wiring):
    """An entry of the protocol's in another agent's hooks file. Codex starts hooks where it was
    started, so its command first goes to the top of the work tree, then to the project's folder
    in it (within: the path from the top, "" for the top itself, as in_folder sets it); Gemini
    starts them in the project folder."""

    def __init__(self, event, hook, timeout, from_the_top, within=""):
        Wiring.__init__(self, event, hook, None, None, None)
        self.timeout = timeout
        self.from_the_top = from_the_top
        self.within = within

    def handler(self, python):
        return {"type": "command", "command": hook_command(
            python, self.hook, self.from_the_top, self.within), "timeout": self.timeout}

    def in_folder(self, within):
        """This entry for a project at within (a path from the top of its work tree)."""
        return AgentWiring(self.event, self.hook, self.timeout, self.from_the_top, within)


TO_THE_TOP = 'cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)" && '


def hook_command(python, hook, from_the_top, within=""):
    """The command that runs the hook where its file is, and does nothing where it is not (a
    Python that cannot open its script exits 2, which both agents read as a block). A project in
    a folder of its work tree (a package of a monorepo) is gone to from the top."""
    rel = HOOK_DIR + "/" + hook
    if from_the_top and within:
        folder = shlex.quote(within)
        return TO_THE_TOP + "test -f {0}/{1} && cd {0} && {2} -I -S {1}".format(folder, rel, python)
    run = "test -f {0} && {1} -I -S {0}".format(rel, python)
    return TO_THE_TOP + run if from_the_top else run


WRITTEN_FORM = re.compile(r"(?P<top>{})?test -f (?:(?P<within>'[^']*'|\S+)/)?(?P<hook>{}/\S+) "
                          r"&& (?:cd (?P=within) && )?(?P<python>.+?) -I -S (?P=hook)\Z".format(
                              re.escape(TO_THE_TOP), re.escape(HOOK_DIR)))


def written_form(handler):
    """The match of an entry in the form hook_command writes; None for any other form, which is
    the user's, kept as written."""
    match = WRITTEN_FORM.match(str(handler.get("command", "")))
    return match if match and "args" not in handler else None


def interpreter_of(handler):
    """The interpreter of an entry in the form hook_command writes; None for any other form."""
    match = written_form(handler)
    return match.group("python") if match else None


def folder_within(project):
    """The project's path from the top of its work tree, with /; "" at the top or outside git."""
    top = repository_top(project)
    if top is None or os.path.normcase(os.path.abspath(project)) == os.path.normcase(top):
        return ""
    return os.path.relpath(os.path.abspath(project), top).replace(os.sep, "/")


def wirings_for(agent, project):
    """The agent's entries as the installer writes them in this project."""
    within = folder_within(project)
    return [wiring.in_folder(within) for wiring in agent.wirings]


class Agent(object):
    """An agent besides Claude Code: the file it reads its hooks from, the protocol's entries
    there, and the skills it takes the flow commands from (path -> how this version writes it
    for an interpreter)."""

    def __init__(self, name, shown, settings, wirings, files, review=None):
        self.name, self.shown, self.settings, self.wirings = name, shown, settings, wirings
        self.files = files
        self.review = review  # what the user must do before the agent runs changed entries


def skill_path(name):
    return "{}/{}/SKILL.md".format(SKILL_DIR, name)


def command_parts(source, name, python):
    """(description, body) of the protocol's command, as installed for python."""
    text = command_for(source, name + ".md", python).decode("utf-8")
    front, body = "", text
    if text.startswith("---\n") and "\n---\n" in text[4:]:
        front, body = text[4:].split("\n---\n", 1)
    descriptions = [line.split(":", 1)[1].strip() for line in front.splitlines()
                    if line.startswith("description:")]
    return (descriptions[0] if descriptions else name), body


def skill_text(source, name, python):
    """The command as a skill: its name and description as frontmatter (a JSON string is a
    YAML one), its body as the instructions. What Claude Code's allowed-tools grant has no
    counterpart in a skill: each agent asks as it asks for any command."""
    description, body = command_parts(source, name, python)
    return encode_text("---\nname: {}\ndescription: {}\n---\n{}".format(
        name, json.dumps(description, ensure_ascii=False), body))


def skills():
    return {skill_path(name): lambda source, python, name=name: skill_text(source, name, python)
            for name in AGENT_COMMANDS}


CODEX = Agent("codex", "Codex CLI", CODEX_HOOKS, (
    AgentWiring("SessionStart", "session-start.py", HOOK_TIMEOUT_SECONDS, True),
    AgentWiring("Stop", "stop-handoff.py", HOOK_TIMEOUT_SECONDS, True)), skills(),
    review="Codex CLI runs these hooks only once you trust them as they are now: start `codex` "
           "in the project and trust them when it asks (or in /hooks); --check tells whether "
           "you have")
GEMINI = Agent("gemini", "Gemini CLI", GEMINI_SETTINGS, (
    AgentWiring("SessionStart", "session-start.py", HOOK_TIMEOUT_SECONDS * 1000, False),
    AgentWiring("AfterAgent", "stop-handoff.py", HOOK_TIMEOUT_SECONDS * 1000, False)), skills())
OTHER_AGENTS = (CODEX, GEMINI)


def agents_named(value):
    """The agents an --agents value names (comma-separated), in AGENTS' order; a UsageError for
    any other name, and for a list without claude: the hooks the others run, and the
    commands their skills are made from, are installed under .claude/."""
    names = [word.strip().lower() for word in value.split(",") if word.strip()]
    unknown = [name for name in names if name not in AGENTS]
    if unknown or not names:
        raise UsageError("--agents takes a comma-separated list of {} (got {})".format(
            ", ".join(AGENTS), value or "nothing"))
    if "claude" not in names:
        raise UsageError("--agents must name claude too: the hooks the other agents run and "
                         "the commands they take are installed under .claude/")
    return tuple(name for name in AGENTS if name in names)


def settings_of(project, agent):
    """(the agent's hooks file as settings, its text); ({}, None) when there is none."""
    return load_settings(os.path.join(project, *agent.settings.split("/")), agent.settings,
                         claude=False)


def is_wired_for(project, agent):
    """Whether the agent's hooks file runs a hook of the protocol's; a file that cannot be read
    says nothing (a run that asks for the agent refuses it)."""
    try:
        settings, _ = settings_of(project, agent)
    except SettingsError:
        return False
    return any(our_handlers(settings, wiring) for wiring in agent.wirings)


def agents_for(project, asked, recorded):
    """The agents with hooks a run installs or updates: those asked for, those already wired,
    and those the record (recorded: {hooks file: [event]}) names: wired, whose hooks file may
    since have been emptied or stopped being JSON, or asked for with nothing wired yet. One whose
    hooks file the user deleted is one they took out: it comes back only when asked for again."""
    return [agent for agent in OTHER_AGENTS
            if agent.name in (asked or ()) or is_wired_for(project, agent)
            or (agent.settings in recorded and (not recorded[agent.settings] or os.path.lexists(
                os.path.join(project, *agent.settings.split("/")))))]


def shared_parts_of(agents):
    """The agents' parts a teammate's clone needs: each one's hooks file, and a skill."""
    return tuple(part for agent in agents for part in (agent.settings, sorted(agent.files)[0]))


def agent_files(agents, source, python, pythons):
    """[(path, bytes for python, whether given bytes are this version's for one of pythons)]
    of the skills the agents take the flow commands from, each once."""
    files = {}
    for agent in agents:
        files.update(agent.files)
    return [(rel, render(source, python),
             lambda data, render=render: any(same_content(data, render(source, other))
                                             for other in pythons))
            for rel, render in sorted(files.items())]


def interpreters_wired_for(project):
    """The interpreters the protocol's entries name in the agents' hooks files."""
    found = []
    for agent in OTHER_AGENTS:
        try:
            settings, _ = settings_of(project, agent)
        except SettingsError:
            continue
        found += [interpreter_of(handler) for wiring in agent.wirings
                  for _, handler in our_handlers(settings, wiring)]
    return [python for python in dict.fromkeys(found) if python is not None]


def plan_agent_wiring(plan, owned, agent, python, update, hooks):
    """Add the agent's missing entries to its hooks file (created when absent) for the hooks
    Claude Code's entries run (hooks: the same decision for every agent), each written in the
    record (owned) as the protocol's, and take out a recorded one for a hook not among them.
    With update, bring an entry in the form this installer writes to this version's, for python,
    and drop copies the agent would run twice; an entry in a form of the user's stays as
    written."""
    try:
        settings, original = settings_of(plan.root, agent)
    except SettingsError as error:
        plan.refuse(str(error))
        return
    wirings = [wiring for wiring in wirings_for(agent, plan.root) if wiring.hook in hooks]
    problem = why_entries_cannot_go_in(settings, wirings, agent.settings)
    if problem:
        plan.refuse(problem)
        return
    taken_back = unwire(settings, withheld_entries(settings, owned, wirings, agent.wirings,
                                                   agent.settings))
    if not wirings and not taken_back:
        owned.after.wired.setdefault(agent.settings, [])
        plan.keep(agent.settings, "not wired for {}: the protocol's session start and Stop "
                  "guard are not wired here (see --check)".format(agent.shown))
        return
    changed = wire(settings, python, False, wirings)
    owned.after.wired[agent.settings] = [
        wiring.event for wiring in wirings
        if wiring.event in owned.after.wired.get(agent.settings, []) + changed]
    if original is None:
        owned.after.created.append(agent.settings)
    if update:
        changed += [event for event in update_agent_entries(settings, wirings, python)
                    if event not in changed]
    changed += taken_back
    if not changed:
        plan.keep(agent.settings, "hooks already wired for " + agent.shown)
        return
    added = [event for event in changed if event not in taken_back]
    notes = ["wired {} for {}".format(" and ".join(added), agent.shown)] if added else []
    if taken_back:
        notes.append("took back the protocol's {} entry for {}: session start and the Stop "
                     "guard go together, and one of them is not the protocol's here".format(
                         " and ".join(taken_back), agent.shown))
    plan.write("write" if original is None else "merge", agent.settings,
               settings_bytes(settings, original), "; ".join(notes))
    if agent.review:
        plan.note(agent.review)


def update_agent_entries(settings, wirings, python):
    changed = []
    for wiring in wirings:
        found = our_handlers(settings, wiring)
        if not found:
            continue
        handler = found[0][1]
        wanted = wiring.handler(python)["command"]
        if interpreter_of(handler) is not None and handler.get("command") != wanted:
            handler["command"] = wanted
            changed.append(wiring.event)
        if found[1:]:
            drop_handlers(settings, wiring.event, found[1:])
            changed.append(wiring.event)
    return list(dict.fromkeys(changed))


# --- an install made before the record ------------------------------------------------------

def adopted_wiring(project):
    """({hooks file: events}, [hooks files]) of an install made before the record: the events
    whose entry runs one of the protocol's hooks in each agent's file, and the files that hold
    exactly what the installer writes into a new one (created by it, so all of them its own)."""
    wired, created = {}, []
    for agent in OTHER_AGENTS:
        try:
            settings, text = settings_of(project, agent)
        except SettingsError:
            continue
        events = [wiring.event for wiring in agent.wirings if our_handlers(settings, wiring)]
        if events:
            wired[agent.settings] = events
        if text is not None and is_as_the_installer_creates_it(text, settings, agent, project):
            created.append(agent.settings)
    return wired, created


def is_as_the_installer_creates_it(text, settings, agent, project):
    """Whether the hooks file's text is exactly what the installer writes where there was
    none, with the interpreter its entries name."""
    pythons = set(interpreter_of(handler) for wiring in agent.wirings
                  for _, handler in our_handlers(settings, wiring))
    if len(pythons) != 1 or None in pythons:
        return False
    fresh = {}
    wire(fresh, pythons.pop(), False, wirings_for(agent, project))
    return text == settings_text(fresh, None)


# --- AGENTS.md, for agents with no hooks ---------------------------------------------------

def plan_agents_md(plan, owned, source, asked, force):
    """Add the protocol's section to AGENTS.md when asked for (the file is made if there is
    none), and keep a section already there current. A section that differs from this
    version's is the user's edit until a release lists the ones it shipped: --force replaces it."""
    section = source.marked_template(TEMPLATE_AGENTS_SECTION)
    text = read_text(plan.path(AGENTS_MD), AGENTS_MD)
    try:
        present = text is not None and section_span(text, section, AGENTS_MD) is not None
    except Refusal as error:
        plan.refuse(str(error))
        return
    if not present and not asked:
        return
    new_text, verb = with_section(text, section, AGENTS_MD)
    if text is None:
        owned.after.created.append(AGENTS_MD)
    if verb is None:
        plan.keep(AGENTS_MD, "protocol section up to date")
    elif verb == "replace" and not force:
        plan.hold(AGENTS_MD, "edited by you; --force replaces its protocol section")
    else:
        notes = {"append": "added the protocol section", "replace": "updated the protocol section"}
        plan.write("write" if text is None else verb, AGENTS_MD, encode_text(new_text), notes[verb])
