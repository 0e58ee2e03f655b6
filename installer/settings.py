"""The settings files the harness reads: where they are, one parser for them, and writing one back.

Why it exists: every mode reads the project's settings.json and settings.local.json, and --check
also the user's; they are read here, one way, and each is refused with one line naming what is
wrong (invalid JSON, duplicate keys, a "hooks" or "permissions" the harness could not read, or
an entry for which Claude Code skips a settings file of its whole).
Writing one back edits the original text (json_edit.py) rather than dumping it anew. The meaning
of two settings texts is compared as the harness would: 1 and 1.0 differ, an empty "hooks" counts
as none.
"""

import copy
import json
import os
import stat
import sys

from .errors import Refusal, UsageError
from .files import newline_of, read_bytes
from .protocol import LOCAL_SETTINGS, SETTINGS
from .json_edit import SettingsEdit


class SettingsError(Refusal):
    pass


def parse_settings(text, shown, claude=True):
    """The settings as a dict (an empty file counts as {}); a SettingsError
    otherwise, naming what is wrong and where. Duplicate keys, NaN and a
    number too large for a double are refused too: a rewrite would silently
    drop the first key, and would write the number as Infinity, which is no
    JSON at all. `claude`: the file is one of Claude Code's, which it skips
    whole for some entries another agent may read otherwise."""
    if not text.strip():
        return {}

    def unique_keys(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise SettingsError('{}: the key "{}" appears twice in one object'.format(
                    shown, key))
            seen.add(key)
        return dict(pairs)

    def no_constant(name):
        raise SettingsError("{}: {} is not JSON".format(shown, name))

    def finite(number):
        value = float(number)
        if value in (float("inf"), float("-inf")):
            raise SettingsError("{}: the number {} is too large to be written back as "
                                "JSON (it reads as infinity); use a smaller one".format(
                                    shown, number))
        return value

    try:
        data = json.loads(text, object_pairs_hook=unique_keys, parse_constant=no_constant,
                          parse_float=finite)
    except json.JSONDecodeError as error:
        if text[error.pos:error.pos + 2] in ("//", "/*"):  # the usual cause, named as such
            raise SettingsError("{} has comments ({} at line {}, column {}), which JSON does not "
                                "allow (nor does Claude Code); remove them".format(
                                    shown, text[error.pos:error.pos + 2], error.lineno,
                                    error.colno))
        if text[error.pos:error.pos + 1] in ("}", "]") and text[:error.pos].rstrip().endswith(","):
            raise SettingsError("{} has a comma after its last entry (before line {}, column "
                                "{}), which JSON does not allow; remove it".format(
                                    shown, error.lineno, error.colno))
        raise SettingsError("{} is not valid JSON at line {}, column {} ({})".format(
            shown, error.lineno, error.colno, error.msg))
    except RecursionError:
        raise SettingsError("{} is nested too deeply to read".format(shown))
    if not isinstance(data, dict):
        raise SettingsError("{} does not hold a JSON object".format(shown))
    problem = hooks_shape_problem(data.get("hooks", {})) or \
        permissions_shape_problem(data.get("permissions", {})) or \
        (claude and entry_claude_code_skips_the_file_for(data))
    if problem:
        raise SettingsError("{}: {}".format(shown, problem))
    return data


def hooks_shape_problem(hooks):
    """What keeps "hooks" from being an object of events, which every entry of the protocol's
    goes into; None when it is one. An entry in it of another shape is the harness's to skip
    (skipped_entries) and the installer's to keep as it is: only where the protocol's entry must
    go beside one that is not a list would an edit be unsafe (wiring.why_entries_cannot_go_in)."""
    if not isinstance(hooks, dict):
        return '"hooks" is not an object'
    return None


def groups_of(settings, event):
    """The groups under an event that the harness loads: objects with a "hooks" list. An event
    that is not a list holds none, and a group of another shape is left out (skipped_entries)."""
    groups = settings.get("hooks", {}).get(event, [])
    if not isinstance(groups, list):
        return []
    return [group for group in groups
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)]


def handlers_in(group):
    """The handlers of a group that are objects; anything else in it the harness skips."""
    return [handler for handler in group["hooks"] if isinstance(handler, dict)]


