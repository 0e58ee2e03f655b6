"""Parts missing or changed: whatever `--update --dry-run` would repair, --check reports, and after
the repair it reports nothing. A command the user edited is named with the option that replaces it."""

import os

import pytest

from installtools import fix_line, installer, invoked, path_in, project, repo, read, write  # noqa: F401


def delete_a_command(project):
    os.remove(path_in(project, ".claude/commands/dream.md"))


def lose_the_gitignore_block(project):
    write(path_in(project, ".gitignore"), "build/\n")


def lose_a_line_of_the_block(project):
    path = path_in(project, ".gitignore")
    write(path, b"".join(line for line in read(path).splitlines(True)
                         if b"baseline" not in line))


SETUPS = {
    "a deleted command": (delete_a_command, "--update would: write .claude/commands/dream.md"),
    "no .gitignore block": (lose_the_gitignore_block,
                            "--update would: append .gitignore (added the local-only lines)"),
    "a line of the block gone": (lose_a_line_of_the_block,
                                 "--update would: repair .gitignore (restored the local-only lines)"),
}


@pytest.mark.parametrize("setup", sorted(SETUPS))
def test_what_update_would_repair_is_a_finding_until_it_is_repaired(installer, repo, setup):
    change, text = SETUPS[setup]
    installer.ok("--project", repo)
    change(repo)
    planned = installer.ok("--update", repo, "--dry-run").stdout
    assert "0 change(s) planned" not in planned
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert "  DRIFT    " + text in done.stdout.splitlines()
    assert fix_line(installer, "--update", repo) in done.stdout
    installer.ok("--update", repo)
    installer.ok("--check", repo)


def test_an_edited_command_names_the_option_that_replaces_it(installer, repo):
    installer.ok("--project", repo)
    with open(path_in(repo, ".claude/commands/handoff.md"), "a") as handle:
        handle.write("One more rule of mine.\n")
    done = installer.run("--check", repo)
    assert done.returncode == 1
    assert ("  DRIFT    edited by you, so --update keeps them: .claude/commands/handoff.md; "
            "--update --force replaces them") in done.stdout.splitlines()
    assert fix_line(installer, "--update --force", repo) in done.stdout
    installer.ok("--update", "--force", repo)
    installer.ok("--check", repo)
