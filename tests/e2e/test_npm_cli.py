"""The end-to-end tests' CLI install says what it fetches and how big before it starts, and what it
took when done, on the first run only: measured with a stand-in npm on PATH, so no registry is
reached and nothing is downloaded."""
import os
import sys

import pytest

import npm_cli

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the stand-in npm is a script")

FAKE_NPM = """#!{python}
import os, sys
prefix = sys.argv[sys.argv.index("--prefix") + 1]
binary = os.path.join(prefix, "node_modules", ".bin", "fakecli")
os.makedirs(os.path.dirname(binary))
with open(binary, "w") as handle:
    handle.write("#!{python}\\nprint('1.2.3 (Fake CLI)')\\n")
os.chmod(binary, 0o755)
with open(os.path.join(prefix, "node_modules", "payload"), "wb") as handle:
    handle.write(b"x" * 3000000)
"""


@pytest.fixture
def fake_registry(tmp_path, monkeypatch):
    tools = tmp_path / "bin"
    tools.mkdir()
    for name, text in (("npm", FAKE_NPM.format(python=sys.executable)),
                       ("node", "#!/bin/sh\nexit 0\n")):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(tools) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("E2E_FAKE_BIN", raising=False)


def pinned():
    return npm_cli.PinnedCli("fake-cli", "@example/fake-cli", "1.2.3", "fakecli", "E2E_FAKE_BIN",
                             3)


def test_the_first_run_says_what_it_installs_and_what_it_took(fake_registry, tmp_path):
    said = []
    binary, reason = pinned().find(said.append)
    assert reason is None and binary.endswith("fakecli")
    prefix = str(tmp_path / "cache" / "memory-context-protocol" / "fake-cli-1.2.3")
    assert said[0] == ("e2e: installing @example/fake-cli@1.2.3 from the npm registry into {} "
                       "(about 3 MB; first run only, later runs reuse it; E2E_FAKE_BIN names a "
                       "binary instead)".format(prefix))
    assert said[1].startswith("e2e: installed @example/fake-cli@1.2.3: 3 MB in ")
    assert said[1].endswith(" s") and len(said) == 2


def test_a_later_run_that_reuses_the_cache_says_nothing(fake_registry):
    pinned().find(lambda text: None)
    said = []
    binary, reason = pinned().find(said.append)
    assert binary and reason is None
    assert said == []
