"""install.py --uninstall in git repositories: what git tracks, and how its committed bytes come back."""

import json
import os

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    expected_settings, git, installer, make_repo, path_in, project, read, repo, write,
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

def test_a_committed_settings_file_stays_when_git_is_missing(installer, repo, tmp_path):
    commit(repo, installer.env, {".claude/settings.json": ONLY_OURS})
    done = installer.ok("--uninstall", repo, env=without_git(tmp_path))
    assert json.loads(read(path_in(repo, ".claude/settings.json"))) == {}
    assert ("  merged   .claude/settings.json (unwired SessionStart and Stop; kept, since git "
            "could not say whether it tracks the file)") in done.stdout


def test_a_committed_settings_file_stays_when_its_filter_program_is_missing(installer, repo):
    env = installer.env
    commit(repo, env, {".claude/settings.json": ONLY_OURS,
                       ".gitattributes": ".claude/settings.json filter=gone\n"})
    for key, value in (("smudge", "no-such-filter-program"), ("clean", "no-such-filter-program"),
                       ("required", "true")):
        git(repo, "config", "filter.gone." + key, value, env=env)
    installer.ok("--uninstall", repo)
    assert json.loads(read(path_in(repo, ".claude/settings.json"))) == {}


@pytest.mark.parametrize("commits", [True, False])
@pytest.mark.parametrize("rel", [".claude/settings.json", ".gitignore"])
def test_a_staged_file_is_never_removed(installer, tmp_path, commits, rel):
    env = installer.env
    repo = str(tmp_path / "a repo")
    if commits:
        make_repo(repo, env)
    else:
        git(tmp_path, "init", "-q", repo, env=env)
    installer.ok("--project", repo)
    git(repo, "add", "--", rel, env=env)
    installer.ok("--uninstall", repo)
    assert os.path.isfile(path_in(repo, rel))


def test_an_emptied_file_outside_any_repository_is_removed_without_git(
        installer, project, tmp_path):
    installer.ok("--project", project)
    done = installer.ok("--uninstall", project, env=without_git(tmp_path))
    assert not os.path.exists(path_in(project, ".claude/settings.json"))
    assert not os.path.exists(path_in(project, ".gitignore"))
    assert "  removed  .gitignore (held only the local-only lines)" in done.stdout


# ------------------------------------------------------------ HEAD's bytes back

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
