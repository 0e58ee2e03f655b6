"""Generated projects through install -> check -> update -> (a changed record) -> update ->
uninstall: the installer's promises about what it owns, on inputs nobody wrote by hand.

Each seed builds a git repository from primitives combined at random: a settings file the harness
accepts (keys of the user's, rules in allow/ask/deny, hooks of the user's under known and unknown
events, entries the harness skips alone, odd spacing, a byte-order mark, CRLF line endings), a
command or skill of the user's under a protocol name, a .claudeignore of the user's, a memory (with
or without an index, stamps and Active Context inside and outside code fences, comments), and,
after a commit, the record changed as a pull request or a merge might change it (claims the
installer could not have made, conflict markers, a key given twice, a lost comma). Each asserts:
- every file comes back byte for byte from --uninstall (the memory's files only where the memory
  was not moved to the team format, which is --update's change of the user's memory);
- no Skill rule is granted that the user did not have, for a command that is not the protocol's as
  it wrote it, or that the user put in "ask" or "deny";
- no rule of the user's is dropped by any mode;
- every note of the memory stays reachable from what session start shows;
- no run ends in a traceback, and --check gives a verdict.

The suite runs a few seeds; MCP_TEST_SEEDS=<n> runs n of them (MCP_TEST_SEED_BASE moves the
window), and a failure names its seed."""

import hashlib
import json
import os
import random

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    build_source, git, make_repo, path_in, read, sealed_env, snapshot, write, Installer,
)

SEEDS = int(os.environ.get("MCP_TEST_SEEDS", "6"))
BASE = int(os.environ.get("MCP_TEST_SEED_BASE", "0"))
RECORD = ".claude/memory-context-protocol.json"
SKILLS = ("Skill(catchup)", "Skill(handoff)", "Skill(dream)")
OWN_COMMAND = "---\ndescription: ours\nallowed-tools: Bash(*)\n---\nRun ./release.sh\n"
OWN_SKILL = "---\nname: handoff\ndescription: ours\n---\nHand off to the on-call person.\n"


# ------------------------------------------------------------------ the primitives

def user_rules(rng):
    pool = {"allow": ["Bash(npm test:*)", "Read(./docs/**)", "WebFetch(domain:example.com)",
                      "Skill(dream)", "Skill(catchup)"],
            "deny": ["Bash(curl:*)", "Read(./.env)", "Read(./secrets/**)", "Skill(handoff)"],
            "ask": ["Bash(git push:*)", "Skill(dream)", "Skill(handoff)"]}
    rules = {}
    for key, choices in pool.items():
        if rng.random() < 0.6:
            rules[key] = rng.sample(choices, rng.randint(0, len(choices)))
    seen = set()
    for key in ("deny", "ask", "allow"):  # a rule in one list only, as a person writes them
        if key in rules:
            rules[key] = [rule for rule in rules[key] if rule not in seen]
            seen.update(rules[key])
    return rules


def user_hooks(rng):
    command = {"type": "command", "command": "./scripts/lint.sh", "timeout": rng.choice([5, 30])}
    hooks = {}
    choices = [
        ("SessionStart", [{"matcher": "startup", "hooks": [dict(command)]}]),
        ("Stop", [{"hooks": [dict(command, command="make fmt")]}]),
        ("PostToolUse", [{"matcher": "Edit|Write", "hooks": [dict(command)]}]),
        ("Notification", [{"hooks": [{"type": "command", "command": "notify-send done"}]}]),
        ("sessionStart", {"command": "./old-form.sh"}),  # skipped alone: an unknown event
        ("Notification", [{"type": "command", "command": "echo bare"}]),  # a group missing
        ("SubagentStop", [{"hooks": [{"type": "command"}]}]),  # a handler dropped alone
        ("UserPromptSubmit", []),
    ]
    for event, value in rng.sample(choices, rng.randint(0, 4)):
        hooks.setdefault(event, value)
    return hooks


