"""install.py --agents: Codex CLI and Gemini CLI wired to the same hooks, given the flow commands,
kept current, checked and taken out again with the promises Claude Code's parts keep.

The expected entries come from the agents' rules (tests/e2e pins them in the real CLIs): Codex reads
.codex/hooks.json, events SessionStart and Stop, timeouts in seconds, hooks started where the CLI
was started; Gemini reads "hooks" in .gemini/settings.json, events SessionStart and AfterAgent,
timeouts in milliseconds, hooks started in the project folder; both take skills from
.agents/skills/<name>/SKILL.md. A command run where its hook file is missing must not exit 2,
which both read as a block."""

import json
import os
import subprocess
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    entries, git, installer, make_repo, path_in, project, read, repo, snapshot, template_text, write,
)

ALL = "claude,codex,gemini"
SKILLS = [".agents/skills/%s/SKILL.md" % name for name in ("catchup", "dream", "handoff")]
FLOW = ("handoff", "dream", "catchup")


def json_of(root, rel):
    return json.loads(read(path_in(root, rel)).decode("utf-8"))


def commands_of(settings, event):
    return [handler["command"] for group in settings.get("hooks", {}).get(event, [])
            for handler in group["hooks"]]


def state_of(root):
    """Every path under root but .git/ with its bytes (None for a folder) and mode."""
    return {rel.replace(os.sep, "/"): (content, mode)
            for rel, (content, mode, _) in snapshot(root).items()}


def without_the_memory_the_install_wrote(installer, before, after):
    """The state after --uninstall: the untouched memory index the install wrote went with it."""
    if "memory/MEMORY.md" not in before:
        assert "memory/MEMORY.md" not in after
    return after


# --- the option -------------------------------------------------------------------------------

@pytest.mark.parametrize("value, message", [
    ("claude,cursor", "--agents takes a comma-separated list of claude, codex, gemini"),
    ("", "--agents takes a comma-separated list"),
    ("codex,gemini", "--agents must name claude too"),
])
def test_an_agents_list_that_cannot_be_installed_is_a_usage_error(installer, project, value, message):
    done = installer.run("--project", project, "--agents", value)
    assert done.returncode == 2 and message in done.stderr and len(done.stderr.splitlines()) == 1
    assert entries(project) == []


@pytest.mark.parametrize("mode", [["--check"], ["--uninstall"]])
def test_agents_go_only_with_project_or_update(installer, project, mode):
    done = installer.run(*(mode + [project, "--agents", ALL]))
    assert done.returncode == 2 and "--agents works only with --project or --update" in done.stderr


def test_without_the_option_claude_code_is_the_only_agent(installer, project):
    installer.ok("--project", project)
    for rel in (".codex", ".gemini", ".agents"):
        assert not os.path.lexists(path_in(project, rel))


# --- what is written --------------------------------------------------------------------------

def test_each_agent_runs_the_installed_hooks_in_its_own_file_and_form(installer, project):
    installer.ok("--project", project, "--agents", ALL)
    codex, gemini = json_of(project, ".codex/hooks.json"), json_of(project, ".gemini/settings.json")
    assert sorted(codex) == ["hooks"] and sorted(codex["hooks"]) == ["SessionStart", "Stop"]
    assert sorted(gemini["hooks"]) == ["AfterAgent", "SessionStart"]
    for settings, stop, timeout in ((codex, "Stop", 15), (gemini, "AfterAgent", 15000)):
        for event, hook in (("SessionStart", "session-start.py"), (stop, "stop-handoff.py")):
            [group] = settings["hooks"][event]
            [handler] = group["hooks"]
            assert handler["timeout"] == timeout and handler["type"] == "command"
            assert handler["command"].endswith("python3 -I -S .claude/hooks/" + hook)
    assert all(command.startswith('cd "$(git rev-parse --show-toplevel')
               for command in commands_of(codex, "SessionStart") + commands_of(codex, "Stop"))


def frontmatter_and_body(text):
    _, front, body = text.split("---\n", 2)
    return dict(line.split(": ", 1) for line in front.splitlines()), body


