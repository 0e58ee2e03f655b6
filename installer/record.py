"""What the protocol owns in a project, written down, so that ownership is a lookup, never a guess.

Why it exists: the installer must never take over, grant, call drift or remove what is the user's,
and neither names nor bytes can tell: a project's own /dream, its own deny rule for .env, a hook of
its own named session-start.sh all look like the protocol's. So every writing run writes down
what it added, before it changes anything else, in two files:

- .claude/memory-context-protocol.json, the shared record, committed beside the settings it
  speaks of: each file the installer wrote (hooks, commands, .claudeignore, the memory index, the
  other agents' skills) with the digest of the bytes it wrote, the events whose hook entry it
  added to .claude/settings.json and to each other agent's hooks file, the Skill rules it
  allowed, each deny rule it added with the .claudeignore line it came from, and which of the
  files it edits (settings.json, .gitignore, .gitattributes, the agents' hooks files, AGENTS.md)
  it created. These are facts about the repository, the same in every clone, so a teammate's --update and
  --uninstall read them too.
- .claude/hooks/.before-install.json, the local record, which git ignores: what was there before
  the first install on this machine (the install's folders that were there, empty, and the bytes
  of settings.json, .gitignore and .gitattributes; for another agent, its folders and the bytes
  of its hooks file before the protocol first wired it), so --uninstall gives them back byte for
  byte. One
  person's facts, and a copy of settings whose "env" may hold a secret: readable by its owner
  alone.

Both hold what the run will leave, and are its first changes: a run stopped half-way (a full
disk, a closed terminal) leaves a record that claims what it was about to add, which the next run
completes, never one that lost what was there before. --uninstall removes them last.

A file is the protocol's while it holds the bytes the record gives; edited, it is still the
protocol's file, kept as the user's edit unless --force. An install made before the record (a
release's, or one the init prompt made) is adopted: its hooks, commands and .claudeignore by the
digests of the versions releases shipped, its hook entries by the protocol's one reading of a
handler, and its rules only where the whole settings file is exactly what a release writes into a
new one; any other rule may be the user's, and stays theirs.
"""

import hashlib
import json
import os

from .errors import Refusal
from .files import encode_text, is_an_empty_folder, lf_endings, read_bytes
from .protocol import (
    AGENTS_MD, AGENT_COMMANDS, AGENT_FOLDERS, BEFORE_INSTALL, CLAUDEIGNORE, CODEX_HOOKS,
    COMMANDS, COMMAND_DIR, DEFAULT_PYTHON, GEMINI_SETTINGS, GITATTRIBUTES, GITIGNORE, HOOKS,
    HOOK_DIR, MARKED_BLOCKS, MEMORY_INDEX, RECORD, SETTINGS, SKILL_PERMISSIONS,
    TEMPLATE_CLAUDEIGNORE, TEMPLATE_MEMORY, WIRINGS, command_for,
)
from .releases import (
    RELEASED_CLAUDEIGNORE_DIGESTS, is_a_release_of, is_the_installers, released_digests,
)
from .settings import SettingsError, load_settings, settings_text
from .interpreter import interpreter_in
from .permissions import claudeignore_text, deny_rule_lines, grant, rules_of
from .wiring import installed_interpreters, our_handlers, protocol_is_installed, wire
from .blocks import appended
from .bash_edition import the_bash_edition_is_here
from .agents import (
    OTHER_AGENTS, adopted_wiring, interpreters_wired_for, skill_path, skill_text,
)
from .claims import read_claims
from .memory_index import index_for


