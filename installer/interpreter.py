"""The interpreter the hooks run with: reading it from a hook command, and probing that it works.

Why it exists: a hook command is an interpreter, its flags, then the hook's path. The installer
writes that form, reads the interpreter back from it (to keep it on --update and to name it in
the commands' text), refuses a --python that a shell would not run as written, and, before it
wires one, runs it once to learn whether it is Python 3.8 or newer and accepts the hooks' flags.
The grammar here is the one reading of what counts as a Python.
"""

import os
import re
import shlex
import shutil
import subprocess

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
