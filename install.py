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
* What the protocol owns is written down, never guessed. The first change of
  every writing run is the record of what the run leaves the protocol's:
  `.claude/memory-context-protocol.json`, committed with the settings it
  speaks of (the files the installer wrote, with the digest of the bytes it
  wrote; the hook entries and Skill rules it added; each deny rule with the
  `.claudeignore` line it came from; whether it created settings.json,
  .gitignore or .gitattributes), so a teammate's clone updates and
  uninstalls by it too; and, on the first install on a machine,
  `.claude/hooks/.before-install.json`, which git ignores and only its owner
  may read: the install's folders that were there, empty, and the bytes of
  settings.json, .gitignore and .gitattributes. An
  install made before the record is adopted by the digests of the versions
  releases shipped; the bash edition by what its scripts say, never by a
  file name alone.
* Nothing the user wrote is lost. `memory/` (but the untouched index the
  install wrote), the session-state file, the user's settings keys, hooks and
  permissions, and the user's `.gitignore` lines (even those written inside
  the protocol's block) are never overwritten, not even with `--force`. A
  hook or command of the user's under one of the protocol's names is never
  replaced, wired or granted a Skill rule, not even with `--force`: --check
  names the clash and the way out (rename it). A protocol command or hook
  the user edited, and an edited protocol section in the global CLAUDE.md,
  stay unless `--force` (for a hook, `--update --force`) says otherwise. A
  rule the installer did not add is the user's: no mode removes it or calls
  it drift.
* --uninstall removes only what the record says the protocol added and
  nobody changed since, and gives back every file and folder the user had
  byte for byte: an edited command or hook, a file of the user's under one
  of the protocol's names, `memory/` beyond the index the install wrote, and
  the session-state file stay. Of the hooks' local files only what they
  write goes: a baseline (`.session-baseline`, then `.<session id>` and/or
  `.<pid>.tmp`) holding a state or, when temporary, nothing, and the hooks'
  bytecode in `__pycache__`; a file of the user's that merely looks like one
  stays. `.claude/hooks`, `.claude/commands`, `.claude` and `memory` go only
  when the run empties them and they were not there, empty, before the
  install. The protocol's own files go even when committed (git shows them
  as deleted). `.claude/settings.json` and `.gitignore` lose only the
  protocol's parts and come back in the bytes they had before the first
  install when what is left means the same (a later edit of the user's that
  changes the meaning wins; one that changes only the layout does not); one
  the install created goes when nothing of the user's is left in it. Git is
  never asked what to give back. The records go last.
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
  cannot run the hooks (run with the hooks' flags) is refused before any
  write, with one to pass instead; a folder outside git or parts git ignores
  are named in a note, and the last line says the install is not complete
  until it is dealt with. --check reports hooks the harness would never run
  or would run twice, what --update would repair, and parts teammates would
  not get, reading the settings files' "env" as a session has it.
* Nothing a repository carries makes a mode run a program of its choosing:
  --check probes only an interpreter it reads as a Python and finds on the
  PATH of the user running it, outside the project, directly and in a
  minimal environment (the settings' "env" is handed to no process; another
  form of hook command is named, not run), and every git command switches
  off what the repository's configuration could make git start.
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

# Python 2 reads this file as far as the version check below: nothing above it needs Python 3.
import sys

# Built-in modules, ready at once: the signal module imports enum (4 ms during which Ctrl-C
# would still give a traceback), and os may be half imported when the interrupt lands.
try:
    import _signal as signal
except ImportError:  # an interpreter without CPython's module
    import signal
try:
    from posix import _exit, write
except ImportError:
    from nt import _exit, write


def stop_at_once(signum, frame):
    """Ctrl-C while nothing is being changed (loading, planning, checking, printing): the run
    ends there, with one line and exit 130, never a traceback, wherever the interrupt lands.
    While the changes are made, the plan holds Ctrl-C until the last one (plan.HeldInterrupts)."""
    try:
        sys.stdout.flush()
    except Exception:  # an interrupted write, a reader gone: the line below matters more
        pass
    write(2, b"install.py: interrupted\n")
    _exit(130)


# First, as what follows takes most of the start-up time; an interrupt the parent made this process
# ignore (a job started with `&` by a script, nohup) stays ignored, as Python itself leaves it.
if __name__ == "__main__" and signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
    signal.signal(signal.SIGINT, stop_at_once)

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
