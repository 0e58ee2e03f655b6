"""The command line: parsing it, choosing the mode, and turning every outcome into an exit code.

Why it exists: install.py's contract with its users and their scripts is here: the options, the
usage errors (exit 2), one line on stderr for anything refused or failed (exit 1), never a
traceback, Ctrl-C (130), a stdout nobody reads, and the last line that says whether the run is
complete.
"""

import argparse
import os
import shlex
import sys

from .errors import EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, Refusal, UsageError
from .protocol import DEFAULT_PYTHON, Source
from .releases import RELEASE_DATE, UNRELEASED, VERSION
from .plan import HeldInterrupts
from .settings import is_user_config_dir, user_config_dir
from .interpreter import (
    check_interpreter, refuse_a_python_that_cannot_run_the_hooks, why_the_interpreter_is_missing,
)
from .wiring import protocol_is_installed
from .bash_edition import bash_edition_wiring
from .repository import repository_top
from .agents import agents_named
from .uninstall import plan_uninstall
from .project import Options, plan_install
from .global_section import plan_global, plan_global_removal
from .findings import sharing_findings
from .check import check_memory, check_one, check_recursively
from .next_steps import next_steps


# What --help prints: one screen (30 lines at most, none over 100 columns). The rest is in
# HELP_ALL, behind --help-all.
HELP = """\
usage: install.py MODE [DIR] [options]

Put the Memory Context Protocol into a git repository, check it, update it, or take it out.

modes (exactly one):
  --project DIR     install into the repository whose top folder is DIR
  --check [DIR]     is it installed and working, within budget, its memory healthy? (default: .)
  --update DIR      bring an install up to this version (or over from the bash edition)
  --uninstall DIR   take out what --project added; memory/ and the handoff stay
  --global          add the protocol section to ~/.claude/CLAUDE.md (--uninstall --global: remove)

options:
  --dry-run         print what would change; change nothing
  --python CMD      the interpreter the hooks run with (default: python3; e.g. "py -3" on Windows)
  --agents LIST     wire Codex CLI and Gemini CLI too: --agents claude,codex,gemini
  --force           also replace protocol files you edited (yours kept as <file>.mine)
  --help-all        every option (--json, --memory, --recursive, the --allow-* overrides)
  --version         the version

example:
  python3 install.py --project .    then run the git add line it prints, commit, start
                                    Claude Code there and accept its trust prompt once

exit codes: 0 ok; 1 a finding, or a step refused or failed; 2 usage error; 130 interrupted
"""

HELP_ALL = """\
usage: install.py MODE [DIR] [options]

modes (exactly one):
  --project DIR        install the hooks, commands, settings entries, memory index,
                       .claudeignore and the .gitignore and .gitattributes lines into DIR,
                       the top folder of a git repository
  --update DIR         bring an installed DIR up to this version, or move it from the
                       bash edition
  --uninstall DIR      remove what --project added (never memory/ or the handoff)
  --global             add the protocol section to ~/.claude/CLAUDE.md
                       ($CLAUDE_CONFIG_DIR/CLAUDE.md when that is set)
  --uninstall --global remove that section (and the line break --global set it off
                       with), giving the file back as it was
  --check [DIR]        report budgets, memory health, what loads before the first turn,
                       and whether the hooks are installed, wired and current in DIR
                       (default: .), with the repair of each finding

options:
  --recursive          with --check: every git repository under DIR, worst first
  --json               with --check DIR: the whole report as JSON
  --memory             with --check DIR: the memory's health alone, whether or not the
                       hooks are installed; the exit code is about the memory only
  --dry-run            print what would change; change nothing
  --force              with --project/--update: replace the protocol's commands that
                       differ, including ones you edited; with --update, also its hooks
                       you edited (each edited file is kept beside it as <file>.mine);
                       with --global, a protocol section you edited, and with
                       --uninstall --global removes one (never a command or hook of your
                       own under one of the protocol's names, memory/, your settings or
                       your .gitignore lines)
  --python CMD         interpreter in the hook commands and the commands' text (default:
                       python3; e.g. python, or "py -3" on Windows; a path with spaces or
                       backslashes goes in single quotes)
  --agents LIST        with --project/--update: the agents to wire, comma-separated,
                       claude always among them (default: claude): codex wires
                       .codex/hooks.json, gemini .gemini/settings.json, and both get
                       /handoff, /dream and /catchup as skills in .agents/skills/;
                       agents-md adds the protocol's steps to AGENTS.md for agents with
                       no hooks (what was added before stays; --uninstall takes out every
                       agent's)

overrides (each lets one refused mistake through, for when you mean it):
  --allow-no-git       with --project: install into a folder outside git (the Stop hook's
                       save check and the worktree pruner need git; nothing is shared)
  --allow-missing-python
                       with --project/--update: wire a --python this machine does not
                       have (for teammates' machines that do)
  --allow-subfolder    with --project: install into a folder below the repository's top
                       (Claude Code then finds it only when started in that folder)

  -h, --help           a one-screen summary
  --help-all           this list
  --version            show the version and exit

exit codes: 0 ok; 1 the check found something, or a step was refused or failed;
2 usage error; 130 interrupted (Ctrl-C). Broken memory (a dead pointer, an unclosed
comment, auto memory past the harness's cap, a cited path that no longer exists) and
anything over budget exit 1; memory-health warnings (possibly stale facts, orphans,
duplicates, history in comments, missing dates or feedback parts) are printed but exit 0.
"""

# The overrides of the three refused mistakes, with the modes they go with.
OVERRIDES = (("allow_no_git", "--allow-no-git", ("project",)),
             ("allow_missing_python", "--allow-missing-python", ("project", "update")),
             ("allow_subfolder", "--allow-subfolder", ("project",)))


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(message)


