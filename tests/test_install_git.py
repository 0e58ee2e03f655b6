"""install.py --uninstall in git repositories. What the uninstall gives back comes from the record
of what the install added and of what was there before it, never from git: whether git tracks a
file, or what HEAD holds, decides nothing, and the repository's filters never run."""

import json
import os
import shlex
import sys

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    COMMANDS, HOOKS, expected_settings, git, installer, make_repo, path_in, project, read, repo,
    set_in_installer, write,
)

ONLY_OURS = json.dumps(expected_settings(), indent=2) + "\n"


def commit(repo, env, files):
    for rel, data in files.items():
        write(path_in(repo, rel), data)
    git(repo, "add", "--", *files, env=env)
    git(repo, "commit", "-q", "-m", "the user's files", env=env)


def without_git(tmp_path):
    """An environment whose PATH holds no git."""
    empty = tmp_path / "no git here"
    empty.mkdir()
    return {"PATH": str(empty)}


# ------------------------------------------------------------- tracked or not

@pytest.mark.parametrize("git_there", [True, False])
def test_a_settings_file_a_release_wrote_whole_goes_with_git_or_without(
        installer, repo, tmp_path, git_there):
    """Committed by an install made before the record, exactly as a release writes a new file:
    all of it is the protocol's, so it goes (git shows it deleted, as the hooks)."""
    commit(repo, installer.env, {".claude/settings.json": ONLY_OURS})
    done = installer.ok("--uninstall", repo, **({} if git_there else {"env": without_git(tmp_path)}))
    assert not os.path.exists(path_in(repo, ".claude/settings.json"))
    assert "  removed  .claude/settings.json (held only the protocol's entries)" in done.stdout


@pytest.mark.parametrize("commits", [True, False])
@pytest.mark.parametrize("rel", [".claude/settings.json", ".gitignore"])
def test_a_file_the_install_created_goes_even_when_staged(installer, tmp_path, commits, rel):
    env = installer.env
    repo = str(tmp_path / "a repo")
    if commits:
        make_repo(repo, env, {"README.md": "hi\n"})
    else:
        git(tmp_path, "init", "-q", repo, env=env)
    installer.ok("--project", repo)
    git(repo, "add", "--", rel, env=env)
    installer.ok("--uninstall", repo)
    assert not os.path.exists(path_in(repo, rel))


def test_an_emptied_file_outside_any_repository_is_removed_without_git(
        installer, project, tmp_path):
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project, env=without_git(tmp_path))
    assert not os.path.exists(path_in(project, ".claude/settings.json"))
    assert not os.path.exists(path_in(project, ".gitignore"))
    assert "  removed  .gitignore (held only the local-only lines)" in done.stdout


# ------------------------------------------------------------ the bytes from before

@pytest.mark.parametrize("key, committed, edited", [
    ("spinnerTipsEnabled", False, 0),
    ("cleanupPeriodDays", 30, 30.0),
    ("cleanupPeriodDays", 1, True),
])
def test_an_edit_that_only_python_takes_for_equal_is_kept(installer, repo, key, committed, edited):
    commit(repo, installer.env, {".claude/settings.json": json.dumps({key: committed}) + "\n"})
    installer.ok("--project", repo)
    settings = json.loads(read(path_in(repo, ".claude/settings.json")))
    settings[key] = edited
    write(path_in(repo, ".claude/settings.json"), json.dumps(settings, indent=2) + "\n")
    installer.ok("--uninstall", repo)
    text = read(path_in(repo, ".claude/settings.json")).decode("utf-8")
    assert '"{}": {}'.format(key, json.dumps(edited)) in text


def test_core_autocrlf_set_after_the_checkout_gives_no_crlf_to_an_lf_file(installer, repo):
    git(repo, "config", "core.autocrlf", "true", env=installer.env)
    before = read(path_in(repo, ".gitignore"))
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".gitignore")) == before == b"build/\n"


def test_a_crlf_checkout_gets_heads_bytes_back_in_crlf(installer, repo):
    env = installer.env
    commit(repo, env, {".claude/settings.json": '{\n  "model": "opus"\n}\n'})
    git(repo, "config", "core.autocrlf", "true", env=env)
    os.remove(path_in(repo, ".claude/settings.json"))
    git(repo, "checkout", "--", ".claude/settings.json", env=env)
    before = read(path_in(repo, ".claude/settings.json"))
    assert before == b'{\r\n  "model": "opus"\r\n}\r\n'
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")) == before