# The hook events Claude Code 2.1.328 knows (tests/e2e/test_cli_harness_facts.py reads them from
# its own message): an entry under any other name it ignores, with a line in its debug log.
KNOWN_EVENTS = frozenset((
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
    "UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop",
    "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact",
    "PreModelSwitch", "PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup",
    "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult",
    "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged",
    "FileChanged", "DirectoryAdded", "MessageDisplay",
))


def skipped_entries(settings):
    """[(where, why)] of the hook entries of a Claude Code settings file that the harness
    ignores while it applies the rest, each named as its debug log names it (measured on
    2.1.328): an event it does not know, an event that is not a list, a group that is not one,
    a group without its "hooks" list, a handler that is not an object or cannot load."""
    found = []
    for event, groups in sorted(settings.get("hooks", {}).items()):
        where = "hooks." + event
        if event not in KNOWN_EVENTS:
            found.append((where, 'Unknown hook event "{}" was ignored'.format(event)))
        elif not isinstance(groups, list):
            found.append((where, 'Hook event "{}" must be an array of matchers; received {}. '
                          "This entry was ignored".format(event, json_type(groups))))
        else:
            for index, group in enumerate(groups):
                at = "{}.{}".format(where, index)
                if not isinstance(group, dict):
                    found.append((at, "Hook matcher must be an object; received {}; matcher "
                                  "ignored".format(json_type(group))))
                elif not isinstance(group.get("hooks"), list):
                    found.append((at, 'Hook matcher "hooks" must be an array of hook entries; '
                                  "received {}; matcher ignored".format(
                                      json_type(group.get("hooks")))))
                else:
                    found += [("{}.hooks.{}".format(at, number), "hook " + problem + "; ignored")
                              for number, problem in enumerate(
                                  handler_problem(handler) if isinstance(handler, dict)
                                  else "is not an object" for handler in group["hooks"])
                              if problem]
    return found


def json_type(value):
    """The JavaScript name of a JSON value's type, as the harness's messages give it."""
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "unknown")


# Measured on Claude Code 2.1.328 (tests/e2e/test_cli_harness_facts.py): an entry it cannot load
# under these events may be what guards the permissions beside it, so it applies nothing of the
# file it sits in (hooks and permissions alike), with no message outside its debug log. Under
# any other event it drops that one entry and keeps the rest.
GUARDING_EVENTS = ("PreToolUse", "PermissionRequest")
HANDLER_TYPES = ("command", "prompt", "agent", "http", "mcp_tool")
HANDLER_TEXT = {"command": "command", "prompt": "prompt"}
# Each of these, when present and not a list, makes Claude Code skip the file of its whole too;
# "allow" and "deny", which the installer merges into, are held to more by permissions_shape_problem.
PERMISSION_LISTS = ("ask", "additionalDirectories")
SKIPPED_WHOLE = "; Claude Code skips this whole file over it, its hooks and permissions included"


def entry_claude_code_skips_the_file_for(settings):
    """The first entry for which Claude Code applies nothing of the settings file, named; None
    when there is none. hooks_shape_problem has already passed the file."""
    permissions = settings.get("permissions", {})
    for key in PERMISSION_LISTS:
        if key in permissions and not isinstance(permissions[key], list):
            return '"permissions.{}" is not a list{}'.format(key, SKIPPED_WHOLE)
    for event in GUARDING_EVENTS:
        groups = settings.get("hooks", {}).get(event, [])
        if not isinstance(groups, list):
            return '"hooks.{}" is not a list{}'.format(event, SKIPPED_WHOLE)
        for index, group in enumerate(groups):
            where = "hooks.{}[{}]".format(event, index)
            if not isinstance(group, dict):
                return '"{}" is not an object{}'.format(where, SKIPPED_WHOLE)
            if not isinstance(group.get("hooks"), list):
                return '"{}" has no "hooks" list{}'.format(where, SKIPPED_WHOLE)
            if "matcher" in group and not isinstance(group["matcher"], str):
                return '"{}.matcher" is not text{}'.format(where, SKIPPED_WHOLE)
            for number, handler in enumerate(group["hooks"]):
                problem = handler_problem(handler) if isinstance(handler, dict) \
                    else "is not an object"
                if problem:
                    return '"{}.hooks[{}]" {}{}'.format(where, number, problem, SKIPPED_WHOLE)
    return None


