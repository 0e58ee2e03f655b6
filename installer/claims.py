"""The shared record read as claims: whatever git left of it, merged or conflicted, and nothing
in it believed before it is checked.

Why it exists: the record (record.py) is committed, so anyone's pull request can change it, and a
change to it alone is easy to miss in review. Yet what it says decides what the installer
replaces, removes and grants. So it is read as what it is, a list of claims, and a claim counts
only where the installer could have made it (Ownership does the checking, with what this module
reads):
- a file is the protocol's only for a digest of bytes the installer writes: this version's
  (rendered for an interpreter the project's entries name), or a version a release shipped;
- a deny rule only with the .claudeignore line the installer makes that rule of;
- nothing is the protocol's that the local record (what was here before the first install on
  this machine) shows the user had before.
Anything else is the user's, as if the record did not name it.

And it must read what git makes of a committed file: two branches that each installed or updated
merge into one text that may hold both sides of a conflict (`<<<<<<<`, `=======`, `>>>>>>>`, and
diff3's `|||||||` base), the same key twice, or a comma lost where both sides added a line. Every
side is read and the claims of all of them are taken together: each is still checked before it
is believed, so taking both sides never makes the installer own more than it could have written.
The next writing run writes the record whole again.
"""

import json
import re

# git's conflict markers, alone at the start of a line (a label may follow)
OPENING = re.compile(r"<{7}(?: .*)?\Z")
BASE = re.compile(r"\|{7}(?: .*)?\Z")
SEPARATOR = re.compile(r"={7}\Z")
CLOSING = re.compile(r">{7}(?: .*)?\Z")

# A value's end, then a line that starts another: the comma a line merge can lose between them.
LOST_COMMA = re.compile(r'(["\]}0-9el])([ \t]*\r?\n[ \t]*["{\[])')
# A comma before a closing bracket: what a line merge leaves where one side's last line went.
EXTRA_COMMA = re.compile(r",(\s*[}\]])")


class Claims(object):
    """What a record says, each kind of claim as a set (a merged record may claim two digests
    for one file): files {path: {digest}}, hooks {event}, allow {rule}, deny {rule: {line}},
    created {file}, wired {hooks file: {event}}, containers {path}. `whole`: the bytes were one
    record as the installer writes it (no conflict, no repair, nothing left out)."""

    def __init__(self):
        self.files, self.deny, self.wired = {}, {}, {}
        self.hooks, self.allow, self.created, self.containers = set(), set(), set(), set()
        self.whole = True
        self.conflicted = False  # git's conflict markers were in it

    def take(self, found):
        """Add the claims of one parsed record (a dict); what is not a claim is left out, and
        then the record is not whole."""
        def strings(value):
            if isinstance(value, str):
                return [value]
            if isinstance(value, list) and all(isinstance(item, str) for item in value):
                return value
            self.whole = False
            return []

        def mapping(value):
            if isinstance(value, dict):
                return value
            self.whole = False
            return {}

        for rel, digests in mapping(found.get("files", {})).items():
            self.files.setdefault(rel, set()).update(strings(digests))
        for rule, lines in mapping(found.get("deny", {})).items():
            self.deny.setdefault(rule, set()).update(strings(lines))
        for rel, events in mapping(found.get("wired", {})).items():
            self.wired.setdefault(rel, set()).update(strings(events))
        for key in ("hooks", "allow", "created", "containers"):
            getattr(self, key).update(strings(found.get(key, [])))


def read_claims(data, record_format):
    """The Claims of a record's bytes, read however git left them; None when no side of them is
    a record of record_format (the file is then not the installer's)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    text = text.lstrip("\ufeff")
    sides = sides_of(text)
    claims = Claims()
    claims.conflicted = len(sides) > 1
    claims.whole = not claims.conflicted
    read_any = False
    for side in sides:
        found, mended = parsed(side)
        if not isinstance(found, dict) or found.get("format") != record_format:
            continue
        read_any = True
        claims.whole = claims.whole and not mended
        claims.take(found)
    return claims if read_any else None


def sides_of(text):
    """The texts git's conflicts in text stand for: [text] when it holds none, else [the text
    with each conflict's first side, the text with its last side]. A diff3 base is what both
    sides changed, and goes."""
    first, last = [], []
    state = None
    conflicted = False
    for line in text.splitlines(True):
        bare = line.rstrip("\r\n")
        if state is None and OPENING.match(bare):
            state, conflicted = "first", True
        elif state == "first" and BASE.match(bare):
            state = "base"
        elif state in ("first", "base") and SEPARATOR.match(bare):
            state = "last"
        elif state == "last" and CLOSING.match(bare):
            state = None
        else:
            if state in (None, "first"):
                first.append(line)
            if state in (None, "last"):
                last.append(line)
    return ["".join(first), "".join(last)] if conflicted else [text]


def parsed(text):
    """(the JSON value of text, whether it had to be mended first); (None, True) when even the
    mended text is no JSON. A key given twice keeps both values (merged_pairs); mending puts
    back a comma a line merge lost, and takes out one it left before a closing bracket."""
    try:
        return json.loads(text, object_pairs_hook=merged_pairs), False
    except (ValueError, RecursionError):
        pass
    mended = EXTRA_COMMA.sub(r"\1", LOST_COMMA.sub(r"\1,\2", text))
    try:
        return json.loads(mended, object_pairs_hook=merged_pairs), True
    except (ValueError, RecursionError):
        return None, True


def merged_pairs(pairs):
    """An object whose key given twice (two branches' lines, both kept) holds both values."""
    found = {}
    for key, value in pairs:
        found[key] = both(found[key], value) if key in found else value
    return found


def both(one, other):
    """Two values as one: objects and lists joined, two different texts as a list of both."""
    if one == other:
        return one
    if isinstance(one, dict) and isinstance(other, dict):
        joined = dict(one)
        for key, value in other.items():
            joined[key] = both(joined[key], value) if key in joined else value
        return joined
    one = one if isinstance(one, list) else [one]
    other = other if isinstance(other, list) else [other]
    return one + [item for item in other if item not in one]
