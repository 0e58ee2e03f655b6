"""install.py --global: the protocol section in the user's CLAUDE.md, between markers."""

import os

import pytest

from installtools import (  # noqa: F401
    installer, read, release_a_new_version, snapshot, template_text, write,
)

BEGIN = "<!-- memory-context-protocol: begin -->"
END = "<!-- memory-context-protocol: end -->"


@pytest.fixture
def config_dir(tmp_path):
    return str(tmp_path / "config")


def run_global(installer, config_dir, *args):
    return installer.run("--global", *args, env={"CLAUDE_CONFIG_DIR": config_dir})


def claude_md(config_dir):
    return read(os.path.join(config_dir, "CLAUDE.md")).decode("utf-8")


def section(installer):
    return template_text(installer, "CLAUDE.md-section.md")


def test_the_template_is_wrapped_in_the_markers(installer):
    lines = section(installer).rstrip("\n").splitlines()
    assert lines[0] == BEGIN and lines[-1] == END


def test_first_run_creates_the_file_and_its_folder(installer, config_dir):
    done = run_global(installer, config_dir)
    assert done.returncode == 0, done.stderr
    assert claude_md(config_dir) == section(installer)
    assert "  wrote    {} (added the protocol section)".format(
        os.path.join(config_dir, "CLAUDE.md")) in done.stdout


def test_without_claude_config_dir_it_uses_the_home_folder(installer, tmp_path):
    home = installer.env["HOME"]
    done = installer.run("--global", unset=["CLAUDE_CONFIG_DIR"])
    assert done.returncode == 0, done.stderr
    assert read(os.path.join(home, ".claude", "CLAUDE.md")).decode("utf-8") == section(installer)


def test_appends_after_user_text_which_stays_byte_identical(installer, config_dir):
    user = "# My rules\n\nAlways answer in English.\n"
    write(os.path.join(config_dir, "CLAUDE.md"), user)
    done = run_global(installer, config_dir)
    assert done.returncode == 0
    assert claude_md(config_dir) == user + "\n" + section(installer)
    assert "  appended" in done.stdout


def test_appends_after_text_without_a_final_newline(installer, config_dir):
    """The missing line break, and no blank line: text that ended in one gets the blank line,
    and --uninstall --global must tell the two apart."""
    write(os.path.join(config_dir, "CLAUDE.md"), "no newline at the end")
    run_global(installer, config_dir)
    assert claude_md(config_dir) == "no newline at the end\n" + section(installer)


def test_an_edited_section_is_kept_unless_force(installer, config_dir):
    before = "# Mine\r\nkeep this  \n\n"
    after = "\n## Also mine\ntrailing text without newline"
    old = BEGIN + "\nold protocol text\nmore old text\n" + END + "\n"
    write(os.path.join(config_dir, "CLAUDE.md"), before + old + after)
    done = run_global(installer, config_dir)
    assert done.returncode == 0
    assert claude_md(config_dir) == before + old + after
    assert "protocol section edited by you; --force replaces it" in done.stdout
    done = run_global(installer, config_dir, "--force")
    assert done.returncode == 0, done.stderr
    text = claude_md(config_dir)
    assert text == before + section(installer) + after
    assert "  replaced" in done.stdout and "updated the protocol section" in done.stdout


def test_twice_in_a_row_changes_nothing(installer, config_dir):
    write(os.path.join(config_dir, "CLAUDE.md"), "# Mine\n")
    run_global(installer, config_dir)
    before = snapshot(config_dir)
    done = run_global(installer, config_dir)
    assert done.returncode == 0
    assert snapshot(config_dir) == before
    assert "  keep     " in done.stdout and "protocol section up to date" in done.stdout
    assert done.stdout.splitlines()[-1] == "nothing to do: already up to date"


def test_a_changed_template_is_picked_up_on_the_next_run(installer, config_dir):
    run_global(installer, config_dir)
    template = installer.source_file("templates/CLAUDE.md-section.md")
    lines = section(installer).splitlines(True)
    release_a_new_version(installer, "templates/CLAUDE.md-section.md", "RELEASED_SECTION_DIGESTS")
    write(template, "".join(lines[:1] + ["A new first rule.\n"] + lines[1:]))
    write(os.path.join(config_dir, "CLAUDE.md"), "above\n\n" + claude_md(config_dir) + "below\n")
    run_global(installer, config_dir)
    assert claude_md(config_dir) == "above\n\n" + section(installer) + "below\n"
    assert "A new first rule." in claude_md(config_dir)


