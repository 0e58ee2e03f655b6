#!/usr/bin/env python3
"""install.py - put the Memory Context Protocol into a project, check it, update it, take it out.

Why this exists
---------------
The protocol lives in a handful of files inside a project: four hooks under
`.claude/hooks/`, five slash commands under `.claude/commands/`, two hook
entries and the permissions its flow needs in `.claude/settings.json` (the
Skill rules the model's own /catchup, /handoff and /dream need, and a deny
rule for each `.claudeignore` line, the only form of that list the CLI
enforces), a starting `memory/MEMORY.md`, a `.claudeignore` and a block of
local-only lines in `.gitignore`. Copying them by hand is easy to get
slightly wrong, and a settings file is easy to clobber. This script does it the
same way every time, and it can undo it.

What it promises
----------------
* Nothing the user wrote is lost. `memory/`, the session-state file, the user's
  settings keys, hooks and permissions, and the user's `.gitignore` lines (even
  those written inside the protocol's block) are never overwritten, not even
  with `--force`. A command the user edited, a hook file of the user's under
  one of the hook names and an edited protocol section in the global CLAUDE.md
  stay unless `--force` (for a hook, `--update --force`) says otherwise.
* --uninstall removes only what --project created, and gives back every file
  and folder the user had byte for byte: a command the user edited or a hook
  of the user's stays, and so do `memory/` (never removed, even when the
  install created it) and the session-state file. Of the hooks' local files
  only what they write goes: a baseline (`.session-baseline`, then `.<session
  id>` and/or `.<pid>.tmp`) holding a state or, when temporary, nothing, and
  the hooks' bytecode in `__pycache__`; a file of the user's that merely looks
  like one stays. `.claude/hooks`, `.claude/commands` and `.claude` go only
  when the run empties them and they were not there, empty, before the
  install. A settings entry that runs a hook of the user's is the user's too:
  no mode adds, changes or removes it, except --update --force, which
  replaces the hook and so brings its entry up to date. The protocol's own hooks, commands and `.claudeignore` go even when
  committed (git shows them as deleted). `.claude/settings.json` and
  `.gitignore` lose only the protocol's parts; they are removed only when they
  hold exactly what the installer writes into a new file, and never while git
  tracks them, committed or staged, or cannot say whether it does; when what
  is left means the same as HEAD's version, HEAD's bytes come back in the
  file's line endings.
* What an install's own writes leave no trace of is written down by
  --project in `.claude/hooks/.before-install.json`, and only when there is
  such a thing: a folder above that was there and empty, and the bytes of a
  settings.json or .gitignore the uninstall could not work out from what is
  left (`{}`, `{"hooks": {}}`, a blank or 0-byte file, a layout HEAD does not
  have or will not have once the installed file is committed, a rule or an
  entry the user had that the protocol also writes). --uninstall leaves the
  rules and entries the user had, gives those bytes back when what is left
  means the same (a later edit of the user's that changes the meaning wins;
  one that changes only the layout does not), keeps those folders, and
  removes the record; everything else is read from the files. The record is
  readable by its owner alone (it may copy a settings "env"), and a file of
  another kind under its name stops an install that needs one.
* An existing settings.json is edited, not written out anew: only the
  protocol's entries change (with the comma that joins them to the user's),
  each added in the layout of the object or list it joins; every other byte
  (keys, escapes, number spellings, whitespace, line endings) stays, so
  --uninstall after --project gives the file back byte for byte. A new or
  empty one is written with 2-space indentation.
* Everything is checked before anything is written. An invalid settings.json,
  a symbolic link or something other than a regular file where a file would be
  read or written, a read-only file, folder or file system, or a damaged marker
  block stops the run with one line on stderr, and no file is changed.
* Once the changes begin they are all made: Ctrl-C takes effect after the last
  one (a second Ctrl-C stops at once), and a stdout nobody reads (`| head`)
  stops the printing, not the changes. A write that fails anyway (a full disk)
  is named in one line with the number of changes already made; running again
  completes the rest.
* Every file is written atomically (a temporary file in the same directory,
  then a rename), and never through a symbolic link. A file the installer
  edits (settings.json, `.gitignore`, the global CLAUDE.md) that has other
  names (hard links) is written through instead, so every name sees the
  change: the new bytes go whole into a temporary file first, so a full disk
  fails before the file is touched, and a write into the file that fails
  anyway puts the old bytes back; only a crash during that write can leave it
  part old, part new (the temporary file beside it then holds the new
  version). Run as root, such a file that belongs to someone other than its
  folder's owner is refused: the link may reach a file elsewhere that only
  its owner may write. A hook, command or `.claudeignore` the installer replaces is
  replaced whole: its other names keep what they held, so --force never
  changes the user's copy elsewhere and each project takes a new version with
  its own --update.
* Run as root (sudo), a file the installer replaces keeps its owner, group
  and permission bits, and a new file or folder takes the owner and group of
  the folder it is made in, so the user can still edit their own files. A
  file system that refuses the owner gets the write all the same; the run
  then ends with one line giving the chown to run, and exit code 1. Run as
  anyone else, files are written as any editor writes them. A replaced hook
  keeps its permission bits, with the executable bit wherever one may read it.
* Every action is one line on stdout; `--dry-run` prints the same lines as
  "would ..." and changes nothing.
* Running a mode twice changes nothing the second time.
* Standard library only, Python 3.8 or newer (an older Python gets one line),
  no network.
* An install never ends in a silent misconfiguration: an interpreter that
  cannot run the hooks (run as the harness runs it: `sh -c`, with the hooks'
  flags) is refused before any write, with one to pass instead; a folder
  outside git or parts git ignores are named in a note, and the last line
  says the install is not complete until it is dealt with. --check reports
  hooks the harness would never run or would run twice, what --update would
  repair, and parts teammates would not get, in the environment a session
  has (the settings files' "env" applied).
* A project moves from the bash edition in place: --project and --update
  make its hook entries and its .gitignore snippet this edition's, so nothing
  runs or is listed twice; its .sh hooks stay (they are that edition's files),
  and the run says nothing runs them any more.

Modes (exactly one)
-------------------
  --project DIR     install into DIR
  --update DIR      bring an installed DIR up to this version, or move it from the
                    bash edition
  --uninstall DIR   remove what --project added; memory/ and the handoff stay
  --global          add the protocol section to the user's CLAUDE.md
  --uninstall --global   take that section out again: the file as it was
                    before --global, byte for byte (an edited section stays
                    unless --force); the file goes only if it held the
                    section alone
  --check [DIR]     budgets, memory health, hooks, wiring and drift for DIR (default ".")
  --check --json [DIR]         the same as one JSON document, for scripts and CI
  --check --recursive [ROOT]   the same for every git repository under ROOT
  --check --memory [DIR]       the memory's health alone, installed or not

Exit codes (stable)
-------------------
  0  done, or the check found nothing worse than memory-health warnings
  1  the check found something over budget, broken, drifted, unwired or not
     installed, or a step was refused or failed
  2  usage error: unknown option, two modes, missing or non-directory target
  130 interrupted (Ctrl-C)

Git
---
Hooks already tracked in git's index (added or committed) as plain files are
marked 100755 in the index, because a hook committed without its executable
bit breaks every fresh clone on Linux and macOS; only the mode changes, no
content is staged. A hook tracked as a symbolic link is left alone. New hooks are never staged into the user's
index: the script prints the `git add --chmod=+x` line to run instead, and any
later --project or --update fixes a hook that was added without the bit.
The repository's filters never run, and a git command that gives no answer
within 30 seconds counts as no answer.

The source files are found next to the real path of this script, so it may be
run through a symbolic link to a clone.
"""

from __future__ import print_function  # so Python 2 reads this file as far as the check below

import sys

if sys.version_info < (3, 8):
    # One line, not a traceback: everything below needs Python 3.8.
    sys.stderr.write("install.py: error: this is Python {}.{}; install.py needs Python 3.8 or "
                     "newer: run it with python3\n".format(*sys.version_info[:2]))
    sys.exit(1)

import argparse  # noqa: E402 (after the version check, which must come first)
import difflib
import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile

VERSION = "0.1.0"
RELEASE_DATE = "2026-11-29"

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

HOOKS = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
COMMANDS = ("handoff.md", "dream.md", "catchup.md", "memory-status.md", "update-context.md")
# Commands an earlier release installed under a name this version no longer
# uses, with the command that took over. /status shadowed the CLI's built-in
# /status (version, account, model).
RETIRED_COMMANDS = {"status.md": "memory-status.md"}

HOOK_DIR = ".claude/hooks"
COMMAND_DIR = ".claude/commands"
SETTINGS = ".claude/settings.json"
LOCAL_SETTINGS = ".claude/settings.local.json"
MEMORY_INDEX = "memory/MEMORY.md"
CLAUDEIGNORE = ".claudeignore"
GITIGNORE = ".gitignore"
BASELINE_PREFIX = ".session-baseline"

TEMPLATE_MEMORY = "templates/MEMORY.md"
TEMPLATE_CLAUDEIGNORE = "templates/claudeignore"
TEMPLATE_GITIGNORE = "templates/gitignore"
TEMPLATE_SECTION = "templates/CLAUDE.md-section.md"

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

# The skills the model itself invokes in the protocol's flow (/catchup at the
# start, /handoff and /dream when the Stop hook asks). The CLI asks before the
# model runs a command whose frontmatter lists allowed-tools unless the
# project allows Skill(<name>); nothing broader is granted.
SKILL_PERMISSIONS = ("Skill(catchup)", "Skill(handoff)", "Skill(dream)")
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

# sha256 digests of command files shipped by earlier releases, by file name,
# taken with CRLF line endings read as LF. A command matching one of them (or
# the current source) is unmodified: --update may replace it and --uninstall
# may remove it. Each release that changes a file in commands/ adds the digest
# of the version it replaces. Each tuple starts with 0.1.0's version.
RELEASED_COMMAND_DIGESTS = {
    "dream.md": ("c550431f1c14e46e632fd476156754d6de8c0d53938780c9a6da1c44a3acaa2b",),
    "status.md": ("cfb306a69b432955205c06f1ee1f1b18f46e6d933332580092d4485eb2f30d02",),
}

# The same for the .claudeignore template: an unchanged copy of one of these is
# replaced by --update (0.1.0's listed build output and dependency folders,
# harmless while nothing read the file, but a hindrance as deny rules).
RELEASED_CLAUDEIGNORE_DIGESTS = (
    "03c6428751a0375dfb0731fe59e16597669ff5190e4d5eb2046ec244de76867f",
)

# The same for hook files. A hook matching neither one of these nor the current
# source is the user's own: it is replaced only by --update --force, and
# --uninstall leaves it. Each tuple starts with 0.1.0's version.
RELEASED_HOOK_DIGESTS = {
    "session-start.py": ("0e6599cc45f8abe94476c679d63d22651ae996cf003cf58eac7d0568dbaa8bdd",),
    "context-budget.py": ("66676d4eb9d7745ce878d956aade3450b1f4368cd02db4ca28b699c4273b16fc",),
    "prune-worktrees.py": ("592de05006ce7f4eede7be9f5208088c20a847d54487ed55926edee4314dedb4",),
    "stop-handoff.py": ("47570c8196b0566d773cd31f0d697797ef322b5a748ffaa816dc66befae07097",),
}

# The same for the protocol's section of the user's CLAUDE.md, by template
# name, taken over the section's lines, each stripped of surrounding white
# space and ended by "\n". --global replaces a section matching one of them (or
# the current template); another is the user's edit, replaced only with --force.
RELEASED_SECTION_DIGESTS = {
    "CLAUDE.md-section.md": ("d603febbbba98c1cc2c95253799f74111d7b3d0acfe114d0eac78c5c120bb933",),
}

# Matchers that earlier releases wrote, by event. --update brings an entry whose
# matcher is still one of them to this version's (0.1.0 did not match `fork`,
# the source the harness gives a forked session); any other is the user's.
RELEASED_MATCHERS = {"SessionStart": ("startup|resume|clear|compact",)}

# Folders --check --recursive never descends into.
SKIPPED_FOLDERS = frozenset((
    ".git", "node_modules", ".venv", "venv", "vendor", "target", "dist", "build",
    "__pycache__", ".tox",
))

HELP = """\
usage: install.py MODE [options]

Install, check, update or remove the Memory Context Protocol in a project.

modes (exactly one):
  --project DIR        install the hooks, commands, settings entries, memory
                       index, .claudeignore and .gitignore lines into DIR
  --update DIR         bring an installed DIR up to this version, or move it
                       from the bash edition
  --uninstall DIR      remove what --project added (never memory/ or the handoff)
  --global             add the protocol section to ~/.claude/CLAUDE.md
                       ($CLAUDE_CONFIG_DIR/CLAUDE.md when that is set)
  --uninstall --global remove that section (and the line break --global set
                       it off with), giving the file back as it was
  --check [DIR]        report budgets, memory health, what loads before the
                       first turn, and whether the hooks are installed, wired
                       and current in DIR (default: .)

options:
  --recursive          with --check: every git repository under DIR, worst first
  --json               with --check DIR: the whole report as JSON
  --memory             with --check DIR: the memory's health alone, whether or
                       not the hooks are installed; the exit code is about the
                       memory only (for repositories and CI without the hooks)
  --dry-run            print what would change; change nothing
  --force              with --project/--update: replace commands that differ,
                       including ones you edited; with --update, also hooks
                       that are not a version this installer shipped; with
                       --global, a protocol section you edited, and with
                       --uninstall --global removes one (never
                       memory/, your settings or your .gitignore lines)
  --python CMD         interpreter in the hook commands and the commands'
                       text (default: python3;
                       e.g. python, or "py -3" on Windows; a path with spaces
                       or backslashes goes in single quotes)
  -h, --help           show this help and exit
  --version            show the version and exit

exit codes: 0 ok; 1 the check found something, or a step was refused or
failed; 2 usage error; 130 interrupted (Ctrl-C). Broken memory (a dead pointer, an unclosed comment,
auto memory past the harness's cap, a cited path that no longer exists) and
anything over budget exit 1; memory-health warnings (possibly stale facts,
orphans, duplicates, history in comments, missing dates or feedback parts)
are printed but exit 0.
"""