# The folders an install fills; one that was there, empty, before it stays when the uninstall
# empties it again.
INSTALL_FOLDERS = (HOOK_DIR, COMMAND_DIR, ".claude", "memory")
# Claude Code's files an install edits rather than owns, and the other agents' hooks files: their
# bytes before it are the local record's.
EDITED_FILES = (SETTINGS, GITIGNORE, GITATTRIBUTES)
AGENT_FILES = (CODEX_HOOKS, GEMINI_SETTINGS)
# The files an install may create and later remove, when it left nothing of the user's in them.
CREATED_FILES = EDITED_FILES + AGENT_FILES + (AGENTS_MD,)
# The objects and lists of settings.json the protocol's entries and rules may go into.
CONTAINERS = ("hooks", "permissions", "permissions.allow", "permissions.deny") + tuple(
    "hooks." + wiring.event for wiring in WIRINGS)
RECORD_FORMAT = 1
ABOUT = ("What install.py of the Memory Context Protocol added to this project; it reads this "
         "file to update and uninstall. Commit it with .claude/settings.json.")


def digest(data):
    """The digest a file is known by: of its text, a CRLF checkout reading as LF."""
    return hashlib.sha256(lf_endings(data)).hexdigest()


class Record(object):
    """The shared record's facts: files {path: digest}, hooks [event of settings.json], allow
    [Skill rule], deny {rule: .claudeignore line}, created [files of CREATED_FILES], wired
    {another agent's hooks file: [event]}, containers [the objects and lists of settings.json
    the protocol's entries and rules went into that it created, as containers_of() names them]."""

    def __init__(self, files=(), hooks=(), allow=(), deny=(), created=(), wired=(),
                 containers=()):
        self.files = dict(files)
        self.hooks = list(hooks)
        self.allow = list(allow)
        self.deny = dict(deny)
        self.created = list(created)
        self.wired = dict((rel, list(events)) for rel, events in dict(wired).items())
        self.containers = list(containers)

    def copy(self):
        return Record(self.files, self.hooks, self.allow, self.deny, self.created, self.wired,
                      self.containers)

    def as_json(self):
        """The record as the file holds it: the same facts always give the same bytes, so two
        clones that install alike write the same file, and it merges like code."""
        events = [wiring.event for wiring in WIRINGS]
        return {
            "about": ABOUT,
            "format": RECORD_FORMAT,
            "files": self.files,
            "hooks": sorted(set(self.hooks), key=events.index),
            "allow": sorted(set(self.allow), key=SKILL_PERMISSIONS.index),
            "deny": self.deny,
            "created": sorted(set(self.created)),
            # an agent asked for with nothing wired yet (its hooks are not the protocol's) is
            # kept, with no events, so a later run wires it once they are
            "wired": dict((rel, sorted(set(events))) for rel, events in self.wired.items()),
            "containers": sorted(set(self.containers)),
        }

    def bytes(self):
        return encode_text(json.dumps(self.as_json(), indent=2, sort_keys=True,
                                      ensure_ascii=False) + "\n")

    def __eq__(self, other):
        return isinstance(other, Record) and self.as_json() == other.as_json()

    def __ne__(self, other):
        return not self == other


def read_file_of_the_installers(project, rel):
    """(bytes, True) of the file at rel; (None, False) when there is none; (None, True) for
    something there that cannot be read (a folder, a link, a FIFO): not the installer's."""
    path = os.path.join(project, *rel.split("/"))
    if os.path.islink(path):
        return None, True
    try:
        return read_bytes(path, rel), os.path.lexists(path)
    except Refusal:  # a folder, a FIFO, unreadable
        return None, True


def read_before_install(project):
    """{"folders": [...], "files": {rel: text}} as the first install wrote it down; None when
    there is no such record, or the file is not one (it is then the user's, and stays)."""
    data, _ = read_file_of_the_installers(project, BEFORE_INSTALL)
    try:
        before = json.loads(data.decode("utf-8")) if data is not None else None
    except ValueError:
        return None
    if not isinstance(before, dict) or set(before) != {"folders", "files"}:
        return None
    folders, files = before["folders"], before["files"]
    if not isinstance(folders, list) or not set(folders) <= set(INSTALL_FOLDERS + AGENT_FOLDERS) \
            or not isinstance(files, dict) or not set(files) <= set(EDITED_FILES + AGENT_FILES) or \
            not all(isinstance(text, str) for text in files.values()):
        return None
    return before