def settings_text(rng):
    """A settings text the harness accepts (None: no settings file), as a person's editor or a
    tool might lay it out."""
    if rng.random() < 0.2:
        return None
    settings = {}
    for key, value in (("model", "opus"), ("env", {"API_URL": "http://localhost:8080"}),
                       ("includeCoAuthoredBy", False), ("statusLine", {"type": "command",
                                                                       "command": "echo hi"}),
                       ("cleanupPeriodDays", 30), ("x-team-note", "keep")):
        if rng.random() < 0.4:
            settings[key] = value
    rules = user_rules(rng)
    if rules:
        settings["permissions"] = rules
    hooks = user_hooks(rng)
    if hooks or rng.random() < 0.1:
        settings["hooks"] = hooks
    indent = rng.choice([None, 0, 1, 2, 4, "\t"])
    separators = rng.choice([None, (",", ":"), (", ", ": "), (" ,", " : ")])
    text = json.dumps(settings, indent=indent, separators=separators if indent is None or
                      separators != (" ,", " : ") else None, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.7:
        text += "\n"
    if rng.random() < 0.3:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.2:
        text = "\ufeff" + text
    return text


STAMPED_INDEX = ("# Project Memory Index\n<!-- Last dream: 2026-10-01 -->\n\n## Active Context\n"
                 "{context}\n## Topics\n{pointers}")
TEAM_INDEX = "# Memory\n\n{pointers}"
CONTEXTS = [
    "Shipping the rate table.\n",
    "Debugging the deploy:\n\n```bash\n# retry it\n./deploy.sh --retry\n```\n",
    "<!-- a note\n# not a heading\n-->\nStill on the importer.\n",
    "```\n<!-- Last dream: 2026-01-01 -->\n```\n",
]
TOPIC = "# {title}\n{stamp}\n- 2026-09-2{day}: a fact about {title}.\n- 2026-09-2{next}: another.\n"


def memory_files(rng):
    """{path under memory/: text} of a memory, and whether it is in the stamped format; ({},
    False) for none."""
    if rng.random() < 0.25:
        return {}, False
    names = rng.sample(["deploys", "gotchas", "on call", "rates", "auth"], rng.randint(1, 4))
    stamped = rng.random() < 0.5
    files = {}
    for number, name in enumerate(names):
        stamp = "<!-- Last updated: 2026-09-2%d -->" % number if stamped else ""
        if rng.random() < 0.3:
            stamp += "\n```\n<!-- Last updated: 2025-01-01 -->\n```"
        files[name + ".md"] = TOPIC.format(title=name, stamp=stamp, day=number, next=number + 1)
    if rng.random() < 0.4:
        files["api/tokens.md"] = "# Tokens\n\nThey expire after an hour.\n"  # a topic folder
    kind = rng.choice(["stamped", "team", "none"]) if stamped else rng.choice(["team", "none"])
    pointers = "".join("- [%s](%s)\n" % (name, "<%s.md>" % name if " " in name else name + ".md")
                       for name in names)
    if kind == "stamped":
        files["MEMORY.md"] = STAMPED_INDEX.format(context=rng.choice(CONTEXTS), pointers=pointers)
    elif kind == "team":
        files["MEMORY.md"] = TEAM_INDEX.format(pointers=pointers)
    return files, kind == "stamped"


def tampered(rng, text, project):
    """The record's text as a pull request or a merge might leave it: claims added that the
    installer could not have made (a claim it did make, replaced, is knowledge lost: the rule
    or file is then left to the user, which no test of giving bytes back can hold against)."""
    record = json.loads(text)
    for _ in range(rng.randint(1, 3)):
        change = rng.choice(["own command", "own claudeignore", "user's rule", "unknown file",
                             "own index", "allow"])
        if change == "own command" and os.path.isfile(path_in(project,
                                                              ".claude/commands/dream.md")):
            data = read(path_in(project, ".claude/commands/dream.md"))
            record["files"][".claude/commands/dream.md"] = hashlib.sha256(data).hexdigest()
        elif change == "own claudeignore" and os.path.isfile(path_in(project, ".claudeignore")):
            data = read(path_in(project, ".claudeignore")).replace(b"\r\n", b"\n")
            record["files"][".claudeignore"] = hashlib.sha256(data).hexdigest()
        elif change == "user's rule":  # a claim to a rule the protocol did not add
            rule = rng.choice(["Bash(curl:*)", "Read(./.env)", "Read(./secrets/**)"])
            record["deny"].setdefault(rule, rng.choice([".env", "curl", "secrets/**"]))
        elif change == "unknown file":
            record["files"]["src/app.py"] = "0" * 64
        elif change == "own index" and os.path.isfile(path_in(project, "memory/MEMORY.md")):
            data = read(path_in(project, "memory/MEMORY.md"))
            record["files"]["memory/MEMORY.md"] = hashlib.sha256(data).hexdigest()
        elif change == "allow":
            record["allow"] = list(SKILLS)
    new = json.dumps(record, indent=2, sort_keys=True) + "\n"
    form = rng.choice(["plain", "conflict", "twice", "lost comma"])
    if form == "conflict":
        lines = new.splitlines(True)
        cut = rng.randint(2, len(lines) - 2)
        theirs = text.splitlines(True)
        return "".join(lines[:cut] + ["<<<<<<< HEAD\n"] + lines[cut:] + ["=======\n"] +
                       theirs[cut:] + [">>>>>>> theirs\n"])
    if form == "twice":
        return new.replace('  "files": {', '  "files": {},\n  "files": {', 1)
    if form == "lost comma":
        return new.replace('",\n', '"\n', 1)
    return new


# ------------------------------------------------------------------ what must hold

def rules_of(project):
    path = path_in(project, ".claude/settings.json")
    if not os.path.isfile(path):
        return {}
    settings = json.loads(read(path).decode("utf-8-sig"))
    permissions = settings.get("permissions", {})
    return {key: list(permissions.get(key, [])) for key in ("allow", "ask", "deny")}


def assert_rules_kept(before, project, seed, step):
    now = rules_of(project)
    for key, rules in before.items():
        missing = [rule for rule in rules if rule not in now.get(key, [])]
        assert not missing, "seed %d, %s: the user's %s rules %s were dropped" % (
            seed, step, key, missing)


def assert_no_grant_made_up(before, project, installer, seed, step):
    """A Skill rule in allow is the user's, or the protocol's for its own command as it wrote it,
    and never one the user put in ask or deny."""
    now = rules_of(project)
    for rule in SKILLS:
        if rule not in now.get("allow", []) or rule in before.get("allow", []):
            continue
        name = rule[len("Skill("):-1]
        command = path_in(project, ".claude/commands/%s.md" % name)
        assert rule not in before.get("ask", []) + before.get("deny", []), (seed, step, rule)
        assert os.path.isfile(command) and read(command) == read(
            installer.source_file("commands/%s.md" % name)), (
            "seed %d, %s: %s granted for a command that is not the protocol's" % (seed, step, rule))


def assert_memory_reachable(installer, project, seed, step):
    done = installer.run("--check", "--memory", "--json", project)
    assert done.stderr == "", (seed, step, done.stderr)
    report = json.loads(done.stdout)["memory_health"] or {"findings": []}
    orphans = [item for item in report["findings"] if item["check"] == "orphan"]
    assert not orphans, "seed %d, %s: notes unreachable: %s" % (seed, step, orphans)


def memory_as_the_move_left_it(before, after_update):
    """What --uninstall leaves of memory/: the user's memory as --update's move to the team
    format left it (the move is a change of theirs to keep), without the index the install wrote
    where there was none."""
    memory = dict((rel, data) for rel, data in after_update.items() if rel.startswith("memory"))
    if "memory/MEMORY.md" not in before:
        memory.pop("memory/MEMORY.md", None)
    if "memory" not in before and not any(rel.startswith("memory/") for rel in memory):
        memory.pop("memory", None)
    return memory


def run(installer, seed, *args):
    done = installer.run(*args)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, (
        seed, args, done.stderr)
    return done


def contents(root, but=()):
    return {rel.replace(os.sep, "/"): content for rel, (content, _, _) in snapshot(root).items()
            if not rel.replace(os.sep, "/").startswith(but)}


@pytest.fixture(scope="module")
def installer(tmp_path_factory):
    root = tmp_path_factory.mktemp("generated")
    return Installer(build_source(str(root / "source")), sealed_env(str(root / "home")))


@pytest.mark.parametrize("seed", range(BASE, BASE + SEEDS))
def test_a_generated_project_keeps_every_promise(installer, tmp_path, seed):
    rng = random.Random(seed)
    files = {"README.md": "# generated %d\n" % seed, "src/app.py": "print(1)\n"}
    text = settings_text(rng)
    if text is not None:
        files[".claude/settings.json"] = text
    if rng.random() < 0.3:
        files[".claude/commands/dream.md"] = OWN_COMMAND
    if rng.random() < 0.2:
        files[".agents/skills/handoff/SKILL.md"] = OWN_SKILL
    if rng.random() < 0.3:
        files[".claudeignore"] = rng.choice([".env\nconfig/master.key\n", "dist/\n!dist/keep\n"])
    memory, stamped = memory_files(rng)
    files.update(("memory/" + name, data) for name, data in memory.items())
    repo = make_repo(str(tmp_path / "generated"), installer.env, files)  # written byte for byte
    before = contents(repo)
    rules = rules_of(repo)
    agents = rng.choice(["claude", "claude,codex", "claude,gemini", "claude,codex,gemini,agents-md"])

    done = run(installer, seed, "--project", repo, "--agents", agents)
    assert done.returncode == 0, (seed, done.stdout, done.stderr)
    assert_rules_kept(rules, repo, seed, "--project")
    assert_no_grant_made_up(rules, repo, installer, seed, "--project")
    if not stamped:
        assert_memory_reachable(installer, repo, seed, "--project")
    assert run(installer, seed, "--check", repo).returncode in (0, 1)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "the protocol", env=installer.env)

    done = run(installer, seed, "--update", repo)
    assert done.returncode == 0, (seed, done.stdout, done.stderr)
    assert_rules_kept(rules, repo, seed, "--update")
    assert_memory_reachable(installer, repo, seed, "--update")
    moved = memory_as_the_move_left_it(before, contents(repo))

    record = path_in(repo, RECORD)
    write(record, tampered(rng, read(record).decode("utf-8"), repo))
    checked = run(installer, seed, "--check", repo)
    assert checked.returncode in (0, 1) and "not the record" not in checked.stdout, (
        seed, checked.stdout)
    done = run(installer, seed, "--update", repo)
    assert done.returncode == 0, (seed, done.stdout, done.stderr)
    assert_rules_kept(rules, repo, seed, "--update after a changed record")
    assert_no_grant_made_up(rules, repo, installer, seed, "--update after a changed record")
    assert_memory_reachable(installer, repo, seed, "--update after a changed record")
    assert run(installer, seed, "--update", repo).stdout.splitlines()[-1].startswith(
        ("nothing", "done: 0")), seed

    done = run(installer, seed, "--uninstall", repo)
    assert done.returncode == 0, (seed, done.stdout, done.stderr)
    assert_rules_kept(rules, repo, seed, "--uninstall")
    expected = dict((rel, data) for rel, data in before.items() if not rel.startswith("memory"))
    expected.update(moved)
    assert contents(repo) == expected, seed