class UsageError(Exception):
    """The command line is wrong: exit 2."""


class Refusal(Exception):
    """A step cannot be carried out safely, or failed: exit 1."""


# ---------------------------------------------------------------- the source

class Source(object):
    """The files this version installs, read from beside the real install.py."""

    def __init__(self, root):
        self.root = root
        self._cache = {}

    @classmethod
    def beside_this_script(cls):
        return cls(os.path.dirname(os.path.realpath(os.path.abspath(__file__))))

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


def same_content(data, other):
    """Whether two files hold the same text; a checkout with core.autocrlf=true
    (the default on Windows) holds every file with CRLF line endings."""
    return lf_endings(data) == lf_endings(other)


def lf_endings(data):
    return data.replace(b"\r\n", b"\n")


def is_a_release_of(current, digests, data):
    """Whether data is the current version or one whose digest is listed."""
    return same_content(data, current) or \
        hashlib.sha256(lf_endings(data)).hexdigest() in digests


def is_the_installers(source, rel, data, pythons=(DEFAULT_PYTHON,)):
    """Whether data is a version of the hook or command at rel that a release
    shipped; a command counts as this version when it is the source rendered
    for one of the pythons (the interpreters the project was installed with)."""
    folder, name = rel.rsplit("/", 1)
    if folder == HOOK_DIR:
        return is_a_release_of(source.hook(name), RELEASED_HOOK_DIGESTS.get(name, ()), data)
    digests = RELEASED_COMMAND_DIGESTS.get(name, ())
    if name in RETIRED_COMMANDS:
        return hashlib.sha256(lf_endings(data)).hexdigest() in digests
    return any(is_a_release_of(command_for(source, name, python), digests, data)
               for python in pythons)


def command_for(source, name, python):
    """The command as installed for a project whose hooks run with python: the
    source names python3 wherever it runs Python (its text and allowed-tools)."""
    return SOURCE_PYTHON.sub(lambda match: python.encode("utf-8"), source.command(name))


# ------------------------------------------------------------ the filesystem