class StoreOnce(argparse.Action):
    """An option with a value that may be given only once."""

    def __call__(self, parser, namespace, values, option_string=None):
        if getattr(namespace, self.dest) is not None:
            raise UsageError("{} given twice".format(option_string))
        setattr(namespace, self.dest, values)


def parse_arguments(argv):
    parser = Parser(prog="install.py", add_help=False, allow_abbrev=False)
    for flag in ("--project", "--update", "--uninstall", "--global", "--check",
                 "--recursive", "--json", "--memory", "--dry-run", "--force", "--version",
                 "--help-all") + tuple(flag for _, flag, _ in OVERRIDES):
        parser.add_argument(flag, action="store_true")
    parser.add_argument("-h", "--help", action="store_true")
    parser.add_argument("--python", action=StoreOnce)
    parser.add_argument("--agents", action=StoreOnce)
    parser.add_argument("target", nargs="?")
    args, extra = parser.parse_known_args(argv)
    unknown = [arg for arg in extra if arg.startswith("-")]
    if unknown:
        raise UsageError("unknown option: " + " ".join(unknown))
    modes = [flag for flag in ("project", "update", "uninstall", "global", "check")
             if getattr(args, flag)]
    if modes == ["uninstall", "global"]:  # one mode: take out what --global put in
        modes = ["global"]
    answers = [flag for flag, asked in (("--help", args.help), ("--help-all", args.help_all),
                                        ("--version", args.version)) if asked]
    if answers:
        # Asked for beside anything else, they would silently drop the rest of the line.
        given = [arg for arg in argv if arg not in ("-h", "--help", "--help-all", "--version")]
        if given or len(answers) > 1:
            raise UsageError("{} takes nothing else: got {}".format(answers[0], " ".join(argv)))
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
    if args.agents is not None:
        if args.mode not in ("project", "update"):
            raise UsageError("--agents works only with --project or --update")
        args.agents = agents_named(args.agents)
    if args.force and args.mode not in ("project", "update", "global"):
        raise UsageError("--force works only with --project, --update or --global "
                         "(also --uninstall --global)")
    for dest, flag, modes_taking_it in OVERRIDES:
        if getattr(args, dest) and args.mode not in modes_taking_it:
            raise UsageError("{} works only with --{}".format(flag, " or --".join(modes_taking_it)))
    if args.allow_missing_python and args.python is None:
        raise UsageError("--allow-missing-python goes with the --python it lets through")
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
    if args.mode in ("project", "update", "uninstall") and \
            os.path.dirname(args.target) == args.target:
        raise UsageError("{} is the file system's root, not a project (was a variable before "
                         "the / empty?): name the project folder".format(args.target))
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
    if args.help or args.help_all:
        out((HELP if args.help else HELP_ALL).rstrip("\n"))
        return EXIT_OK
    if args.version:
        out("install.py (memory-context-protocol) " + version_line())
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
        if not args.dry_run and args.mode != "global":
            for step in next_steps(plan, args.target, args.mode, changes,
                                   [agent.name for agent in plan.agents]):
                out("  {:<8} {}".format("next", step))
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
    refuse_the_silent_mistakes(args, installed)
    if update and not installed and not bash_edition_wiring(args.target):
        raise Refusal("the protocol is not installed in {}; use --project".format(args.target))
    # a move from the bash edition wires an interpreter as --project does
    if args.python is not None or not update or not installed:
        refuse_a_python_that_cannot_run_the_hooks(args.python or DEFAULT_PYTHON,
                                                  args.python is not None)
    plan = plan_install(source, args.target, Options(args.force, update, args.python, args.agents))
    plan_sharing_notes(plan, args.target, plan.agents)
    return plan, "{} {}".format("updating" if update else "installing into", args.target)


def version_line():
    """This version as CHANGELOG.md tells it: a release, or the last one and the changes listed
    under [Unreleased] since."""
    if UNRELEASED:
        return "{}+unreleased (release {} of {}, and the changes CHANGELOG.md lists under " \
            "[Unreleased])".format(VERSION, VERSION, RELEASE_DATE)
    return "{} ({})".format(VERSION, RELEASE_DATE)


def refuse_the_silent_mistakes(args, installed):
    """Three installs that would succeed and not work, each refused before anything is written,
    with the override for a user who means it: a folder outside git (the Stop hook and the
    pruner need git; nothing reaches teammates), a --python this machine does not have (the
    hooks fail wherever it is missing), and a folder below the repository's top, where Claude
    Code started at the top never looks (and --check of the top says not installed)."""
    top = repository_top(args.target)
    if args.mode == "project" and not installed and not args.allow_no_git and top is None:
        raise Refusal("{} is not in a git repository: the Stop hook's save check and the "
                      "worktree pruner need git, and nothing reaches teammates; run git init "
                      "there first, or pass --allow-no-git".format(args.target))
    if args.python is not None and not args.allow_missing_python:
        missing = why_the_interpreter_is_missing(args.python)
        if missing:
            raise Refusal("--python {}: {}, so the hooks would fail at every session; pass "
                          "--allow-missing-python if it is for another machine".format(
                              args.python, missing))
    if args.mode == "project" and not installed and not args.allow_subfolder \
            and top is not None and not os.path.samefile(top, args.target):
        raise Refusal("{} is a folder inside the git repository {}: Claude Code reads a "
                      "project's settings where it is started, usually the top; install "
                      "there (--project {}), or pass --allow-subfolder".format(
                          args.target, top, shlex.quote(top)))


def plan_sharing_notes(plan, project, agents):
    """What keeps the install from reaching teammates, said before "done"."""
    for finding in sharing_findings(project, agents):
        plan.note(finding.text)
        plan.unshared = True


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