def test_the_flow_commands_become_skills_with_the_same_words(installer, project):
    installer.ok("--project", project, "--agents", ALL)
    for name in FLOW:
        command = read(path_in(project, ".claude/commands/%s.md" % name)).decode("utf-8")
        command_front, command_body = frontmatter_and_body(command)
        skill_front, skill_body = frontmatter_and_body(
            read(path_in(project, ".agents/skills/%s/SKILL.md" % name)).decode("utf-8"))
        assert skill_front["name"] == name
        assert json.loads(skill_front["description"]) == command_front["description"]
        assert skill_body == command_body
    assert sorted(os.listdir(path_in(project, ".agents/skills"))) == sorted(FLOW)


def test_a_second_run_changes_nothing_and_the_check_is_ok(installer, repo):
    installer.ok("--project", repo, "--agents", ALL)
    again = installer.ok("--project", repo)
    assert again.stdout.splitlines()[-1].startswith("nothing to do")
    assert "keep     .codex/hooks.json" in again.stdout and "keep     .gemini/settings.json" in again.stdout
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "the protocol for three agents", env=installer.env)
    installer.ok("--check", repo)


def run_wired(installer, root, rel, event, cwd, stdin):
    """The wired command as the agent runs it: by a shell, in the folder the agent starts hooks in."""
    [command] = commands_of(json_of(root, rel), event)
    return subprocess.run(["bash", "-c", command], cwd=cwd, input=json.dumps(stdin),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          env=dict(installer.env, PATH=os.path.dirname(sys.executable) + os.pathsep
                                   + installer.env["PATH"]), timeout=60)


def test_the_codex_commands_run_the_hooks_from_a_subfolder_and_never_exit_2_without_them(
        installer, repo):
    installer.ok("--project", repo, "--agents", ALL, "--python", sys.executable)
    sub = path_in(repo, "src")
    start = run_wired(installer, repo, ".codex/hooks.json", "SessionStart", sub,
                      {"session_id": "c1", "hook_event_name": "SessionStart", "source": "startup"})
    assert start.returncode == 0 and "<project-memory" in start.stdout
    for name in ("session-start.py", "stop-handoff.py"):
        os.remove(path_in(repo, ".claude/hooks/" + name))
    for event in ("SessionStart", "Stop"):
        missing = run_wired(installer, repo, ".codex/hooks.json", event, sub,
                            {"session_id": "c1", "hook_event_name": event, "turn_id": "t"})
        assert missing.returncode not in (0, 2), missing
    for event in ("SessionStart", "AfterAgent"):
        missing = run_wired(installer, repo, ".gemini/settings.json", event, repo,
                            {"session_id": "g1", "hook_event_name": event})
        assert missing.returncode not in (0, 2), missing


# --- the user's files -------------------------------------------------------------------------

USER_CODEX_HOOK = {"type": "command", "command": "./scripts/lint.sh", "timeout": 30}


@pytest.mark.parametrize("data", [b"{}", b'{"hooks":{}}\n'])
def test_an_agent_wired_after_the_first_install_gets_its_file_back_byte_for_byte(
        installer, project, data):
    """The local record takes down a hooks file's bytes whenever a run first wires that agent,
    not only at the first install."""
    installer.ok("--project", project)
    write(path_in(project, ".codex/hooks.json"), data)
    before = state_of(project)
    done = installer.ok("--update", project, "--agents", "claude,codex")
    assert "what --uninstall must leave as it was: .codex/hooks.json" in done.stdout
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".codex/hooks.json")) == data
    after = state_of(project)
    assert {rel: after[rel] for rel in after if rel.startswith(".codex")} == \
        {rel: before[rel] for rel in before if rel.startswith(".codex")}


