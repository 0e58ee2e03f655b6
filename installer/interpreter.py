"""The interpreter the hooks run with: reading it from a hook command, and probing that it works.

Why it exists: a hook command is an interpreter, its flags, then the hook's path. The installer
writes that form, reads the interpreter back from it (to keep it on --update and to name it in
the commands' text), refuses a --python that a shell would not run as written, and, before it
wires one, runs it once to learn whether it is Python 3.8 or newer and accepts the hooks' flags.
The grammar here is the one reading of what counts as a Python.

The probe runs nothing a project chooses, since --check runs on repositories nobody has trusted:
only a program the grammar reads as a Python (python3, py -3, /usr/bin/python3.12), found on the
PATH of the user running install.py, never in the project, with the hooks' flags and a version
selector at most, directly (no shell), in a minimal environment (the settings "env" is read for
what it says, never handed to a process). Any other form is the user's own and is not run.
"""

import os
import re
import shlex
import shutil
import subprocess
import tempfile

from .errors import Refusal, UsageError
from .protocol import HOOK_TIMEOUT_SECONDS, handler_words, is_exec_form


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


OLDEST_PYTHON = (3, 8)

# The hooks' flags: every command the installer writes runs the hook this way.
HOOK_FLAGS = "-I -S"

# Prints the version of whatever Python runs it, in a form Python 2 reads too.
VERSION_PROBE = "import sys; sys.stdout.write('%d.%d' % sys.version_info[:2])"

# Interpreters worth suggesting when the one asked for cannot run the hooks.
OTHER_PYTHONS = ("python3", "python") + tuple(
    "python3.{}".format(minor) for minor in range(14, OLDEST_PYTHON[1] - 1, -1)) + ("py -3",)
PROBED = {}


def why_interpreter_fails(prefix, project=None):
    """Why `prefix` (an interpreter and its flags, as a hook command starts) cannot run the
    hooks; None when it runs Python 3.8 or newer. A project given (--check) means an untrusted
    command: one the probe may not run is answered with why_not_run's reason, starting "is not
    run". Asked once per run for each interpreter: --check --recursive meets the same few in
    every repository."""
    argv, env, why_not = probe_of(prefix, project)
    if why_not:
        return why_not
    key = (tuple(argv), tuple(sorted(env.items())))
    if key not in PROBED:
        PROBED[key] = why_the_probe_fails(argv, env)
    return PROBED[key]


def probe_of(prefix, project=None):
    """(argv, environment, None) to run the interpreter of prefix with the version probe, or
    (None, None, why it is not run). With no project, prefix is the user's own --python: its
    NAME=value words set variables, and a path relative to the folder install.py runs in is
    theirs to name; with a project (--check), only a Python found on the user's PATH, or an
    absolute path outside the project, with no more than -I, -S and a version selector."""
    words = shlex.split(prefix) if INTERPRETER.match(prefix) else None
    if not words:
        return None, None, NOT_RUN + "a command of your own form, not an interpreter and its flags"
    assignments = []
    while words and re.match(r"[A-Za-z_]\w*=", words[0]):
        assignments.append(words.pop(0).split("=", 1))
    if not words:
        return None, None, NOT_RUN + "it names no interpreter"
    program, rest = os.path.expanduser(words[0]), words[1:]
    if project is not None:
        if assignments:
            return None, None, NOT_RUN + "it sets variables before the interpreter"
        if not PYTHON_PROGRAM.match(re.split(r"[/\\]", program)[-1]):
            return None, None, NOT_RUN + "it does not start a Python by name"
        if any(not PROBE_WORD.match(word) for word in rest):
            return None, None, NOT_RUN + "it passes the interpreter more than the hooks' flags"
        if re.search(r"[/\\]", program) and not os.path.isabs(program):
            return None, None, NOT_RUN + "it is a path in the project"
    found = where_the_program_is(program)
    if found is None:
        return None, None, "is not found"
    if project is not None and is_inside(found, project):
        return None, None, NOT_RUN + "it is a program in the project"
    env = minimal_environment()
    env.update(assignments)
    return [found] + rest + ["-c", VERSION_PROBE], env, None


# What a command the probe may run passes its interpreter: the hooks' flags, and a version
# selector of the Python launcher (py -3, py -3.12).
PROBE_WORD = re.compile(r"-[IS]\Z|-\d+(?:\.\d+)?\Z")
NOT_RUN = "is not run by --check, which runs nothing a project chooses: "


