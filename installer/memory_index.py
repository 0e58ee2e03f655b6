"""The memory index --project writes where there is none: one that reaches the memory already there.

Why it exists: session start shows the index and, under it, the notes of the topic folders beside
it; a Markdown file directly beside the index is reached only through a pointer line in it. A
memory/ that holds such files but no MEMORY.md (kept by hand, or by another tool) would get the
template's empty index, and no session would learn that any of its notes exist. So the index
written there is the template with one pointer line for each of them, in name order: the same
bytes for the same memory, so the record's claim to it can be checked by writing it again
(record.py), and an index the user has since added to is theirs.
"""

import os

from .protocol import MEMORY_INDEX, TEMPLATE_MEMORY
from .files import encode_text


def index_for(source, project):
    """The bytes of the index for the project's memory as it is now: the template, then a
    pointer line for each note beside it."""
    template = source.bytes_of(TEMPLATE_MEMORY)
    names = notes_beside_the_index(project)
    if not names:
        return template
    text = template.decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = ["- [{}]({})".format(name[:-3], link_target(name)) for name in names]
    return encode_text(text.rstrip("\r\n") + newline + newline + newline.join(lines) + newline)


def notes_beside_the_index(project):
    """The Markdown files directly in the index's folder that session start does not list:
    regular files, never a link, a dot file, a README (it explains the folder to people) or the
    index itself; sorted."""
    folder = os.path.join(project, *os.path.dirname(MEMORY_INDEX).split("/"))
    if os.path.islink(folder):
        return []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    names = []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or not name.lower().endswith(".md") or \
                name.lower() in ("readme.md", os.path.basename(MEMORY_INDEX).lower()):
            continue
        try:
            if entry.is_file(follow_symlinks=False):
                names.append(name)
        except OSError:
            continue
    return sorted(names, key=lambda name: (name.lower(), name))


def link_target(name):
    """A link target for a file name, in angle brackets where the name would end it early."""
    return "<{}>".format(name) if any(char in name for char in " ()<>") else name