def read_bytes(path, shown):
    """The file's bytes, or None when there is no file (nor a folder it could
    be in). Anything but a regular file (a folder, a FIFO, a device) is
    refused, without waiting on it; errors name the file as shown."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        descriptor = os.open(path, flags)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as error:
        raise Refusal("cannot read {}: {}".format(shown, error.strerror or error))
    try:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise Refusal("{} is a directory, not a file".format(shown))
        if not stat.S_ISREG(mode):
            raise Refusal("{} is not a regular file".format(shown))
        return read_all(descriptor)
    except OSError as error:
        raise Refusal("cannot read {}: {}".format(shown, error.strerror or error))
    finally:
        os.close(descriptor)


def read_text(path, shown):
    """The file as text, line endings untouched, or None when there is no file."""
    data = read_bytes(path, shown)
    return None if data is None else data.decode("utf-8", "surrogateescape")


def encode_text(text):
    return text.encode("utf-8", "surrogateescape")


def newline_of(text):
    """The line ending most lines of the text use."""
    return "\r\n" if text.count("\r\n") * 2 > text.count("\n") else "\n"


def current_umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomically(path, data, mode, owners=None, keep_links=True):
    """Write via a temporary file and a rename, so no reader sees half a file.
    Run as root, the new file keeps the owner of the one it replaces, or takes
    its folder's (owners keeps those it could not give). A file with other
    names (hard links) is written through instead when keep_links says so, so
    that every name sees the change."""
    owners = owners or Owners()
    folder = os.path.dirname(path)
    make_folders(folder, owners)
    existing = lstat_or_none(path)
    if keep_links and existing is not None and stat.S_ISREG(existing.st_mode) \
            and existing.st_nlink > 1:
        write_through_links(path, data)
        return
    handle, temporary = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        owner = owner_of(existing or os.lstat(folder))
        # before the mode: a change of owner clears the set-user-ID and set-group-ID bits
        owners.give(path, owner, descriptor=handle)
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def write_through_links(path, data):
    """Write data into the file itself (its inode), so that its other names
    see it too; owner, group and permission bits stay as they are. The new
    bytes first go whole into a temporary file beside it, so that a disk too
    full for them fails before the file is touched, and a write into the file
    that fails anyway puts the old bytes back. Only a crash in the middle can
    leave the file part old, part new; the temporary file then holds the new
    version."""
    handle, temporary = tempfile.mkstemp(
        prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=os.path.dirname(path))
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        descriptor = os.open(path, flags)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise Refusal("{} is not a regular file".format(path))
            old = read_all(descriptor)
            try:
                overwrite(descriptor, data)
            except OSError:
                overwrite(descriptor, old)
                raise
        finally:
            os.close(descriptor)
    finally:
        os.unlink(temporary)


def read_all(descriptor):
    """Every byte of the open file, from its start."""
    os.lseek(descriptor, 0, os.SEEK_SET)
    chunks = []
    while True:
        chunk = os.read(descriptor, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def overwrite(descriptor, data):
    """Make the open file hold exactly data."""
    os.lseek(descriptor, 0, os.SEEK_SET)
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view):]
    os.ftruncate(descriptor, len(data))


def make_folders(folder, owners):
    """Make folder and the folders above it that are missing; run as root,
    each takes the owner of the folder it is made in."""
    if os.path.isdir(folder):
        return
    parent = os.path.dirname(folder)
    if parent != folder:
        make_folders(parent, owners)
    try:
        os.mkdir(folder)
    except FileExistsError:
        if os.path.isdir(folder):
            return
        raise
    owners.give(folder, owner_of(os.lstat(parent)))


def lstat_or_none(path):
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def owner_of(info):
    return (info.st_uid, info.st_gid)


class Owners(object):
    """Who the files a run makes belong to. Run as root (sudo), a file the run
    replaces keeps its owner and group, and a new file or folder takes those
    of the folder it is made in, so the user can still edit their own files.
    Anyone else writes as any editor does: only root may give a file away,
    and Windows keeps no such owners. A file system that refuses (a share
    that maps root to nobody) gets the write all the same, and the files are
    named at the end with the chown that gives them back."""

    def __init__(self):
        self.active = hasattr(os, "geteuid") and hasattr(os, "fchown") and os.geteuid() == 0
        self.lost = []  # (path, owner, why) for each owner that could not be given

    def give(self, path, owner, descriptor=None):
        """Give the file at path (open as descriptor, if it is) to owner."""
        if not self.active:
            return
        info = os.fstat(descriptor) if descriptor is not None else os.lstat(path)
        if owner_of(info) == owner:
            return
        try:
            if descriptor is not None:
                os.fchown(descriptor, *owner)
            else:
                os.chown(path, *owner, follow_symlinks=False)
        except OSError as error:
            self.lost.append((path, owner, error.strerror or str(error)))

    def refuse_if_any_lost(self):
        """One line for the files that could not be given their owner: the
        chown that does it (-R for a folder: the run made it and everything
        in it, which took the folder's owner as it was, root)."""
        if not self.lost:
            return
        paths = {}
        for path, owner, _ in self.lost:
            paths.setdefault(owner, []).append(shlex.quote(path))
        raise Refusal("every change was made, but their owner could not be kept (chown: {}); "
                      "give them back with: {}".format(self.lost[0][2], "; ".join(
                          "chown -R {}:{} {}".format(uid, gid, " ".join(names))
                          for (uid, gid), names in paths.items())))


def file_mode_for(path, executable):
    """The permission bits of the file a write replaces (a hook's made
    runnable by whoever may read it); for a new file, what the umask leaves,
    and 0o755 for a new hook."""
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return 0o755 if executable else 0o666 & ~current_umask()
    return runnable(mode) if executable else mode


def runnable(mode):
    """The mode with the executable bit wherever the read bit is."""
    return mode | (mode & 0o444) >> 2


def is_executable(path):
    if os.name == "nt":  # Windows keeps no executable bit; git's index does (see plan_git_index)
        return True
    try:
        return bool(os.stat(path).st_mode & stat.S_IXUSR)
    except OSError:
        return False


def remove_path(path):
    """Remove a file or link (never what a link points to), an emptied folder,
    or a __pycache__ folder with its contents."""
    if os.path.islink(path) or not os.path.isdir(path):
        os.remove(path)
    elif os.path.basename(path) == "__pycache__":
        shutil.rmtree(path)
    else:
        os.rmdir(path)


def why_unsafe_to_change(root, rel, display, removing=False):
    """Why changing root/rel could reach outside it (a symbolic link on the way,
    or a file where a folder should be); None when it is safe. Removing a link
    itself is safe: it never touches what the link points to."""
    path = root
    parts = rel.split("/")
    for index, part in enumerate(parts):
        path = os.path.join(path, part)
        last = index == len(parts) - 1
        shown = "/".join(parts[:index + 1]) if display is None else display
        if os.path.islink(path) and not (last and removing):
            return "{} is a symbolic link; refusing to write through it".format(shown)
        if not os.path.exists(path):
            return None
        if not last and not os.path.isdir(path):
            return "{} is not a directory".format(shown)
    return None


def why_unwritable(root, rel, display):
    """Why root/rel cannot be created, replaced or removed (a read-only file or
    folder, an immutable one, a read-only file system); None when it can. The
    test is os.access, which those fail even for root."""
    path = os.path.join(root, *rel.split("/"))
    if os.path.isfile(path) and not os.path.islink(path) and not os.access(path, os.W_OK):
        return "{} is read-only".format(display or rel)
    folder = os.path.dirname(path)
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        return "cannot write in {}".format(folder)
    return None


# ------------------------------------------------------------------ the plan

VERBS = {
    "write": ("wrote", "would write"),
    "replace": ("replaced", "would replace"),
    "merge": ("merged", "would merge"),
    "append": ("appended", "would append"),
    "repair": ("repaired", "would repair"),
    "remove": ("removed", "would remove"),
    "chmod": ("chmod +x", "would chmod +x"),
    "index": ("git +x", "would git +x"),
    "move": ("moved", "would move"),
    "keep": ("keep", "keep"),
    "note": ("note", "note"),
}


class Step(object):
    """One line of output and, unless it only reports, one change."""

    def __init__(self, verb, shown, note, change):
        self.verb = verb
        self.shown = shown
        self.note = note
        self.change = change

    def line(self, dry_run):
        label = VERBS[self.verb][1 if dry_run else 0]
        width = 14 if dry_run else 8
        text = "  {:<{}} {}".format(label, width, self.shown)
        return text + (" ({})".format(self.note) if self.note else "")


class Plan(object):
    """Every change of a run, worked out before the first one is made."""

    def __init__(self, root):
        self.root = root
        self.steps = []
        self.refusals = []
        self.removed = set()
        self.held = []  # files kept though they differ from this version
        self.nothing_installed = False
        self.unshared = False  # outside git, or parts git ignores: said in the last line too
        self.owners = Owners()
        self.planned = {}  # rel -> the bytes the run writes there

    def path(self, rel):
        return os.path.join(self.root, *rel.split("/"))

    def keep(self, rel, note):
        self.steps.append(Step("keep", rel, note, None))

    def hold(self, rel, note):
        """Keep a file that differs from this version, for want of --force or --update: the
        run's last line must not call the project up to date while it holds one."""
        self.keep(rel, note)
        self.held.append(rel)

    def note(self, text):
        self.steps.append(Step("note", text, "", None))

    def refuse(self, reason):
        if reason not in self.refusals:
            self.refusals.append(reason)

    def change(self, verb, rel, note, change, shown=None):
        reason = why_unsafe_to_change(self.root, rel, shown, removing=verb == "remove") \
            or why_unwritable(self.root, rel, shown)
        if reason:
            self.refuse(reason)
            return
        self.steps.append(Step(verb, shown or rel, note, change))

    def write(self, verb, rel, data, note="", executable=False, shown=None, whole=False,
              mode=None):
        """A file the run edits keeps its other names (hard links); one the
        installer owns whole (a hook, a command) is replaced, and its other
        names keep what they held, so that --force never changes a copy of the
        user's elsewhere and each project takes a new version by its own --update."""
        path = self.path(rel)
        mode = file_mode_for(path, executable) if mode is None else mode
        existing = lstat_or_none(path)
        if whole and existing is not None and existing.st_nlink > 1:
            other = "its other name keeps" if existing.st_nlink == 2 else "its other names keep"
            note = "; ".join(part for part in (note, other + " the old bytes") if part)
        elif existing is not None and existing.st_nlink > 1 and self.owners.active and \
                owner_of(existing) != owner_of(os.lstat(os.path.dirname(path))):
            # Root writes anything: a link the folder's owner made to a file they may not
            # write would let this run change that file, wherever its other name is.
            self.refuse("{} has other names (hard links) and belongs to {}:{}, not to its "
                        "folder's owner; run as root, writing through it could change a file "
                        "elsewhere: run install.py as the project's owner".format(
                            shown or rel, *owner_of(existing)))
            return
        self.planned[rel] = data
        self.change(verb, rel, note, lambda: write_atomically(
            path, data, mode, self.owners, keep_links=not whole), shown)

    def remove(self, rel, note="", shown=None):
        path = self.path(rel)
        self.removed.add(os.path.normpath(path))
        self.change("remove", rel, note, lambda: remove_path(path), shown)

    def will_be_emptied(self, rel):
        """Whether the run removes everything in the folder (one already empty
        was not emptied by it, and is not its to remove)."""
        folder = self.path(rel)
        try:
            names = os.listdir(folder)
        except OSError:
            return False
        return bool(names) and \
            all(os.path.normpath(os.path.join(folder, name)) in self.removed for name in names)

    def refuse_if_unsafe(self):
        if self.refusals:
            raise Refusal("; ".join(self.refusals))

    def carry_out(self, dry_run, out):
        """Print every step, and make the changes unless this is a dry run.
        Returns the number of changes (made, or planned)."""
        changes = 0
        for step in self.steps:
            if step.change is not None:
                if not dry_run:
                    make_change(step, changes)
                changes += 1
            out(step.line(dry_run))
        return changes


def make_change(step, made):
    """Make the step's change; a failure is named with the number already made."""
    try:
        step.change()
    except (OSError, Refusal) as error:
        so_far = "the {} change(s) above were made; run again once it is fixed".format(made) \
            if made else "nothing was changed"
        raise Refusal("could not change {}: {}; {}".format(
            step.shown, getattr(error, "strerror", None) or error, so_far))


# ----------------------------------------------------------- settings.json

class SettingsError(Refusal):
    pass


def parse_settings(text, shown):
    """The settings as a dict (an empty file counts as {}); a SettingsError
    otherwise, naming what is wrong and where. Duplicate keys, NaN and a
    number too large for a double are refused too: a rewrite would silently
    drop the first key, and would write the number as Infinity, which is no
    JSON at all."""
    if not text.strip():
        return {}

    def unique_keys(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise SettingsError('{}: the key "{}" appears twice in one object'.format(
                    shown, key))
            seen.add(key)
        return dict(pairs)

    def no_constant(name):
        raise SettingsError("{}: {} is not JSON".format(shown, name))

    def finite(number):
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise SettingsError("{}: the number {} is too large to be written back as "
                                "JSON (it reads as infinity); use a smaller one".format(
                                    shown, number))
        return value

    try:
        data = json.loads(text, object_pairs_hook=unique_keys, parse_constant=no_constant,
                          parse_float=finite)
    except json.JSONDecodeError as error:
        raise SettingsError("{} is not valid JSON at line {}, column {} ({})".format(
            shown, error.lineno, error.colno, error.msg))
    except RecursionError:
        raise SettingsError("{} is nested too deeply to read".format(shown))
    if not isinstance(data, dict):
        raise SettingsError("{} does not hold a JSON object".format(shown))
    problem = hooks_shape_problem(data.get("hooks", {})) or \
        permissions_shape_problem(data.get("permissions", {}))
    if problem:
        raise SettingsError("{}: {}".format(shown, problem))
    return data


def hooks_shape_problem(hooks):
    """What keeps "hooks" from the shape the harness reads (an object of lists
    of groups, each with a "hooks" list of handler objects); None when sound."""
    if not isinstance(hooks, dict):
        return '"hooks" is not an object'
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            return '"hooks.{}" is not a list'.format(event)
        for index, group in enumerate(groups):
            where = "hooks.{}[{}]".format(event, index)
            if not isinstance(group, dict):
                return '"{}" is not an object'.format(where)
            if not isinstance(group.get("hooks"), list):
                return '"{}" has no "hooks" list'.format(where)
            if not all(isinstance(handler, dict) for handler in group["hooks"]):
                return '"{}.hooks" holds something other than objects'.format(where)
    return None


def permissions_shape_problem(permissions):
    """What keeps "permissions" from the shape the installer merges into (an
    object whose "allow" and "deny" are lists of rule strings); None when sound."""
    if not isinstance(permissions, dict):
        return '"permissions" is not an object'
    for key in ("allow", "deny"):
        rules = permissions.get(key, [])
        if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
            return '"permissions.{}" is not a list of rules'.format(key)
    return None


def load_settings(path, shown):
    """(settings, original text); ({}, None) when the file does not exist."""
    data = read_bytes(path, shown)
    if data is None:
        return {}, None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SettingsError("{} is not UTF-8 text (byte {} at offset {})".format(
            shown, hex(data[error.start]), error.start))
    return parse_settings(text.lstrip("\ufeff"), shown), text


def settings_bytes(data, original):
    """settings_text() as UTF-8. A string holding half a surrogate pair (which
    JSON's \\u escapes allow) has no UTF-8 form: the file is then written with
    every non-ASCII character escaped."""
    try:
        return settings_text(data, original, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return settings_text(data, original, ensure_ascii=True).encode("utf-8")


def settings_text(data, original, ensure_ascii=False):
    """The settings as JSON text. An existing file is edited, not rewritten:
    only the values that differ from the original change, in the layout of
    the object or list that holds them, and every other character (keys,
    escapes, number spellings, whitespace, byte order mark, line endings,
    final newline) stays as it was. A new or empty file gets the settings
    indented by 2 spaces."""
    bom = "\ufeff" if original and original.startswith("\ufeff") else ""
    body = (original or "")[len(bom):]
    if body.strip():
        try:
            return bom + SettingsEdit(body, ensure_ascii).text_holding(data)
        except RecursionError:
            pass
    newline = newline_of(body)
    final_newline = "\n" if body.endswith("\n") or not body.strip() else ""
    text = json.dumps(data, indent=2, ensure_ascii=ensure_ascii) + final_newline
    return bom + text.replace("\n", newline)


# Where each value of a settings text lies, so that a change touches only its
# own characters. The text has already passed parse_settings(), the authority
# on what is valid: this reader only finds where things start and end.
JSON_SPACE = re.compile(r"[ \t\r\n]*")
JSON_SCALAR = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?'
                         r"|true|false|null", re.S)
LINE_INDENT = re.compile(r"[ \t]*")


class Span(object):
    """One value of the text: [start, end), "object", "array" or "scalar",
    a container's entries in their order, and the container holding it."""

    def __init__(self, start, end, kind, entries=()):
        self.start, self.end, self.kind, self.entries = start, end, kind, list(entries)
        self.parent = None
        for entry in self.entries:
            entry.value.parent = self


class Entry(object):
    """A member of an object (its key, where the key starts and ends) or an
    element of a list (no key; it starts where its value does)."""

    def __init__(self, key, start, key_end, value):
        self.key, self.start, self.key_end, self.value = key, start, key_end, value


def span_of_value(text, at):
    at = JSON_SPACE.match(text, at).end()
    if text[at] in "{[":
        return span_of_container(text, at)
    return Span(at, JSON_SCALAR.match(text, at).end(), "scalar")


def span_of_container(text, at):
    is_object = text[at] == "{"
    closer = "}" if is_object else "]"
    entries = []
    here = JSON_SPACE.match(text, at + 1).end()
    while text[here] != closer:
        key, start, key_end = None, here, here
        if is_object:
            key_end = JSON_SCALAR.match(text, here).end()
            key = json.loads(text[here:key_end])
            here = JSON_SPACE.match(text, key_end).end() + 1
        value = span_of_value(text, here)
        entries.append(Entry(key, start, key_end, value))
        here = JSON_SPACE.match(text, value.end).end()
        if text[here] == ",":
            here = JSON_SPACE.match(text, here + 1).end()
    return Span(at, here + 1, "object" if is_object else "array", entries)


class Layout(object):
    """How a container is written, so that what is added to it looks like
    what is there: on one line or not, the text between two entries, between
    a key and its value, the indentation of an entry's line and of the line
    the container opens on, and one level of indentation."""

    def __init__(self, one_line, between, colon, indent, outer, unit):
        self.one_line, self.between, self.colon = one_line, between, colon
        self.indent, self.outer, self.unit = indent, outer, unit


class SettingsEdit(object):
    """The smallest text change that makes a settings text hold new data."""

    def __init__(self, text, ensure_ascii):
        self.text = text
        self.ensure_ascii = ensure_ascii
        self.newline = newline_of(text)
        self.root = span_of_value(text, 0)
        self.unit = self.first_found(self.root, self.indent_unit) or "  "
        self.between = self.first_found(self.root, self.one_line_between) or ", "
        self.colon = self.first_found(self.root, self.one_line_colon) or ": "
        self.changes = []

    def text_holding(self, data):
        self.change_value(self.root, data, None)
        text = self.text
        for start, end, new in sorted(self.changes, key=lambda change: change[:2], reverse=True):
            text = text[:start] + new + text[end:]
        return text

    def change_value(self, span, value, layout):
        """Record the changes that make the value at span read as value."""
        if span.kind == "object" and isinstance(value, dict):
            self.change_object(span, value)
        elif span.kind == "array" and isinstance(value, list):
            self.change_array(span, value)
        elif canonical_json(json.loads(self.text[span.start:span.end])) != canonical_json(value):
            self.changes.append((span.start, span.end, self.rendered(value, layout)))

    def change_object(self, span, value):
        kept = [index for index, entry in enumerate(span.entries) if entry.key in value]
        for index in kept:
            entry = span.entries[index]
            self.change_value(entry.value, value[entry.key], self.layout_of(span))
        present = set(entry.key for entry in span.entries)
        added = [(key, item) for key, item in value.items() if key not in present]
        anchor = kept[-1] if kept else None
        self.change_entries(span, kept, {anchor: added} if added else {})

    def change_array(self, span, value):
        """Elements are matched by their meaning; an element that takes the
        place of another is edited in place, so a changed handler changes
        only where it differs."""
        old = [canonical_json(json.loads(self.text[entry.value.start:entry.value.end]))
               for entry in span.entries]
        new = [canonical_json(item) for item in value]
        kept, added, anchor = [], {}, None
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for _, old_start, old_end, new_start, new_end in matcher.get_opcodes():
            paired = min(old_end - old_start, new_end - new_start)
            for offset in range(paired):
                entry = span.entries[old_start + offset]
                self.change_value(entry.value, value[new_start + offset], self.layout_of(span))
                kept.append(old_start + offset)
                anchor = old_start + offset
            for item in value[new_start + paired:new_end]:
                added.setdefault(anchor, []).append((None, item))
        self.change_entries(span, kept, added)

    def change_entries(self, span, kept, added):
        """Take out the entries not kept, each with its separator and its own
        line, and put the added ones (key, value) after the kept entry they
        follow (None: before the first)."""
        layout = self.layout_of(span)
        entries = span.entries
        texts = dict((anchor, [self.rendered_entry(key, item, layout) for key, item in pairs])
                     for anchor, pairs in added.items())
        if not kept:
            if entries or texts:
                self.changes.append((span.start + 1, span.end - 1,
                                     self.interior(texts.get(None, []), layout)))
            return
        first = kept[0]
        if first > 0:
            self.changes.append((entries[0].start, entries[first].start, ""))
        for index in range(first + 1, len(entries)):
            if index not in kept:
                self.changes.append((entries[index - 1].value.end, entries[index].value.end, ""))
        for anchor, new in texts.items():
            if anchor is None:
                point = entries[first].start
                self.changes.append((point, point, "".join(text + layout.between for text in new)))
            else:
                point = entries[anchor].value.end
                self.changes.append((point, point, "".join(layout.between + text for text in new)))

    def interior(self, texts, layout):
        """What goes between the brackets of a container holding only texts."""
        if not texts:
            return ""
        if layout.one_line:
            return layout.between.join(texts)
        step = self.newline + layout.indent
        return step + ("," + step).join(texts) + self.newline + layout.outer

    def rendered_entry(self, key, value, layout):
        text = self.rendered(value, layout)
        if key is None:
            return text
        return json.dumps(key, ensure_ascii=self.ensure_ascii) + layout.colon + text

    def rendered(self, value, layout):
        """The value written as a new entry of a container of that layout."""
        if layout is None or layout.one_line:
            between = layout.between if layout else ", "
            return json.dumps(value, ensure_ascii=self.ensure_ascii,
                              separators=(between, layout.colon if layout else ": "))
        text = json.dumps(value, indent=layout.unit, ensure_ascii=self.ensure_ascii,
                          separators=(",", layout.colon))
        return text.replace("\n", self.newline + layout.indent)

    def layout_of(self, span):
        text, entries = self.text, span.entries
        outer = self.line_indent(span.start)
        # An empty container takes the layout of the one holding it; the
        # whole document, when empty, opens over several lines.
        one_line = "\n" not in text[span.start:span.end] and bool(entries or (
            span.parent and "\n" not in text[span.parent.start:span.parent.end]))
        unit = self.indent_unit(span) or self.unit
        indent = self.line_indent(entries[0].start) if entries and not one_line else outer + unit
        if len(entries) > 1:
            between = text[entries[0].value.end:entries[1].start]
        else:
            between = self.between if one_line else "," + self.newline + indent
        colon = self.one_line_colon(span) or self.colon
        return Layout(one_line, between, colon, indent, outer, unit)

    def line_indent(self, at):
        """The whitespace that opens the line holding position at."""
        line = self.text.rfind("\n", 0, at) + 1
        return LINE_INDENT.match(self.text, line, at).group()

    def indent_unit(self, span):
        """How much deeper a multi-line container indents its entries than the
        line it opens on; None when that cannot be read from it."""
        if not span.entries or "\n" not in self.text[span.start:span.entries[0].start]:
            return None
        outer = self.line_indent(span.start)
        inner = self.line_indent(span.entries[0].start)
        if len(inner) > len(outer) and inner.startswith(outer):
            return inner[len(outer):]
        return None

    def one_line_between(self, span):
        """What separates two entries of a container, where it is one line."""
        if len(span.entries) < 2:
            return None
        between = self.text[span.entries[0].value.end:span.entries[1].start]
        return None if "\n" in between else between

    def one_line_colon(self, span):
        """What separates an object's first key from its value, where that is
        on one line."""
        if span.kind != "object" or not span.entries:
            return None
        entry = span.entries[0]
        colon = self.text[entry.key_end:entry.value.start]
        return None if "\n" in colon else colon

    def first_found(self, span, read):
        """What read() tells of the first container (in text order) it tells
        anything of: the document's habit where a container has none."""
        if span.kind == "scalar":
            return None
        found = read(span)
        for entry in span.entries:
            if found:
                break
            found = self.first_found(entry.value, read)
        return found


def canonical_json(value):
    """A value as text that tells 1, 1.0 and true apart, key order aside."""
    return json.dumps(value, sort_keys=True)


def settings_mean_the_same(data, other_text):
    """Whether other_text holds the same settings as data, an empty "hooks"
    object or event list counting as none."""
    try:
        other = parse_settings(other_text.lstrip("\ufeff"), SETTINGS)
    except SettingsError:
        return False
    return settings_meaning(data) == settings_meaning(other)


def settings_meaning(settings):
    """The settings as canonical JSON: Python's == takes false for 0 and 30.0
    for 30, which the harness and the user do not. An empty "hooks" object,
    event list, "permissions" object or rule list means nothing to the
    harness, and counts as absent."""
    meaning = dict(settings)
    hooks = {event: groups for event, groups in meaning.pop("hooks", {}).items() if groups}
    if hooks:
        meaning["hooks"] = hooks
    permissions = {key: rules for key, rules in meaning.pop("permissions", {}).items()
                   if not (key in ("allow", "deny") and rules == [])}
    if permissions:
        meaning["permissions"] = permissions
    return json.dumps(meaning, sort_keys=True)


def our_handlers(settings, wiring):
    """(group, handler) for every handler of ours under the wiring's event."""
    return handlers_where(settings, wiring.event, wiring.is_ours)


def bash_edition_handlers(settings, wiring):
    """(group, handler) for every handler of the bash edition's under the wiring's event."""
    return handlers_where(settings, wiring.event, wiring.is_the_bash_editions)


# The bash edition's scripts that it installs but never wires: session-start.sh runs them.
BASH_EDITION_HELPERS = ("context-budget.sh", "prune-worktrees.sh")


def the_bash_edition_is_here(project):
    """Whether the project bears the bash edition's marks, beyond a script
    named session-start.sh or stop-handoff.sh, which may be a hook of the
    user's own and is then theirs to keep wired: one of the scripts that
    edition installs beside those two, or one of its status messages."""
    if any(os.path.lexists(os.path.join(project, HOOK_DIR, name))
           for name in BASH_EDITION_HELPERS):
        return True
    return any(handler.get("statusMessage") == wiring.bash_status
               for _, settings in harness_settings(project) for wiring in WIRINGS
               for _, handler in bash_edition_handlers(settings, wiring))


def handlers_where(settings, event, test):
    return [(group, handler) for group in settings.get("hooks", {}).get(event, [])
            for handler in group["hooks"] if test(handler)]


# A hook command as a release wrote it, or as older instructions did (no -I -S,
# no braces): an interpreter, its flags, then the hook's path and nothing more.
WIRED_COMMAND = re.compile(
    r'\s*(.+?)((?:\s+-I)?(?:\s+-S)?)\s+"?\$\{?CLAUDE_PROJECT_DIR(?::?[-=?+][^}]*)?\}?/[^"\s]+"?\s*\Z')
PYTHON_PROGRAM = re.compile(r"(?:python|pypy|py)[\d.]*w?(?:\.exe)?\Z", re.IGNORECASE)


def interpreter_in(command):
    """The interpreter a wired command runs, e.g. 'py -3'; None when the command
    is in a form of the user's (the hook run directly, `uv run`), where putting
    an interpreter in front would change what runs."""
    match = WIRED_COMMAND.match(command)
    if not match or not INTERPRETER.match(match.group(1)):
        return None
    python, flags = match.groups()
    return python if flags or names_a_python(python) else None


def names_a_python(interpreter):
    """Whether a word of the interpreter names a Python (python3, py, .../python.exe)."""
    return any(PYTHON_PROGRAM.match(re.split(r"[/\\]", word)[-1])
               for word in shlex.split(interpreter))


def wire(settings, python, update, wirings=WIRINGS):
    """Add the wirings' entries where missing. With update, also bring the command of
    each entry of ours to this version's form, keeping its interpreter unless
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
            hooks.setdefault(wiring.event, []).append(wiring.group(python or DEFAULT_PYTHON))
            changed.append(wiring.event)
            continue
        if not update:
            continue
        group, handler = found[0]
        updated = [update_command(handler, wiring, python), update_matcher(group, wiring)]
        drop_handlers(settings, wiring.event, found[1:])
        if any(updated) or found[1:]:
            changed.append(wiring.event)
    return changed


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
            not all(wiring.is_ours(handler) for handler in group["hooks"]):
        return False
    group["matcher"] = wiring.matcher
    return True


def is_on_a_released_matcher(group, wiring):
    return group.get("matcher") in RELEASED_MATCHERS.get(wiring.event, ())


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
              if group["hooks"] or not any(group is other for other in touched)]
    if groups:
        hooks[event] = groups
    else:
        del hooks[event]


def project_settings(project, files=(SETTINGS, LOCAL_SETTINGS)):
    """[(file, settings)] of the project's settings files, shared then local
    ({} for one that does not exist); an invalid one raises SettingsError."""
    return [(rel, load_settings(os.path.join(project, *rel.split("/")), rel)[0])
            for rel in files]


def wired_events(project, files=(SETTINGS, LOCAL_SETTINGS)):
    """Events whose hooks are wired in the project's settings (shared or local)."""
    return set(wiring.event for _, settings in project_settings(project, files)
               for wiring in WIRINGS if our_handlers(settings, wiring))


def grant(settings, key, rules):
    """Add the rules missing from permissions[key] after the ones there, in
    order; returns the rules added."""
    present = settings.get("permissions", {}).get(key, [])
    added = [rule for rule in dict.fromkeys(rules) if rule not in present]
    if added:
        settings.setdefault("permissions", {}).setdefault(key, []).extend(added)
    return added


def revoke(settings, key, rules):
    """Remove the rules from permissions[key], then the list and the
    "permissions" object if that emptied them; returns the rules removed."""
    permissions = settings.get("permissions", {})
    present = permissions.get(key, [])
    removed = [rule for rule in present if rule in rules]
    if removed:
        permissions[key] = [rule for rule in present if rule not in rules]
        if not permissions[key]:
            del permissions[key]
        if not permissions:
            del settings["permissions"]
    return removed


def new_settings(python, wirings, deny):
    """What --project writes where there is no settings file: the hook entries,
    the protocol's skills allowed, and the deny rules of its .claudeignore."""
    settings = {}
    wire(settings, python, False, wirings)
    grant(settings, "allow", SKILL_PERMISSIONS)
    grant(settings, "deny", deny)
    return settings


def rules_in_force(project, files=(SETTINGS, LOCAL_SETTINGS)):
    """{"allow": rules, "deny": rules} of the project's settings, shared and local."""
    rules = {"allow": [], "deny": []}
    for _, settings in project_settings(project, files):
        for key in rules:
            rules[key] += rules_of(settings, key)
    return rules


def rules_of(settings, key):
    """The settings' permissions[key] rules ([] where there are none, or the
    settings hold something else there)."""
    permissions = settings.get("permissions")
    rules = permissions.get(key) if isinstance(permissions, dict) else None
    return rules if isinstance(rules, list) else []


# ------------------------------------------------------------ the ignore list

# Characters a line of .claudeignore may not hold to become a rule: the rule's
# own parentheses, and a backslash (gitignore's escape, which the CLI's rule
# syntax does not share).
UNTRANSLATABLE = re.compile(r"[()\\]")


def deny_rules(text):
    """(rules, lines that cannot become one) for the text of a .claudeignore.
    The CLI matches a Read rule's path as a gitignore pattern and refuses the
    Read, Edit and Write tools on what it matches. A line without a slash
    (but a last one) matches at any depth, as in git, and becomes
    Read(./<line>); a line with a slash before its end is anchored at the
    project root in git, and becomes Read(/<line>), the form the CLI anchors
    there too (it reads "./docs/**" as any folder named docs). A negation
    ("!") has no deny form."""
    rules, skipped = [], []
    for line in (text or "").splitlines():
        pattern = line.strip()
        if not pattern or pattern.startswith("#"):
            continue
        if pattern.startswith("!") or UNTRANSLATABLE.search(pattern):
            skipped.append(pattern)
            continue
        if "/" in pattern.rstrip("/"):
            rule = "Read(/{})".format(pattern.lstrip("/"))
        else:
            rule = "Read(./{})".format(pattern)
        if rule not in rules:
            rules.append(rule)
    return rules, skipped


def claudeignore_text(project):
    return read_text(os.path.join(project, CLAUDEIGNORE), CLAUDEIGNORE)


def our_deny_rules(source, ignore_text):
    """Every deny rule the installer may have written: those of the given
    .claudeignore and those of the template (a line deleted from a copy of
    the template leaves a rule that is still the installer's)."""
    template = source.bytes_of(TEMPLATE_CLAUDEIGNORE).decode("utf-8")
    return deny_rules(ignore_text)[0] + deny_rules(template)[0]


# ------------------------------------------------------------- marked blocks

def line_texts(lines):
    return [line.strip() for line in lines]


# The bash edition's .gitignore snippet: the first marker line of the
# protocol's block, then these lines, and no end marker.
BASH_EDITION_GITIGNORE = (".claude/session-state.md", ".claude/hooks/.session-baseline",
                          ".claude/settings.local.json", ".claude/worktrees/")


def find_marked_block(lines, block, repairable, also=()):
    """(start, stop) of the block between its marker lines, stop exclusive.
    When repairable, a block whose begin or end marker was deleted is still
    found by the block's own lines next to the remaining marker: in their
    order, each at most once, so no line of the user's is taken for one.
    The lines of also (in their order) count as the block's own there too."""
    texts = line_texts(lines)
    begin, end = block[0], block[-1]
    body = in_order_with(block[1:-1], also) if repairable else []
    if begin in texts:
        start = texts.index(begin)
        if end in texts[start + 1:]:
            return start, texts.index(end, start + 1) + 1
        return start, start + 1 + leading_lines_in_order(texts[start + 1:], body)
    if end in texts:
        stop = texts.index(end) + 1
        return stop - 1 - leading_lines_in_order(texts[:stop - 1][::-1], body[::-1]), stop
    return None


def in_order_with(body, other):
    """body with the lines of other it lacks, each put before the next line of
    other that body holds: both are then in order in the result."""
    merged = list(body)
    for index, line in enumerate(other):
        if line not in merged:
            following = [later for later in other[index + 1:] if later in merged]
            merged.insert(merged.index(following[0]) if following else len(merged), line)
    return merged


def is_the_bash_editions_snippet(texts, block):
    """Whether the lines found as the block are the bash edition's snippet: no
    end marker, and a line only that edition writes."""
    return block[-1] not in texts and \
        any(line in texts for line in BASH_EDITION_GITIGNORE if line not in block)


def leading_lines_in_order(texts, body):
    """How many of the first texts are lines of body, in body's order."""
    count, position = 0, 0
    for text in texts:
        if text not in body[position:]:
            break
        position = body.index(text, position) + 1
        count += 1
    return count


def lines_not_in_block(lines, block):
    """The lines of a found block that are not the block's own (lines the user
    wrote between the markers), in order."""
    own = list(block)
    kept = []
    for line in lines:
        if line.strip() in own:
            own.remove(line.strip())
        else:
            kept.append(line)
    return kept


def appended(text, block):
    """The text with the block added at its end, on lines of its own."""
    newline = newline_of(text)
    if text and not text.endswith("\n"):
        text += newline
    return text + "".join(line + newline for line in block)


def with_block(text, block):
    """(new text, 'append' | 'replace' | 'take over' | None) for a .gitignore
    holding the block once. A block that lost lines or a marker is restored;
    lines the user wrote inside it stay, just after it. The bash edition's
    snippet becomes the block in its place, so no line is listed twice."""
    lines = text.splitlines(True)
    span = find_marked_block(lines, block, repairable=True, also=BASH_EDITION_GITIGNORE)
    if span is None:
        return appended(text, block), "append"
    start, stop = span
    texts = line_texts(lines[start:stop])
    left = what_the_bash_edition_left(line_texts(lines[stop:]), block) \
        if texts[-1] == block[-1] else []
    if texts == block and not left:
        return text, None
    if not left and not is_the_bash_editions_snippet(texts, block):
        return replaced(text, span, block, lines_not_in_block(lines[start:stop], block)), "replace"
    own = list(block) + [line for line in BASH_EDITION_GITIGNORE if line not in block] + left
    stop += len(left)
    return replaced(text, (start, stop), block, lines_not_in_block(lines[start:stop], own)), \
        "take over"


def what_the_bash_edition_left(texts, block):
    """The lines of the bash edition's snippet an earlier release left just
    after the block it restored in the snippet's place: from the line only
    that edition writes on, in the snippet's order. The block covers each."""
    own = [line for line in BASH_EDITION_GITIGNORE if line not in block]
    tail = list(BASH_EDITION_GITIGNORE[BASH_EDITION_GITIGNORE.index(own[0]):])
    if not texts or texts[0] != tail[0]:
        return []
    return texts[:leading_lines_in_order(texts, tail)]


def replaced(text, span, block, kept):
    """The text with the lines in span replaced by the block, then the kept lines."""
    lines = text.splitlines(True)
    wanted = [line + newline_of(text) for line in block]
    return "".join(lines[:span[0]] + wanted + kept + lines[span[1]:])


def with_final_newline_as(old, new):
    """The new text ending in a line break only if the old one did (an empty
    old text counts as ending in one)."""
    if old and not old.endswith("\n") and new.endswith("\n"):
        return new[:-2] if new.endswith("\r\n") else new[:-1]
    return new


def without_block(text, block):
    """The text without the block (lines the user wrote inside it stay);
    None when there is no block. The bash edition's snippet is that edition's
    and stays."""
    lines = text.splitlines(True)
    span = find_marked_block(lines, block, repairable=True, also=BASH_EDITION_GITIGNORE)
    if span is None or is_the_bash_editions_snippet(line_texts(lines[span[0]:span[1]]), block):
        return None
    start, stop = span
    return "".join(lines[:start] + lines_not_in_block(lines[start:stop], block) + lines[stop:])


def with_section(text, section, shown):
    """(new text, 'append' | 'replace' | None) for a CLAUDE.md holding the
    section once (text None: there is no file yet). A section added to text
    is set off so that without_section() can give the text back exactly."""
    span = section_span(text or "", section, shown)
    if span is None:
        return with_section_appended(text, section), "append"
    lines = (text or "").splitlines(True)
    if line_texts(lines[span[0]:span[1]]) == section:
        return text, None
    return replaced(text, span, section, []), "replace"


def section_span(text, section, shown):
    """(start, stop) of the section's lines in text; None when it has none. It
    must hold both markers or neither: a lone marker is the user's to repair."""
    begin, end = section[0], section[-1]
    texts = line_texts(text.splitlines(True))
    if (begin in texts) != (end in texts) or \
            (begin in texts and texts.index(end) < texts.index(begin)):
        raise Refusal("{} has only one of the protocol's markers ({} / {}); "
                      "repair it by hand".format(shown, begin, end))
    return find_marked_block(text.splitlines(True), section, repairable=False)


def with_section_appended(text, section):
    """The section alone for a new file; else after the text and one line
    break more than it ends with: a blank line after a final line break, the
    missing line break otherwise (an empty file gets a blank line)."""
    newline = newline_of(text or "")
    body = "".join(line + newline for line in section)
    if text is None:
        return body
    return text + newline + body


def without_section(text, section, shown):
    """(the text without the section and what with_section_appended() set it
    off with, the section's text); None when there is no section. '' for a
    file --global created: it held the section alone."""
    span = section_span(text, section, shown)
    if span is None:
        return None
    lines = text.splitlines(True)
    before, after = "".join(lines[:span[0]]), "".join(lines[span[1]:])
    newline = newline_of(text)
    if not after and before.endswith(newline):
        before = before[:-len(newline)]
    return before + after, "".join(lines[span[0]:span[1]])


# ------------------------------------------------------------------- git

# How long one git command may take; a repository of 100,000 files answers in
# well under a second.
GIT_TIMEOUT_SECONDS = 30


def git(project, *args):
    """(exit code, stdout) of a git command in project; (None, '') without git."""
    code, out = git_bytes(project, *args)
    return code, out.decode("utf-8", "replace")


def git_bytes(project, *args):
    """git() with stdout as bytes; (None, b'') as well when git gives no answer
    in time (a hook or lock it waits on), for no step may hang the run."""
    try:
        done = run_git(project, args)
    except (OSError, subprocess.TimeoutExpired):
        return None, b""
    return done.returncode, done.stdout


def run_git(project, args):
    """The completed git command, its messages in English (LC_ALL=C) on stderr;
    raises OSError without git and TimeoutExpired when it gives no answer."""
    env = dict(os.environ, GIT_OPTIONAL_LOCKS="0", LC_ALL="C")
    return subprocess.run(("git", "-C", project) + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env,
                          timeout=GIT_TIMEOUT_SECONDS, **apart_from_the_terminal())


def apart_from_the_terminal():
    """How to start a child that a Ctrl-C at the terminal does not reach. The terminal sends
    it to the whole foreground process group; the run holds it until its changes are made
    (HeldInterrupts), and a git killed by it half-way would leave that promise broken. A
    second Ctrl-C still ends the run, and subprocess.run then ends the child."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


def is_tracked_by_git(project, rel):
    """Whether git's index holds the file (committed, or staged only); None
    when the project is in a repository but git gives no answer (git missing
    from PATH, a repository it refuses to read)."""
    code, out = git_bytes(project, "--literal-pathspecs", "ls-files", "-z", "--", rel)
    if code == 0:
        return bool(out)
    return None if is_in_a_repository(project) else False


def is_in_a_repository(folder):
    """Whether folder or one above it holds a .git entry: the file system's
    answer, for when git itself gives none."""
    return repository_top(folder) is not None


def repository_top(folder):
    """The nearest folder at or above folder that holds a .git entry; None
    when there is none."""
    folder = os.path.abspath(folder)
    while not os.path.lexists(os.path.join(folder, ".git")):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return folder


def committed_version(project, rel, newline):
    """HEAD's bytes of the file with the given line endings; None when HEAD
    does not hold it, git cannot say, or a checkout changes it beyond line
    endings. The blob is read raw: running the repository's filters could
    write, hang or fail, and core.autocrlf set after the checkout would give
    CRLF to a file that has LF."""
    if is_changed_by_checkout(project, rel):
        return None
    code, out = git_bytes(project, "cat-file", "blob", "HEAD:./" + rel)
    if code != 0:
        return None
    return lf_endings(out).replace(b"\n", newline.encode("ascii"))


# Attributes under which a checkout writes something other than the blob.
CHECKOUT_ATTRIBUTES = ("filter", "ident", "working-tree-encoding")


def is_changed_by_checkout(project, rel):
    """Whether an attribute has git change the file between the blob and the
    work tree (line endings aside); True when git cannot say."""
    code, out = git(project, "check-attr", "-z", *(CHECKOUT_ATTRIBUTES + ("--", rel)))
    if code != 0:
        return True
    values = out.split("\0")[2::3]
    return any(value not in ("unspecified", "unset") for value in values)


class IndexEntry(object):
    """What git's index holds for one path: its mode, blob and merge stage, and
    the path from the top of the repository, which update-index --cacheinfo takes."""

    def __init__(self, mode, blob, stage, top_path):
        self.mode = mode
        self.blob = blob
        self.stage = stage
        self.top_path = top_path

    def is_a_plain_file(self):
        """Whether the executable bit is all it lacks: a regular, non-executable
        file outside a merge conflict (not a symbolic link, a submodule or an
        executable already)."""
        return self.mode == "100644" and self.stage == "0"


def index_entries(project, rels):
    """{path: IndexEntry} for the paths git's index tracks (a path in a merge
    conflict by its last stage); None outside a repository."""
    code, out = git(project, "ls-files", "--stage", "--full-name", "-z", "--", *rels)
    if code != 0:
        return None
    entries = {}
    for record in filter(None, out.split("\0")):
        info, _, top_path = record.partition("\t")
        mode, blob, stage = info.split(" ")
        for rel in rels:
            if top_path == rel or top_path.endswith("/" + rel):
                entries[rel] = IndexEntry(mode, blob, stage, top_path)
    return entries


def why_index_cannot_change(project):
    """Why git cannot update the project's index now (another git command holds
    its lock, its folder is read-only, or git does not say where the lock is);
    None when it can."""
    code, out = git(project, "rev-parse", "--git-path", "index.lock")
    if code is None:
        return "git gave no answer within {} seconds about its index lock, so the index " \
            "cannot be changed safely".format(GIT_TIMEOUT_SECONDS)
    if code != 0:
        return "git could not say where its index lock is, so the index cannot be changed safely"
    lock = os.path.join(project, out.strip())
    if os.path.lexists(lock):
        return "git's index is locked ({} exists): wait for the other git command, or " \
            "remove the file if none is running".format(lock)
    if not os.access(os.path.dirname(lock), os.W_OK | os.X_OK):
        return "cannot write in {}, so git's index cannot change".format(os.path.dirname(lock))
    return None


def mark_executable_in_index(project, entries):
    """Set mode 100755 on the entries' blobs as the plan found them. Unlike
    --chmod=+x, this stages no work-tree content, so no clean filter runs."""
    arguments = []
    for entry in entries:
        arguments += ["--cacheinfo", "100755,{},{}".format(entry.blob, entry.top_path)]
    code, _ = git(project, "update-index", *arguments)
    if code is None:
        raise Refusal("git update-index gave no answer within {} seconds in {}"
                      .format(GIT_TIMEOUT_SECONDS, project))
    if code != 0:
        raise Refusal("git update-index could not set mode 100755 in {}".format(project))


# ----------------------------------------------------------- the interpreter

OLDEST_PYTHON = (3, 8)
# The hooks' flags: every command the installer writes runs the hook this way.
HOOK_FLAGS = "-I -S"
# Prints the version of whatever Python runs it, in a form Python 2 reads too.
VERSION_PROBE = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"
# Interpreters worth suggesting when the one asked for cannot run the hooks.
OTHER_PYTHONS = ("python3", "python") + tuple(
    "python3.{}".format(minor) for minor in range(14, OLDEST_PYTHON[1] - 1, -1)) + ("py -3",)


PROBED = {}


def why_interpreter_fails(prefix, env=None, cwd=None):
    """why_interpreter_probe_fails(), asked once per run for each interpreter,
    environment and (for a relative path) folder: --check --recursive meets
    the same few interpreters in every repository."""
    env = dict(env or os.environ)
    program = interpreter_program(prefix)
    relative = re.search(r"[/\\]", program) and not os.path.isabs(os.path.expanduser(program))
    key = (prefix, tuple(sorted(env.items())), cwd if relative else None)
    if key not in PROBED:
        PROBED[key] = why_interpreter_probe_fails(prefix, env, cwd)
    return PROBED[key]


def why_interpreter_probe_fails(prefix, env, cwd):
    """Why `prefix` (an interpreter and its flags, as a hook command starts)
    cannot run the hooks; None when it runs Python 3.8 or newer. It is run the
    way the harness runs a hook command: by `sh -c`, flags and all (an
    interpreter that rejects -I fails here as it would at every stop)."""
    shell = shutil.which("sh", path=env.get("PATH")) or shutil.which("sh")
    env = dict(env, MCP_INSTALL_PROBE=VERSION_PROBE)
    if shell:
        argv = [shell, "-c", prefix + ' -c "$MCP_INSTALL_PROBE"']
    else:  # no POSIX shell (Windows without Git Bash): the words as sh would split them
        argv = shlex.split(prefix) + ["-c", VERSION_PROBE]
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, env=env, cwd=cwd,
                              timeout=HOOK_TIMEOUT_SECONDS)
    except FileNotFoundError:
        return "is not found"
    except (OSError, ValueError) as error:
        return "cannot be started ({})".format(getattr(error, "strerror", None) or error)
    except subprocess.TimeoutExpired:
        return "gave no answer within {} seconds".format(HOOK_TIMEOUT_SECONDS)
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    if done.returncode == 127 or (done.returncode and not shell and not said):
        return "is not found"
    if done.returncode != 0:
        return "fails with exit {}{}".format(done.returncode, " ({})".format(said[0]) if said else "")
    match = re.match(r"(\d+)\.(\d+)\Z", done.stdout.decode("ascii", "replace"))
    if not match:
        return "does not say which Python it is"
    version = (int(match.group(1)), int(match.group(2)))
    if version < OLDEST_PYTHON:
        return "is Python {}.{}; the hooks need {}.{} or newer".format(
            version[0], version[1], *OLDEST_PYTHON)
    return None


def a_working_python(env=None):
    """The first of the usual interpreter names that runs the hooks here; None when none does."""
    path = (env or os.environ).get("PATH")
    for python in OTHER_PYTHONS:
        if shutil.which(python.split()[0], path=path) and \
                why_interpreter_fails("{} {}".format(python, HOOK_FLAGS), env) is None:
            return python
    return None


def instead(env=None):
    """What to pass instead of an interpreter that cannot run the hooks."""
    python = a_working_python(env)
    if python is None:
        return "install Python {}.{} or newer and pass it with --python".format(*OLDEST_PYTHON)
    return "pass --python {}".format(shell_word(python))


def shell_word(text):
    return '"{}"'.format(text) if " " in text else text


def refuse_a_python_that_cannot_run_the_hooks(python, given):
    """An interpreter that is on this machine but cannot run the hooks is
    refused before anything is written; so is the default when it is missing
    (the hooks would fail with exit 127 at every session). A --python that is
    not on this machine at all may be for another one: plan_interpreter_note
    says so instead."""
    program = interpreter_program(python)
    if given and shutil.which(os.path.expanduser(program)) is None:
        return
    problem = why_interpreter_fails("{} {}".format(python, HOOK_FLAGS))
    if problem:
        raise Refusal("{} {} {}, so the hooks would not run; {}".format(
            "--python" if given else "the default interpreter", python, problem, instead()))


# ------------------------------------------------------------------ install

class Options(object):
    def __init__(self, force=False, update=False, python=None):
        self.force = force
        self.update = update
        self.python = python


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
    plan_gitignore_block(plan, source.marked_template(TEMPLATE_GITIGNORE))
    if options.update:
        plan_session_state_move(plan)
    plan_settings_wiring(plan, options, wirings_of(ours), source, ignore_text)
    if not options.update:
        plan_before_install_record(plan, source, ours, ignore_text)
    plan_git_index(plan, project, ours)
    return plan


def installed_interpreters(plan):
    """The interpreters the protocol's wired hooks name in the project's
    settings, first found first; an unreadable file names none (the settings
    step refuses it)."""
    try:
        settings, _ = load_settings(plan.path(SETTINGS), SETTINGS)
    except SettingsError:
        return []
    found = [interpreter_in(str(handler.get("command", "")))
             for wiring in WIRINGS for _, handler in our_handlers(settings, wiring)]
    return list(dict.fromkeys(python for python in found if python is not None))


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


def move_without_overwriting(old, new):
    """Rename old to new unless new exists by then: a hard link fails on an
    existing name, where a rename would replace it; a file system without
    hard links gets a plain rename after the check."""
    try:
        os.link(old, new)
    except FileExistsError:
        raise Refusal("{} appeared meanwhile; {} was kept".format(new, old))
    except OSError:
        if os.path.lexists(new):
            raise Refusal("{} appeared meanwhile; {} was kept".format(new, old))
        os.rename(old, new)
        return
    os.unlink(old)


def plan_owned_file(plan, source, rel, data, options, hook, pythons=(DEFAULT_PYTHON,)):
    """A hook or command: the installer's own file, replaced only when allowed.
    A file of the user's under the same name is kept unless --force says
    otherwise (for a hook, --update --force, since a hook runs at every
    session). Returns whether the file is the installer's after the run."""
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
    if is_the_installers(source, rel, existing, pythons):
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


