"""context-budget.py's rule of what the hooks may show the agent: the harness's Read deny rules
as the hooks apply them, and the paths a project's settings may name.

Expected answers come from the harness's documented grammar of Read rules (gitignore patterns;
`//path` from the filesystem root, `~/path` from the home folder, `/path` from the project root,
`path` or `./path` at any depth below the project) and from what install.py writes from a
.claudeignore, not from the hook's code.
"""
import json
import os

import pytest

from conftest import load_hook

COVERED = [
    # the forms install.py writes from a .claudeignore line without an inner slash
    ("Read(./.env)", ".env"),
    ("Read(./.env)", "service/.env"),
    ("Read(./.env.*)", ".env.local"),
    ("Read(./*.pem)", "certs/server.pem"),
    ("Read(./id_rsa*)", "id_rsa.pub"),
    ("Read(./secrets/)", "secrets/token.txt"),
    ("Read(./secrets/)", "deploy/secrets/token.txt"),
    # ... and with one: anchored at the project root
    ("Read(/config/credentials.json)", "config/credentials.json"),
    ("Read(/config/*.yml)", "config/prod.yml"),
    ("Read(/build)", "build/out.txt"),
    ("Read(/out/)", "out/a/b.txt"),
    ("Read(/**/node_modules/)", "web/node_modules/x/index.js"),
    # hand-written forms
    ("Read(**/.env)", "a/b/.env"),
    ("Read(**/.env)", ".env"),
    ("Read(.env)", "x/.env"),
    ("Read(./docs/**)", "docs/private.md"),
    ("Read(./docs/**)", "site/docs/private.md"),  # the harness reads ./docs/** at any depth
    ("Read(./?.md)", "a.md"),
    ("Read(./[ab].txt)", "b.txt"),
    ("Read(./[!ab].txt)", "c.txt"),
    ("Read(./[a-c]*.txt)", "beta.txt"),
    ("Read(//{project}/notes/**)", "notes/handoff.md"),
    ("Read(~/{name}/notes/*)", "notes/handoff.md"),
    ("Read(./notes/*)", "notes/deeper/handoff.md"),  # `*` matches the folder, which covers it
    ("Read", "memory/MEMORY.md"),
    ("Read(*)", "memory/MEMORY.md"),
    ("Read(**)", "memory/MEMORY.md"),
]

NOT_COVERED = [
    ("Read(./.env)", ".env.local"),
    ("Read(./.env)", "x.env"),
    ("Read(./.env.*)", ".env"),
    ("Read(./secrets/)", "secrets"),  # a file of that name: the pattern is for folders
    ("Read(/config/credentials.json)", "app/config/credentials.json"),
    ("Read(/config/*.yml)", "config/sub/prod.yml"),
    ("Read(./?.md)", "ab.md"),
    ("Read(./[ab].txt)", "c.txt"),
    ("Read(./[!ab].txt)", "a.txt"),
    ("Read(//{project}/notes/**)", "memory/MEMORY.md"),
    ("Read(~/{name}/notes/*.md)", "notes/deeper/handoff.txt"),
    ("Edit(./.env)", ".env"),
    ("Bash(cat .env)", ".env"),
    ("Read(./.env", ".env"),
]


@pytest.fixture(scope="module")
def budget():
    return load_hook("context-budget.py")


def covers(budget, tmp_path, rule, relative):
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    rule = rule.format(project=str(project.resolve()).lstrip("/"), name=project.name)
    env = {"HOME": str(tmp_path)}
    return budget.read_rule_covers(rule, str(project), env, [str(project / relative)])


@pytest.mark.parametrize("rule,relative", COVERED)
def test_a_read_rule_covers(budget, tmp_path, rule, relative):
    assert covers(budget, tmp_path, rule, relative)


@pytest.mark.parametrize("rule,relative", NOT_COVERED)
def test_a_read_rule_does_not_cover(budget, tmp_path, rule, relative):
    assert not covers(budget, tmp_path, rule, relative)


def test_a_glob_costs_little_whatever_its_stars(budget):
    """Backtracking to the last star only: a pattern of many stars against a long name that
    fails at the end would take exponential time in a naive matcher."""
    assert not budget.name_matches("*a*a*a*a*a*a*a*a*a*a*b", "a" * 2000)
    assert budget.name_matches("*a*a*a*a*a*a*a*a*a*a*b", "a" * 2000 + "b")


def test_a_rule_costs_little_whatever_its_double_stars(budget, tmp_path):
    """A rule is the repository's text: forty `**` against a path forty folders deep, failing
    at its last name, would take the path's depth to the fortieth power in a matcher that
    tries every split; read name by name, it costs their product."""
    import time
    deep = "/".join("d" for _ in range(40)) + "/file.txt"
    rule = "Read(" + "**/" * 40 + "other.txt)"
    began = time.monotonic()
    assert not covers(budget, tmp_path, rule, deep)
    assert covers(budget, tmp_path, "Read(" + "**/" * 40 + "file.txt)", deep)
    assert covers(budget, tmp_path, "Read(" + "**/d/" * 20 + "**/file.txt)", deep)
    assert not covers(budget, tmp_path, "Read(" + "**/d/" * 41 + "file.txt)", deep)
    assert time.monotonic() - began < 30  # the naive matcher runs for years; this is no budget


