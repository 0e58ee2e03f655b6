#!/usr/bin/env python3
"""refresh.py - make the example project's installed files equal a fresh install.

examples/example-project/ ships with the protocol installed: the hooks, the commands, the
settings entries, the record of what the install added, .claudeignore, the .gitignore lines and
.gitattributes are exactly what `install.py --project` writes. After a change to hooks/,
commands/, templates/ or install.py they would drift; this script rebuilds them and copies them back.

How: copy the example into a temporary folder (outside any git repository, so install.py's
git steps are skipped), remove the installed files there (and the protocol's lines from
.gitignore), run `install.py --project --allow-no-git` on the copy, then copy its installed files
over the example's. memory/, CLAUDE.md, the skill and the project's own files are never touched.

Usage:
  python3 examples/refresh.py           rewrite the installed files that differ
  python3 examples/refresh.py --check   report the ones that differ and exit 1; change nothing
Standard library only; Python 3.8 or newer.
"""
import argparse
import os
import shutil
import stat
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.realpath(os.path.abspath(__file__))))
EXAMPLE = os.path.join(REPO, "examples", "example-project")
HOOKS = ("session-start.py", "context-budget.py", "prune-worktrees.py", "stop-handoff.py")
COMMANDS = ("handoff.md", "dream.md", "catchup.md", "memory-status.md", "update-context.md")
INSTALLED = tuple([".claude/hooks/" + name for name in HOOKS]
                  + [".claude/commands/" + name for name in COMMANDS]
                  + [".claude/settings.json", ".claude/memory-context-protocol.json",
                     ".claudeignore", ".gitignore", ".gitattributes"])
# What the hooks write while they run, never part of the example.
RUNTIME_NAMES = ("__pycache__", "session-state.md", ".session-state.md", "settings.local.json",
                 "worktrees")
RUNTIME_PREFIXES = (".session-baseline",)


def path_in(root, rel):
    return os.path.join(root, *rel.split("/"))


def read(path):
    with open(path, "rb") as handle:
        return handle.read()


def runtime_files(folder, names):
    return [name for name in names
            if name in RUNTIME_NAMES or name.startswith(RUNTIME_PREFIXES)]


def without_protocol_lines(gitignore, block):
    """The project's own .gitignore lines: the installer's block is cut from its end."""
    if block not in gitignore:
        return gitignore
    if not gitignore.endswith(block):
        raise SystemExit("refresh.py: the protocol's lines are not at the end of the example's "
                         ".gitignore; put them back at the end and run again")
    return gitignore[:len(gitignore) - len(block)]


def fresh_install(example, workdir, python=sys.executable):
    """A copy of the example with its installed files made by install.py; returns its path."""
    copy = os.path.join(workdir, "example-project")
    shutil.copytree(example, copy, ignore=runtime_files)
    for rel in INSTALLED:
        if rel != ".gitignore" and os.path.lexists(path_in(copy, rel)):
            os.remove(path_in(copy, rel))
    block = read(os.path.join(REPO, "templates", "gitignore"))
    gitignore = path_in(copy, ".gitignore")
    own_lines = without_protocol_lines(read(gitignore), block)
    with open(gitignore, "wb") as handle:
        handle.write(own_lines)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("MCP_", "CLAUDE_", "GIT_"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([python, os.path.join(REPO, "install.py"), "--project", copy,
                           "--allow-no-git"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, env=env)
    if done.returncode != 0:
        raise SystemExit("refresh.py: install.py failed:\n" + done.stdout + done.stderr)
    return copy


def differences(example, fresh):
    changed = []
    for rel in INSTALLED:
        mine = path_in(example, rel)
        if not os.path.isfile(mine) or read(mine) != read(path_in(fresh, rel)) \
                or is_executable(mine) != is_executable(path_in(fresh, rel)):
            changed.append(rel)
    return changed


def is_executable(path):
    if os.name == "nt":
        return True
    try:
        return bool(os.stat(path).st_mode & stat.S_IXUSR)
    except OSError:
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(prog="refresh.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="report installed files that differ and exit 1; change nothing")
    args = parser.parse_args(argv)
    workdir = tempfile.mkdtemp(prefix="example-refresh-")
    try:
        fresh = fresh_install(EXAMPLE, workdir)
        changed = differences(EXAMPLE, fresh)
        if not changed:
            print("example project already current")
            return 0
        if args.check:
            print("example project differs from a fresh install: " + ", ".join(changed))
            print("fix: python3 examples/refresh.py")
            return 1
        for rel in changed:
            target = path_in(EXAMPLE, rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(path_in(fresh, rel), target)
            shutil.copymode(path_in(fresh, rel), target)
        print("example project refreshed: " + ", ".join(changed))
        return 0
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
