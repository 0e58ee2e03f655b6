"""What the protocol is made of in a project, and where this version's copy of it is read from.

Why it exists: the names of the protocol's parts (its hooks, commands, templates, the settings
entries that run the hooks and the Skill rules its flow needs) are facts every mode shares; they
live here once. A Wiring is one settings entry the installer owns, with the one reading of a
handler that install, update, uninstall and check all use to tell whether it runs the project's
copy of a hook. Source reads the files this version installs from beside install.py.
"""

import importlib.util
import os
import re
import sys

from .errors import Refusal
from .files import read_bytes

HOOKS = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
COMMANDS = ("handoff.md", "dream.md", "catchup.md", "memory-status.md", "update-context.md")
HOOK_DIR = ".claude/hooks"
COMMAND_DIR = ".claude/commands"
SETTINGS = ".claude/settings.json"
LOCAL_SETTINGS = ".claude/settings.local.json"
MEMORY_INDEX = "memory/MEMORY.md"
CLAUDEIGNORE = ".claudeignore"
GITIGNORE = ".gitignore"
GITATTRIBUTES = ".gitattributes"
BASELINE_PREFIX = ".session-baseline"
# What the protocol added here (shared, committed) and what was here before the first install
# on this machine (local, ignored by git): record.py.
RECORD = ".claude/memory-context-protocol.json"
BEFORE_INSTALL = HOOK_DIR + "/.before-install.json"
TEMPLATE_MEMORY = "templates/MEMORY.md"
TEMPLATE_CLAUDEIGNORE = "templates/claudeignore"
TEMPLATE_GITIGNORE = "templates/gitignore"
TEMPLATE_GITATTRIBUTES = "templates/gitattributes"
TEMPLATE_SECTION = "templates/CLAUDE.md-section.md"
TEMPLATE_AGENTS_SECTION = "templates/AGENTS.md-section.md"
AGENTS_MD = "AGENTS.md"

# The protocol's marked blocks in files of the user's: the file, the template
# that holds the block, and what its lines are called in a run's output.
MARKED_BLOCKS = ((GITIGNORE, TEMPLATE_GITIGNORE, "local-only lines"),
                 (GITATTRIBUTES, TEMPLATE_GITATTRIBUTES, "memory's merge rule"))

# The handoff lives at the project root: the CLI asks before every edit of a
# path under .claude/ (a "sensitive file", even in acceptEdits mode), so a
# handoff there could never be written without a person. 0.1.0 put it there;
# --update moves it.
SESSION_STATE = ".session-state.md"
OLD_SESSION_STATE = ".claude/session-state.md"
DEFAULT_PYTHON = "python3"

# The interpreter word in the command sources; a project installed with
# another --python gets its commands with that interpreter instead.
SOURCE_PYTHON = re.compile(br"(?<![\w./-])python3(?![\w.-])")

# The agents a project may ask for, and where the parts of those besides Claude Code live
# (measured on Codex CLI 0.169.0 and Gemini CLI 0.61.0): each runs the same hooks, wired in a file
# of its own, and takes the protocol's flow commands as skills in .agents/skills/, which both read.
# The folders are listed deepest first, as they are emptied. Agents with no hooks at all read
# AGENTS.md: "agents-md" puts the protocol's steps there, as a marked section.
AGENTS = ("claude", "codex", "gemini", "agents-md")
CODEX_HOOKS = ".codex/hooks.json"
GEMINI_SETTINGS = ".gemini/settings.json"
SKILL_DIR = ".agents/skills"
AGENT_COMMANDS = ("handoff", "dream", "catchup")
AGENT_FOLDERS = tuple(SKILL_DIR + "/" + name for name in AGENT_COMMANDS) + (
    SKILL_DIR, ".agents", ".gemini", ".codex")

# The skills the model itself invokes in the protocol's flow (/catchup at the
# start, /handoff and /dream when the Stop hook asks). The CLI asks before the
# model runs a command whose frontmatter lists allowed-tools unless the
# project allows Skill(<name>); nothing broader is granted.
SKILL_PERMISSIONS = ("Skill(catchup)", "Skill(handoff)", "Skill(dream)")


def skill_rule(command):
    """The rule that lets the model run a command (catchup.md: Skill(catchup)) without asking."""
    return "Skill({})".format(command[:-len(".md")])


HOOK_TIMEOUT_SECONDS = 15


class Wiring(object):
    """One settings.json entry the installer owns, and the entry the bash
    edition wires for the same event (its script of the same name, .sh)."""

    def __init__(self, event, hook, matcher, status, bash_status):
        self.event = event
        self.hook = hook
        self.matcher = matcher
        self.status = status
        self.bash_hook = bash_edition_name(hook)
        self.bash_status = bash_status  # what its settings.example.json shows while it runs
        self.path_in_command = path_in_command(hook)
        self.bash_path_in_command = path_in_command(self.bash_hook)

    def handler(self, python):
        return {
            "type": "command",
            "command": '{} -I -S "${{CLAUDE_PROJECT_DIR}}/{}/{}"'.format(python, HOOK_DIR, self.hook),
            "timeout": HOOK_TIMEOUT_SECONDS,
            "statusMessage": self.status,
        }

    def group(self, python):
        group = {}
        if self.matcher is not None:
            group["matcher"] = self.matcher
        group["hooks"] = [self.handler(python)]
        return group

    def is_ours(self, handler):
        """Whether the handler runs this hook of the project: the one reading
        of a handler that install, update, uninstall and check all use. The
        path may be in `command` (shell form) or in `args` (exec form, which
        the harness runs without a shell)."""
        return any(self.path_in_command.search(word) for word in handler_words(handler))

    def is_the_bash_editions(self, handler):
        """Whether the handler runs the bash edition's script for this event
        (and not this edition's hook as well), read the same way."""
        return not self.is_ours(handler) and \
            any(self.bash_path_in_command.search(word) for word in handler_words(handler))