def settings(project, relative, data):
    path = project / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_every_settings_file_of_the_harness_brings_its_deny_rules(budget, tmp_path):
    project = tmp_path / "project"
    home = tmp_path / "home"
    settings(project, ".claude/settings.json", {"permissions": {"deny": ["Read(./shared.md)"]}})
    settings(project, ".claude/settings.local.json", {"permissions": {"deny": ["Read(./local.md)"]}})
    settings(home, ".claude/settings.json", {"permissions": {"deny": ["Read(./user.md)"]}})
    env = {"HOME": str(home)}
    for name, origin in (("shared.md", ".claude/settings.json"),
                         ("local.md", ".claude/settings.local.json"),
                         ("user.md", str(home / ".claude" / "settings.json"))):
        (project / name).write_text("x\n", encoding="utf-8")
        text, refusal = budget.read_project_text(str(project), env, str(project / name), 100)
        assert text is None
        assert refusal == "- %s was not read: the deny rule Read(./%s) in %s covers it." % (
            name, name, origin)


def test_a_project_file_no_rule_covers_is_read(budget, tmp_path):
    project = tmp_path / "project"
    settings(project, ".claude/settings.json", {"permissions": {"deny": ["Read(./.env)"]}})
    (project / "notes.md").write_text("hello\n", encoding="utf-8")
    assert budget.read_project_text(str(project), {"HOME": str(tmp_path)},
                                    str(project / "notes.md"), 100) == ("hello\n", None)


@pytest.mark.parametrize("value,ignored", [
    ("../elsewhere.md", True),
    ("/etc/hostname", True),
    ("memory/../../elsewhere.md", True),
    ("linked/MEMORY.md", True),  # a link in the project that leads out of it
    ("memory/MEMORY.md", False),
    ("notes/../memory/MEMORY.md", False),
])
def test_a_path_a_project_settings_file_sets_may_not_lead_outside(budget, tmp_path, value,
                                                                   ignored):
    project = tmp_path / "project"
    (project / "memory").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    os.symlink(str(tmp_path / "outside"), str(project / "linked"))
    settings(project, ".claude/settings.json", {"env": {"MCP_MEMORY_INDEX": value}})
    env = {"MCP_MEMORY_INDEX": value, "MCP_SESSION_STATE": value}  # the second set by the user
    trusted, lines = budget.trusted_environment(str(project), env)
    assert trusted["MCP_SESSION_STATE"] == value
    assert ("MCP_MEMORY_INDEX" not in trusted) == ignored
    assert lines == ([
        "- MCP_MEMORY_INDEX=%s was ignored: .claude/settings.json may set it, and it leads "
        "outside the project; only a value you set yourself is taken." % value] if ignored else [])


def test_a_variable_a_settings_file_names_is_the_repositorys_whatever_its_value(budget, tmp_path):
    """The harness applies the file's value; a value seen by the hook that differs may still be
    the file's, read otherwise (an escape, a byte the hooks decode another way): the name
    decides."""
    project = tmp_path / "project"
    project.mkdir()
    settings(project, ".claude/settings.local.json", {"env": {"MCP_SESSION_STATE": "../a.md"}})
    trusted, lines = budget.trusted_environment(str(project), {"MCP_SESSION_STATE": "../b.md"})
    assert trusted == {} and len(lines) == 1
    assert budget.trusted_environment(str(project), {"MCP_SESSION_STATE": "notes/b.md"}) == (
        {"MCP_SESSION_STATE": "notes/b.md"}, [])


def test_a_home_the_project_settings_set_is_the_accounts_again(budget, tmp_path):
    """HOME decides whose settings, and so whose deny rules, count: a repository's settings
    may not move it."""
    project = tmp_path / "project"
    project.mkdir()
    planted = str(tmp_path / "planted-home")
    settings(project, ".claude/settings.json", {"env": {"HOME": planted}})
    trusted, lines = budget.trusted_environment(str(project), {"HOME": planted})
    assert trusted.get("HOME") == budget.account_home() != planted
    assert lines == ["- HOME=%s was ignored: .claude/settings.json may set it, and it says where "
                     "your own files are; only a value you set yourself is taken." % planted]
    assert budget.trusted_environment(str(project), {"HOME": str(tmp_path)})[0] == {
        "HOME": budget.account_home()}
    (project / ".claude" / "settings.json").unlink()
    assert budget.trusted_environment(str(project), {"HOME": str(tmp_path)}) == (
        {"HOME": str(tmp_path)}, [])
