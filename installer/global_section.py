"""--global and --uninstall --global: the protocol's section in the user's CLAUDE.md.

Why it exists: the section tells the agent, in every project, how the memory works. It is added
set off from the user's text so that its removal gives the file back byte for byte; a section the
user edited is replaced or removed only with --force.
"""

import os

from .files import encode_text, read_text
from .protocol import TEMPLATE_SECTION
from .releases import RELEASED_SECTION_DIGESTS, is_a_release_of
from .plan import Plan
from .blocks import line_texts, section_span, with_section, without_section


def plan_global(source, config_dir, force):
    name = "CLAUDE.md"
    plan = Plan(config_dir)
    shown = os.path.join(config_dir, name)
    section = source.marked_template(TEMPLATE_SECTION)
    text = read_text(plan.path(name), shown)
    new_text, verb = with_section(text, section, shown)
    if verb is None:
        plan.keep(shown, "protocol section up to date")
    elif verb == "replace" and not force and not section_is_released(source, section, text):
        plan.hold(shown, "protocol section edited by you; --force replaces it")
    else:
        notes = {"append": "added the protocol section", "replace": "updated the protocol section"}
        plan.write("write" if text is None else verb, name, encode_text(new_text), notes[verb],
                   shown=shown)
    return plan


def plan_global_removal(source, config_dir, force):
    """--uninstall --global: the user's CLAUDE.md as it was before --global,
    byte for byte; the file goes only when it held the section alone. A
    section the user edited stays unless --force."""
    name = "CLAUDE.md"
    plan = Plan(config_dir)
    shown = os.path.join(config_dir, name)
    section = source.marked_template(TEMPLATE_SECTION)
    text = read_text(plan.path(name), shown)
    found = None if text is None else without_section(text, section, shown)
    if found is None:
        if text is not None:
            plan.keep(shown, "holds no protocol section")
        plan.nothing_installed = True
        return plan
    new_text, old_section = found
    if not force and line_texts(old_section.splitlines()) != section and \
            not section_is_released(source, section, text):
        plan.hold(shown, "protocol section edited by you; --force removes it")
    elif os.path.islink(plan.path(name)):  # removing the link would lose where it points
        plan.refuse("{} is a symbolic link; refusing to write through it".format(shown))
    elif new_text == "" and text.startswith(section[0]):
        plan.remove(name, "held only the protocol section", shown=shown)
    else:
        plan.write("merge", name, encode_text(new_text), "removed the protocol section",
                   shown=shown)
    return plan


def section_is_released(source, section, text):
    """Whether the protocol's section in text is one a release shipped."""
    lines = text.splitlines()
    start, stop = section_span(text, section, TEMPLATE_SECTION)
    return is_a_release_of(
        section_bytes(section), RELEASED_SECTION_DIGESTS.get(os.path.basename(TEMPLATE_SECTION), ()),
        section_bytes(lines[start:stop]))


def section_bytes(lines):
    return encode_text("".join(line.strip() + "\n" for line in lines))
