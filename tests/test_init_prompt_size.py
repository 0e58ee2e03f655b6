"""The init prompt says what pasting it costs where it is offered, and its instructions stay short:
the size paragraph at its head states the tokens of what is pasted (characters / 4, rounded up,
to the hundred) and its share of a 200,000-token context; the instructions, the part that is not
an exact copy of a file, stay under their ceiling."""
import os
import re

from installtools import REPO

PROMPT = os.path.join(REPO, "init", "claude-context-init.md")
# The instructions' ceiling, in tokens: the ten phases, the update mode and the appendix's
# directions measured 7,700 when it was set. A longer prompt is a cost every user pays.
INSTRUCTIONS_CEILING = 8000


def prompt():
    with open(PROMPT, encoding="utf-8") as handle:
        return handle.read()


def pasted(text):
    """What the user pastes: everything inside the outer fence of five backticks."""
    match = re.search(r"^`````markdown\n(.*?)^`````\n", text, re.M | re.S)
    assert match
    return match.group(1)


def stated(text):
    head = text.split("`````", 1)[0]
    match = re.search(r"^\*\*Its size\.\*\* Pasted, it is about ([\d,]+) tokens \(characters / "
                      r"4\), (\d+)% of a 200,000-token context before the agent reads a file: "
                      r"([\d,]+) of instructions and ([\d,]+) of the exact copies", head, re.M)
    assert match, "init/sync_hooks.py writes the size paragraph at the head"
    return [int(group.replace(",", "")) for group in match.groups()]


def test_the_head_states_the_tokens_of_what_is_pasted():
    text = prompt()
    tokens = -(-len(pasted(text)) // 4)
    total, share, instructions, copies = stated(text)
    assert total == int(round(tokens, -2))
    assert share == int(round(100.0 * tokens / 200000))
    assert abs(instructions + copies - total) <= 100


def test_the_instructions_stay_under_their_ceiling():
    _, _, instructions, _ = stated(prompt())
    assert instructions <= INSTRUCTIONS_CEILING