@pytest.mark.parametrize("rel, data", [
    (".codex/hooks.json", b"{}"),
    (".codex/hooks.json", b'{"hooks":{}}\n'),
    (".codex/hooks.json", b'{\r\n  "description": "team hooks",\r\n  "hooks": {"Stop": [{"hooks": ['
     + json.dumps(USER_CODEX_HOOK).encode() + b']}]}\r\n}\r\n'),
    (".gemini/settings.json", b'{"theme":"GitHub","ui":{"hideTips":true}}'),
    (".gemini/settings.json",
     b'{\n    "hooks": {\n        "AfterAgent": []\n    },\n    "model": {"name": "x"}\n}\n'),
    (".gemini/settings.json", b""),
])
def test_a_hooks_file_the_user_had_keeps_their_part_and_comes_back_byte_for_byte(
        installer, project, rel, data):
    write(path_in(project, rel), data)
    before = state_of(project)
    installer.ok("--project", project, "--agents", ALL)
    installed = json_of(project, rel)
    if b"lint.sh" in data:
        assert commands_of(installed, "Stop")[0] == "./scripts/lint.sh"
        assert installed["description"] == "team hooks"
    if b"theme" in data:
        assert installed["theme"] == "GitHub" and installed["ui"] == {"hideTips": True}
    installer.ok("--uninstall", project)
    assert without_the_memory_the_install_wrote(installer, before, state_of(project)) == before


@pytest.mark.parametrize("folders", [
    [".codex"], [".gemini"], [".agents"], [".agents/skills"], [".agents/skills/handoff"],
    [".gemini", ".codex"],
])
def test_empty_folders_the_user_had_stay(installer, project, folders):
    for rel in folders:
        os.makedirs(path_in(project, rel))
    before = state_of(project)
    installer.ok("--project", project, "--agents", ALL)
    installer.ok("--uninstall", project)
    assert without_the_memory_the_install_wrote(installer, before, state_of(project)) == before


def test_what_the_install_created_goes(installer, project):
    installer.ok("--project", project, "--agents", ALL)
    done = installer.ok("--uninstall", project)
    assert entries(project) == []
    assert "  removed  .codex/hooks.json (held only the protocol's entries)" in done.stdout
    assert "  removed  .agents (now empty)" in done.stdout


def test_an_agent_wired_by_a_later_run_comes_out_byte_for_byte_too(installer, project):
    """Another agent asked for once Claude Code's install is there: what its hooks file and
    folders were is written down by that run."""
    installer.ok("--project", project)
    write(path_in(project, ".gemini/settings.json"), b'{"hooks": {}}')
    os.makedirs(path_in(project, ".agents/skills"))
    before = state_of(project)
    installer.ok("--update", project, "--agents", "claude,gemini")
    assert commands_of(json_of(project, ".gemini/settings.json"), "AfterAgent")
    installer.ok("--uninstall", project)
    after = state_of(project)
    for rel in (".gemini/settings.json", ".agents/skills", ".gemini"):
        assert after[rel] == before[rel]
    assert ".agents/skills/handoff" not in after


