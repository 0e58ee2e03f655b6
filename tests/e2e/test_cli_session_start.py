"""In the real CLI, what the SessionStart hook prints reaches the model whole, and stays within the
CLI's limit for a hook's output (10,000 UTF-16 units, beyond which the CLI sends a short preview
instead), however long the memory index grows."""
import re
import shlex
import sys

import pytest

from cli_session import injections, texts_of, utf16_units
from e2e_fixtures import Fixture, api, assert_clean, claude_binary, cli, installed  # noqa: F401
from installtools import write
from mock_api import say

pytestmark = pytest.mark.e2e

CAP = 10000  # UTF-16 units the CLI passes on inline from one hook's output


def printed_by_the_start_hook(run, token):
    return [response["stdout"] for response in run.hook_responses("SessionStart")
            if token in (response.get("stdout") or "")]


def carried_whole(body, source, printed):
    """Whether the request carries the printed text, whole, right after the CLI's marker."""
    return any(re.sub(r"^:\s*", "", segment).startswith(printed.strip())
               for segment in injections(body, source))


def test_the_whole_injection_reaches_the_model_after_the_start_marker(cli, installed):
    run = cli.run(installed.path, ["hello"], [say("Hello.")])
    assert_clean(run)
    printed = printed_by_the_start_hook(run, installed.token)
    assert len(printed) == 1, run.hook_responses("SessionStart")
    assert utf16_units(printed[0]) <= CAP
    for line in installed.pointers:
        assert line in printed[0]
    first = run.main_requests[0]
    assert carried_whole(first, "startup", printed[0]), injections(first, "startup")


def test_an_oversized_index_is_cut_within_the_cap_and_still_reaches_the_model_whole(cli, tmp_path):
    wide = ["- [Topic %03d](t%03d.md) — a clause with wide characters \U0001F642\U0001F680 in it" % (i, i)
            for i in range(500)]
    project = Fixture(tmp_path / "big")
    wide[0] += " (%s)" % project.token
    index = "# Project Memory Index\n\n## Topics\n" + "".join(line + "\n" for line in wide)
    write(project.file("memory/MEMORY.md"), index)
    project.git("commit", "-q", "-am", "a long index")

    run = cli.run(project.path, ["hello"], [say("Hello.")])
    assert_clean(run)
    printed = printed_by_the_start_hook(run, project.token)
    assert len(printed) == 1
    assert utf16_units(index) > 3 * CAP
    assert utf16_units(printed[0]) <= CAP
    assert wide[0] in printed[0]
    assert "(budget 80)" in printed[0].split("## Memory index")[0], "no budget report"
    assert carried_whole(run.main_requests[0], "startup", printed[0])


def test_the_cli_passes_10000_units_inline_and_previews_10001(cli, installed):
    """The cap the hook keeps under is the CLI's: a control hook printing exactly the cap arrives
    whole, one unit more is replaced by the CLI's preview."""
    def control(tag, units):
        text = tag + "x" * (units - 2 * len(tag)) + tag[::-1]
        assert utf16_units(text) == units
        code = "import sys; sys.stdout.write(%r)" % text
        return {"hooks": [{"type": "command", "command": "%s -c %s" % (shlex.quote(sys.executable),
                                                                        shlex.quote(code))}]}

    settings = {"hooks": {"SessionStart": [control("FITS<", CAP), control("OVER<", CAP + 1)]}}
    run = cli.run(installed.path, ["hello"], [say("Hello.")], settings=settings)
    assert_clean(run)
    everything = "\n".join(text for _, text in texts_of(run.main_requests[0]))
    assert "FITS<" in everything and "<STIF" in everything
    assert "OVER<" in everything and "<REVO" not in everything and "<persisted-output>" in everything
