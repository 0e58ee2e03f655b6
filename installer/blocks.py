"""Marked blocks: the protocol's lines in .gitignore and its section in the user's CLAUDE.md.

Why it exists: both live in files of the user's, between a begin and an end marker, among lines
the installer must never touch. This module finds a block (also one whose marker was deleted, by
the block's own lines next to the remaining marker), restores or replaces it keeping the lines
the user wrote inside it, takes it out again so that the file reads as before, and in .gitignore
takes over the bash edition's snippet in place, so no line is listed twice.
"""

import re

from .errors import Refusal
from .files import newline_of


def line_texts(lines):
    return [line.strip() for line in lines]


# The bash edition's .gitignore snippet: the first marker line of the
# protocol's block, then these lines, and no end marker.
BASH_EDITION_GITIGNORE = (".claude/session-state.md", ".claude/hooks/.session-baseline",
                          ".claude/settings.local.json", ".claude/worktrees/")


def find_marked_block(lines, block, repairable, also=(), texts=None):
    """(start, stop) of the block between its marker lines, stop exclusive.
    When repairable, a block whose begin or end marker was deleted is still
    found by the block's own lines next to the remaining marker: in their
    order, each at most once, so no line of the user's is taken for one.
    The lines of also (in their order) count as the block's own there too.
    texts: the lines as they are to be matched (line_texts() by default)."""
    texts = line_texts(lines) if texts is None else texts
    begin, end = block[0], block[-1]
    body = in_order_with(block[1:-1], also) if repairable else []
    if begin in texts:
        start = texts.index(begin)
        if end in texts[start + 1:]:
            return start, texts.index(end, start + 1) + 1
        return start, start + 1 + leading_lines_in_order(texts[start + 1:], body)
    if end in texts:
        stop = texts.index(end) + 1
        return stop - 1 - leading_lines_in_order(texts[:stop - 1][::-1], body[::-1]), stop
    return None


def in_order_with(body, other):
    """body with the lines of other it lacks, each put before the next line of
    other that body holds: both are then in order in the result."""
    merged = list(body)
    for index, line in enumerate(other):
        if line not in merged:
            following = [later for later in other[index + 1:] if later in merged]
            merged.insert(merged.index(following[0]) if following else len(merged), line)
    return merged


def is_the_bash_editions_snippet(texts, block):
    """Whether the lines found as the block are the bash edition's snippet: no
    end marker, and a line only that edition writes."""
    return block[-1] not in texts and \
        any(line in texts for line in BASH_EDITION_GITIGNORE if line not in block)


def leading_lines_in_order(texts, body):
    """How many of the first texts are lines of body, in body's order."""
    count, position = 0, 0
    for text in texts:
        if text not in body[position:]:
            break
        position = body.index(text, position) + 1
        count += 1
    return count


def lines_not_in_block(lines, block):
    """The lines of a found block that are not the block's own (lines the user
    wrote between the markers), in order."""
    own = list(block)
    kept = []
    for line in lines:
        if line.strip() in own:
            own.remove(line.strip())
        else:
            kept.append(line)
    return kept


def appended(text, block):
    """The text with the block added at its end, on lines of its own."""
    newline = newline_of(text)
    if text and not text.endswith("\n"):
        text += newline
    return text + "".join(line + newline for line in block)


def with_block(text, block):
    """(new text, 'append' | 'replace' | 'take over' | None) for a .gitignore
    holding the block once. A block that lost lines or a marker is restored;
    lines the user wrote inside it stay, just after it. The bash edition's
    snippet becomes the block in its place, so no line is listed twice."""
    lines = text.splitlines(True)
    span = find_marked_block(lines, block, repairable=True, also=BASH_EDITION_GITIGNORE)
    if span is None:
        return appended(text, block), "append"
    start, stop = span
    texts = line_texts(lines[start:stop])
    left = what_the_bash_edition_left(line_texts(lines[stop:]), block) \
        if texts[-1] == block[-1] else []
    if texts == block and not left:
        return text, None
    if not left and not is_the_bash_editions_snippet(texts, block):
        return replaced(text, span, block, lines_not_in_block(lines[start:stop], block)), "replace"
    own = list(block) + [line for line in BASH_EDITION_GITIGNORE if line not in block] + left
    stop += len(left)
    return replaced(text, (start, stop), block, lines_not_in_block(lines[start:stop], own)), \
        "take over"