def test_an_entry_in_a_form_of_the_users_is_theirs_to_keep(installer, project):
    """An entry that runs the protocol's hook in the user's own words counts as the wiring: no
    second one is added, and --update leaves its words alone."""
    own = "python3 .claude/hooks/stop-handoff.py"
    write(path_in(project, ".codex/hooks.json"), json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": own}]}]}}))
    installer.ok("--project", project, "--agents", "claude,codex")
    installer.ok("--update", project, "--python", sys.executable)
    settings = json_of(project, ".codex/hooks.json")
    assert commands_of(settings, "Stop") == [own]
    assert commands_of(settings, "SessionStart")[0].endswith(
        sys.executable + " -I -S .claude/hooks/session-start.py")


def test_update_brings_an_entry_in_the_installers_form_to_the_interpreter_asked_for(installer, project):
    installer.ok("--project", project, "--agents", ALL)
    installer.ok("--update", project, "--python", sys.executable)
    for rel, event in ((".codex/hooks.json", "Stop"), (".gemini/settings.json", "AfterAgent")):
        [command] = commands_of(json_of(project, rel), event)
        assert command.endswith("{} -I -S .claude/hooks/stop-handoff.py".format(sys.executable))


def test_an_edited_skill_is_the_users_and_a_missing_one_comes_back_with_update(installer, project):
    installer.ok("--project", project, "--agents", ALL)
    edited = path_in(project, ".agents/skills/dream/SKILL.md")
    write(edited, read(edited) + b"\nAlso tidy the changelog.\n")
    os.remove(path_in(project, ".agents/skills/handoff/SKILL.md"))
    done = installer.ok("--update", project)
    assert "  keep     .agents/skills/dream/SKILL.md (edited by you; --force replaces it)" in done.stdout
    assert os.path.exists(path_in(project, ".agents/skills/handoff/SKILL.md"))
    check = installer.run("--check", project)
    assert ".agents/skills/dream/SKILL.md" in check.stdout
    removed = installer.ok("--uninstall", project)
    assert "  keep     .agents/skills/dream/SKILL.md (edited by you; left in place)" in removed.stdout
    assert read(edited).endswith(b"Also tidy the changelog.\n")
    # once the protocol is gone, the skill it left is the user's: a new install never takes it
    # over, not even with --force, and names it
    installer.ok("--project", project, "--agents", ALL)
    forced = installer.ok("--update", project, "--force")
    assert ("  keep     .agents/skills/dream/SKILL.md (your own skill, not the protocol's: it "
            "stays, and the protocol's dream is not installed (see --check))") in forced.stdout
    assert read(edited).endswith(b"Also tidy the changelog.\n")
    check = installer.run("--check", project)
    assert "  CLASH    .agents/skills/dream/SKILL.md is your own skill" in check.stdout


def test_the_check_names_what_update_would_bring_back_for_an_agent(installer, repo):
    installer.ok("--project", repo, "--agents", ALL)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "installed", env=installer.env)
    os.remove(path_in(repo, ".agents/skills/catchup/SKILL.md"))
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert "write .agents/skills/catchup/SKILL.md" in done.stdout


def without_the_protocols_entries(settings):
    settings["hooks"] = {}
    return settings


# What can happen to a recorded agent's hooks file after the install; each leaves that agent
# starting without the memory and stopping unsaved. (A file the user deleted is an agent they
# took out: see the test after this one.)
AFTERWARDS = {
    "emptied to an object": lambda rel, root: b"{}\n",
    "the protocol's entries taken out": lambda rel, root: (json.dumps(
        without_the_protocols_entries(json_of(root, rel)), indent=2) + "\n").encode("utf-8"),
    "no longer JSON": lambda rel, root: b'{"hooks": \n',
}


@pytest.mark.parametrize("rel", [".codex/hooks.json", ".gemini/settings.json"])
@pytest.mark.parametrize("what", sorted(AFTERWARDS))
def test_the_check_fails_when_a_recorded_agents_hooks_file_no_longer_wires_it(
        installer, repo, rel, what):
    installer.ok("--project", repo, "--agents", ALL)
    installer.ok("--check", repo)
    write(path_in(repo, rel), AFTERWARDS[what](rel, repo))
    done = installer.run("--check", repo)
    assert done.returncode == 1, done.stdout
    if what == "no longer JSON":
        assert "BROKEN   %s is not valid JSON" % rel in done.stdout
        assert installer.run("--update", repo).returncode == 1
        return
    assert "--update would: " in done.stdout and rel in done.stdout
    installer.ok("--update", repo)
    installer.ok("--check", repo)


@pytest.mark.parametrize("rel", [".codex/hooks.json", ".gemini/settings.json"])
def test_an_agents_hooks_file_the_user_deleted_stays_deleted_until_asked_for_again(
        installer, repo, rel):
    state_of_before = state_of(repo)
    installer.ok("--project", repo, "--agents", ALL)
    os.remove(path_in(repo, rel))
    os.rmdir(os.path.dirname(path_in(repo, rel)))
    installer.ok("--check", repo)
    installer.ok("--update", repo)
    assert not os.path.lexists(path_in(repo, rel))
    assert rel not in json_of(repo, ".claude/memory-context-protocol.json")["wired"]
    installer.ok("--check", repo)
    installer.ok("--update", repo, "--agents", "claude," + rel[1:].split("/")[0])
    assert os.path.isfile(path_in(repo, rel))
    installer.ok("--uninstall", repo)
    assert state_of(repo) == state_of_before