def interpreter_program(python):
    """The program an interpreter command starts (past NAME=value words)."""
    words = shlex.split(python)  # check_interpreter let through only what sh reads this way
    return next((word for word in words if not re.match(r"[A-Za-z_]\w*=", word)), words[0])


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


def plan_gitignore_block(plan, block):
    text = read_text(plan.path(GITIGNORE), GITIGNORE)
    new_text, how = with_block(text or "", block)
    new_text = with_final_newline_as(text or "", new_text)
    if how is None:
        plan.keep(GITIGNORE, "local-only lines present")
    else:
        verb, note = {"append": ("append", "added the local-only lines"),
                      "replace": ("repair", "restored the local-only lines"),
                      "take over": ("merge", "took over the bash edition's local-only lines")}[how]
        plan.write("write" if text is None else verb, GITIGNORE, encode_text(new_text), note)


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
               if os.path.lexists(plan.path(HOOK_DIR + "/" + bash_edition_name(name)))]
    if not present or not the_bash_edition_is_here(plan.root):
        return
    files = [(SETTINGS, settings)] + [(shown, other) for shown, other in
                                      harness_settings(plan.root) if shown != SETTINGS]
    wired_in = [shown for shown, wired in files
                if any(bash_edition_handlers(wired, wiring) for wiring in WIRINGS)]
    plan.keep(", ".join(present), "the bash edition's hooks, " + (
        "still wired in {}: delete those entries, then these files".format(" and ".join(wired_in))
        if wired_in else "no longer wired; they may be deleted"))


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