@pytest.mark.parametrize("mode", ["--global", "--uninstall --global"])
@pytest.mark.parametrize("damaged", [BEGIN + "\nhalf a section\n", "text\n" + END + "\n"])
def test_a_lone_marker_is_refused_and_the_file_untouched(installer, config_dir, damaged, mode):
    write(os.path.join(config_dir, "CLAUDE.md"), damaged)
    done = (run_global if mode == "--global" else remove_global)(installer, config_dir)
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1 and "repair it by hand" in done.stderr
    assert claude_md(config_dir) == damaged


def test_a_symlinked_claude_md_is_refused(installer, config_dir, tmp_path):
    target = tmp_path / "dotfiles-CLAUDE.md"
    target.write_text("# dotfiles\n")
    os.makedirs(config_dir)
    os.symlink(str(target), os.path.join(config_dir, "CLAUDE.md"))
    done = run_global(installer, config_dir)
    assert done.returncode == 1
    assert "symbolic link" in done.stderr
    assert target.read_text() == "# dotfiles\n"


def test_dry_run_changes_nothing(installer, config_dir):
    write(os.path.join(config_dir, "CLAUDE.md"), "# Mine\n")
    before = snapshot(config_dir)
    done = run_global(installer, config_dir, "--dry-run")
    assert done.returncode == 0
    assert snapshot(config_dir) == before
    assert "  would append" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("dry run: 1 change(s) planned")


@pytest.mark.parametrize("env, message", [
    ({"HOME": ""}, "HOME is empty"),
    ({"CLAUDE_CONFIG_DIR": "relative/config"}, "CLAUDE_CONFIG_DIR must be an absolute path"),
    ({"CLAUDE_CONFIG_DIR": "{file}"}, "not a directory: {file}"),
    ({"CLAUDE_CONFIG_DIR": "{file}/sub"}, "not a directory: {file} "),
])
def test_a_config_folder_that_cannot_be_used_is_a_usage_error(installer, tmp_path, env, message):
    a_file = str(tmp_path / "a file")
    write(a_file, "mine\n")
    env = {key: value.format(file=a_file) for key, value in env.items()}
    if "CLAUDE_CONFIG_DIR" not in env:
        env["CLAUDE_CONFIG_DIR"] = ""
    before = snapshot(str(tmp_path))
    done = installer.run("--global", env=env, cwd=str(tmp_path))
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("install.py: error: " + message.format(file=a_file))
    assert snapshot(str(tmp_path)) == before


@pytest.mark.skipif(os.name == "nt", reason="the passwd database is POSIX")
def test_without_home_it_uses_the_passwd_entry_as_the_harness_does(installer):
    import pwd
    done = installer.run("--global", "--dry-run", unset=["HOME", "CLAUDE_CONFIG_DIR"])
    assert done.returncode == 0, done.stderr
    expected = os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".claude", "CLAUDE.md")
    assert done.stdout.splitlines()[0] == "dry run: protocol section for " + expected


def test_force_with_global_is_no_usage_error(installer, config_dir):
    done = run_global(installer, config_dir, "--force")
    assert done.returncode == 0, done.stderr
    assert claude_md(config_dir) == section(installer)



# ------------------------------------------------------- --uninstall --global

def remove_global(installer, config_dir, *args):
    return installer.run("--uninstall", "--global", *args, env={"CLAUDE_CONFIG_DIR": config_dir})


@pytest.mark.parametrize("user", [
    "# My rules\n", "# My rules", "# My rules\n\n", "# My rules\r\nmore\r\n", "\n", "",
    "  \n\n\n", "# A\n\n## B\n- one\n- two\n",
])
def test_global_then_uninstall_global_gives_the_file_back_byte_for_byte(
        installer, config_dir, user):
    path = os.path.join(config_dir, "CLAUDE.md")
    write(path, user)
    installer.ok("--global", env={"CLAUDE_CONFIG_DIR": config_dir})
    assert BEGIN in claude_md(config_dir)
    done = remove_global(installer, config_dir)
    assert done.returncode == 0, done.stderr
    assert read(path) == user.encode("utf-8")
    assert "  merged   {} (removed the protocol section)".format(path) in done.stdout


def test_uninstall_global_removes_a_file_that_held_the_section_alone(installer, config_dir):
    run_global(installer, config_dir)
    done = remove_global(installer, config_dir)
    assert done.returncode == 0, done.stderr
    assert os.listdir(config_dir) == []
    path = os.path.join(config_dir, "CLAUDE.md")
    assert "  removed  {} (held only the protocol section)".format(path) in done.stdout
    assert done.stdout.splitlines()[0] == "removing the protocol section from " + path


