"""The last line of a run says what the run did: a run that kept a file differing from this
version is not "already up to date", and an uninstall where nothing was installed says so."""

import os

from installtools import installer, path_in, project, read, repo, write  # noqa: F401


def last_line(done):
    return done.stdout.splitlines()[-1]


def test_update_that_keeps_a_hook_of_the_users_does_not_call_it_up_to_date(installer, project):
    installer.ok("--project", project)
    hook = path_in(project, ".claude/hooks/stop-handoff.py")
    with open(hook, "a", encoding="utf-8") as handle:
        handle.write("# my own change\n")
    done = installer.ok("--update", project)
    assert last_line(done) == ("nothing changed, but .claude/hooks/stop-handoff.py kept as it "
                               "differs from this version (see above)")
    assert installer.run("--check", project).returncode == 1


def test_an_unchanged_install_is_still_up_to_date(installer, repo):
    installer.ok("--project", repo)
    assert last_line(installer.ok("--update", repo)) == "nothing to do: already up to date"


def test_global_that_keeps_an_edited_section_does_not_call_it_up_to_date(installer):
    installer.ok("--global")
    claude_md = path_in(installer.env["HOME"], ".claude/CLAUDE.md")
    text = read(claude_md).decode("utf-8")
    marker = "<!-- memory-context-protocol: begin -->\n"
    assert marker in text
    write(claude_md, text.replace(marker, marker + "My own line.\n"))
    done = installer.ok("--global")
    assert last_line(done).startswith("nothing changed, but ")
    assert last_line(done).endswith(os.path.join(".claude", "CLAUDE.md") +
                                    " kept as it differs from this version (see above)")


def test_uninstall_where_nothing_was_installed_says_so(installer, project):
    assert last_line(installer.ok("--uninstall", project)) == \
        "nothing to remove: the protocol is not installed here"
