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

Layout
------
This file is the command; its body is the package in installer/ beside it,
one module per responsibility (installer/__init__.py lists them). It is
imported by its path, so the working folder, sys.path and `python3 -I -S`
change nothing.
"""

from __future__ import print_function  # so Python 2 reads this file as far as the check below

import sys

if sys.version_info < (3, 8):
    # One line, not a traceback: everything below needs Python 3.8.
    sys.stderr.write("install.py: error: this is Python {}.{}; install.py needs Python 3.8 or "
                     "newer: run it with python3\n".format(*sys.version_info[:2]))
    sys.exit(1)

import importlib  # noqa: E402 (after the version check, which must come first)
import importlib.util  # noqa: E402
import os  # noqa: E402

# The name the package beside this script is imported under: its own, so that nothing else
# on sys.path can be taken for it.
PACKAGE = "mcp_installer"


def installer_folder():
    """installer/ beside the real path of this script."""
    return os.path.join(os.path.dirname(os.path.realpath(os.path.abspath(__file__))), "installer")


def load_installer():
    """The installer package, imported by its path, writing no bytecode. A package of that name
    from another folder (another copy of the installer, loaded before in the same process) is
    replaced, with all its modules."""
    folder = installer_folder()
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None and list(getattr(loaded, "__path__", ())) == [folder]:
        return loaded
    forget_the_package()
    sys.dont_write_bytecode = True
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    try:
        spec.loader.exec_module(package)
        importlib.import_module(PACKAGE + ".cli")
    except BaseException:
        forget_the_package()
        raise
    return package


def forget_the_package():
    for name in [name for name in sys.modules
                 if name == PACKAGE or name.startswith(PACKAGE + ".")]:
        del sys.modules[name]


def main(argv=None):
    """Run install.py with argv (the command line by default); returns the exit code. A package
    that cannot be loaded (a clone missing a file) is one line on stderr, never a traceback."""
    try:
        installer = load_installer()
    except KeyboardInterrupt:
        sys.stderr.write("install.py: interrupted\n")
        return 130
    except Exception as error:
        message = "incomplete installer: cannot load {}: {}: {}".format(
            installer_folder(), type(error).__name__, error)
        sys.stderr.write("install.py: error: {}\n".format(
            message.replace("\r", "\\r").replace("\n", "\\n")))
        return 1
    return installer.cli.main(argv)


if __name__ == "__main__":
    sys.exit(main())
