"""install.py edits a settings.json the user wrote by hand without rewriting it:
a diff shows only the protocol's entries, an uninstall gives the file back
byte for byte, and --update changes only what it brings up to date."""

import difflib
import json
import re

import pytest

from installtools import (expected_settings, git, installer, load_installer,  # noqa: F401
                          make_repo, path_in, project, read, write_settings)

SETTINGS = ".claude/settings.json"

# Hand-written files: inline lists, one-line objects, an unusual key order,
# escapes and number spellings json.dumps would never write, and each kind of
# indentation and line ending.
FOUR_SPACES = (
    '{\n'
    '    "model": "caf\\u00e9",\n'
    '    "hooks": {\n'
    '        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}],\n'
    '        "SessionStart": [\n'
    '            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}\n'
    '        ]\n'
    '    },\n'
    '    "permissions": {"allow": ["Bash(npm test)", "Read"], "deny": ["Read(./build/)"]},\n'
    '    "cleanupPeriodDays": 1e2,\n'
    '    "apiKeyHelper": "bin\\/key"\n'
    '}\n'
)
TABS_CRLF_BOM = (
    '\ufeff{\r\n'
    '\t"env": {"A": "1", "B": "\\u00e9"},\r\n'
    '\t"statusLine": {\r\n'
    '\t\t"type": "command",\r\n'
    '\t\t"command": "echo \\/x",\r\n'
    '\t\t"padding": 0.50\r\n'
    '\t}\r\n'
    '}\r\n'
)
TWO_SPACES_NO_FINAL_NEWLINE = (
    '{\n'
    '  "permissions": {\n'
    '    "allow": ["Read", "Bash(git status)"]\n'
    '  },\n'
    '  "includeCoAuthoredBy": false\n'
    '}'
)
COMPACT = ('{"permissions":{"allow":["Read"]},"hooks":{"Stop":[{"hooks":[{"type":"command",'
           '"command":"./mine.sh"}]}]},"n":1E2,"s":"\\u00e9\\/"}')
HAND_WRITTEN = {
    "four spaces": FOUR_SPACES,
    "tabs, CRLF and a byte order mark": TABS_CRLF_BOM,
    "two spaces, no final newline": TWO_SPACES_NO_FINAL_NEWLINE,
    "compact, on one line": COMPACT,
}
MULTI_LINE = [name for name, text in HAND_WRITTEN.items() if "\n" in text]

JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null')


def tokens(text):
    """The keys and scalars of a JSON text, in order, by their meaning."""
    return [json.dumps(json.loads(token)) for token in JSON_TOKEN.findall(text)]


def protocol_tokens():
    """Every key and value the protocol's entries are made of."""
    found = set()

    def walk(value):
        if isinstance(value, dict):
            for key, item in value.items():
                found.add(json.dumps(key))
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        else:
            found.add(json.dumps(value))
    walk(expected_settings())
    return found


def only_gained_protocol_tokens(line, candidate, ours):
    """Whether `candidate` is the user's `line`, indented and spelled as written, with
    nothing added to it but the protocol's keys and values (a permission rule put into
    a one-line list of the user's) and the separators they need."""
    indent = line[:len(line) - len(line.lstrip())]
    if not candidate.startswith(indent) or candidate[len(indent):len(indent) + 1].isspace():
        return False
    users, found = JSON_TOKEN.findall(line), JSON_TOKEN.findall(candidate)
    position = 0
    for token in found:
        if position < len(users) and token == users[position]:
            position += 1
        elif json.dumps(json.loads(token)) not in ours:
            return False
    return position == len(users)


