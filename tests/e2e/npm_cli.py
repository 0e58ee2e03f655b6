"""Where the end-to-end tests get a real agent CLI: a pinned release of its npm package, installed
once into a cache folder and reused by every later run.

The cache is `$XDG_CACHE_HOME/memory-context-protocol/<name>-<version>` (`~/.cache/...` when
XDG_CACHE_HOME is unset). An environment variable per CLI (E2E_CLAUDE_BIN, E2E_CODEX_BIN,
E2E_GEMINI_BIN) names an existing binary instead, and then nothing is installed. The pin matters:
the tests key on what each CLI sends and prints, and that is the pinned release's.

`find()` never raises: it returns the binary, or the reason there is none (no node or npm, no
registry, a package that does not run), which the tests print as their skip reason. The version
probe runs with a throw-away HOME, since some CLIs write into it even to print their version.

An install takes minutes and hundreds of megabytes: it says what it fetches, from where, into
where and about how big before it starts, and how big it was and how long it took when done, so a
first run does not look like a hang; later runs, which reuse the cache, say nothing.
"""
import os
import shutil
import subprocess
import tempfile
import time

INSTALL_SECONDS = 600
PROBE_SECONDS = 120


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memory-context-protocol")


def version_of(binary):
    """The CLI's version line ('codex-cli 0.169.0'), or None when it does not run."""
    home = tempfile.mkdtemp(prefix="mcp-e2e-version-")
    env = dict(os.environ, HOME=home, CODEX_HOME=os.path.join(home, ".codex"),
               CLAUDE_CONFIG_DIR=os.path.join(home, ".claude"))
    try:
        done = subprocess.run([binary, "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.DEVNULL, universal_newlines=True, env=env,
                              timeout=PROBE_SECONDS)
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return done.stdout.strip() if done.returncode == 0 else None


def megabytes_in(folder):
    """The size of the files under folder, in MB (10^6 bytes), as du counts them apart."""
    total = 0
    for here, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(here, name)).st_size
            except OSError:
                pass
    return total // 1000000


def quiet(text):
    pass


class PinnedCli(object):
    """One CLI: its npm package and pinned version, the binary the package installs, the
    variable that names an existing binary instead, and about how many MB its install takes
    (measured, said before the install starts)."""

    def __init__(self, name, package, version, binary, override, megabytes):
        self.name, self.package, self.version = name, package, version
        self.binary, self.override, self.megabytes = binary, override, megabytes
        self.found = None

    def __repr__(self):
        return "<%s@%s>" % (self.package, self.version)

    def prefix(self):
        return os.path.join(cache_root(), "%s-%s" % (self.name, self.version))

    def installed_binary(self, prefix):
        return os.path.join(prefix, "node_modules", ".bin", self.binary)

    def is_the_pinned_version(self, binary):
        return self.version in (version_of(binary) or "").split()

    def find(self, say=quiet):
        """(path to the binary, None) or (None, why there is none); asked once per test run,
        so an install that fails is not tried again by every test module. say(line) tells the
        person waiting what an install fetches, and what it took."""
        if self.found is None:
            self.found = self.look(say)
        return self.found

    def look(self, say):
        given = os.environ.get(self.override)
        if given:
            return (given, None) if version_of(given) else (None, "%s=%s does not run" % (self.override, given))
        prefix = self.prefix()
        if self.is_the_pinned_version(self.installed_binary(prefix)):
            return self.installed_binary(prefix), None
        return self.install(prefix, say)

    def install(self, prefix, say=quiet):
        """Install the pinned package beside the cache folder, then move it into place, so that
        an interrupted install is never taken for a finished one."""
        wanted = "%s@%s" % (self.package, self.version)
        npm = shutil.which("npm")
        if not npm or not shutil.which("node"):
            return None, "node and npm are needed to install %s (or set %s)" % (wanted, self.override)
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        staging = tempfile.mkdtemp(prefix=".installing-", dir=os.path.dirname(prefix))
        say("e2e: installing %s from the npm registry into %s (about %d MB; first run only, "
            "later runs reuse it; %s names a binary instead)" % (
                wanted, prefix, self.megabytes, self.override))
        started = time.monotonic()
        try:
            done = subprocess.run(
                [npm, "install", "--prefix", staging, "--no-audit", "--no-fund", "--no-save",
                 "--loglevel=error", wanted],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                universal_newlines=True, timeout=INSTALL_SECONDS)
            if done.returncode != 0:
                last = (done.stdout.strip().splitlines() or ["no output"])[-1]
                return None, "npm install %s failed: %s" % (wanted, last)
            if not self.is_the_pinned_version(self.installed_binary(staging)):
                return None, "%s installed but its %s binary does not run" % (wanted, self.binary)
            shutil.rmtree(prefix, ignore_errors=True)
            os.replace(staging, prefix)
            say("e2e: installed %s: %d MB in %d s" % (wanted, megabytes_in(prefix),
                                                     time.monotonic() - started))
            return self.installed_binary(prefix), None
        except (OSError, subprocess.SubprocessError) as error:
            return None, "could not install %s: %s" % (wanted, error)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


CLAUDE = PinnedCli("claude-code", "@anthropic-ai/claude-code", "2.1.328", "claude", "E2E_CLAUDE_BIN",
                   360)
CODEX = PinnedCli("codex", "@openai/codex", "0.169.0", "codex", "E2E_CODEX_BIN", 400)
GEMINI = PinnedCli("gemini-cli", "@google/gemini-cli", "0.61.0", "gemini", "E2E_GEMINI_BIN", 100)
