"""The one way the installer and memory_health.py run git, hardened against the repository.

Why it exists: `install.py --check` runs on repositories nobody has trusted yet, and a
repository's own configuration (.git/config, which may come in an archive or on a shared disk)
can name programs that git starts on its behalf. Every git command goes through run_git(), which
takes that power away: no fsmonitor program (core.fsmonitor), no hooks (core.hooksPath), no pager,
no signature program for log, and no optional locks; callers of diff-family commands add
NO_DIFF_PROGRAMS (no external diff, no textconv). Callers use plumbing that reads no work-tree
content (ls-files, cat-file blob, check-attr, check-ignore, rev-parse, update-index --cacheinfo,
log --name-status), but a command that writes the index re-reads a file that looks racily clean,
through its filter driver: so every filter driver the configuration names is switched off on the
command line as well (filters_off). Variables that point git at
another repository (GIT_DIR and the like, set when install.py runs inside a git hook) are dropped,
so `-C project` decides. Messages are in English (LC_ALL=C), for callers that read them. Ctrl-C at
the terminal does not reach git, and a git that gives no answer within the time limit counts as
no answer, so no step can hang.

The user's own git configuration (system and global) is kept: it is theirs, and may be what lets
git read a repository at all (safe.directory).

This module imports nothing from the installer, so memory_health.py loads it by its path as well.
"""

import os
import subprocess

# How long one git command may take by default; a repository of 100,000 files answers in well
# under a second.
GIT_TIMEOUT_SECONDS = 30

# Options before the command that take from the repository's configuration every program it
# could make git start, and every file it could make git write. They come on the command line,
# which outranks every configuration file.
HARDENED = (
    "--no-pager",                       # and so no core.pager / pager.<command> program
    "--no-optional-locks",              # a read never takes or refreshes the index lock
    "-c", "core.fsmonitor=false",       # the fsmonitor program a .git/config may name
    "-c", "core.hooksPath=" + os.devnull,  # no hook, whatever the command
    "-c", "log.showSignature=false",    # no gpg.program on log
    "-c", "core.quotepath=off",         # paths as they are, for callers that read them
)

# For diff-family commands (diff, log, show): no diff.external or diff.<driver>.command program,
# and no textconv filter. A diff.external set to the empty string on the command line would not
# do: git then tries to run a program named "".
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")

# Variables that point git at another repository, index or object store than the folder given
# with -C: git sets them for its own hooks, so install.py run from one would be told about the
# repository the hook runs in.
ELSEWHERE = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
             "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE",
             "GIT_PREFIX")


# Filter drivers the configuration names, by repository: listed once per run (filters_off).
FILTERS_OFF = {}


def git(project, *args):
    """(exit code, stdout) of a git command in project; (None, '') without git."""
    code, out = git_bytes(project, *args)
    return code, out.decode("utf-8", "replace")


def git_bytes(project, *args, **options):
    """git() with stdout as bytes; (None, b'') as well when git gives no answer in time (a lock
    it waits on), for no step may hang the run. options: those of run_git()."""
    try:
        done = run_git(project, args, **options)
    except (OSError, subprocess.TimeoutExpired):
        return None, b""
    return done.returncode, done.stdout


def run_git(project, args, timeout=None, stdin=None):
    """The completed git command, hardened (HARDENED), its messages in English on stderr; stdin
    is bytes fed to it, or nothing. Raises OSError without git and TimeoutExpired when it gives
    no answer within timeout seconds (GIT_TIMEOUT_SECONDS by default)."""
    timeout = GIT_TIMEOUT_SECONDS if timeout is None else timeout
    off = filters_off(project, timeout)
    if not isinstance(off, tuple):  # git failed to list them: its answer is the command's
        return off
    return run_hardened(("git",) + HARDENED + off + ("-C", project) + tuple(args), timeout, stdin)


def run_hardened(command, timeout, stdin=None):
    options = dict(stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=git_environment(),
                   timeout=timeout, **apart_from_the_terminal())
    if stdin is None:
        return subprocess.run(command, stdin=subprocess.DEVNULL, **options)
    return subprocess.run(command, input=stdin, **options)


def filters_off(project, timeout):
    """`-c` options that switch off every filter driver git's configuration names for the
    repository at project (its clean, smudge and process programs empty, so none runs, and
    none required). A driver's program runs whenever git reads a file's content from the work
    tree, which even update-index --cacheinfo does for a file that looks racily clean, and a
    repository's .git/config can name any program. Listed only where the repository's
    configuration may define one (repository_may_name_filters). When git fails to list them,
    the completed listing instead, whose exit code and messages then stand for the command's,
    which does not run."""
    if project not in FILTERS_OFF and not repository_may_name_filters(project):
        FILTERS_OFF[project] = ()
    if project not in FILTERS_OFF:
        done = run_hardened(("git",) + HARDENED + ("-C", project, "config", "-z",
                                                   "--get-regexp", r"^filter\."), timeout)
        if done.returncode not in (0, 1):  # 1: no filter driver at all
            return done
        drivers = set()
        for entry in done.stdout.split(b"\0"):
            key = entry.split(b"\n", 1)[0].decode("utf-8", "surrogateescape")
            if key.count(".") >= 2:
                drivers.add(key[len("filter."):key.rindex(".")])
        FILTERS_OFF[project] = tuple(
            option for driver in sorted(drivers)
            for name, value in (("clean", ""), ("smudge", ""), ("process", ""),
                                ("required", "false"))
            for option in ("-c", "filter.{}.{}={}".format(driver, name, value)))
    return FILTERS_OFF[project]


def repository_may_name_filters(project):
    """Whether the configuration of the repository around project may define a filter driver,
    so that they must be listed (one git call): its .git/config mentions a filter or includes
    another file or a worktree's, the repository is a linked worktree or a submodule (a .git
    file; its configuration lies elsewhere), or configuration comes through the environment.
    Outside a repository git reads only the user's own configuration."""
    if any(key.startswith("GIT_CONFIG") for key in os.environ):
        return True
    folder = repository_top(project)
    if folder is None:
        return False
    config = os.path.join(folder, ".git", "config")
    if not os.path.isdir(os.path.join(folder, ".git")) or not os.path.isfile(config):
        return True
    try:
        with open(config, "rb") as handle:
            text = handle.read(CONFIG_READ_LIMIT + 1).lower()
    except OSError:
        return True
    return len(text) > CONFIG_READ_LIMIT or any(
        word in text for word in (b"filter", b"include", b"worktreeconfig"))


# A .git/config larger than this is not searched: its filter drivers are listed by git.
CONFIG_READ_LIMIT = 1024 * 1024


def git_environment():
    """This process's environment for git: English messages, no optional locks, no prompt for
    credentials, and nothing that points it away from the folder it is given."""
    env = dict((key, value) for key, value in os.environ.items() if key not in ELSEWHERE)
    env.update(LC_ALL="C", GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0")
    return env


def apart_from_the_terminal():
    """How to start a child that a Ctrl-C at the terminal does not reach. The terminal sends
    it to the whole foreground process group; the run holds it until its changes are made
    (HeldInterrupts), and a git killed by it half-way would leave that promise broken. A
    second Ctrl-C still ends the run, and subprocess.run then ends the child."""
    if os.name == "nt":
        return {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return {"start_new_session": True}


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
