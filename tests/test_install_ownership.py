"""install.py run as root keeps every file its owner, and a file with other names (hard links)
keeps them.

Run with sudo, a rename-based write would hand every file it replaced to root and make every new
file and folder root's, so the user could no longer edit their own .gitignore or settings. A
rename also splits a hard link: the other name would keep the old bytes. These tests build
projects owned by made-up users (root may give a file to any uid), run the installer as root
and read the owners and inodes back; the ownership tests are skipped when not run as root."""

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

from installtools import (  # noqa: F401  (fixtures are used by name)
    COMMANDS, GITIGNORE_BLOCK, HOOKS, build_source, expected_settings, installer, path_in,
    project, read, release_a_new_version, sealed_env, set_in_installer, settings_of, write,
    Installer,
)

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not AS_ROOT, reason="giving files to another user needs root (uid 0); run the suite as root")

USER = (12345, 12345)       # the project's owner
SOMEONE = (23456, 34567)    # the owner of one file in it, neither root nor the project's owner

USER_GITIGNORE = "build/\n*.log\n"
USER_SETTINGS = '{\n  "model": "opus",\n  "env": {"A": "1"}\n}\n'


def owner_of(path):
    info = os.lstat(path)
    return (info.st_uid, info.st_gid)


def give(path, owner):
    """Give path, and everything under it, to owner."""
    os.lchown(path, *owner)
    for folder, folders, files in os.walk(path):
        for name in folders + files:
            os.lchown(os.path.join(folder, name), *owner)


def owners_under(root):
    """{path relative to root: (uid, gid)} for everything under root."""
    found = {}
    for folder, folders, files in os.walk(root):
        for name in folders + files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root).replace(os.sep, "/")] = owner_of(path)
    return found


def not_owned_by(root, owner, but=()):
    """Everything under root whose owner is not owner, leaving out the paths in but."""
    return {rel: found for rel, found in owners_under(root).items()
            if found != owner and rel not in but}


def users_project(project):
    """A project of USER's with a .gitignore and a settings file; the .gitignore is SOMEONE's."""
    write(path_in(project, ".gitignore"), USER_GITIGNORE)
    write(path_in(project, ".claude/settings.json"), USER_SETTINGS)
    os.chmod(path_in(project, ".claude/settings.json"), 0o640)
    give(project, USER)
    os.lchown(path_in(project, ".gitignore"), *SOMEONE)


# ------------------------------------------------------------------ owners, run as root

@needs_root
def test_project_as_root_keeps_the_owners_of_the_files_it_edits_and_gives_new_ones_the_folders(
        installer, project):
    users_project(project)
    done = installer.ok("--project", project)
    assert "  merged   .claude/settings.json" in done.stdout
    assert owner_of(path_in(project, ".gitignore")) == SOMEONE
    assert GITIGNORE_BLOCK in read(path_in(project, ".gitignore")).decode("utf-8")
    assert stat.S_IMODE(os.stat(path_in(project, ".claude/settings.json")).st_mode) == 0o640
    # new folders (.claude/hooks, .claude/commands, memory) and new files are the project's owner's
    assert not_owned_by(project, USER, but={".gitignore"}) == {}
    assert owner_of(project) == USER


@needs_root
def test_project_as_root_in_a_folder_of_roots_makes_files_roots(installer, project):
    """The rule is the folder's owner, not "anyone but root": a root-owned project stays root's."""
    write(path_in(project, ".gitignore"), USER_GITIGNORE)
    os.lchown(path_in(project, ".gitignore"), *SOMEONE)
    installer.ok("--project", project)
    assert owner_of(path_in(project, ".gitignore")) == SOMEONE
    assert not_owned_by(project, (0, 0), but={".gitignore"}) == {}


@needs_root
def test_a_new_folder_takes_the_owner_of_the_folder_it_is_made_in(installer, project):
    """.claude exists and is SOMEONE's, the project is USER's: hooks/ and commands/ are SOMEONE's."""
    os.makedirs(path_in(project, ".claude"))
    give(project, USER)
    os.lchown(path_in(project, ".claude"), *SOMEONE)
    installer.ok("--project", project)
    for rel in (".claude/hooks", ".claude/commands", ".claude/settings.json",
                ".claude/hooks/session-start.py", ".claude/commands/handoff.md"):
        assert owner_of(path_in(project, rel)) == SOMEONE, rel
    for rel in ("memory", "memory/MEMORY.md", ".gitignore", ".claudeignore"):
        assert owner_of(path_in(project, rel)) == USER, rel