def test_the_repositorys_filters_never_run(installer, repo, tmp_path):
    env = installer.env
    ran = tmp_path / "the smudge filter ran"
    script = tmp_path / "smudge.py"
    write(str(script), "import shutil, sys\nopen({!r}, 'w').close()\n"
          "shutil.copyfileobj(sys.stdin.buffer, sys.stdout.buffer)\n".format(str(ran)))
    commit(repo, env, {".gitattributes": ".gitignore filter=mark\n"})
    git(repo, "config", "filter.mark.smudge",
        "{} {}".format(shlex.quote(sys.executable), shlex.quote(str(script))), env=env)
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo, "--dry-run")
    assert not ran.exists()
    installer.ok("--uninstall", repo)
    assert not ran.exists()
    assert read(path_in(repo, ".gitignore")) == b"build/\n"


@pytest.mark.skipif(os.name == "nt", reason="the stand-in git is a shell script")
def test_a_git_that_never_answers_stops_no_run(installer, repo, tmp_path):
    folder = tmp_path / "hanging git"
    write(str(folder / "git"), "#!/bin/sh\nexec sleep 120\n")
    os.chmod(str(folder / "git"), 0o755)
    set_in_installer(installer, "GIT_TIMEOUT_SECONDS = 1", "git")
    commit(repo, installer.env, {".claude/settings.json": ONLY_OURS})
    env = {"PATH": "{}{}{}".format(folder, os.pathsep, installer.env["PATH"])}
    installer.ok("--update", repo, env=env, timeout=60)
    installer.ok("--uninstall", repo, env=env, timeout=60)
    assert not os.path.exists(path_in(repo, ".claude/settings.json"))


def test_a_filtered_file_gets_its_own_text_back_not_heads_blob(installer, repo, tmp_path):
    env = installer.env
    script = tmp_path / "minify.py"
    write(str(script), "import json, sys\n"
          "json.dump(json.load(sys.stdin), sys.stdout, separators=(',', ':'))\n")
    git(repo, "config", "filter.minify.clean",
        "{} {}".format(shlex.quote(sys.executable), shlex.quote(str(script))), env=env)
    pretty = b'{\n  "model": "opus"\n}\n'
    commit(repo, env, {".gitattributes": ".claude/settings.json filter=minify\n",
                       ".claude/settings.json": pretty})
    assert git(repo, "cat-file", "blob", "HEAD:.claude/settings.json", env=env) == \
        '{"model":"opus"}'
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".claude/settings.json")) == pretty


def test_uninstall_removes_the_protocols_committed_files_but_not_the_shared_ones(installer, repo):
    env = installer.env
    installer.ok("--project", repo)
    git(repo, "add", "--chmod=+x", ".claude/hooks", env=env)
    git(repo, "add", ".", env=env)
    git(repo, "commit", "-q", "-m", "the protocol", env=env)
    installer.ok("--uninstall", repo)
    status = git(repo, "status", "--porcelain", "--untracked-files=no", env=env).splitlines()
    deleted = sorted(line[3:] for line in status if line.startswith(" D "))
    # the settings file too: the install created it, and nothing of the user's is in it
    assert deleted == sorted([".claudeignore", ".claude/settings.json",
                              ".claude/memory-context-protocol.json", "memory/MEMORY.md",
                              ".gitattributes"] + [
        ".claude/hooks/" + name for name in HOOKS] + [
        ".claude/commands/" + name for name in COMMANDS])
    assert status == [" M .gitignore"] + [" D " + rel for rel in deleted] or \
        sorted(status) == sorted([" M .gitignore"] + [" D " + rel for rel in deleted])
    assert read(path_in(repo, ".gitignore")) == b"build/\n"


# ------------------------------------------------------------- files the user had

@pytest.mark.parametrize("text", ['{"hooks": {}}', "{}", '{\n    "hooks": {}\n}\n'])
def test_a_settings_file_the_user_had_outside_git_is_kept(installer, project, tmp_path, text):
    write(path_in(project, ".claude/settings.json"), text)
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project, env=without_git(tmp_path))
    assert read(path_in(project, ".claude/settings.json")) == text.encode("utf-8")
    assert ("  merged   .claude/settings.json (unwired SessionStart and Stop; removed the "
            "protocol's Skill permissions; removed 10 .claudeignore deny rule(s))") in done.stdout


def test_a_settings_file_the_installer_created_with_another_python_is_removed(
        installer, project, tmp_path):
    installer.ok("--project", project, "--python", "py -3", "--allow-missing-python")
    installer.ok("--uninstall", project, env=without_git(tmp_path))
    assert not os.path.exists(path_in(project, ".claude/settings.json"))


def test_a_gitignore_with_bytes_of_the_users_is_kept(installer, project, tmp_path):
    write(path_in(project, ".gitignore"), "# memory-context-protocol \u2014 local-only files "
          "(per developer, never shared)\r\n.claude/session-state.md\r\n")
    installer.ok("--project", project)
    installer.ok("--uninstall", project, env=without_git(tmp_path))
    assert os.path.isfile(path_in(project, ".gitignore"))