def protocol_is_installed(project):
    if any(os.path.lexists(os.path.join(project, HOOK_DIR, name)) for name in HOOKS):
        return True
    try:
        return bool(wired_events(project))
    except SettingsError:
        return True


# ---------------------------------------------------------------- uninstall

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
    plan_gitignore_unblocking(plan, source.marked_template(TEMPLATE_GITIGNORE),
                              before.get(GITIGNORE))
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


def plan_gitignore_unblocking(plan, block, before=None):
    text = read_text(plan.path(GITIGNORE), GITIGNORE)
    outcome = None if text is None else gitignore_after_uninstall(plan.root, text, block, before)
    if outcome is not None:
        plan_what_is_left(plan, GITIGNORE, outcome, "removed the local-only lines",
                          "held only the local-only lines")


def gitignore_after_uninstall(root, text, block, before, use_head=True):
    """What --uninstall leaves of a .gitignore text (see what_uninstall_leaves);
    None when it holds no block."""
    new_text = without_block(text, block)
    if new_text is None:
        return None
    new_text = with_final_newline_as(text, new_text)
    return what_uninstall_leaves(root, GITIGNORE, text, encode_text(new_text),
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


# ------------------------------------------------------ before the install

# What the install's own writes leave no trace of: whether a folder it filled
# was there, empty, before it, and the bytes of a settings.json or .gitignore
# that the uninstall could not work out from what is left (an empty object or
# list the protocol's entries went into, a blank file, a layout HEAD does not
# have). Everything else is read from the files themselves. --project writes
# these down, only when there are any, in this local file; --uninstall reads
# it and removes it.
BEFORE_INSTALL = HOOK_DIR + "/.before-install.json"
INSTALL_FOLDERS = (HOOK_DIR, COMMAND_DIR, ".claude")


def read_before_install(project):
    """{"folders": [...], "files": {rel: text}} as --project wrote it down;
    None when there is no such record, or the file is not one (it is then the
    user's, and stays)."""
    path = os.path.join(project, *BEFORE_INSTALL.split("/"))
    if os.path.islink(path):
        return None
    try:
        data = read_bytes(path, BEFORE_INSTALL)
        record = json.loads(data.decode("utf-8")) if data is not None else None
    except (Refusal, ValueError):
        return None
    if not isinstance(record, dict) or set(record) != {"folders", "files"}:
        return None
    folders, files = record["folders"], record["files"]
    if not isinstance(folders, list) or not set(folders) <= set(INSTALL_FOLDERS) or \
            not isinstance(files, dict) or not set(files) <= {SETTINGS, GITIGNORE} or \
            not all(isinstance(text, str) for text in files.values()):
        return None
    return record


def plan_before_install_removal(plan, record):
    if record is not None:
        plan.remove(BEFORE_INSTALL, "what was here before the install")
    elif os.path.lexists(plan.path(BEFORE_INSTALL)):
        plan.keep(BEFORE_INSTALL, "not a record the installer wrote; left in place")


def plan_before_install_record(plan, source, ours, ignore_text):
    """Write down what the uninstall could not tell once this run's changes
    are made (see BEFORE_INSTALL): folders there and empty, and the bytes of a
    file the uninstall would not give back. An earlier record keeps what it
    says: it was written before that install."""
    if protocol_is_installed(plan.root):  # what is here now is an install's, not the user's
        return
    earlier = read_before_install(plan.root)
    record = earlier or {"folders": [], "files": {}}
    folders = [rel for rel in INSTALL_FOLDERS
               if rel not in record["folders"] and is_an_empty_folder(plan.path(rel))]
    block = source.marked_template(TEMPLATE_GITIGNORE)
    deny = our_deny_rules(source, ignore_text)
    # What the uninstall would give back with HEAD as it is now, and without
    # it, as once the user commits the installed file: both must be the original.
    uninstall = {
        SETTINGS: lambda text, use_head: settings_after_uninstall(
            plan.root, text, parse_settings(text.lstrip("\ufeff"), SETTINGS), wirings_of(ours),
            deny, None, use_head)[0],
        GITIGNORE: lambda text, use_head: gitignore_after_uninstall(plan.root, text, block, None,
                                                                    use_head),
    }
    files = {}
    for rel in (SETTINGS, GITIGNORE):
        if rel in record["files"] or rel not in plan.planned:
            continue
        original = read_bytes(plan.path(rel), rel)
        if original is None:
            continue
        installed = plan.planned[rel].decode("utf-8", "surrogateescape")
        if any((uninstall[rel](installed, use_head) or (None,))[0] != original
               for use_head in (True, False)):
            files[rel] = original.decode("utf-8", "surrogateescape")
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


def is_an_empty_folder(path):
    try:
        return os.path.isdir(path) and not os.path.islink(path) and not os.listdir(path)
    except OSError:
        return False


# ------------------------------------------------------------------- global

def user_config_dir():
    """Where the harness keeps the user's settings and CLAUDE.md: $CLAUDE_CONFIG_DIR,
    else ~/.claude. A UsageError when that cannot be told for certain."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        if not os.path.isabs(configured):
            raise UsageError("CLAUDE_CONFIG_DIR must be an absolute path (it is {})".format(
                configured))
        folder = configured
    else:
        if os.name != "nt" and os.environ.get("HOME") == "":
            raise UsageError("HOME is empty: set it, or CLAUDE_CONFIG_DIR")
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            raise UsageError("cannot find your home folder: set HOME or CLAUDE_CONFIG_DIR")
        if not os.path.isdir(home):  # a HOME that is not there is a mistake, not a place to make
            raise UsageError("your home folder {} does not exist: set HOME or "
                             "CLAUDE_CONFIG_DIR".format(home))
        folder = os.path.join(home, ".claude")
    folder = os.path.normpath(folder)
    existing = folder
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if os.path.lexists(existing) and not os.path.isdir(existing):
        raise UsageError("not a directory: {} (the user configuration folder is {})".format(
            existing, folder))
    return folder


def is_user_config_dir(folder):
    try:
        return os.path.realpath(folder) == os.path.realpath(user_config_dir())
    except UsageError:
        return False


def plan_global(source, config_dir, force):
    name = "CLAUDE.md"
    plan = Plan(config_dir)
    shown = os.path.join(config_dir, name)
    section = source.marked_template(TEMPLATE_SECTION)
    text = read_text(plan.path(name), shown)
    new_text, verb = with_section(text, section, shown)
    if verb is None:
        plan.keep(shown, "protocol section up to date")
    elif verb == "replace" and not force and not section_is_released(source, section, text):
        plan.hold(shown, "protocol section edited by you; --force replaces it")
    else:
        notes = {"append": "added the protocol section", "replace": "updated the protocol section"}
        plan.write("write" if text is None else verb, name, encode_text(new_text), notes[verb],
                   shown=shown)
    return plan


def plan_global_removal(source, config_dir, force):
    """--uninstall --global: the user's CLAUDE.md as it was before --global,
    byte for byte; the file goes only when it held the section alone. A
    section the user edited stays unless --force."""
    name = "CLAUDE.md"
    plan = Plan(config_dir)
    shown = os.path.join(config_dir, name)
    section = source.marked_template(TEMPLATE_SECTION)
    text = read_text(plan.path(name), shown)
    found = None if text is None else without_section(text, section, shown)
    if found is None:
        if text is not None:
            plan.keep(shown, "holds no protocol section")
        plan.nothing_installed = True
        return plan
    new_text, old_section = found
    if not force and line_texts(old_section.splitlines()) != section and \
            not section_is_released(source, section, text):
        plan.hold(shown, "protocol section edited by you; --force removes it")
    elif os.path.islink(plan.path(name)):  # removing the link would lose where it points
        plan.refuse("{} is a symbolic link; refusing to write through it".format(shown))
    elif new_text == "" and text.startswith(section[0]):
        plan.remove(name, "held only the protocol section", shown=shown)
    else:
        plan.write("merge", name, encode_text(new_text), "removed the protocol section",
                   shown=shown)
    return plan


def section_is_released(source, section, text):
    """Whether the protocol's section in text is one a release shipped."""
    lines = text.splitlines()
    start, stop = find_marked_block(lines, section, repairable=False)
    return is_a_release_of(
        section_bytes(section), RELEASED_SECTION_DIGESTS.get(os.path.basename(TEMPLATE_SECTION), ()),
        section_bytes(lines[start:stop]))


def section_bytes(lines):
    return encode_text("".join(line.strip() + "\n" for line in lines))


# -------------------------------------------------------------------- check

RANKS = {"broken": 4, "over": 3, "drift": 2, "unwired": 2, "unshared": 2, "unread": 1,
         "missing": 1, "warn": 0}
LABELS = {"broken": "BROKEN", "over": "OVER", "drift": "DRIFT", "unwired": "UNWIRED",
          "unshared": "UNSHARED", "unread": "UNREAD", "missing": "NONE", "warn": "WARN",
          None: "ok"}
SUMMARY_WORDS = {"broken": "broken", "over": "over budget", "drift": "drifted",
                 "unwired": "not wired", "unshared": "not shared",
                 "missing": "without the protocol", "warn": "with warnings",
                 "unread": "folder(s) not readable", None: "ok"}
# Memory-health severities as check findings; a warning alone does not fail the check.
HEALTH_KINDS = (("broken", "broken"), ("over", "over"), ("warning", "warn"))


# The install.py options that fix a finding, the one that fixes the most last.
FIXES = ("--project", "--update", "--update --force")


def fix_rank(fix):
    """A fix outside FIXES (one naming an interpreter) does everything --update does, and more."""
    return FIXES.index(fix) if fix in FIXES else len(FIXES)


class Finding(object):
    def __init__(self, kind, text, fix=None):
        self.kind = kind
        self.text = text
        self.fix = fix


def load_budget_module(source):
    """hooks/context-budget.py of this version, imported by its path."""
    return load_module_file(source, "hooks/context-budget.py", "mcp_context_budget",
                            ("budget_points", "format_report"))


def load_health_module(source):
    """memory_health.py of this version, beside install.py, imported by its path."""
    return load_module_file(source, "memory_health.py", "mcp_memory_health",
                            ("memory_health", "format_health"))


def load_module_file(source, rel, name, required):
    path = source.path(rel)
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


def inspect_everything(source, budget, project, health=None):
    """(findings, budget points, memory-health report) for one project, in the
    environment its hooks see in a session. Without the health module only the
    memory defects found at every session start are looked for (no git)."""
    env = session_environment(project)
    findings, points = inspect_project(source, budget, project, env)
    if health is None:
        return findings + session_start_defects(budget, project, env), points, None
    memory_findings, report = inspect_memory(health, project, env)
    return findings + memory_findings, points, report


def exit_code_for(findings):
    """Memory-health warnings alone do not fail a check."""
    return EXIT_FINDINGS if any(finding.kind != "warn" for finding in findings) else EXIT_OK


def inspect_project(source, budget, project, env):
    """(findings, budget points) for one project."""
    try:
        findings = hook_findings(source, project, env)
    except Refusal as error:
        findings = [Finding("broken", str(error))]
    try:
        points = list(budget.budget_points(project, env))
    except Exception as error:  # one unreadable project must not stop a whole estate
        return findings + [Finding("broken", "budget check failed: {}".format(error))], []
    if points:
        findings.insert(0, Finding("over", "over budget on {} point(s)".format(len(points))))
    return findings, points


def session_start_defects(budget, project, env):
    """The memory defects session start reports, as one broken finding."""
    try:
        defects = list(budget.memory_defects(project, env))
    except Exception as error:
        return [Finding("broken", "memory check failed: {}".format(error))]
    if not defects:
        return []
    return [Finding("broken", "memory: {} defect(s) found at session start".format(len(defects)))]


def inspect_memory(health, project, env):
    """(findings, report) from memory_health(): one summary finding per severity."""
    try:
        report = health.memory_health(project, env)
    except Exception as error:
        return [Finding("broken", "memory health check failed: {}".format(error))], None
    findings = []
    for severity, kind in HEALTH_KINDS:
        found = [item for item in report["findings"] if item["severity"] == severity]
        if found:
            checks = sorted(set(item["check"] for item in found))
            findings.append(Finding(kind, "memory health: {} {} ({})".format(
                len(found), "warning(s)" if kind == "warn" else severity, ", ".join(checks))))
    return findings, report


def hook_findings(source, project, env):
    present = [name for name in HOOKS if os.path.lexists(os.path.join(project, HOOK_DIR, name))]
    wired = wired_events(project)
    if not present and not wired:
        bash = bash_edition_wiring(project)
        if bash:
            return [bash_edition_finding(bash)]
        return [Finding("missing", "protocol not installed", "--project")]
    findings = []
    missing = [name for name in HOOKS if name not in present]
    if missing:
        findings.append(Finding("drift", "hooks missing: " + ", ".join(missing), "--update"))
    installed = {name: read_bytes(os.path.join(project, HOOK_DIR, name), HOOK_DIR + "/" + name)
                 for name in present}
    drifted = [name for name in present if installed[name] is None
               or not same_content(installed[name], source.hook(name))]
    if drifted:
        users = [name for name in drifted if installed[name] is not None and
                 not is_the_installers(source, HOOK_DIR + "/" + name, installed[name])]
        findings.append(Finding("drift", "hooks differ from this version: " + ", ".join(drifted),
                                "--update --force" if users else "--update"))
    unwired = [wiring.event for wiring in WIRINGS if wiring.event not in wired]
    if unwired:
        findings.append(Finding("unwired", "not wired in settings.json: " + ", ".join(unwired),
                                "--update"))
    findings += local_only_wiring_findings(project, wired)
    findings += double_wiring_findings(project)
    findings += repair_findings(source, project) + silenced_findings(project, wired) + \
        interpreter_findings(project, env) + sharing_findings(project) + \
        unattended_save_findings(project, env)
    if unwired:  # --update writes the permissions with the entries; one finding says so
        return findings
    return findings + permission_findings(source, project)


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


def permission_findings(source, project):
    """The protocol's Skill permissions missing from the project's settings,
    and deny rules out of step with its .claudeignore."""
    findings = []
    shared = rules_in_force(project, (SETTINGS,))
    local = rules_in_force(project, (LOCAL_SETTINGS,))
    rules = {key: shared[key] + local[key] for key in shared}
    missing = [rule for rule in SKILL_PERMISSIONS if rule not in rules["allow"]]
    if missing:
        findings.append(Finding("unwired", "not allowed in settings.json: {} (the CLI asks "
                                "before the model runs that command)".format(", ".join(missing)),
                                "--update"))
    text = claudeignore_text(project)
    wanted = deny_rules(text)[0]
    denied = rules["deny"]
    unenforced = [rule for rule in wanted if rule not in denied]
    local_only = [rule for rule in SKILL_PERMISSIONS if rule in rules["allow"]
                  and rule not in shared["allow"]] + \
        [rule for rule in wanted if rule in denied and rule not in shared["deny"]]
    if local_only:
        findings.append(Finding("unshared", "only in {}, which teammates do not get: {}; "
                                "--update writes them into {}".format(
                                    LOCAL_SETTINGS, some_of(local_only), SETTINGS), "--update"))
    stale = [rule for rule in our_deny_rules(source, text) if rule in denied and rule not in wanted]
    if unenforced:
        findings.append(Finding("drift", ".claudeignore lines without their permissions.deny "
                                "rule (the file tools may open them): " + some_of(unenforced),
                                "--update"))
    if stale:
        findings.append(Finding("drift", "permissions.deny rules for lines gone from "
                                ".claudeignore: " + some_of(stale), "--update"))
    return findings


def some_of(rules, shown=4):
    """The first rules, and how many more there are: a finding stays one line."""
    more = len(rules) - shown
    return ", ".join(rules[:shown]) + (" and {} more".format(more) if more > 0 else "")


# The protocol's parts that a teammate's clone needs.
SHARED_PARTS = (SETTINGS, HOOK_DIR + "/" + HOOKS[0], COMMAND_DIR + "/" + COMMANDS[0], MEMORY_INDEX)


def sharing_findings(project):
    """Why the protocol would not reach teammates: no git at all, or parts git ignores."""
    if not is_in_a_repository(project):  # the memory loads, but nothing guards or reaches anyone
        return [Finding("unshared", NOT_A_REPOSITORY)]
    refused = why_git_gives_no_answer(project)
    if refused:  # then every answer below would be a silent "nothing ignored"
        return [Finding("unshared", refused)]
    ignored = ignoring_lines(project, SHARED_PARTS)
    if not ignored:
        return []
    return [Finding("unshared", "git ignores {} ({}), so teammates never get them; remove or "
                    "narrow that line".format(", ".join(sorted(ignored)),
                                              "; ".join(sorted(set(ignored.values())))))]


NOT_A_REPOSITORY = ("not a git repository: the Stop hook's save check and the worktree pruner "
                    "need git, and nothing is shared; run git init")


def why_git_gives_no_answer(project):
    """Why git answers nothing in a folder that is in a repository: git not on
    PATH (the hooks need it too), or git refusing a repository another user
    owns (safe.directory), as it does to root outside sudo. None when it answers."""
    try:
        done = run_git(project, ("rev-parse", "--git-dir"))
    except OSError:
        return ("git is not found on PATH: the Stop hook's save check and the worktree pruner "
                "need it, and what git shares cannot be checked; install git")
    except subprocess.TimeoutExpired:
        return ("git gave no answer within {} seconds, so what it shares cannot be checked"
                .format(GIT_TIMEOUT_SECONDS))
    if done.returncode == 0:
        return None
    if b"dubious ownership" in done.stderr:
        return ("git refuses this repository to the user running install.py (another user owns "
                "it), so what git shares and tracks cannot be checked; run install.py as the "
                "repository's owner")
    message = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return "git fails here ({}), so what it shares cannot be checked".format(
        message[0] if message else "exit {}".format(done.returncode))


def ignoring_lines(project, rels):
    """{path: 'file:line: pattern'} for each untracked path git ignores, naming
    the line that ignores it; {} when git cannot say."""
    code, out = git(project, "check-ignore", "-v", "-n", "--", *rels)
    if code not in (0, 1):
        return {}
    found = {}
    for record in out.splitlines():  # source:line:pattern<TAB>path; "::<TAB>path" when none
        rule, _, path = record.partition("\t")
        where, _, rest = rule.partition(":")
        line, _, pattern = rest.partition(":")
        if path in rels and where and not pattern.startswith("!"):
            found[path] = "{}:{}: {}".format(where, line, pattern)
    return found


def repair_findings(source, project):
    """What --update would change or keeps only for want of --force, read from
    its own plan (so the check and the repair never disagree), apart from
    what the findings above name more precisely: the hooks' files, and the
    settings file, whose entries and permission rules they name one by one."""
    plan = plan_install(source, project, Options(update=True))
    repairs, edited, retired = [], [], []
    for step in plan.steps:
        hook_file = step.shown.startswith(HOOK_DIR + "/") and step.verb in ("write", "replace")
        settings = step.shown == SETTINGS
        if step.change is not None and not hook_file and not settings:
            repairs.append("{} {}{}".format(VERBS[step.verb][1].replace("would ", "", 1),
                                            step.shown, " ({})".format(step.note) if step.note
                                            else ""))
        elif step.verb == "keep" and step.note.startswith("edited by you"):
            # no mode removes an edited command under a retired name, not even with --force
            is_retired = os.path.basename(step.shown) in RETIRED_COMMANDS
            (retired if is_retired else edited).append(step.shown)
    findings = []
    if repairs:
        findings.append(Finding("drift", "--update would: " + "; ".join(repairs), "--update"))
    if edited:
        findings.append(Finding("drift", "edited by you, so --update keeps them: {}; "
                                "--update --force replaces them".format(", ".join(edited)),
                                "--update --force"))
    for rel in retired:
        name = os.path.basename(rel)[:-3]
        findings.append(Finding("drift", "{} is edited by you and shadows the CLI's own /{} (the "
                                "protocol's is now /{}): rename or delete it".format(
                                    rel, name, RETIRED_COMMANDS[name + ".md"][:-3])))
    return findings


# ------------------------------------------------- what the harness will run

# The sources a SessionStart hook is started for.
SESSION_SOURCES = ("startup", "resume", "clear", "compact", "fork")


def harness_settings(project):
    """[(shown name, settings)] of every settings file the harness reads for the
    project that exists, lowest precedence first: the user's, the shared, the
    local. A file that cannot be read counts as empty here (the check reports
    a broken project file on its own)."""
    files = []
    try:
        files.append((os.path.join(user_config_dir(), "settings.json"),) * 2)
    except UsageError:
        pass
    files += [(os.path.join(project, *rel.split("/")), rel) for rel in (SETTINGS, LOCAL_SETTINGS)]
    found = []
    for path, shown in files:
        try:
            settings, original = load_settings(path, shown)
        except Refusal:
            continue
        if original is not None:
            found.append((shown, settings))
    return found


def session_environment(project, base=None):
    """The environment the hooks see in a session: this one, with the "env"
    of every settings file on top, as the harness applies it (a project's
    value over the user's, the local file's over the shared one's)."""
    env = dict(os.environ if base is None else base)
    for _, settings in harness_settings(project):
        values = settings.get("env")
        if isinstance(values, dict):
            env.update((str(key), value if isinstance(value, str) else json.dumps(value))
                       for key, value in values.items() if value is not None)
    return env


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
    their job: all hooks switched off, and, when no entry of the event's hook
    runs, why each one does not."""
    files = harness_settings(project)
    switch = [(shown, settings["disableAllHooks"]) for shown, settings in files
              if "disableAllHooks" in settings]
    if switch and switch[-1][1] is True:  # the file of highest precedence decides
        return [Finding("unwired", '"disableAllHooks": true in {}: no hook runs; remove the key'
                        .format(switch[-1][0]))]
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
    """The interpreters the wired hook commands start, each run as the harness
    would run it (through sh, with the command's flags, in the session's
    environment): one that is missing, too old or rejects the flags fails the
    hook at every session."""
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
        problem = why_interpreter_fails(prefix, env, project)
        if problem:
            python = a_working_python(env)
            repair = "--update --python {}".format(shell_word(python)) if python else None
            findings.append(Finding("broken", "the hooks' interpreter ({}) {}; {}".format(
                prefix, problem, instead(env)), repair))
    return findings


def interpreter_and_flags(wiring, handler):
    """The part of a wired handler before the hook's path (e.g. 'python3 -I -S'),
    as sh would read it; None for a command in a form of the user's."""
    if is_exec_form(handler):
        words = handler_words(handler)
        at = next((index for index, word in enumerate(words)
                   if wiring.path_in_command.search(word)), 0)
        return " ".join(shlex.quote(word) for word in words[:at]) or None
    match = WIRED_COMMAND.match(str(handler.get("command", "")))
    return (match.group(1) + match.group(2)).strip() if match else None


def worst_kind(findings):
    kinds = [finding.kind for finding in findings]
    return max(kinds, key=RANKS.get) if kinds else None


def check_one(source, project, out, as_json=False):
    budget = load_budget_module(source)
    health_module = load_health_module(source)
    findings, points, health = inspect_everything(source, budget, project, health_module)
    code = exit_code_for(findings)
    if as_json:
        out(json.dumps({
            "project": project, "status": SUMMARY_WORDS[worst_kind(findings)], "exit": code,
            "findings": [{"kind": finding.kind, "text": finding.text} for finding in findings],
            "budget_points": points, "memory_health": health,
        }, indent=2, ensure_ascii=False))
        return code
    if not findings:
        out("ok: {} - hooks installed, wired and current; every budget within its limit".format(
            project))
        return EXIT_OK
    print_findings(out, project, findings)
    if points:
        out(budget.format_report(points).rstrip("\n"))
    if health:
        out(health_module.format_health(health).rstrip("\n"))
    fixes = [finding.fix for finding in findings if finding.fix]
    if fixes:
        out("fix: {} {} {}".format(invocation(), max(fixes, key=fix_rank), shlex.quote(project)))
    return code


def check_memory(source, project, out, as_json=False):
    """The memory's health alone, whether or not the protocol is installed: for repositories
    and CI that keep memory without the hooks. Exit 1 only when the memory is broken or over."""
    health_module = load_health_module(source)
    findings, health = inspect_memory(health_module, project, session_environment(project))
    code = exit_code_for(findings)
    if as_json:
        out(json.dumps({"project": project, "status": health["status"] if health else "broken",
                        "exit": code, "memory_health": health}, indent=2, ensure_ascii=False))
        return code
    if not findings:
        out("ok: {} - memory healthy".format(project))
        return code
    print_findings(out, project, findings)
    if health:
        out(health_module.format_health(health).rstrip("\n"))
    return code


def print_findings(out, project, findings):
    out("{} - {} finding(s):".format(project, len(findings)))
    for finding in findings:
        out("  {:<8} {}".format(LABELS[finding.kind], finding.text))


def invocation():
    """This script as it was run: the interpreter by the name it is found under
    on PATH (else its full path), then the script's path as it was typed."""
    python = os.path.basename(sys.executable or "python3")
    if not sys.executable or shutil.which(python) is None:
        python = sys.executable or "python3"
    return "{} {}".format(shlex.quote(python), shlex.quote(sys.argv[0] or "install.py"))


def find_repositories(root, unreadable):
    """Every folder under root with a .git entry, without descending into
    dependency folders, git's own folder or agent worktrees. A folder that
    cannot be listed is added to unreadable as (folder, reason, whether it
    lies in a repository found above it): what it holds is unknown, and a
    check that skipped it silently would vouch for it."""
    pending = [(root, False)]
    while pending:
        folder, inside = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError as error:
            unreadable.append((folder, error.strerror or type(error).__name__, inside))
            continue
        if any(entry.name == ".git" for entry in entries):
            inside = True
            yield folder
        for entry in entries:
            if entry.name in SKIPPED_FOLDERS or not entry.is_dir(follow_symlinks=False):
                continue
            if entry.name == "worktrees" and os.path.basename(folder) == ".claude":
                continue
            pending.append((entry.path, inside))


def unreadable_finding(reason, inside):
    """An unreadable folder inside a repository (a database volume, a folder
    of another user's) most likely holds data, not a repository: a warning.
    Outside one, repositories may be hiding there: the check cannot pass."""
    if inside:
        return Finding("warn", "cannot be read ({}); a repository nested there would not be "
                       "checked".format(reason))
    return Finding("unread", "cannot be read ({}): git repositories under it are not checked"
                   .format(reason))


def check_recursively(source, root, out):
    budget = load_budget_module(source)
    results, unreadable = [], []
    for repository in find_repositories(root, unreadable):
        findings, _, _ = inspect_everything(source, budget, repository)
        results.append((repository, findings))
    repositories = len(results)
    results += [(folder, [unreadable_finding(reason, inside)])
                for folder, reason, inside in unreadable]
    if not results:
        out("no git repositories under {}".format(root))
        return EXIT_OK
    results.sort(key=lambda item: (-RANKS.get(worst_kind(item[1]), 0), -len(item[1]),
                                   os.path.relpath(item[0], root)))
    width = min(48, max(len(os.path.relpath(folder, root)) for folder, _ in results))
    counts = {}
    unread = set(folder for folder, _, _ in unreadable)
    for folder, findings in results:
        kind = worst_kind(findings)
        if folder not in unread:
            counts[kind] = counts.get(kind, 0) + 1
        line = "{:<8} {:<{}}  {}".format(LABELS[kind], os.path.relpath(folder, root), width,
                                         "; ".join(finding.text for finding in findings))
        out(line.rstrip())
    order = sorted(counts, key=lambda kind: -RANKS.get(kind, 0))
    tally = ", ".join("{} {}".format(counts[kind], SUMMARY_WORDS[kind]) for kind in order)
    summary = ("{} repositories: {}".format(repositories, tally) if repositories
               else "no git repositories found")
    if unreadable:
        summary += "; {} {}".format(len(unreadable), SUMMARY_WORDS["unread"])
    out(summary)
    if repositories > counts.get(None, 0):
        out("details: {} --check <repository>".format(invocation()))
    return max(exit_code_for(findings) for _, findings in results)


# ---------------------------------------------------------------------- cli

class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


class StoreOnce(argparse.Action):
    """An option with a value that may be given only once."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest) is not None:
            raise UsageError("{} given twice".format(option_string))
        setattr(namespace, self.dest, values)


# One word of an interpreter command that every shell the harness uses (sh -c,
# Git Bash) runs as written: letters, digits and a few safe marks, or anything
# but a quote or a line break between single quotes. Unquoted backslashes, $,
# globs and the like would be rewritten or run as code.
SHELL_WORD = r"(?:[\w.,:@%+=~^/-]+|'[^'\r\n]*')+"
INTERPRETER = re.compile(r"\s*{0}(?:[ \t]+{0})*\s*\Z".format(SHELL_WORD))


def check_interpreter(python):
    if not INTERPRETER.match(python):
        raise UsageError("--python {!r} would not run as written in a hook command: use plain "
                         "words, and single quotes around a path with spaces or backslashes "
                         "(e.g. \"'/opt/my python/bin/python3'\")".format(python))
    if "'" not in python and len(python.split()) > 1 and os.path.isfile(python.strip()):
        raise UsageError("--python {!r} is one path with spaces; put it in single quotes "
                         "(\"'{}'\")".format(python, python.strip()))


def parse_arguments(argv):
    parser = Parser(prog="install.py", add_help=False, allow_abbrev=False)
    for flag in ("--project", "--update", "--uninstall", "--global", "--check",
                 "--recursive", "--json", "--memory", "--dry-run", "--force", "--version"):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--python", action=StoreOnce)
    parser.add_argument("target", nargs="?")
    args, extra = parser.parse_known_args(argv)
    unknown = [arg for arg in extra if arg.startswith("-")]
    if unknown:
        raise UsageError("unknown option: " + " ".join(unknown))
    modes = [flag for flag in ("project", "update", "uninstall", "global", "check")
             if getattr(args, flag)]
    if modes == ["uninstall", "global"]:  # one mode: take out what --global put in
        modes = ["global"]
    if args.help or args.version:
        # Asked for beside anything else, they would silently drop the rest of the line.
        given = [arg for arg in argv if arg not in ("-h", "--help", "--version")]
        if given or (args.help and args.version):
            raise UsageError("{} takes nothing else: got {}".format(
                "--help" if args.help else "--version", " ".join(argv)))
        return args
    if len(modes) > 1:  # before the directories: --project A --update A is two modes
        raise UsageError("one mode at a time: got --" + " and --".join(modes))
    if extra:
        raise UsageError("one directory at a time: got {} and {}".format(
            args.target, " ".join(extra)))
    if not modes:
        raise UsageError("choose a mode: --project DIR, --update DIR, --uninstall DIR, "
                         "--global or --check [DIR]")
    args.mode = modes[0]
    if args.dry_run and args.mode == "check":
        raise UsageError("--dry-run works only with a mode that changes files: --check "
                         "changes nothing")
    if args.recursive and args.mode != "check":
        raise UsageError("--recursive works only with --check")
    if args.json and (args.mode != "check" or args.recursive):
        raise UsageError("--json works only with --check DIR (not with --recursive)")
    if args.memory and (args.mode != "check" or args.recursive):
        raise UsageError("--memory works only with --check DIR (not with --recursive)")
    if args.python is not None and args.mode not in ("project", "update"):
        raise UsageError("--python works only with --project or --update")
    if args.force and args.mode not in ("project", "update", "global"):
        raise UsageError("--force works only with --project, --update or --global "
                         "(also --uninstall --global)")
    if args.python is not None:
        check_interpreter(args.python)
        args.python = args.python.strip()
    if args.mode == "global":
        if args.target is not None:
            raise UsageError("--{}global takes no directory (got {})".format(
                "uninstall --" if args.uninstall else "", args.target))
        args.target = user_config_dir()
        return args
    if args.mode == "check" and args.target is None:
        args.target = "."
    if not args.target:
        raise UsageError("--{} needs a directory".format(args.mode))
    if not os.path.isdir(args.target):
        raise UsageError("not a directory: {}".format(args.target))
    args.target = os.path.abspath(args.target)
    outside = folder_holding_the_claude_folder(args.target)
    if outside is not None and args.mode != "check":
        raise UsageError("{} is inside a .claude folder; name the project folder, {}".format(
            args.target, outside))
    if args.mode == "check" and not args.recursive:
        args.target = project_of(args.target)
    claude_dir = os.path.join(args.target, ".claude")
    # The user configuration folder holds commands and settings of the user's own that look
    # like the protocol's; an --uninstall there would remove them.
    if args.mode in ("project", "update", "uninstall") and is_user_config_dir(claude_dir):
        raise UsageError("{} is your user configuration folder, which Claude Code loads in "
                         "every project; name a project folder (--global handles the section "
                         "in its CLAUDE.md)".format(claude_dir))
    return args


def folder_holding_the_claude_folder(folder):
    """The folder above the nearest .claude folder that folder is in; None when it is in none."""
    parts = folder.split(os.sep)
    if ".claude" not in parts:
        return None
    return os.sep.join(parts[:len(parts) - parts[::-1].index(".claude") - 1]) or os.sep


def project_of(folder):
    """The project a --check of folder is about: folder itself when it has a
    .claude folder; else the folder above a .claude folder it is in, or the
    top of the git work tree it is in (the harness reads a project's settings
    only there); else folder."""
    if os.path.isdir(os.path.join(folder, ".claude")):
        return folder
    outside = folder_holding_the_claude_folder(folder)
    if outside is not None:
        return outside
    return repository_top(folder) or folder


def run(argv, out=print):
    args = parse_arguments(argv)
    if args.help:
        out(HELP.rstrip("\n"))
        return EXIT_OK
    if args.version:
        out("install.py (memory-context-protocol) {} ({})".format(VERSION, RELEASE_DATE))
        return EXIT_OK
    source = Source.beside_this_script()
    if args.mode == "check":
        if args.recursive:
            return check_recursively(source, args.target, out)
        if args.memory:
            return check_memory(source, args.target, out, args.json)
        return check_one(source, args.target, out, args.json)
    try:
        plan, heading = make_plan(source, args)
        plan.refuse_if_unsafe()
    except Refusal as error:
        raise Refusal("{}; nothing was changed".format(error))
    with HeldInterrupts():
        out(("dry run: " if args.dry_run else "") + heading)
        changes = plan.carry_out(args.dry_run, out)
        out(closing_line(changes, args.dry_run, plan))
    plan.owners.refuse_if_any_lost()
    return EXIT_OK


def make_plan(source, args):
    """(plan, heading) for a writing mode."""
    if args.mode == "global" and args.uninstall:
        plan = plan_global_removal(source, args.target, args.force)
        return plan, "removing the protocol section from {}".format(
            os.path.join(args.target, "CLAUDE.md"))
    if args.mode == "global":
        return plan_global(source, args.target, args.force), "protocol section for {}".format(
            os.path.join(args.target, "CLAUDE.md"))
    if args.mode == "uninstall":
        plan = plan_uninstall(source, args.target)
        plan.nothing_installed = not protocol_is_installed(args.target)
        return plan, "uninstalling from {}".format(args.target)
    update = args.mode == "update"
    installed = protocol_is_installed(args.target)
    if update and not installed and not bash_edition_wiring(args.target):
        raise Refusal("the protocol is not installed in {}; use --project".format(args.target))
    # a move from the bash edition wires an interpreter as --project does
    if args.python is not None or not update or not installed:
        refuse_a_python_that_cannot_run_the_hooks(args.python or DEFAULT_PYTHON,
                                                  args.python is not None)
    plan = plan_install(source, args.target, Options(args.force, update, args.python))
    plan_sharing_notes(plan, args.target)
    return plan, "{} {}".format("updating" if update else "installing into", args.target)


def plan_sharing_notes(plan, project):
    """What keeps the install from reaching teammates, said before "done"."""
    for finding in sharing_findings(project):
        plan.note(finding.text)
        plan.unshared = True


class HeldInterrupts(object):
    """Ctrl-C while the changes are being made takes effect once they are all
    made, so a run is never left half done; a second Ctrl-C stops at once."""

    def __enter__(self):
        self.received = False
        try:
            self.previous = signal.signal(signal.SIGINT, self.hold)
        except ValueError:  # not the main thread: nothing to hold
            self.previous = None
        return self

    def hold(self, signum, frame):
        if self.received:
            raise KeyboardInterrupt
        self.received = True

    def __exit__(self, kind, value, trace):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        if self.received and kind is None:
            raise KeyboardInterrupt
        return False


def closing_line(changes, dry_run, plan):
    unshared = (", but the protocol cannot work fully or reach teammates until the note above "
                "is dealt with") if plan.unshared else ""
    if dry_run:
        return "dry run: {} change(s) planned; nothing was changed".format(changes)
    if changes == 0 and plan.held:
        return "nothing changed, but {} kept as {} differ{} from this version (see above)".format(
            ", ".join(plan.held), "they" if len(plan.held) > 1 else "it",
            "" if len(plan.held) > 1 else "s")
    if changes == 0 and plan.nothing_installed:
        return "nothing to remove: the protocol is not installed here"
    if changes == 0:
        return "nothing to do: already up to date" + unshared
    return "done: {} change(s)".format(changes) + unshared


class Output(object):
    """Prints the report on stdout. A reader that went away (`| head`) or a full
    disk stops the printing, never the run: the changes are made either way."""

    def __init__(self, stream):
        self.stream = stream
        self.error = None

    def __call__(self, text):
        if self.error is None:
            try:
                self.stream.write(text + "\n")
            except OSError as error:
                self.error = error

    def close(self):
        """None, or the error that stopped the printing; stdout is then sent to
        the null device, so nothing fails again when Python exits."""
        if self.error is None:
            try:
                self.stream.flush()
            except OSError as error:
                self.error = error
        if self.error is not None:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())
            except (OSError, ValueError):
                pass
        return self.error


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    for stream in (sys.stdout, sys.stderr):
        # UTF-8 whatever the locale, so a path prints as it is; a file name that
        # is not valid UTF-8 prints as backslash escapes (still valid in --json)
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
    output = Output(sys.stdout)
    try:
        code, message = run(argv, output), None
    except UsageError as error:
        code, message = EXIT_USAGE, "error: {} (see --help)".format(error)
    except Refusal as error:
        code, message = EXIT_FINDINGS, "error: {}".format(error)
    except KeyboardInterrupt:
        code, message = EXIT_INTERRUPTED, "interrupted"
    except OSError as error:
        where = " ({})".format(error.filename) if getattr(error, "filename", None) else ""
        code, message = EXIT_FINDINGS, "error: {}{}".format(error.strerror or error, where)
    except Exception as error:  # the promise: one line, never a traceback
        code, message = EXIT_FINDINGS, "internal error: {}: {} (please report it)".format(
            type(error).__name__, error)
    failed = output.close()
    if failed is not None and not isinstance(failed, BrokenPipeError):
        code = code or EXIT_FINDINGS
        message = message or "error: cannot print the report: {}".format(failed.strerror or failed)
    if message:
        # one line, even when a path in it holds a line break
        sys.stderr.write("install.py: {}\n".format(
            message.replace("\r", "\\r").replace("\n", "\\n")))
    return code


if __name__ == "__main__":
    sys.exit(main())