def handler_problem(handler):
    """What keeps Claude Code from loading one hook handler; None when it loads."""
    kind = handler.get("type")
    if kind not in HANDLER_TYPES:
        return "has no known \"type\" ({})".format(", ".join(HANDLER_TYPES))
    field = HANDLER_TEXT.get(kind)
    if field and not isinstance(handler.get(field), str):
        return 'has no "{}" text'.format(field)
    timeout = handler.get("timeout", 1)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return 'has a "timeout" that is not a number of seconds above 0'
    return None


def permissions_shape_problem(permissions):
    """What keeps "permissions" from the shape the installer merges into (an
    object whose "allow" and "deny" are lists of rule strings); None when sound."""
    if not isinstance(permissions, dict):
        return '"permissions" is not an object'
    for key in ("allow", "deny"):
        rules = permissions.get(key, [])
        if not isinstance(rules, list) or not all(isinstance(rule, str) for rule in rules):
            return '"permissions.{}" is not a list of rules'.format(key)
    return None


def load_settings(path, shown, claude=True):
    """(settings, original text); ({}, None) when the file does not exist. Each file is read
    and parsed once in a run (while it stays as it was: its size, time and inode), however many
    parts of the run ask for it; each caller gets a copy of its own to change. `claude`: as for
    parse_settings."""
    signature = file_signature(path)
    found = READ.get((path, shown, claude)) if signature is not None else None
    if found is None or found[0] != signature:
        found = (signature, read_settings(path, shown, claude))
        if signature is not None:
            READ[(path, shown, claude)] = found
    outcome = found[1]
    if isinstance(outcome, SettingsError):
        raise SettingsError(str(outcome))
    settings, text = outcome
    return copy.deepcopy(settings), text


# (path, shown, claude) -> (signature, (settings, text) or the SettingsError it gave), for
# load_settings.
READ = {}


