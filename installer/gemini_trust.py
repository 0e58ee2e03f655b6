"""Whether Gemini CLI will run the protocol's hooks for the person who runs --check.

Why it exists: Gemini CLI runs no hook at all where its settings switch hooks off, and none of a
project's in a folder its user has not trusted; it says nothing about either, so an install that
--check passed would load no memory and ask for no save. Measured on Gemini CLI 0.61.0
(tests/e2e/test_gemini_harness_facts.py pins it):
- "hooksConfig": {"enabled": false} in the project's .gemini/settings.json, or in the user's
  ~/.gemini/settings.json, switches every hook off; the project's value, when it gives one,
  outranks the user's;
- a project's hooks run only in a folder its user trusted: ~/.gemini/trustedFolders.json maps a
  path to TRUST_FOLDER (that folder and all below it), TRUST_PARENT (the folder above it and all
  below) or DO_NOT_TRUST; a folder it says nothing of is not trusted (the CLI asks, and `-p`
  refuses to start); GEMINI_CLI_TRUST_WORKSPACE=true trusts any folder, and
  "security": {"folderTrust": {"enabled": false}} in the user's settings turns the question off.

What it promises: the user's files are read, never written, and read as untrusted input: a file
that is not JSON gives one reason, never a traceback. The project's switch is said to everyone (it
is committed); the user's switch and trust only where Gemini CLI is configured for this user
(~/.gemini exists), so a machine without it (CI) is told nothing.
"""

import json
import os

from .agents import GEMINI, settings_of
from .settings import SettingsError

TRUSTED_FOLDERS = "trustedFolders.json"


class Verdict(object):
    """Why Gemini CLI will not run the project's hooks (`reason`), or why that could not be told
    (`unread`); both None when it will."""

    def __init__(self, reason=None, unread=None):
        self.reason, self.unread = reason, unread


def user_folder(environ):
    return os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".gemini")


def read_json(path):
    """(the JSON object in the file, None) or (None, why it cannot be read); ({}, None) for no
    file."""
    try:
        with open(path, "rb") as stream:
            data = stream.read(1024 * 1024)
    except FileNotFoundError:
        return {}, None
    except OSError as error:
        return None, error.strerror or str(error)
    try:
        found = json.loads(data.decode("utf-8").lstrip("\ufeff") or "{}")
    except (ValueError, RecursionError):
        return None, "not JSON"
    return (found, None) if isinstance(found, dict) else (None, "not a JSON object")


def switch_of(settings):
    """The hooksConfig.enabled value a settings object gives; None when it gives none."""
    config = settings.get("hooksConfig")
    value = config.get("enabled") if isinstance(config, dict) else None
    return value if isinstance(value, bool) else None


def verdict_for(project, environ=os.environ):
    """The Verdict for the project's Gemini CLI hooks, for this user."""
    try:
        project_settings, _ = settings_of(project, GEMINI)
    except SettingsError:
        return Verdict()  # the check names a hooks file it cannot read on its own
    folder = user_folder(environ)
    configured = os.path.isdir(folder)
    user_settings, unread = read_json(os.path.join(folder, "settings.json")) if configured \
        else ({}, None)
    project_switch = switch_of(project_settings)
    if project_switch is False:
        return Verdict('{} says "hooksConfig": {{"enabled": false}}, so Gemini CLI runs none of '
                       "its hooks: remove that key".format(GEMINI.settings))
    if not configured:
        return Verdict()
    if unread:
        return Verdict(unread="cannot read {} ({})".format(
            os.path.join(folder, "settings.json"), unread))
    if project_switch is None and switch_of(user_settings) is False:
        return Verdict('{} says "hooksConfig": {{"enabled": false}}, so Gemini CLI runs no hook '
                       "for you: remove that key, or set it to true in {}".format(
                           os.path.join(folder, "settings.json"), GEMINI.settings))
    return trust_verdict(project, folder, user_settings, environ)


def trust_verdict(project, folder, user_settings, environ):
    """Whether the user trusted the project's folder, as Gemini CLI reads it."""
    if environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
        return Verdict()
    security = user_settings.get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return Verdict()
    path = os.path.join(folder, TRUSTED_FOLDERS)
    rules, unread = read_json(path)
    if unread:
        return Verdict(unread="cannot read {} ({})".format(path, unread))
    here = os.path.realpath(project)
    trusted = [os.path.realpath(rule if level == "TRUST_FOLDER" else os.path.dirname(rule))
               for rule, level in rules.items() if level in ("TRUST_FOLDER", "TRUST_PARENT")
               and isinstance(rule, str)]
    if any(is_within(here, root) for root in trusted):
        return Verdict()
    refused = any(level == "DO_NOT_TRUST" and isinstance(rule, str)
                  and os.path.realpath(rule) == here for rule, level in rules.items())
    return Verdict("{} {}, so Gemini CLI runs none of this project's hooks for you: start "
                   "`gemini` in the project and trust the folder".format(
                       path, "marks the project untrusted" if refused
                       else "does not list the project as trusted"))


def is_within(path, folder):
    try:
        rel = os.path.relpath(path, folder)
    except ValueError:
        return False
    return rel == os.curdir or rel.split(os.sep)[0] != os.pardir