def assert_only_protocol_lines_differ(before, after):
    """Every line that changed belongs to a protocol entry; a line of the user's
    may only have gained the comma that separates it from what follows, or the
    protocol's entries inside a list or object the user wrote on one line."""
    old, new = before.splitlines(), after.splitlines()
    removed, added = [], []
    for tag, old_start, old_end, new_start, new_end in difflib.SequenceMatcher(
            None, old, new, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += old[old_start:old_end]
            added += new[new_start:new_end]
    assert added, "nothing was added"
    ours = protocol_tokens()
    for line in removed:
        same = [candidate for candidate in added
                if candidate in (line, line + ",") or only_gained_protocol_tokens(line, candidate, ours)]
        assert same, "a line of the user's was rewritten: {!r}".format(line)
        added.remove(same[0])
    for line in added:
        assert set(tokens(line)) <= ours, "an added line is not the protocol's: {!r}".format(line)


def assert_only_protocol_tokens_added(before, after):
    """The user's keys and scalars keep their order and spelling; what is added
    is the protocol's."""
    old = JSON_TOKEN.findall(before)
    new = JSON_TOKEN.findall(after)
    extra, at = [], 0
    for token in new:
        if at < len(old) and token == old[at]:
            at += 1
        else:
            extra.append(json.dumps(json.loads(token)))
    assert at == len(old), "a key or value of the user's is gone or respelled: " + old[at]
    assert set(extra) <= protocol_tokens()


def settings_text_of(project):
    return read(path_in(project, SETTINGS)).decode("utf-8")


def assert_means_the_original_plus_the_protocol(before, after):
    mine = json.loads(before.lstrip("\ufeff"))
    merged = json.loads(after.lstrip("\ufeff"))
    ours = expected_settings()["hooks"]
    for event in ours:
        assert merged["hooks"][event] == mine.get("hooks", {}).get(event, []) + ours[event]
    expected = {key: value for key, value in mine.items() if key != "hooks"}
    permissions = dict(expected.get("permissions", {}))
    for kind, rules in expected_settings().get("permissions", {}).items():
        present = permissions.get(kind, [])
        permissions[kind] = present + [rule for rule in rules if rule not in present]
    expected["permissions"] = permissions
    assert {key: value for key, value in merged.items() if key != "hooks"} == expected


def same_lines_and_endings(before, after):
    """The file keeps its byte order mark, line ending and final newline."""
    assert after.startswith("\ufeff") == before.startswith("\ufeff")
    assert after.endswith("\n") == before.endswith("\n")
    if "\r\n" in before:
        assert after.count("\n") == after.count("\r\n")


# ------------------------------------------------------------ through install.py

@pytest.mark.parametrize("name", MULTI_LINE)
def test_install_changes_only_the_protocols_lines(installer, project, name):
    before = HAND_WRITTEN[name]
    write_settings(project, before)
    installer.ok("--project", project)
    after = settings_text_of(project)
    assert_only_protocol_lines_differ(before, after)
    assert_means_the_original_plus_the_protocol(before, after)
    same_lines_and_endings(before, after)


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_install_keeps_every_key_and_value_as_spelled(installer, project, name):
    before = HAND_WRITTEN[name]
    write_settings(project, before)
    installer.ok("--project", project)
    after = settings_text_of(project)
    assert_only_protocol_tokens_added(before, after)
    assert_means_the_original_plus_the_protocol(before, after)
    assert ("\n" in after) == ("\n" in before)


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_uninstall_after_install_gives_the_file_back_byte_for_byte(installer, project, name):
    write_settings(project, HAND_WRITTEN[name])
    installer.ok("--project", project)
    installer.ok("--uninstall", project)
    assert read(path_in(project, SETTINGS)) == HAND_WRITTEN[name].encode("utf-8")


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_uninstall_of_a_committed_install_gives_the_committed_file_back(installer, tmp_path, name):
    env = installer.env
    repo = make_repo(str(tmp_path / "repo"), env, {SETTINGS: HAND_WRITTEN[name]})
    installer.ok("--project", repo)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "-m", "install the protocol", env=env)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, SETTINGS)) == HAND_WRITTEN[name].encode("utf-8")


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_a_second_install_changes_nothing(installer, project, name):
    write_settings(project, HAND_WRITTEN[name])
    installer.ok("--project", project)
    installed = read(path_in(project, SETTINGS))
    installer.ok("--project", project)
    installer.ok("--update", project)
    assert read(path_in(project, SETTINGS)) == installed


@pytest.mark.parametrize("name", MULTI_LINE)
def test_update_changes_only_the_command_it_brings_up_to_date(installer, project, name):
    write_settings(project, HAND_WRITTEN[name])
    installer.ok("--project", project)
    current = settings_text_of(project)
    current_command = expected_settings()["hooks"]["Stop"][0]["hooks"][0]["command"]
    older_command = current_command.replace(" -I -S", "")
    spelled = json.dumps(current_command)
    assert current.count(spelled) == 1
    older = current.replace(spelled, json.dumps(older_command))
    write_settings(project, older)
    installer.ok("--update", project)
    updated = settings_text_of(project)
    assert updated == current
    changed = [(old, new) for old, new in zip(older.splitlines(), updated.splitlines()) if old != new]
    assert len(changed) == 1 and spelled in changed[0][1]


# ------------------------------------------------------------------ the writer

@pytest.fixture
def module(installer):
    return load_installer(installer)


def test_a_new_or_empty_file_gets_two_space_indentation(module):
    data = {"hooks": {"Stop": [{"hooks": []}]}, "model": "x"}
    fresh = json.dumps(data, indent=2)
    for original in (None, "", "{}\n", "  \n"):
        assert module.settings.settings_text(data, original) == fresh + "\n", original
    assert module.settings.settings_text(data, "{}") == fresh


