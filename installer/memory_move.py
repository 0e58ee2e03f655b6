"""--update's move of a memory kept in the stamped format to the team format.

Why it exists: a memory written by an earlier release rewrites lines at every save (the index's
`Last dream` and Active Context, each file's `Last updated`), so teammates' saves on their
branches collide in git. memory_format.py, beside install.py, works out the move as texts; this
module plans their writes like every other change of the run: refused through a symlink or into
a file it may not write, printed one line per file, made with the run's other changes or not at
all. Only --update moves a memory; --project leaves what a project holds as it is, and --check
reports the move as something --update would do.
"""

import datetime
import os

from .errors import Refusal
from .files import encode_text, read_bytes
from .protocol import MEMORY_INDEX

MEMORY_FORMAT = "memory_format.py"


def plan_memory_format_move(plan, owned, source):
    """A write for each memory file the move changes, and one for the file that takes the index's
    Active Context; nothing for a memory already in the team format, or none at all. An index
    the protocol wrote and nobody edited stays the protocol's once moved (owned: the ownership
    record), so --uninstall still takes it away."""
    folder = plan.path(os.path.dirname(MEMORY_INDEX))
    if not os.path.isdir(folder) or os.path.islink(folder):
        return
    move = source.module(MEMORY_FORMAT, "mcp_memory_format", ("changes",))
    index = os.path.basename(MEMORY_INDEX)
    changes = move.changes(folder, index, datetime.date.today().isoformat())
    for name in sorted(changes, key=lambda name: (name != index, name)):
        rel = os.path.dirname(MEMORY_INDEX) + "/" + name
        exists = os.path.lexists(plan.path(rel))
        if exists and not is_readable_text(plan.path(rel), rel):
            plan.refuse("{} is there but cannot be read as UTF-8 text, and the memory's move "
                        "would write it: move it away, then run --update again".format(rel))
            continue
        if rel == MEMORY_INDEX and owned.owns(rel, read_bytes(plan.path(rel), rel)):
            owned.own(rel, encode_text(changes[name]))
        plan.write("replace" if exists else "write", rel, encode_text(changes[name]),
                   what_the_move_did(name, index, exists))


def is_readable_text(path, rel):
    """Whether the file holds UTF-8 text the move could have read: it never writes over one it
    could not read."""
    try:
        data = read_bytes(path, rel)
        (data or b"").decode("utf-8")
    except (Refusal, UnicodeDecodeError):
        return False
    return True


def what_the_move_did(name, index, exists):
    if not exists:
        return "the index's Active Context, line for line, for the team format"
    if name == index:
        return "to the team format: no Last dream stamp, the Active Context moved to a file it links"
    return "to the team format: no Last updated stamp, dated facts a blank line apart"
