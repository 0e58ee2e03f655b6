"""Where the end-to-end tests get the real Claude Code CLI.

A pinned release of the npm package is installed once into a cache folder and reused by every later
run: `$XDG_CACHE_HOME/memory-context-protocol/claude-code-<version>` (`~/.cache/...` when
XDG_CACHE_HOME is unset). E2E_CLAUDE_BIN names an existing `claude` binary instead, and then
nothing is installed. The pin matters: the tests key on texts the CLI writes (its hook markers, its
debug log), and those are the pinned release's.

`find_cli()` never raises: it returns the binary, or the reason it could not have one (no node or
npm, no registry, a package that does not run), which the tests print as their skip reason.
"""
import functools
import os
import shutil
import subprocess
import tempfile

PACKAGE = "@anthropic-ai/claude-code"
VERSION = "2.1.328"
INSTALL_SECONDS = 600


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memory-context-protocol")


def installed_binary(prefix):
    return os.path.join(prefix, "node_modules", ".bin", "claude")


def version_of(binary):
    """The CLI's version line ('2.1.328 (Claude Code)'), or None when it does not run."""
    try:
        done = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, universal_newlines=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def find_cli():
    """(path to the claude binary, None) or (None, why there is none); asked once per test run,
    so an install that fails is not tried again by every test module."""
    given = os.environ.get("E2E_CLAUDE_BIN")
    if given:
        return (given, None) if version_of(given) else (None, "E2E_CLAUDE_BIN=%s does not run" % given)
    prefix = os.path.join(cache_root(), "claude-code-" + VERSION)
    binary = installed_binary(prefix)
    if (version_of(binary) or "").startswith(VERSION + " "):
        return binary, None
    return install(prefix)


def install(prefix):
    """Install the pinned package beside the cache folder, then move it into place, so that an
    interrupted install is never taken for a finished one."""
    npm = shutil.which("npm")
    if not npm or not shutil.which("node"):
        return None, "node and npm are needed to install %s@%s (or set E2E_CLAUDE_BIN)" % (PACKAGE, VERSION)
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".installing-", dir=os.path.dirname(prefix))
    try:
        done = subprocess.run(
            [npm, "install", "--prefix", staging, "--no-audit", "--no-fund", "--no-save",
             "--loglevel=error", "%s@%s" % (PACKAGE, VERSION)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            universal_newlines=True, timeout=INSTALL_SECONDS)
        if done.returncode != 0:
            last = (done.stdout.strip().splitlines() or ["no output"])[-1]
            return None, "npm install %s@%s failed: %s" % (PACKAGE, VERSION, last)
        if not version_of(installed_binary(staging)):
            return None, "%s@%s installed but its claude binary does not run" % (PACKAGE, VERSION)
        shutil.rmtree(prefix, ignore_errors=True)
        os.replace(staging, prefix)
        return installed_binary(prefix), None
    except (OSError, subprocess.SubprocessError) as error:
        return None, "could not install %s@%s: %s" % (PACKAGE, VERSION, error)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