@needs_root
def test_update_as_root_keeps_the_owners_of_the_files_it_replaces(installer, project):
    installer.ok("--project", project)
    give(project, USER)
    hook = path_in(project, ".claude/hooks/stop-handoff.py")
    command = path_in(project, ".claude/commands/handoff.md")
    os.lchown(hook, *SOMEONE)
    os.lchown(command, *SOMEONE)
    release_a_new_version(installer, "hooks/stop-handoff.py", "RELEASED_HOOK_DIGESTS")
    release_a_new_version(installer, "commands/handoff.md", "RELEASED_COMMAND_DIGESTS")
    os.remove(path_in(project, ".claude/commands/dream.md"))
    write(path_in(project, ".gitignore"), USER_GITIGNORE)  # the block went missing
    os.lchown(path_in(project, ".gitignore"), *SOMEONE)
    done = installer.ok("--update", project)
    assert "  replaced .claude/hooks/stop-handoff.py (was an older version)" in done.stdout
    assert "  replaced .claude/commands/handoff.md (was an older version)" in done.stdout
    assert "  wrote    .claude/commands/dream.md" in done.stdout
    assert read(hook) == read(installer.source_file("hooks/stop-handoff.py"))
    assert owner_of(hook) == SOMEONE
    assert owner_of(command) == SOMEONE
    assert owner_of(path_in(project, ".gitignore")) == SOMEONE
    assert GITIGNORE_BLOCK in read(path_in(project, ".gitignore")).decode("utf-8")
    assert not_owned_by(project, USER, but={
        ".claude/hooks/stop-handoff.py", ".claude/commands/handoff.md", ".gitignore"}) == {}


@needs_root
def test_uninstall_as_root_keeps_the_owners_of_the_files_it_edits(installer, project):
    users_project(project)
    installer.ok("--project", project)
    give(project, USER)
    os.lchown(path_in(project, ".gitignore"), *SOMEONE)
    done = installer.ok("--uninstall", project)
    assert read(path_in(project, ".gitignore")) == USER_GITIGNORE.encode("utf-8")
    assert read(path_in(project, ".claude/settings.json")) == USER_SETTINGS.encode("utf-8")
    assert "  merged   .gitignore" in done.stdout
    assert owner_of(path_in(project, ".gitignore")) == SOMEONE
    assert owner_of(path_in(project, ".claude/settings.json")) == USER
    assert not_owned_by(project, USER, but={".gitignore"}) == {}


@needs_root
def test_global_as_root_keeps_the_owner_of_the_users_claude_md(installer, tmp_path):
    config = path_in(installer.env["HOME"], ".claude")
    write(path_in(config, "CLAUDE.md"), "# my rules\n")
    give(installer.env["HOME"], USER)
    installer.ok("--global")
    assert b"# my rules\n" in read(path_in(config, "CLAUDE.md"))
    assert not_owned_by(installer.env["HOME"], USER) == {}


REFUSING_CHOWN = '''\
def refuse_to_change_an_owner(*args, **kwargs):
    raise PermissionError(1, "Operation not permitted")


os.chown = os.fchown = os.lchown = refuse_to_change_an_owner'''


@needs_root
def test_an_owner_that_cannot_be_kept_is_named_after_every_change_is_made(installer, project):
    """A file system that refuses chown: the files are written all the same (a run is never left
    half done), then one line names each owner that could not be kept and the chown that gives
    the file back, and the exit code is 1."""
    users_project(project)
    set_in_installer(installer, REFUSING_CHOWN, "files")
    done = installer.run("--project", project)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout.splitlines()[-1].startswith("done: ")
    assert GITIGNORE_BLOCK in read(path_in(project, ".gitignore")).decode("utf-8")
    [line] = done.stderr.splitlines()
    assert line.startswith("install.py: error: every change was made, but their owner could not "
                           "be kept (chown: Operation not permitted); give them back with: chown ")
    repairs = {}
    for command in line.split("give them back with: ")[1].split("; "):
        words = shlex.split(command)
        assert words[:2] == ["chown", "-R"]
        repairs[words[2]] = sorted(words[3:])
    # a folder the run made is given back whole (-R), so the files in it need no naming
    assert repairs == {
        "12345:12345": sorted(path_in(project, rel) for rel in (
            ".claude/hooks", ".claude/commands", ".claude/settings.json", "memory",
            ".claudeignore", ".gitattributes", ".claude/memory-context-protocol.json")),
        "23456:34567": [path_in(project, ".gitignore")],
    }
    assert owner_of(path_in(project, ".gitignore")) == (0, 0)


