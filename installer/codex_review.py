"""Whether Codex CLI will run the protocol's hooks for the person who runs --check.

Why it exists: Codex runs a project's hooks only once its user has reviewed and trusted each one in
its terminal (when it starts, or in /hooks); until then it runs none and says nothing, so an
install that --check passed would load no memory and ask for no save. What the review leaves,
measured on Codex CLI 0.169.0 (tests/e2e/test_codex_protocol.py pins it):
- one table per handler in the user's $CODEX_HOME/config.toml (~/.codex when unset), named
  hooks.state."<project's real path>/.codex/hooks.json:<event in snake case>:<group>:<handler>",
  the last two the handler's positions in the hooks file;
- in it, trusted_hash: "sha256:" and the hex SHA-256 of the handler's definition as compact JSON
  with sorted keys, {"event_name": "session_start", "hooks": [{"async": false, "command": ...,
  "timeout": 15, "type": "command"}]}, a handler without a timeout hashed with 600;
- so a review holds while the handler's command, timeout and position stay; a new interpreter
  written by --update, another timeout, or a handler of the user's put before it needs a new
  review, and the hook file's bytes and the hooks file's layout do not;
- a record that also says `enabled = false` (a hook switched off in /hooks) runs nothing, and
  neither does any hook under `[features] hooks = false`, or in a project the same file does not
  mark trusted (`[projects."<its real path>"] trust_level = "trusted"`; a trusted folder above it
  does not count).

What it promises: CODEX_HOME is read, never written. Nothing is said where Codex has no
configuration (CI, a machine without Codex) or the project wires no Codex hook, and no verdict is
given on a handler in a form the record was not measured on (a matcher, a status message). The
configuration is the user's, but read as untrusted input: a file that is not TOML, or a Python
without tomllib (3.11+) to read it, gives one reason, never a traceback.
"""

import hashlib
import json
import os
import re

from .agents import settings_of
from .settings import SettingsError

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

# The keys of a handler and of its group whose record was measured.
MEASURED_HANDLER_KEYS = frozenset(("type", "command", "timeout"))
MEASURED_GROUP_KEYS = frozenset(("hooks",))
# The timeout Codex hashes for a handler that names none.
CODEX_DEFAULT_TIMEOUT = 600


class Review(object):
    """What the user's Codex configuration says of the protocol's hooks: `config`, its path;
    `unread`, why it could not be read (else None); `blocked`, what keeps Codex from running any
    hook of the project (all hooks switched off, the project not trusted; else None); `new`,
    `changed` and `off`, the events whose hook has never been trusted there, was trusted in
    another form than the one wired now, or was switched off (each event once)."""

    def __init__(self, config, unread=None, blocked=None):
        self.config, self.unread, self.blocked = config, unread, blocked
        self.new, self.changed, self.off = [], [], []

    def add(self, found, event):
        if event not in found:
            found.append(event)

    def says_anything(self):
        return bool(self.unread or self.blocked or self.new or self.changed or self.off)


def codex_home(environ):
    return environ.get("CODEX_HOME") or os.path.join(os.path.expanduser("~"), ".codex")


def review_of(project, agent, environ=os.environ):
    """The Review of the agent's (Codex's) wired hooks in the project for this user; None when
    Codex has no configuration here, the project wires none of the protocol's hooks, or Codex
    runs every one of them as it is now."""
    config = os.path.join(codex_home(environ), "config.toml")
    if not os.path.isfile(config):
        return None
    wired = wired_handlers(project, agent)
    if not wired:
        return None
    if tomllib is None:
        return Review(config, unread="this Python has no TOML reader (tomllib, Python 3.11+)")
    try:
        with open(config, "rb") as handle:
            settings = tomllib.loads(handle.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:  # TOMLDecodeError is a ValueError
        return Review(config, unread=str(error) or type(error).__name__)
    blocked = what_blocks_every_hook(settings, project)
    if blocked:
        return Review(config, blocked=blocked)
    records = hook_records(settings)
    hooks_file = os.path.join(os.path.realpath(project), *agent.settings.split("/"))
    review = Review(config)
    for event, group, position, handler in wired:
        record = records.get("{}:{}:{}:{}".format(hooks_file, snake_case(event), group, position))
        if record is None or not isinstance(record.get("trusted_hash"), str):
            review.add(review.new, event)
        elif record.get("enabled") is False:
            review.add(review.off, event)
        elif record["trusted_hash"] != hash_of(event, handler):
            review.add(review.changed, event)
    return review if review.says_anything() else None


def what_blocks_every_hook(settings, project):
    """"off" when the configuration switches every hook off ([features] hooks = false);
    "untrusted" or "unlisted" when it does not mark the project trusted, which Codex needs to
    read .codex/ at all; None otherwise. The project's trust is judged only where it was
    measured, a project at the top of its own repository (not a folder in one, nor a linked
    work tree, which Codex may key by another path)."""
    features = settings.get("features")
    if isinstance(features, dict) and features.get("hooks") is False:
        return "off"
    if not os.path.isdir(os.path.join(project, ".git")):
        return None
    projects = settings.get("projects")
    entry = projects.get(os.path.realpath(project)) if isinstance(projects, dict) else None
    if not isinstance(entry, dict):
        return "unlisted"
    return None if entry.get("trust_level") == "trusted" else "untrusted"


def wired_handlers(project, agent):
    """[(event, group index, handler index, handler)] of the protocol's handlers in the agent's
    hooks file that are in the form the record was measured on; [] when the file cannot be
    read (the rest of the check says why)."""
    try:
        settings, _ = settings_of(project, agent)
    except SettingsError:
        return []
    found = []
    for wiring in agent.wirings:
        groups = settings.get("hooks", {}).get(wiring.event, [])
        for group_index, group in enumerate(groups if isinstance(groups, list) else []):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for index, handler in enumerate(handlers if isinstance(handlers, list) else []):
                if isinstance(handler, dict) and wiring.is_ours(handler) and \
                        is_in_the_measured_form(group, handler):
                    found.append((wiring.event, group_index, index, handler))
    return found


def is_in_the_measured_form(group, handler):
    timeout = handler.get("timeout", CODEX_DEFAULT_TIMEOUT)
    return (set(group) <= MEASURED_GROUP_KEYS and set(handler) <= MEASURED_HANDLER_KEYS
            and handler.get("type") == "command" and isinstance(handler.get("command"), str)
            and isinstance(timeout, int) and not isinstance(timeout, bool) and timeout >= 1)


def hook_records(config):
    """{record key: record} of the hook records in a parsed config.toml; a record of another
    shape than the table Codex writes counts as none."""
    hooks = config.get("hooks")
    state = hooks.get("state") if isinstance(hooks, dict) else None
    if not isinstance(state, dict):
        return {}
    return {key: entry for key, entry in state.items() if isinstance(entry, dict)}


def hash_of(event, handler):
    """The trusted_hash Codex records for a handler in the measured form."""
    identity = {"event_name": snake_case(event), "hooks": [{
        "async": False, "command": handler["command"],
        "timeout": handler.get("timeout", CODEX_DEFAULT_TIMEOUT),
        "type": "command"}]}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def snake_case(event):
    """SessionStart as Codex names it in a record: session_start."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()