class Ownership(object):
    """What the protocol owns in one project: the shared record as read (or an install made
    before it, adopted), the local record, and `after`, the record this run leaves, which the
    plan keeps current as it decides each change."""

    def __init__(self, project, source):
        self.project = project
        self.source = source
        data, there = read_file_of_the_installers(project, RECORD)
        claims = read_claims(data, RECORD_FORMAT) if data is not None else None
        self.foreign = there and claims is None  # a file of the user's under its name
        self.before = read_before_install(project)
        self.foreign_before = os.path.lexists(os.path.join(project, *BEFORE_INSTALL.split("/"))) \
            and self.before is None
        self.writable = {}  # path -> the digests of every version the installer writes there
        self.digests = {}  # path -> the digests the record claims there that are believed
        self.unbelieved = []  # what the record claims that the installer could not have made
        self.record = self.believed(claims) if claims is not None else None
        # whether the record's bytes are one whole record of believed claims: else the next
        # writing run writes it anew
        self.record_is_whole = claims is not None and claims.whole and not self.unbelieved \
            and not self.adopt_unclaimed_agents()
        self.record_conflicted = claims is not None and claims.conflicted
        self.adopted = None
        self.bash_edition = None  # whether the bash edition is here, once asked
        self.hooks_owned = []  # the hooks that are the protocol's after the run, once decided
        if self.record is None and protocol_is_installed(project):
            self.adopted = self.adopt()
        self.after = (self.record or self.adopted or Record()).copy()

    @property
    def known(self):
        """The record as read, or the one made from an install before the record."""
        return self.record or self.adopted or Record()

    @property
    def is_first_install(self):
        """Whether nothing of the protocol's is here yet: what is here is the user's."""
        return self.record is None and self.adopted is None

    # ---- files

    def believed(self, claims):
        """The Record of the claims that the installer could have made (see claims.py): a file
        for a digest of bytes it writes there, a deny rule with the .claudeignore line it makes
        that rule of, and nothing the local record shows the user had before the first install.
        What is left out is named in self.unbelieved."""
        record = Record()
        for rel, digests in sorted(claims.files.items()):
            good = set(digests) & self.writable_digests(rel)
            if not good:
                self.unbelieved.append(rel)
                continue
            self.digests[rel] = good
            data, _ = read_file_of_the_installers(self.project, rel)
            current = digest(data) if data is not None else None
            record.files[rel] = current if current in good else sorted(good)[0]
        had = self.rules_before()
        record.hooks = [wiring.event for wiring in WIRINGS if wiring.event in claims.hooks]
        record.allow = [rule for rule in SKILL_PERMISSIONS
                        if rule in claims.allow and rule not in had["allow"]]
        self.unbelieved += sorted(rule for rule in claims.allow if rule not in record.allow)
        for rule, lines in sorted(claims.deny.items()):
            made = [line for line in sorted(lines) if deny_rule_lines(line)[0] == {rule: line}]
            if made and rule not in had["deny"]:
                record.deny[rule] = made[0]
            else:
                self.unbelieved.append(rule)
        record.created = sorted(rel for rel in claims.created
                                if rel in CREATED_FILES and self.before_text(rel) is None)
        events = dict((agent.settings, [wiring.event for wiring in agent.wirings])
                      for agent in OTHER_AGENTS)
        record.wired = dict((rel, [event for event in events[rel] if event in wired])
                            for rel, wired in sorted(claims.wired.items()) if rel in events)
        # a container claimed wrongly only decides whether an emptied one comes back, empty
        record.containers = sorted(path for path in claims.containers if path in CONTAINERS)
        return record

    def adopt_unclaimed_agents(self):
        """Take for the protocol's an agent's hooks file that the record says nothing of but
        that wires the protocol's hooks, as an install made before the record is adopted (its
        entries, and the file when it is exactly what the installer writes into a new one): a
        record merged with one side of a conflict kept lacks the other side's agent. Returns
        whether any was."""
        if self.record is None:
            return False
        wired, created = adopted_wiring(self.project)
        unclaimed = [rel for rel in wired if not self.record.wired.get(rel)]
        for rel in unclaimed:
            self.record.wired[rel] = wired[rel]
            if rel in created and rel not in self.record.created:
                self.record.created.append(rel)
        return bool(unclaimed)

    def rules_before(self):
        """{"allow": rules, "deny": rules} of the settings.json the local record holds from
        before the first install here (both empty when it holds none)."""
        text = self.before_text(SETTINGS)
        try:
            settings = json.loads(text.lstrip("\ufeff")) if text and text.strip() else {}
        except ValueError:
            settings = {}
        if not isinstance(settings, dict):
            settings = {}
        return {"allow": rules_of(settings, "allow"), "deny": rules_of(settings, "deny")}

    def writable_digests(self, rel):
        """The digests of every version of the file at rel that the installer writes: this
        version's, rendered for each interpreter the project's entries name, and those releases
        shipped; none for a path it writes nothing at."""
        if rel not in self.writable:
            found = set(released_digests(rel))
            found.update(digest(data) for data in self.versions_of(rel))
            self.writable[rel] = found
        return self.writable[rel]

    def versions_of(self, rel):
        """This version's bytes for the file at rel, for each of the project's interpreters."""
        folder, _, name = rel.rpartition("/")
        if folder == HOOK_DIR and name in HOOKS:
            return [self.source.hook(name)]
        if folder == COMMAND_DIR and name in COMMANDS:
            return [command_for(self.source, name, python) for python in self.pythons()]
        if rel == CLAUDEIGNORE:
            return [self.source.bytes_of(TEMPLATE_CLAUDEIGNORE)]
        if rel == MEMORY_INDEX:
            return [self.source.bytes_of(TEMPLATE_MEMORY), index_for(self.source, self.project)]
        skills = dict((skill_path(command), command) for command in AGENT_COMMANDS)
        if rel in skills:
            return [skill_text(self.source, skills[rel], python) for python in self.pythons()]
        return []

    def pythons(self):
        """The interpreters the project's hook entries name, for every agent, and the default."""
        return list(dict.fromkeys(installed_interpreters(self.project) +
                                  interpreters_wired_for(self.project) + [DEFAULT_PYTHON]))

    def owns(self, rel, data, pythons=(DEFAULT_PYTHON,), is_ours=None):
        """Whether the file at rel, holding data (bytes), is the protocol's and as it wrote it:
        its bytes are those the record gives; with no record, a version a release shipped
        (is_ours tells it, for a file no release lists)."""
        if data is None:
            return False
        if self.record is not None:
            return digest(data) in self.digests.get(rel, ())
        if self.adopted is None:
            return False
        return is_ours(data) if is_ours else self.is_a_release(rel, data, pythons)

    def wrote(self, rel):
        """Whether the file at rel is one the protocol wrote, since edited or not: by the
        record, or, for a command, by an install of the bash edition (its marks), which
        installed its own commands under the protocol's names."""
        if rel in self.known.files:
            return True
        if rel.startswith(COMMAND_DIR + "/"):
            if self.bash_edition is None:
                self.bash_edition = the_bash_edition_is_here(self.project)
            return self.bash_edition
        return False

    def is_a_release(self, rel, data, pythons):
        """Whether data is a version of the file at rel that a release shipped."""
        if rel == CLAUDEIGNORE:
            template = self.source.bytes_of(TEMPLATE_CLAUDEIGNORE)
            return is_a_release_of(template, RELEASED_CLAUDEIGNORE_DIGESTS, data)
        if rel.startswith((HOOK_DIR + "/", COMMAND_DIR + "/")):
            return is_the_installers(self.source, rel, data, pythons)
        return False  # the memory index is the user's memory once it is there

    def own(self, rel, data):
        self.after.files[rel] = digest(data)

    def disown(self, rel):
        self.after.files.pop(rel, None)

    # ---- settings and the marked blocks

    def owns_event(self, event, rel=SETTINGS):
        """Whether the protocol wired the event's entry in the hooks file at rel."""
        return event in (self.known.hooks if rel == SETTINGS else self.known.wired.get(rel, []))

    def owns_rule(self, key, rule):
        return rule in (self.known.allow if key == "allow" else self.known.deny)

    def created(self, rel):
        return rel in self.known.created

    def note_containers(self, before, after, taken_over=()):
        """Write down the containers of settings.json that a run's changes made (before and
        after: the settings as they were read, as the run leaves them), and those that held
        the entries of the bash edition it took over (taken_over: their events), which that
        edition's install made."""
        made = containers_of(after) - containers_of(before)
        made |= set(["hooks"] if taken_over else []) | set("hooks." + event for event in taken_over)
        self.after.containers = sorted(set(self.after.containers) | made)

    def keep_the_users_containers(self, original, settings):
        """Put back, empty, the containers of settings.json the uninstall emptied and removed
        that the protocol did not make: "permissions": {"deny": []} of the user's comes back
        as it was, in a teammate's clone too, where no local record holds the bytes. (An install
        made before the record wrote none down: its emptied containers go.)"""
        if self.record is None:
            return
        for path in sorted(containers_of(original) - containers_of(settings)
                           - set(self.known.containers), key=len):
            key, _, inner = path.partition(".")
            if not inner:
                settings[key] = {}
            elif isinstance(settings.get(key), dict):
                settings[key][inner] = [] if key in ("hooks", "permissions") else {}

    def before_text(self, rel):
        """The text of an edited file before the first install here; None when not known."""
        return (self.before or {}).get("files", {}).get(rel)

    def folders_before(self):
        return (self.before or {}).get("folders", [])

    # ---- adopting an install made before the record

    def adopt(self):
        """The Record an install made before the record amounts to (see the module's text)."""
        adopted = Record()
        try:
            settings, original = load_settings(os.path.join(self.project, *SETTINGS.split("/")),
                                               SETTINGS)
        except SettingsError:
            settings, original = {}, None
        adopted.hooks = [wiring.event for wiring in WIRINGS if our_handlers(settings, wiring)]
        # what held the entries of an install before the record is taken for its own making
        adopted.containers = (["hooks"] if adopted.hooks else []) + [
            "hooks." + event for event in adopted.hooks]
        try:
            ignore_text = claudeignore_text(self.project)
        except Refusal:
            ignore_text = None
        template = self.source.bytes_of(TEMPLATE_CLAUDEIGNORE).decode("utf-8")
        lines = deny_rule_lines(template)[0]
        lines.update(deny_rule_lines(ignore_text)[0])
        deny = dict((rule, lines[rule]) for rule in rules_of(settings, "deny") if rule in lines)
        if original is not None and is_as_a_release_creates_it(original, settings, deny):
            adopted.created.append(SETTINGS)
            adopted.containers = sorted(containers_of(settings))
            adopted.allow = [rule for rule in rules_of(settings, "allow")
                             if rule in SKILL_PERMISSIONS]
            adopted.deny = deny
        for rel, template, _ in MARKED_BLOCKS:
            data, _ = read_file_of_the_installers(self.project, rel)
            block = self.source.marked_template(template)
            if data is not None and data.decode("utf-8", "surrogateescape") == appended("", block):
                adopted.created.append(rel)
        adopted.wired, created = adopted_wiring(self.project)
        adopted.created += created
        return adopted

    # ---- writing

    def plan_writes(self, plan):
        """The record's changes as the run's first ones: the local record of what was here
        (on a first install, and for another agent the protocol wires for the first time),
        then the shared record as the run leaves it."""
        if self.foreign:
            plan.refuse("{} is there and is not the record the installer writes; move it away, "
                        "so the install can write down what it adds".format(RECORD))
        earlier = self.before or {"folders": [], "files": {}}
        before = self.what_was_here(plan, earlier)
        if before != earlier:
            if self.foreign_before:
                plan.refuse("{} is there and is not a record the installer wrote; move it "
                            "away, so the install can write down what --uninstall must leave "
                            "as it was".format(BEFORE_INSTALL))
            else:
                added = [rel for rel in before["folders"] + sorted(before["files"])
                         if rel not in earlier["folders"] and rel not in earlier["files"]]
                plan.write("write" if self.before is None else "merge", BEFORE_INSTALL,
                           encode_text(json.dumps(before, indent=2, sort_keys=True) + "\n"),
                           "what --uninstall must leave as it was: " + ", ".join(added),
                           mode=0o600, first=True)  # it may copy settings with secrets in "env"
        if self.record is None or self.after != self.record or not self.record_is_whole:
            plan.write("write" if self.record is None else "merge", RECORD, self.after.bytes(),
                       "what the protocol added here", first=True)

    def what_was_here(self, plan, earlier):
        """The local record as this run leaves it: what it said (earlier), and what this run's
        changes leave no trace of. On a first install, the install's folders that are here,
        empty, and the text of the files it edits; for another agent's hooks file the protocol
        wires for the first time, its text; and an agent's folder, here and empty, that the run
        writes in."""
        before = {"folders": list(earlier["folders"]), "files": dict(earlier["files"])}
        if self.is_first_install and self.before is None:
            before["folders"] += [rel for rel in INSTALL_FOLDERS if self.is_empty_folder(rel)]
            for rel in EDITED_FILES:
                self.write_down(before, rel)
        for rel in AGENT_FILES:
            if rel in plan.planned and not self.known.wired.get(rel) and \
                    rel not in before["files"]:
                self.write_down(before, rel)
        before["folders"] += [rel for rel in AGENT_FOLDERS if rel not in before["folders"]
                              and self.is_empty_folder(rel)
                              and any(path.startswith(rel + "/") for path in plan.planned)]
        return before

    def is_empty_folder(self, rel):
        return is_an_empty_folder(os.path.join(self.project, *rel.split("/")))

    def write_down(self, before, rel):
        data, _ = read_file_of_the_installers(self.project, rel)
        if data is not None:
            before["files"][rel] = data.decode("utf-8", "surrogateescape")