def bash_edition_name(hook):
    """The bash edition's name for a hook of this edition: session-start.py is session-start.sh."""
    return hook[:-len(".py")] + ".sh"


def path_in_command(hook):
    """What names the project's own copy of a hook in a command: the project
    folder written $CLAUDE_PROJECT_DIR, ${CLAUDE_PROJECT_DIR} or with a
    default, ${CLAUDE_PROJECT_DIR:-.}, or no folder at all (a path relative
    to the project, where the harness starts a session's hooks). The same
    name under ~/.claude/hooks (the user's global hooks), in another folder
    or another project is another program."""
    return re.compile(
        r'(?:\$(?:CLAUDE_PROJECT_DIR|\{{CLAUDE_PROJECT_DIR(?::?[-=?+][^}}]*)?\}})"?/'
        r'|(?<![\w./~$}}\\-])(?:\./)?){}(?![\w.-])'.format(
            re.escape("{}/{}".format(HOOK_DIR, hook))))


def handler_words(handler):
    """The command of a handler, then each of its exec-form arguments, as text."""
    args = handler.get("args")
    return [str(handler.get("command", ""))] + \
        ([str(arg) for arg in args] if isinstance(args, list) else [])


def is_exec_form(handler):
    return isinstance(handler.get("args"), list)


WIRINGS = (
    Wiring("SessionStart", "session-start.py", "startup|resume|clear|compact|fork",
           "Loading project memory and checking context budgets",
           "Memory context: budgets, index, last handoff, git"),
    Wiring("Stop", "stop-handoff.py", None,
           "Checking that the session's work is saved",
           "Checking session persistence"),
)


def wirings_of(hooks):
    """The entries that run the given hooks. An entry running a hook file of
    the user's is the user's as well: the installer neither adds, changes nor
    removes it."""
    return [wiring for wiring in WIRINGS if wiring.hook in hooks]


def wired_together(hooks):
    """The entries an install may wire, the given hooks being the protocol's: session start and
    the Stop guard together, or neither. A Stop guard without the protocol's session start would
    find no baseline at any stop, and block the first stop of every session on a tree that was
    dirty before it began; a session start of the user's is theirs. The same decision holds for
    every agent's hooks file."""
    wirings = wirings_of(hooks)
    return wirings if len(wirings) == len(WIRINGS) else []


class Source(object):
    """The files this version installs, read from beside the real install.py (the folder that
    holds this package)."""

    def __init__(self, root):
        self.root = root
        self._cache = {}

    @classmethod
    def beside_this_script(cls):
        return cls(os.path.dirname(os.path.dirname(os.path.realpath(os.path.abspath(__file__)))))

    def path(self, rel):
        return os.path.join(self.root, *rel.split("/"))

    def bytes_of(self, rel):
        if rel not in self._cache:
            path = self.path(rel)
            try:
                data = read_bytes(path, path)
            except Refusal as error:
                raise Refusal("incomplete installer: {}".format(error))
            if data is None:
                raise Refusal("incomplete installer: {} is missing".format(path))
            self._cache[rel] = data
        return self._cache[rel]

    def hook(self, name):
        return self.bytes_of("hooks/" + name)

    def command(self, name):
        return self.bytes_of("commands/" + name)

    def module(self, rel, name, required):
        """The Python file at rel beside install.py, imported by its path (writing no bytecode),
        with the functions named in required; a Refusal when it cannot be loaded."""
        path = self.path(rel)
        sys.dont_write_bytecode = True
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        except (Exception, SystemExit) as error:  # a broken file must not give a traceback
            raise Refusal("cannot load {}: {}".format(path, error))
        for function in required:
            if not callable(getattr(module, function, None)):
                raise Refusal("{} has no {}()".format(path, function))
        return module

    def marked_template(self, rel):
        """The template's lines; its first and last lines are the markers."""
        lines = self.bytes_of(rel).decode("utf-8").splitlines()
        while lines and not lines[-1].strip():
            lines.pop()
        if len(lines) < 2 or "memory-context-protocol" not in lines[0] \
                or "memory-context-protocol" not in lines[-1]:
            raise Refusal("{} must start with its begin marker and end with its end marker".format(
                self.path(rel)))
        return lines


def command_for(source, name, python):
    """The command as installed for a project whose hooks run with python: the
    source names python3 wherever it runs Python (its text and allowed-tools)."""
    return SOURCE_PYTHON.sub(lambda match: python.encode("utf-8"), source.command(name))
