"""The smallest edit of a JSON text that makes it hold new data.

Why it exists: a settings.json is the user's file, written by hand, with their key order, layout,
escapes and number spellings. The installer must add and remove its entries without rewriting the
rest, so that --uninstall after --project gives the file back byte for byte. This module finds
where each value of the text starts and ends (the text has already passed the settings parser,
the authority on what is valid) and changes only the values that differ, writing what it adds
in the layout of the object or list it joins.
"""

import difflib
import json
import re

from .files import newline_of

# Where each value of a settings text lies, so that a change touches only its
# own characters. The text has already passed parse_settings(), the authority
# on what is valid: this reader only finds where things start and end.
JSON_SPACE = re.compile(r"[ \t\r\n]*")
JSON_SCALAR = re.compile(r'"(?:[^"\\]|\\.)*"|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?'
                         r"|true|false|null", re.S)
LINE_INDENT = re.compile(r"[ \t]*")


class Span(object):
    """One value of the text: [start, end), "object", "array" or "scalar",
    a container's entries in their order, and the container holding it."""

    def __init__(self, start, end, kind, entries=()):
        self.start, self.end, self.kind, self.entries = start, end, kind, list(entries)
        self.parent = None
        for entry in self.entries:
            entry.value.parent = self


class Entry(object):
    """A member of an object (its key, where the key starts and ends) or an
    element of a list (no key; it starts where its value does)."""

    def __init__(self, key, start, key_end, value):
        self.key, self.start, self.key_end, self.value = key, start, key_end, value


def span_of_value(text, at):
    at = JSON_SPACE.match(text, at).end()
    if text[at] in "{[":
        return span_of_container(text, at)
    return Span(at, JSON_SCALAR.match(text, at).end(), "scalar")


def span_of_container(text, at):
    is_object = text[at] == "{"
    closer = "}" if is_object else "]"
    entries = []
    here = JSON_SPACE.match(text, at + 1).end()
    while text[here] != closer:
        key, start, key_end = None, here, here
        if is_object:
            key_end = JSON_SCALAR.match(text, here).end()
            key = json.loads(text[here:key_end])
            here = JSON_SPACE.match(text, key_end).end() + 1
        value = span_of_value(text, here)
        entries.append(Entry(key, start, key_end, value))
        here = JSON_SPACE.match(text, value.end).end()
        if text[here] == ",":
            here = JSON_SPACE.match(text, here + 1).end()
    return Span(at, here + 1, "object" if is_object else "array", entries)


class Layout(object):
    """How a container is written, so that what is added to it looks like
    what is there: on one line or not, the text between two entries, between
    a key and its value, the indentation of an entry's line and of the line
    the container opens on, and one level of indentation."""

    def __init__(self, one_line, between, colon, indent, outer, unit):
        self.one_line, self.between, self.colon = one_line, between, colon
        self.indent, self.outer, self.unit = indent, outer, unit