@needs_root
def test_a_refused_chown_says_nothing_where_root_owns_the_folder_anyway(installer, project):
    set_in_installer(installer, REFUSING_CHOWN, "files")
    installer.ok("--project", project)


@pytest.mark.skipif(not AS_ROOT or not shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin"),
                    reason="running the installer as another user needs root and a python3 "
                           "outside root's home")
def test_run_as_the_projects_owner_tries_no_chown(tmp_path):
    """Not root: the files are written as any editor writes them, and no chown is tried (it
    would fail for a group the user is not in, and turn a good run into an error)."""
    top = tempfile.mkdtemp(prefix="owners-")
    try:
        os.chmod(top, 0o755)
        script = build_source(os.path.join(top, "source"))
        give(os.path.join(top, "source"), USER)
        env = sealed_env(os.path.join(top, "home"))
        env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
        give(os.path.join(top, "home"), USER)
        project = os.path.join(top, "a project")
        users_project(project)
        os.lchown(path_in(project, ".gitignore"), USER[0], SOMEONE[1])  # a group the user is not in
        user = Installer(script, env)

        def as_the_user():
            os.setgroups([])
            os.setgid(USER[1])
            os.setuid(USER[0])

        done = user.run("--project", project, "--allow-no-git", preexec_fn=as_the_user,
                        python=shutil.which("python3", path=env["PATH"]))
        assert (done.returncode, done.stderr) == (0, ""), (done.stdout, done.stderr)
        # the rename made the .gitignore the user's group's, as any editor's rename would
        assert owner_of(path_in(project, ".gitignore")) == USER
        assert not_owned_by(project, USER) == {}
    finally:
        shutil.rmtree(top)


# ------------------------------------------------------------------ permission bits

@pytest.mark.parametrize("before, after", [
    (0o755, 0o755), (0o750, 0o750), (0o700, 0o700), (0o775, 0o775),
    (0o644, 0o755), (0o640, 0o750), (0o600, 0o700),
], ids=oct)
def test_a_replaced_hook_keeps_its_permission_bits_and_is_executable(installer, project,
                                                                      before, after):
    """Replaced, a hook keeps what its owner set (a private 0o700, a group's 0o775) and can be
    run by whoever can read it."""
    installer.ok("--project", project)
    hook = path_in(project, ".claude/hooks/stop-handoff.py")
    os.chmod(hook, before)
    release_a_new_version(installer, "hooks/stop-handoff.py", "RELEASED_HOOK_DIGESTS")
    installer.ok("--update", project)
    assert read(hook) == read(installer.source_file("hooks/stop-handoff.py"))
    assert stat.S_IMODE(os.stat(hook).st_mode) == after


@pytest.mark.parametrize("before, after", [(0o644, 0o755), (0o600, 0o700), (0o640, 0o750)],
                         ids=oct)
def test_a_hook_that_lost_its_executable_bit_gets_it_where_it_can_be_read(installer, project,
                                                                         before, after):
    installer.ok("--project", project)
    hook = path_in(project, ".claude/hooks/session-start.py")
    os.chmod(hook, before)
    done = installer.ok("--project", project)
    assert "  chmod +x .claude/hooks/session-start.py" in done.stdout
    assert stat.S_IMODE(os.stat(hook).st_mode) == after


# ------------------------------------------------------------------ hard links

def hard_link(project, rel, elsewhere):
    """Give project/rel a second name outside the project, as a user sharing it would."""
    other = os.path.join(elsewhere, rel.replace("/", "-"))
    os.makedirs(elsewhere, exist_ok=True)
    os.link(path_in(project, rel), other)
    return other