def containers_of(settings):
    """The objects and lists of a settings object the protocol's entries and rules go into:
    "hooks", "hooks.<event>", "permissions", "permissions.allow", "permissions.deny"."""
    found = set()
    for key in ("hooks", "permissions"):
        value = settings.get(key)
        if isinstance(value, dict):
            found.add(key)
            inner = value if key == "hooks" else dict(
                (name, value[name]) for name in ("allow", "deny") if name in value)
            found.update("{}.{}".format(key, name) for name in inner)
    return found


def is_as_a_release_creates_it(original, settings, deny):
    """Whether a settings text is exactly what --project writes where there was no settings
    file, with the interpreter its entries name and those of the installer's permission rules
    it holds (0.1.0 wrote none; deny: the rules a .claudeignore line of the project or the
    template gives)."""
    pythons = set(interpreter_in(str(handler.get("command", "")))
                  for wiring in WIRINGS for _, handler in our_handlers(settings, wiring))
    if len(pythons) != 1 or None in pythons:
        return False
    fresh = {}
    wire(fresh, pythons.pop(), False, WIRINGS)
    grant(fresh, "allow", [rule for rule in rules_of(settings, "allow")
                           if rule in SKILL_PERMISSIONS])
    grant(fresh, "deny", [rule for rule in rules_of(settings, "deny") if rule in deny])
    return original == settings_text(fresh, None)