def test_a_list_on_one_line_stays_on_one_line(module):
    original = '{\n  "permissions": {"allow": ["Read"]}\n}\n'
    data = {"permissions": {"allow": ["Read", "Skill(catchup)"], "deny": ["Read(./.env)"]}}
    assert module.settings.settings_text(data, original) == (
        '{\n  "permissions": {"allow": ["Read", "Skill(catchup)"], "deny": ["Read(./.env)"]}\n}\n')


def test_an_empty_list_takes_the_layout_of_the_object_holding_it(module):
    original = '{\n    "permissions": {"allow": ["Read"], "deny": []},\n    "model": "x"\n}\n'
    data = {"permissions": {"allow": ["Read"], "deny": ["Read(./.env)"]}, "model": "x"}
    assert module.settings.settings_text(data, original) == (
        '{\n    "permissions": {"allow": ["Read"], "deny": ["Read(./.env)"]},\n    "model": "x"\n}\n')


def test_a_compact_file_stays_compact(module):
    original = '{"a":[1,2],"b":{}}'
    data = {"a": [1, 2, {"x": [3]}], "b": {"c": True}}
    assert module.settings.settings_text(data, original) == '{"a":[1,2,{"x":[3]}],"b":{"c":true}}'


def test_an_element_added_to_a_multi_line_list_takes_its_siblings_indentation(module):
    original = '{\n\t"a": [\n\t\t1,\n\t\t2\n\t]\n}'
    assert module.settings.settings_text({"a": [1, 2, {"b": 3}]}, original) == (
        '{\n\t"a": [\n\t\t1,\n\t\t2,\n\t\t{\n\t\t\t"b": 3\n\t\t}\n\t]\n}')


def test_a_container_added_to_an_empty_one_opens_over_several_lines(module):
    original = '{\r\n    "a": 1,\r\n    "hooks": {}\r\n}\r\n'
    assert module.settings.settings_text({"a": 1, "hooks": {"Stop": []}}, original) == (
        '{\r\n    "a": 1,\r\n    "hooks": {\r\n        "Stop": []\r\n    }\r\n}\r\n')


@pytest.mark.parametrize("kept, expected", [
    (("b", "c"), '{\n  "b": {"x": [1, 2]},\n  "c": 3\n}\n'),
    (("a", "c"), '{\n  "a": 1,\n  "c": 3\n}\n'),
    (("a", "b"), '{\n  "a": 1,\n  "b": {"x": [1, 2]}\n}\n'),
    (("b",), '{\n  "b": {"x": [1, 2]}\n}\n'),
    ((), '{}\n'),
])
def test_a_removed_member_goes_with_its_separator_and_its_line(module, kept, expected):
    original = '{\n  "a": 1,\n  "b": {"x": [1, 2]},\n  "c": 3\n}\n'
    everything = {"a": 1, "b": {"x": [1, 2]}, "c": 3}
    assert module.settings.settings_text({key: everything[key] for key in kept}, original) == expected


def test_a_changed_value_is_rewritten_in_place_and_nothing_else(module):
    original = '{"t":  1e2 , "s": "\\u00e9\\/", "l": [ "a" ,"b" ]}'
    data = {"t": 30, "s": "\u00e9/", "l": ["a", "c"]}
    assert module.settings.settings_text(data, original) == '{"t":  30 , "s": "\\u00e9\\/", "l": [ "a" ,"c" ]}'


def test_half_a_surrogate_pair_added_to_a_file_is_written_escaped(module):
    original = '{\n  "a": "\u00e9"\n}\n'
    data = module.settings.settings_bytes({"a": "\u00e9", "x": "\udc80"}, original)
    assert data == '{\n  "a": "\u00e9",\n  "x": "\\udc80"\n}\n'.encode("utf-8")


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_settings_that_did_not_change_are_written_as_they_were(module, name):
    original = HAND_WRITTEN[name]
    data = module.settings.parse_settings(original.lstrip("\ufeff"), SETTINGS)
    assert module.settings.settings_text(data, original) == original


def test_an_element_that_changed_is_edited_where_it_differs(module):
    original = '{"hooks": {"Stop": [{"hooks": [{"command":  "old" ,"timeout": 1e1}]}, "x"]}}'
    data = {"hooks": {"Stop": [{"hooks": [{"command": "new", "timeout": 10.0}]}, "x"]}}
    assert module.settings.settings_text(data, original) == (
        '{"hooks": {"Stop": [{"hooks": [{"command":  "new" ,"timeout": 1e1}]}, "x"]}}')