def same_file_both_names(project, rel, other, inode):
    path = path_in(project, rel)
    info = os.lstat(path)
    assert info.st_ino == inode, "{} was split from its other name".format(rel)
    assert info.st_nlink == 2
    assert os.path.samefile(path, other)
    return read(path)


def no_temporary_files(folder):
    assert [name for name in os.listdir(folder) if name.endswith(".tmp")] == []


@pytest.mark.parametrize("rel", [".gitignore", ".claude/settings.json"])
def test_project_writes_a_hard_linked_file_through_every_name(installer, project, tmp_path, rel):
    write(path_in(project, ".gitignore"), USER_GITIGNORE)
    write(path_in(project, ".claude/settings.json"), USER_SETTINGS)
    other = hard_link(project, rel, str(tmp_path / "shared"))
    inode = os.lstat(other).st_ino
    installer.ok("--project", project)
    data = same_file_both_names(project, rel, other, inode)
    if rel == ".gitignore":
        assert data.decode("utf-8") == USER_GITIGNORE + GITIGNORE_BLOCK
    else:
        assert settings_of(project)["hooks"] == expected_settings()["hooks"]
    no_temporary_files(os.path.dirname(path_in(project, rel)))


def break_the_install(project):
    """What --update repairs in both files: the .gitignore block gone, the .claudeignore lines'
    deny rules gone (a grant the user took out stays out)."""
    write(path_in(project, ".gitignore"), USER_GITIGNORE)
    settings = settings_of(project)
    del settings["permissions"]["deny"]
    write(path_in(project, ".claude/settings.json"), json.dumps(settings, indent=2) + "\n")


@pytest.mark.parametrize("rel", [".gitignore", ".claude/settings.json"])
def test_update_writes_a_hard_linked_file_through_every_name(installer, project, tmp_path, rel):
    installer.ok("--project", project)
    break_the_install(project)
    other = hard_link(project, rel, str(tmp_path / "shared"))
    inode = os.lstat(other).st_ino
    installer.ok("--update", project)
    data = same_file_both_names(project, rel, other, inode)
    if rel == ".gitignore":
        assert data.decode("utf-8") == USER_GITIGNORE + GITIGNORE_BLOCK
    else:
        assert settings_of(project)["permissions"]["deny"] == expected_settings()[
            "permissions"]["deny"]
    no_temporary_files(os.path.dirname(path_in(project, rel)))


@pytest.mark.parametrize("rel", [".gitignore", ".claude/settings.json"])
def test_uninstall_writes_a_hard_linked_file_through_every_name(installer, project, tmp_path, rel):
    write(path_in(project, ".gitignore"), USER_GITIGNORE)
    write(path_in(project, ".claude/settings.json"), USER_SETTINGS)
    installer.ok("--project", project)
    other = hard_link(project, rel, str(tmp_path / "shared"))
    inode = os.lstat(other).st_ino
    installer.ok("--uninstall", project)
    data = same_file_both_names(project, rel, other, inode)
    assert data == (USER_GITIGNORE if rel == ".gitignore" else USER_SETTINGS).encode("utf-8")
    no_temporary_files(os.path.dirname(path_in(project, rel)))


@needs_root
def test_a_hard_linked_file_written_through_keeps_its_owner_and_bits(installer, project, tmp_path):
    users_project(project)
    other = hard_link(project, ".claude/settings.json", str(tmp_path / "shared"))
    installer.ok("--project", project)
    assert os.path.samefile(path_in(project, ".claude/settings.json"), other)
    assert owner_of(other) == USER
    assert stat.S_IMODE(os.stat(other).st_mode) == 0o640


def limit_file_size(size):
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                    reason="needs RLIMIT_FSIZE as Linux applies it")
def test_a_write_through_a_hard_link_that_fails_leaves_the_file_whole(installer, project, tmp_path):
    """New bytes the disk has no room for (here a file-size limit stands in for a full disk) fail
    before the file is opened: both names keep the old bytes whole and untouched, and no
    temporary file is left."""
    installer.ok("--project", project)
    old = USER_GITIGNORE + "# " + "x" * 4000 + "\n"
    write(path_in(project, ".gitignore"), old)  # the block went missing
    other = hard_link(project, ".gitignore", str(tmp_path / "shared"))
    os.utime(other, ns=(1, 1))
    done = installer.run("--update", project, preexec_fn=limit_file_size(len(old) + 100))
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "could not change .gitignore: File too large; nothing was changed" in done.stderr
    assert read(other) == old.encode("utf-8")
    assert os.stat(other).st_mtime_ns == 1, "the file was written to"
    assert os.path.samefile(path_in(project, ".gitignore"), other)
    no_temporary_files(project)


