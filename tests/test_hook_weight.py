"""The hooks' weight: compiled at every event and carried whole by the init prompt, so it is a
cost every session pays. The four files together stay within 180 KB (of 1,000 bytes), no function
within them runs over 45 lines, and the two files the harness runs (compiled at each event) stay
small."""
import ast

import pytest

from conftest import HOOK_NAMES, HOOKS

TOTAL_LIMIT = 180_000  # 180 KB, a KB being 1,000 bytes here
FUNCTION_LINES = 45
ENTRY_LIMIT = 8 * 1024  # session-start.py and stop-handoff.py, compiled at every event


def long_functions(source):
    """(name, lines) of every function longer than FUNCTION_LINES, its docstring included."""
    tree = ast.parse(source)
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > FUNCTION_LINES]


def test_the_four_hooks_stay_within_their_weight():
    total = sum(len((HOOKS / name).read_bytes()) for name in HOOK_NAMES)
    assert total <= TOTAL_LIMIT, "the hooks weigh %d bytes" % total


@pytest.mark.parametrize("name", ["session-start.py", "stop-handoff.py"])
def test_the_files_the_harness_runs_stay_small(name):
    assert len((HOOKS / name).read_bytes()) <= ENTRY_LIMIT


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_no_function_runs_over_its_lines(name):
    assert long_functions((HOOKS / name).read_text(encoding="utf-8")) == []


def test_the_line_count_is_seen_to_fire():
    body = "\n".join("    x = %d" % n for n in range(FUNCTION_LINES))
    assert long_functions("def long():\n" + body + "\n") == [("long", FUNCTION_LINES + 1)]
    assert long_functions("def short():\n    return 1\n") == []