def file_signature(path):
    """What tells a file apart from the same file changed: None for none, or a non-file."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def read_settings(path, shown, claude):
    """(settings, original text) of the file, or the SettingsError that names what is wrong."""
    try:
        data = read_bytes(path, shown)
        if data is None:
            return {}, None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise SettingsError("{} is not UTF-8 text (byte {} at offset {})".format(
                shown, hex(data[error.start]), error.start))
        return parse_settings(text.lstrip("\ufeff"), shown, claude), text
    except SettingsError as error:
        return error


def settings_bytes(data, original):
    """settings_text() as UTF-8. A string holding half a surrogate pair (which
    JSON's \\u escapes allow) has no UTF-8 form: the file is then written with
    every non-ASCII character escaped."""
    try:
        return settings_text(data, original, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return settings_text(data, original, ensure_ascii=True).encode("utf-8")


def settings_text(data, original, ensure_ascii=False):
    """The settings as JSON text. An existing file is edited, not rewritten:
    only the values that differ from the original change, in the layout of
    the object or list that holds them, and every other character (keys,
    escapes, number spellings, whitespace, byte order mark, line endings,
    final newline) stays as it was. A new or empty file gets the settings
    indented by 2 spaces."""
    bom = "\ufeff" if original and original.startswith("\ufeff") else ""
    body = (original or "")[len(bom):]
    if body.strip():
        try:
            return bom + SettingsEdit(body, ensure_ascii).text_holding(data)
        except RecursionError:
            pass
    newline = newline_of(body)
    final_newline = "\n" if body.endswith("\n") or not body.strip() else ""
    text = json.dumps(data, indent=2, ensure_ascii=ensure_ascii) + final_newline
    return bom + text.replace("\n", newline)


def settings_mean_the_same(data, other_text):
    """Whether other_text holds the same settings as data, an empty "hooks"
    object or event list counting as none."""
    try:
        other = parse_settings(other_text.lstrip("\ufeff"), SETTINGS)
    except SettingsError:
        return False
    return settings_meaning(data) == settings_meaning(other)


def settings_meaning(settings):
    """The settings as canonical JSON: Python's == takes false for 0 and 30.0
    for 30, which the harness and the user do not. An empty "hooks" object,
    event list, "permissions" object or rule list means nothing to the
    harness, and counts as absent."""
    meaning = dict(settings)
    hooks = {event: groups for event, groups in meaning.pop("hooks", {}).items() if groups}
    if hooks:
        meaning["hooks"] = hooks
    permissions = {key: rules for key, rules in meaning.pop("permissions", {}).items()
                   if not (key in ("allow", "deny") and rules == [])}
    if permissions:
        meaning["permissions"] = permissions
    return json.dumps(meaning, sort_keys=True)


def project_settings(project, files=(SETTINGS, LOCAL_SETTINGS)):
    """[(file, settings)] of the project's settings files, shared then local
    ({} for one that does not exist); an invalid one raises SettingsError."""
    return [(rel, load_settings(os.path.join(project, *rel.split("/")), rel)[0])
            for rel in files]


def user_config_dir():
    """Where the harness keeps the user's settings and CLAUDE.md: $CLAUDE_CONFIG_DIR,
    else ~/.claude. A UsageError when that cannot be told for certain."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    if configured:
        if not os.path.isabs(configured):
            raise UsageError("CLAUDE_CONFIG_DIR must be an absolute path (it is {})".format(
                configured))
        folder = configured
    else:
        if os.name != "nt" and os.environ.get("HOME") == "":
            raise UsageError("HOME is empty: set it, or CLAUDE_CONFIG_DIR")
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            raise UsageError("cannot find your home folder: set HOME or CLAUDE_CONFIG_DIR")
        if not os.path.isdir(home):  # a HOME that is not there is a mistake, not a place to make
            raise UsageError("your home folder {} does not exist: set HOME or "
                             "CLAUDE_CONFIG_DIR".format(home))
        folder = os.path.join(home, ".claude")
    folder = os.path.normpath(folder)
    existing = folder
    while not os.path.lexists(existing) and os.path.dirname(existing) != existing:
        existing = os.path.dirname(existing)
    if os.path.lexists(existing) and not os.path.isdir(existing):
        raise UsageError("not a directory: {} (the user configuration folder is {})".format(
            existing, folder))
    return folder


def is_user_config_dir(folder):
    try:
        return os.path.realpath(folder) == os.path.realpath(user_config_dir())
    except UsageError:
        return False


def harness_settings(project):
    """[(shown name, settings)] of every settings file the harness reads for the
    project that exists, lowest precedence first: the user's, the shared, the
    local, then the managed policy's (its file, then the files of its drop-in
    folder). A file that cannot be read counts as empty here (the check reports
    a broken project file on its own)."""
    files = []
    try:
        files.append((os.path.join(user_config_dir(), "settings.json"),) * 2)
    except UsageError:
        pass
    files += [(os.path.join(project, *rel.split("/")), rel) for rel in (SETTINGS, LOCAL_SETTINGS)]
    files += [(path, path) for path in managed_settings_files()]
    found = []
    for path, shown in files:
        try:
            settings, original = load_settings(path, shown)
        except Refusal:
            continue
        if original is not None:
            found.append((shown, settings))
    return found


def managed_settings_folder():
    """Where the platform keeps the managed policy that outranks every other settings file
    (MCP_MANAGED_SETTINGS_DIR names another folder, for tests and unusual machines)."""
    configured = os.environ.get("MCP_MANAGED_SETTINGS_DIR")
    if configured:
        return configured
    if sys.platform == "darwin":
        return "/Library/Application Support/ClaudeCode"
    if os.name == "nt":
        return os.path.join(os.environ.get("ProgramFiles") or r"C:\Program Files", "ClaudeCode")
    return "/etc/claude-code"


def managed_settings_files():
    """The managed policy's files in the order the harness merges them: managed-settings.json,
    then the .json files of managed-settings.d by name (a hidden one left out), each later one
    over the ones before."""
    folder = managed_settings_folder()
    files = [os.path.join(folder, "managed-settings.json")]
    drop_ins = os.path.join(folder, "managed-settings.d")
    try:
        names = sorted(os.listdir(drop_ins))
    except OSError:
        names = []
    return files + [os.path.join(drop_ins, name) for name in names
                    if name.endswith(".json") and not name.startswith(".")]


def is_managed(shown):
    """Whether a settings file as harness_settings() names it is the managed policy's."""
    return shown.startswith(managed_settings_folder().rstrip("/\\") + os.sep)


def session_environment(project, base=None):
    """The environment the hooks see in a session: this one, with the "env"
    of every settings file on top, as the harness applies it (a project's
    value over the user's, the local file's over the shared one's, the managed
    policy's over all)."""
    env = dict(os.environ if base is None else base)
    for _, settings in harness_settings(project):
        values = settings.get("env")
        if isinstance(values, dict):
            env.update((str(key), value if isinstance(value, str) else json.dumps(value))
                       for key, value in values.items() if value is not None)
    return env