def test_uninstall_global_keeps_what_the_user_wrote_around_the_section(installer, config_dir):
    path = os.path.join(config_dir, "CLAUDE.md")
    write(path, "above\n")
    run_global(installer, config_dir)
    write(path, claude_md(config_dir) + "below, written later\n")
    remove_global(installer, config_dir)
    assert claude_md(config_dir) == "above\n\nbelow, written later\n"


def test_uninstall_global_keeps_an_edited_section_unless_force(installer, config_dir):
    path = os.path.join(config_dir, "CLAUDE.md")
    edited = "mine\n\n" + BEGIN + "\nmy own protocol notes\n" + END + "\n"
    write(path, edited)
    done = remove_global(installer, config_dir)
    assert done.returncode == 0, done.stderr
    assert claude_md(config_dir) == edited
    assert "  keep     {} (protocol section edited by you; --force removes it)".format(
        path) in done.stdout
    done = remove_global(installer, config_dir, "--force")
    assert done.returncode == 0, done.stderr
    assert claude_md(config_dir) == "mine\n"


def test_uninstall_global_removes_a_section_an_earlier_release_wrote(installer, config_dir):
    run_global(installer, config_dir)
    lines = section(installer).splitlines(True)
    release_a_new_version(installer, "templates/CLAUDE.md-section.md", "RELEASED_SECTION_DIGESTS")
    write(installer.source_file("templates/CLAUDE.md-section.md"),
          "".join(lines[:1] + ["A new first rule.\n"] + lines[1:]))
    done = remove_global(installer, config_dir)
    assert done.returncode == 0, done.stderr
    assert not os.path.exists(os.path.join(config_dir, "CLAUDE.md"))


def test_uninstall_global_dry_run_changes_nothing(installer, config_dir):
    write(os.path.join(config_dir, "CLAUDE.md"), "# Mine\n")
    run_global(installer, config_dir)
    before = snapshot(config_dir)
    done = remove_global(installer, config_dir, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert snapshot(config_dir) == before
    assert "  would merge" in done.stdout
    assert done.stdout.splitlines()[-1].startswith("dry run: 1 change(s) planned")


@pytest.mark.parametrize("existing", [None, "# Mine\n"])
def test_uninstall_global_without_a_section_changes_nothing(installer, config_dir, existing):
    if existing is not None:
        write(os.path.join(config_dir, "CLAUDE.md"), existing)
    else:
        os.makedirs(config_dir)
    before = snapshot(config_dir)
    done = remove_global(installer, config_dir)
    assert done.returncode == 0, done.stderr
    assert snapshot(config_dir) == before
    assert done.stdout.splitlines()[-1] == "nothing to remove: the protocol is not installed here"


def test_uninstall_global_refuses_a_symlinked_claude_md(installer, config_dir, tmp_path):
    target = tmp_path / "dotfiles-CLAUDE.md"
    os.makedirs(config_dir)
    run_global(installer, str(tmp_path / "elsewhere"))
    target.write_bytes(read(os.path.join(str(tmp_path / "elsewhere"), "CLAUDE.md")))
    os.symlink(str(target), os.path.join(config_dir, "CLAUDE.md"))
    done = remove_global(installer, config_dir)
    assert done.returncode == 1 and "symbolic link" in done.stderr
    assert BEGIN in target.read_text()


# What a user's own notes may show of the protocol: its markers in a code block, as an example.
FENCED = ("# My rules\n\nThe memory protocol keeps its section between two lines:\n\n"
          "```markdown\n" + BEGIN + "\n## Memory protocol\n(my notes on it)\n" + END + "\n```\n\n"
          "~~~\n" + BEGIN + "\n~~~\n")


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_markers_inside_a_code_fence_are_the_users_example_not_the_section(
        installer, config_dir, force):
    write(os.path.join(config_dir, "CLAUDE.md"), FENCED)
    done = run_global(installer, config_dir, *force)
    assert done.returncode == 0, done.stderr
    assert claude_md(config_dir) == FENCED + "\n" + section(installer)
    again = run_global(installer, config_dir, *force)
    assert again.stdout.splitlines()[-1].startswith("nothing to do")
    removed = run_global(installer, config_dir, "--uninstall", *force)
    assert removed.returncode == 0, removed.stderr
    assert claude_md(config_dir) == FENCED
    nothing = run_global(installer, config_dir, "--uninstall", *force)
    assert nothing.stdout.splitlines()[-1].startswith("nothing to remove")
    assert claude_md(config_dir) == FENCED