class SettingsEdit(object):
    """The smallest text change that makes a settings text hold new data."""

    def __init__(self, text, ensure_ascii):
        self.text = text
        self.ensure_ascii = ensure_ascii
        self.newline = newline_of(text)
        self.root = span_of_value(text, 0)
        self.unit = self.first_found(self.root, self.indent_unit) or "  "
        self.between = self.first_found(self.root, self.one_line_between) or ", "
        self.colon = self.first_found(self.root, self.one_line_colon) or ": "
        self.changes = []

    def text_holding(self, data):
        self.change_value(self.root, data, None)
        text = self.text
        for start, end, new in sorted(self.changes, key=lambda change: change[:2], reverse=True):
            text = text[:start] + new + text[end:]
        return text

    def change_value(self, span, value, layout):
        """Record the changes that make the value at span read as value."""
        if span.kind == "object" and isinstance(value, dict):
            self.change_object(span, value)
        elif span.kind == "array" and isinstance(value, list):
            self.change_array(span, value)
        elif canonical_json(json.loads(self.text[span.start:span.end])) != canonical_json(value):
            self.changes.append((span.start, span.end, self.rendered(value, layout)))

    def change_object(self, span, value):
        kept = [index for index, entry in enumerate(span.entries) if entry.key in value]
        for index in kept:
            entry = span.entries[index]
            self.change_value(entry.value, value[entry.key], self.layout_of(span))
        present = set(entry.key for entry in span.entries)
        added = [(key, item) for key, item in value.items() if key not in present]
        anchor = kept[-1] if kept else None
        self.change_entries(span, kept, {anchor: added} if added else {})

    def change_array(self, span, value):
        """Elements are matched by their meaning; an element that takes the
        place of another is edited in place, so a changed handler changes
        only where it differs."""
        old = [canonical_json(json.loads(self.text[entry.value.start:entry.value.end]))
               for entry in span.entries]
        new = [canonical_json(item) for item in value]
        kept, added, anchor = [], {}, None
        matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
        for _, old_start, old_end, new_start, new_end in matcher.get_opcodes():
            paired = min(old_end - old_start, new_end - new_start)
            for offset in range(paired):
                entry = span.entries[old_start + offset]
                self.change_value(entry.value, value[new_start + offset], self.layout_of(span))
                kept.append(old_start + offset)
                anchor = old_start + offset
            for item in value[new_start + paired:new_end]:
                added.setdefault(anchor, []).append((None, item))
        self.change_entries(span, kept, added)

    def change_entries(self, span, kept, added):
        """Take out the entries not kept, each with its separator and its own
        line, and put the added ones (key, value) after the kept entry they
        follow (None: before the first)."""
        layout = self.layout_of(span)
        entries = span.entries
        texts = dict((anchor, [self.rendered_entry(key, item, layout) for key, item in pairs])
                     for anchor, pairs in added.items())
        if not kept:
            if entries or texts:
                self.changes.append((span.start + 1, span.end - 1,
                                     self.interior(texts.get(None, []), layout)))
            return
        first = kept[0]
        if first > 0:
            self.changes.append((entries[0].start, entries[first].start, ""))
        for index in range(first + 1, len(entries)):
            if index not in kept:
                self.changes.append((entries[index - 1].value.end, entries[index].value.end, ""))
        for anchor, new in texts.items():
            if anchor is None:
                point = entries[first].start
                self.changes.append((point, point, "".join(text + layout.between for text in new)))
            else:
                point = entries[anchor].value.end
                self.changes.append((point, point, "".join(layout.between + text for text in new)))

    def interior(self, texts, layout):
        """What goes between the brackets of a container holding only texts."""
        if not texts:
            return ""
        if layout.one_line:
            return layout.between.join(texts)
        step = self.newline + layout.indent
        return step + ("," + step).join(texts) + self.newline + layout.outer

    def rendered_entry(self, key, value, layout):
        text = self.rendered(value, layout)
        if key is None:
            return text
        return json.dumps(key, ensure_ascii=self.ensure_ascii) + layout.colon + text

    def rendered(self, value, layout):
        """The value written as a new entry of a container of that layout."""
        if layout is None or layout.one_line:
            between = layout.between if layout else ", "
            return json.dumps(value, ensure_ascii=self.ensure_ascii,
                              separators=(between, layout.colon if layout else ": "))
        text = json.dumps(value, indent=layout.unit, ensure_ascii=self.ensure_ascii,
                          separators=(",", layout.colon))
        return text.replace("\n", self.newline + layout.indent)

    def layout_of(self, span):
        text, entries = self.text, span.entries
        outer = self.line_indent(span.start)
        # An empty container takes the layout of the one holding it; the
        # whole document, when empty, opens over several lines.
        one_line = "\n" not in text[span.start:span.end] and bool(entries or (
            span.parent and "\n" not in text[span.parent.start:span.parent.end]))
        unit = self.indent_unit(span) or self.unit
        indent = self.line_indent(entries[0].start) if entries and not one_line else outer + unit
        if len(entries) > 1:
            between = text[entries[0].value.end:entries[1].start]
        else:
            between = self.between if one_line else "," + self.newline + indent
        colon = self.one_line_colon(span) or self.colon
        return Layout(one_line, between, colon, indent, outer, unit)

    def line_indent(self, at):
        """The whitespace that opens the line holding position at."""
        line = self.text.rfind("\n", 0, at) + 1
        return LINE_INDENT.match(self.text, line, at).group()

    def indent_unit(self, span):
        """How much deeper a multi-line container indents its entries than the
        line it opens on; None when that cannot be read from it."""
        if not span.entries or "\n" not in self.text[span.start:span.entries[0].start]:
            return None
        outer = self.line_indent(span.start)
        inner = self.line_indent(span.entries[0].start)
        if len(inner) > len(outer) and inner.startswith(outer):
            return inner[len(outer):]
        return None

    def one_line_between(self, span):
        """What separates two entries of a container, where it is one line."""
        if len(span.entries) < 2:
            return None
        between = self.text[span.entries[0].value.end:span.entries[1].start]
        return None if "\n" in between else between

    def one_line_colon(self, span):
        """What separates an object's first key from its value, where that is
        on one line."""
        if span.kind != "object" or not span.entries:
            return None
        entry = span.entries[0]
        colon = self.text[entry.key_end:entry.value.start]
        return None if "\n" in colon else colon

    def first_found(self, span, read):
        """What read() tells of the first container (in text order) it tells
        anything of: the document's habit where a container has none."""
        if span.kind == "scalar":
            return None
        found = read(span)
        for entry in span.entries:
            if found:
                break
            found = self.first_found(entry.value, read)
        return found


def canonical_json(value):
    """A value as text that tells 1, 1.0 and true apart, key order aside."""
    return json.dumps(value, sort_keys=True)
