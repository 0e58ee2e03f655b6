"""A run's changes, worked out in full before the first one is made, then made all together.

Why it exists: the installer's central promise is that a refused run changes nothing and a run
that starts its changes makes them all. A Plan collects every change as a Step (one line of output
and one callable), refuses unsafe ones while it is being built (a symbolic link on the way, a
read-only file), and carry_out() prints and makes them in order; a write that fails anyway names
how many were made. HeldInterrupts holds Ctrl-C until the last change is made.
"""

import os
import signal

from .errors import Refusal
from .files import (
    Owners, file_mode_for, lstat_or_none, owner_of, remove_path, why_unsafe_to_change,
    why_unwritable, write_atomically,
)

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
        self.first_changes = 0  # how many steps at the start must come before all others
        self.edited = []  # the protocol's files the user edited, kept for want of --force
        self.clashes = []  # files of the user's under the protocol's names, never taken over
        self.planned = {}  # rel -> the bytes the run writes there
        self.agents = []  # the agents besides Claude Code the run installs or updates
        self.grantable = []  # the Skill rules the run may add to settings.json (see project.py)

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

    def change(self, verb, rel, note, change, shown=None, first=False):
        """A change of the file at rel; first: before every change planned without first (the
        record of what the run adds, which must be written before anything it speaks of)."""
        reason = why_unsafe_to_change(self.root, rel, shown, removing=verb == "remove") \
            or why_unwritable(self.root, rel, shown)
        if reason:
            self.refuse(reason)
            return
        step = Step(verb, shown or rel, note, change)
        if first:
            self.steps.insert(self.first_changes, step)
            self.first_changes += 1
        else:
            self.steps.append(step)

    def write(self, verb, rel, data, note="", executable=False, shown=None, whole=False,
              mode=None, first=False):
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
            path, data, mode, self.owners, keep_links=not whole), shown, first)

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