def test_a_replaced_command_leaves_its_other_name_as_it_was(installer, project, tmp_path):
    """A command is the installer's own, replaced whole: --force replaces this project's copy of a
    command the user also keeps elsewhere, and their other copy is never changed."""
    installer.ok("--project", project)
    rel = ".claude/commands/handoff.md"
    write(path_in(project, rel), "# my own handoff\n")
    other = hard_link(project, rel, str(tmp_path / "dotfiles"))
    done = installer.ok("--project", project, "--force")
    assert read(path_in(project, rel)) == read(installer.source_file("commands/handoff.md"))
    assert read(other) == b"# my own handoff\n"
    assert "  replaced {0} (--force; your edit is kept in {0}.mine; its other name keeps the old " \
        "bytes)".format(rel) in done.stdout
    assert read(path_in(project, rel + ".mine")) == b"# my own handoff\n"


def test_a_replaced_hook_leaves_its_other_name_for_that_projects_update(installer, project,
                                                                        tmp_path):
    installer.ok("--project", project)
    rel = ".claude/hooks/stop-handoff.py"
    old = read(path_in(project, rel))
    other = hard_link(project, rel, str(tmp_path / "other project"))
    release_a_new_version(installer, "hooks/stop-handoff.py", "RELEASED_HOOK_DIGESTS")
    done = installer.ok("--update", project)
    assert read(path_in(project, rel)) == read(installer.source_file("hooks/stop-handoff.py"))
    assert read(other) == old
    assert ("  replaced {} (was an older version; its other name keeps the old bytes)".format(rel)
            in done.stdout)


WRITE_HALF_THEN_FAIL = '''\
real_write = os.write


def write_half_then_fail(descriptor, data):
    """The first write stops half-way with a full disk; the next ones work."""
    if not write_half_then_fail.failed:
        write_half_then_fail.failed = True
        real_write(descriptor, bytes(data)[:len(data) // 2])
        raise OSError(28, "No space left on device")
    return real_write(descriptor, data)


write_half_then_fail.failed = False
os.write = write_half_then_fail'''


def test_a_write_through_a_hard_link_that_stops_half_way_puts_the_old_bytes_back(
        installer, project, tmp_path):
    """The block comes first, so the new bytes differ from the old from the first one on."""
    installer.ok("--project", project)
    old = GITIGNORE_BLOCK + USER_GITIGNORE + "# " + "x" * 4000 + "\n"
    write(path_in(project, ".gitignore"), old)
    other = hard_link(project, ".gitignore", str(tmp_path / "shared"))
    set_in_installer(installer, WRITE_HALF_THEN_FAIL, "files")
    done = installer.run("--uninstall", project)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "could not change .gitignore: No space left on device; the " in done.stderr
    assert read(other) == old.encode("utf-8")
    assert os.path.samefile(path_in(project, ".gitignore"), other)
    no_temporary_files(project)


@needs_root
def test_as_root_a_hard_link_to_a_file_of_another_owner_is_refused(installer, project, tmp_path):
    # The project's owner may link a file they cannot write (root's, another user's) into
    # their project: root writing through it would change that file, wherever it lives.
    os.makedirs(path_in(project, ".claude"))
    give(project, USER)
    protected = tmp_path / "elsewhere" / "credentials"
    protected.parent.mkdir()
    protected.write_bytes(b"root only\n")
    os.chmod(str(protected), 0o600)
    os.link(str(protected), path_in(project, ".gitignore"))
    done = installer.run("--project", project)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        "install.py: error: .gitignore has other names (hard links) and belongs to 0:0, not to "
        "its folder's owner; run as root, writing through it could change a file elsewhere: "
        "run install.py as the project's owner; nothing was changed\n")
    assert protected.read_bytes() == b"root only\n"
    os.lchown(str(protected), *USER)  # the project owner's own file: written through
    installer.ok("--project", project)
    assert protected.read_bytes().startswith(b"root only\n# memory-context-protocol")
