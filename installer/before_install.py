"""The local record of what an install's own writes leave no trace of.

Why it exists: whether a folder the install filled was there, empty, before it, and the bytes of a
settings.json, .gitignore or .gitattributes the uninstall could not work out from what is left. --project writes
these down, only when there are any, in .claude/hooks/.before-install.json (git ignores it: it is
one person's); --uninstall reads it, keeps what it says, and removes it.
"""

import json
import os

from .errors import Refusal
from .files import read_bytes
from .protocol import (
    AGENT_FOLDERS, CODEX_HOOKS, COMMAND_DIR, GEMINI_SETTINGS, GITATTRIBUTES, GITIGNORE, HOOK_DIR,
    SETTINGS,
)

# What the install's own writes leave no trace of: whether a folder it filled
# was there, empty, before it, and the bytes of a settings.json, a .gitignore,
# a .gitattributes or another agent's hooks file that the uninstall could not
# work out from what is left (an empty object or list the protocol's entries
# went into, a blank file, a layout HEAD does not have). Everything else is
# read from the files themselves. --project writes these down, only when there
# are any, in this local file; --uninstall reads it and removes it.
BEFORE_INSTALL = HOOK_DIR + "/.before-install.json"
INSTALL_FOLDERS = (HOOK_DIR, COMMAND_DIR, ".claude")
RECORDED_FOLDERS = INSTALL_FOLDERS + AGENT_FOLDERS
RECORDED_FILES = (SETTINGS, GITIGNORE, GITATTRIBUTES, CODEX_HOOKS, GEMINI_SETTINGS)


def read_before_install(project):
    """{"folders": [...], "files": {rel: text}} as --project wrote it down;
    None when there is no such record, or the file is not one (it is then the
    user's, and stays)."""
    path = os.path.join(project, *BEFORE_INSTALL.split("/"))
    if os.path.islink(path):
        return None
    try:
        data = read_bytes(path, BEFORE_INSTALL)
        record = json.loads(data.decode("utf-8")) if data is not None else None
    except (Refusal, ValueError):
        return None
    if not isinstance(record, dict) or set(record) != {"folders", "files"}:
        return None
    folders, files = record["folders"], record["files"]
    if not isinstance(folders, list) or not set(folders) <= set(RECORDED_FOLDERS) or \
            not isinstance(files, dict) or not set(files) <= set(RECORDED_FILES) or \
            not all(isinstance(text, str) for text in files.values()):
        return None
    return record


def plan_before_install_removal(plan, record):
    if record is not None:
        plan.remove(BEFORE_INSTALL, "what was here before the install")
    elif os.path.lexists(plan.path(BEFORE_INSTALL)):
        plan.keep(BEFORE_INSTALL, "not a record the installer wrote; left in place")