def what_the_bash_edition_left(texts, block):
    """The lines of the bash edition's snippet an earlier release left just
    after the block it restored in the snippet's place: from the line only
    that edition writes on, in the snippet's order. The block covers each."""
    own = [line for line in BASH_EDITION_GITIGNORE if line not in block]
    tail = list(BASH_EDITION_GITIGNORE[BASH_EDITION_GITIGNORE.index(own[0]):])
    if not texts or texts[0] != tail[0]:
        return []
    return texts[:leading_lines_in_order(texts, tail)]


def replaced(text, span, block, kept):
    """The text with the lines in span replaced by the block, then the kept lines."""
    lines = text.splitlines(True)
    wanted = [line + newline_of(text) for line in block]
    return "".join(lines[:span[0]] + wanted + kept + lines[span[1]:])


def with_final_newline_as(old, new):
    """The new text ending in a line break only if the old one did (an empty
    old text counts as ending in one)."""
    if old and not old.endswith("\n") and new.endswith("\n"):
        return new[:-2] if new.endswith("\r\n") else new[:-1]
    return new


def without_block(text, block):
    """The text without the block (lines the user wrote inside it stay);
    None when there is no block. The bash edition's snippet is that edition's
    and stays."""
    lines = text.splitlines(True)
    span = find_marked_block(lines, block, repairable=True, also=BASH_EDITION_GITIGNORE)
    if span is None or is_the_bash_editions_snippet(line_texts(lines[span[0]:span[1]]), block):
        return None
    start, stop = span
    return "".join(lines[:start] + lines_not_in_block(lines[start:stop], block) + lines[stop:])


def with_section(text, section, shown):
    """(new text, 'append' | 'replace' | None) for a CLAUDE.md holding the
    section once (text None: there is no file yet). A section added to text
    is set off so that without_section() can give the text back exactly."""
    span = section_span(text or "", section, shown)
    if span is None:
        return with_section_appended(text, section), "append"
    lines = (text or "").splitlines(True)
    if line_texts(lines[span[0]:span[1]]) == section:
        return text, None
    return replaced(text, span, section, []), "replace"


def section_span(text, section, shown):
    """(start, stop) of the section's lines in text; None when it has none. It
    must hold both markers or neither: a lone marker is the user's to repair.
    A marker inside a fenced code block is an example of the user's, not one."""
    begin, end = section[0], section[-1]
    texts = outside_code_fences(text.splitlines(True))
    if (begin in texts) != (end in texts) or \
            (begin in texts and texts.index(end) < texts.index(begin)):
        raise Refusal("{} has only one of the protocol's markers ({} / {}); "
                      "repair it by hand".format(shown, begin, end))
    return find_marked_block(text.splitlines(True), section, repairable=False, texts=texts)


# A Markdown code fence: three or more backticks or tildes, indented by at most three spaces.
CODE_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


def outside_code_fences(lines):
    """line_texts() of the lines, with None for each line of a fenced code block (its fences
    included): what a Markdown reader shows as code is text, never a marker."""
    texts, fence = [], None
    for line in lines:
        match = CODE_FENCE.match(line)
        if fence is None and match and not (match.group(1)[0] == "`" and
                                            "`" in line[match.end():]):
            fence = match.group(1)
            texts.append(None)
        elif fence is not None:
            closing = match.group(1) if match else ""
            if closing[:1] == fence[0] and len(closing) >= len(fence) and \
                    not line[match.end():].strip():
                fence = None
            texts.append(None)
        else:
            texts.append(line.strip())
    return texts


def with_section_appended(text, section):
    """The section alone for a new file; else after the text and one line
    break more than it ends with: a blank line after a final line break, the
    missing line break otherwise (an empty file gets a blank line)."""
    newline = newline_of(text or "")
    body = "".join(line + newline for line in section)
    if text is None:
        return body
    return text + newline + body


def without_section(text, section, shown):
    """(the text without the section and what with_section_appended() set it
    off with, the section's text); None when there is no section. '' for a
    file --global created: it held the section alone."""
    span = section_span(text, section, shown)
    if span is None:
        return None
    lines = text.splitlines(True)
    before, after = "".join(lines[:span[0]]), "".join(lines[span[1]:])
    newline = newline_of(text)
    if not after and before.endswith(newline):
        before = before[:-len(newline)]
    return before + after, "".join(lines[span[0]:span[1]])