def test_an_agent_never_installed_is_not_checked_whatever_its_hooks_file_holds(installer, repo):
    write(path_in(repo, ".codex/hooks.json"), b'{"hooks": \n')
    installer.ok("--project", repo)
    installer.ok("--check", repo)


def test_a_hooks_file_that_is_not_json_is_refused_only_when_its_agent_is_asked_for(installer, project):
    commented = b'{\n  // the team theme\n  "theme": "GitHub"\n}\n'
    write(path_in(project, ".gemini/settings.json"), commented)
    refused = installer.run("--project", project, "--agents", ALL)
    assert refused.returncode == 1 and ".gemini/settings.json has comments" in refused.stderr
    assert entries(project) == [".gemini"]
    installer.ok("--project", project)
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".gemini/settings.json")) == commented


def test_an_agents_parts_that_git_ignores_are_named_at_install_and_by_the_check(installer, repo):
    write(path_in(repo, ".gitignore"), "build/\n.codex/\n")
    done = installer.ok("--project", repo, "--agents", "claude,codex")
    assert "git ignores .codex/hooks.json" in done.stdout
    check = installer.run("--check", repo)
    assert check.returncode == 1 and "git ignores .codex/hooks.json" in check.stdout
    write(path_in(repo, ".gitignore"), "build/\n.gemini/\n")
    assert "git ignores" not in installer.run("--check", repo).stdout


# --- AGENTS.md --------------------------------------------------------------------------------

SECTION_BEGIN = "<!-- memory-context-protocol: begin -->"


@pytest.mark.parametrize("data", [None, b"", b"# Agents\n\nUse tabs.\n", b"# Agents\r\nUse tabs.", b"x"])
def test_the_agents_md_section_comes_and_goes_leaving_the_file_as_it_was(installer, project, data):
    if data is not None:
        write(path_in(project, "AGENTS.md"), data)
    before = state_of(project)
    done = installer.ok("--project", project, "--agents", "claude,agents-md")
    text = read(path_in(project, "AGENTS.md")).decode("utf-8")
    assert text.count(SECTION_BEGIN) == 1
    assert text.rstrip("\r\n").endswith("<!-- memory-context-protocol: end -->")
    assert text.startswith((data or b"").decode("utf-8"))
    assert "memory/MEMORY.md" in text and ".session-state.md" in text
    assert ("  wrote    AGENTS.md" if data is None else "  appended AGENTS.md") in done.stdout
    assert installer.ok("--update", project).stdout.splitlines()[-1].startswith("nothing to do")
    installer.ok("--uninstall", project)
    assert without_the_memory_the_install_wrote(installer, before, state_of(project)) == before


def test_agents_md_is_left_alone_unless_asked_for(installer, project):
    write(path_in(project, "AGENTS.md"), b"# Agents\n")
    installer.ok("--project", project, "--agents", ALL)
    assert read(path_in(project, "AGENTS.md")) == b"# Agents\n"


def test_an_edited_agents_md_section_is_the_users(installer, project):
    installer.ok("--project", project, "--agents", "claude,agents-md")
    path = path_in(project, "AGENTS.md")
    edited = read(path).replace(b"## Project memory", b"## Project memory (ours)")
    write(path, edited)
    done = installer.ok("--update", project)
    assert "  keep     AGENTS.md (edited by you; --force replaces its protocol section)" in done.stdout
    removed = installer.ok("--uninstall", project)
    assert "its protocol section is edited by you; left in place" in removed.stdout
    assert read(path) == edited


def test_a_lone_marker_in_agents_md_is_refused(installer, project):
    write(path_in(project, "AGENTS.md"), (SECTION_BEGIN + "\nmine\n").encode())
    done = installer.run("--project", project, "--agents", "claude,agents-md")
    assert done.returncode == 1 and "AGENTS.md has only one of the protocol's markers" in done.stderr