def where_the_program_is(program):
    """The path of the program the interpreter word names: looked up on the PATH of the user
    running install.py (its folders that are absolute paths), or the path it is written as
    (relative: to the folder install.py runs in). None when there is no such program."""
    if re.search(r"[/\\]", program):
        program = os.path.abspath(program)
        return program if os.path.isfile(program) else None
    path = os.pathsep.join(folder for folder in os.environ.get("PATH", os.defpath).split(
        os.pathsep) if os.path.isabs(folder))
    return shutil.which(program, path=path)


def is_inside(path, project):
    """Whether the real path of path lies in the project's real folder."""
    real, top = os.path.realpath(path), os.path.realpath(project)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def why_the_settings_path_lacks_it(prefix, project, env):
    """Why the interpreter of prefix, named without a folder, would not be found on the PATH
    the settings' env gives a session (its relative folders are the project's, where the
    harness runs hooks), or why what it finds there is not run; None when that PATH is this
    process's own or holds it outside the project. Nothing is run: the PATH is read for what
    it says."""
    path = env.get("PATH")
    words = shlex.split(prefix) if INTERPRETER.match(prefix) else []
    if not words or not path or path == os.environ.get("PATH") or re.search(r"[/\\]", words[0]):
        return None
    folders = [os.path.join(project, folder) for folder in path.split(os.pathsep) if folder]
    found = shutil.which(words[0], path=os.pathsep.join(folders))
    if found is None:
        return "is not found on the PATH the settings' env gives ({})".format(path)
    if is_inside(found, project):
        return NOT_RUN + "the PATH the settings' env gives finds it in the project ({})".format(
            os.path.relpath(found, project))
    return None


def minimal_environment():
    """What an interpreter needs to start, from this process's environment and nothing more:
    PATH, and on Windows the folders it finds its system in."""
    names = ("PATH", "SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP")
    return dict((name, os.environ[name]) for name in names if name in os.environ)


def why_the_probe_fails(argv, env):
    """Why the probe's command does not print a Python version of 3.8 or newer."""
    try:
        done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir(),
                              timeout=HOOK_TIMEOUT_SECONDS)
    except FileNotFoundError:
        return "is not found"
    except (OSError, ValueError) as error:
        return "cannot be started ({})".format(getattr(error, "strerror", None) or error)
    except subprocess.TimeoutExpired:
        return "gave no answer within {} seconds".format(HOOK_TIMEOUT_SECONDS)
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
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


def a_working_python():
    """The first of the usual interpreter names that runs the hooks here; None when none does."""
    for python in OTHER_PYTHONS:
        if why_interpreter_fails("{} {}".format(python, HOOK_FLAGS)) is None:
            return python
    return None


def instead():
    """What to pass instead of an interpreter that cannot run the hooks."""
    python = a_working_python()
    if python is None:
        return "install Python {}.{} or newer and pass it with --python".format(*OLDEST_PYTHON)
    return "pass --python {}".format(shell_word(python))


def shell_word(text):
    return '"{}"'.format(text) if " " in text else text


def refuse_a_python_that_cannot_run_the_hooks(python, given):
    """An interpreter that is on this machine but cannot run the hooks is
    refused before anything is written; so is the default when it is missing
    (the hooks would fail with exit 127 at every session). A --python that is
    not on this machine at all is refused by the command line unless it is allowed (it may be
    for another machine); plan_interpreter_note then says so."""
    program = interpreter_program(python)
    if given and shutil.which(os.path.expanduser(program)) is None:
        return
    problem = why_interpreter_fails("{} {}".format(python, HOOK_FLAGS))
    if problem:
        raise Refusal("{} {} {}, so the hooks would not run; {}".format(
            "--python" if given else "the default interpreter", python, problem, instead()))


def why_the_interpreter_is_missing(python):
    """Why the program an interpreter command starts is not on this machine, as a clause naming
    it; None when it is there."""
    program = interpreter_program(python)
    if shutil.which(os.path.expanduser(program)) is not None:
        return None
    return "{} {}".format(program, "does not exist on this machine" if re.search(r"[/\\]", program)
                          else "is not on this machine's PATH")


def interpreter_program(python):
    """The program an interpreter command starts (past NAME=value words)."""
    words = shlex.split(python)  # check_interpreter let through only what sh reads this way
    return next((word for word in words if not re.match(r"[A-Za-z_]\w*=", word)), words[0])


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
