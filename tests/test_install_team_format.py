"""install.py and the team format of the memory (spec §4.5).

--project and --update write the memory's merge rule into .gitattributes, as a marked block among
the user's lines, and --uninstall takes it out again, giving the file back byte for byte. --update
moves a memory kept in the stamped format to the team format, each file it changes on a line of
its own; --project never touches the memory, and --check's memory health advises the move. Once the rule is committed, a teammate's clone, where nobody ran the installer or set up
anything, merges two branches that changed the same line of the memory without stopping."""
import json
import os
import subprocess

from installtools import (  # noqa: F401  (fixtures)
    git, installer, make_repo, path_in, project, read, repo, template_text, write,
)

STAMPED_INDEX = ("# Project Memory Index\n<!-- Last dream: 2026-11-29 -->\n\n## Active Context\n"
                 "Shipping the rate table; next: per-customer rates.\n\n## Topics\n"
                 "- [Deployment](deployment.md) — one instance behind the gateway\n")
STAMPED_TOPIC = ("# Deployment\n<!-- Last updated: 2026-11-29 -->\n\n"
                 "- 2026-09-29: one instance behind the gateway.\n"
                 "- 2026-10-02: a rate change ships by a reviewed commit.\n")


def text_of(project, rel):
    return read(path_in(project, rel)).decode("utf-8")


def test_an_install_writes_the_merge_rule_as_the_template_says(installer, repo):
    done = installer.ok("--project", repo)
    assert "  wrote    .gitattributes (added the memory's merge rule)" in done.stdout
    assert text_of(repo, ".gitattributes") == template_text(installer, "gitattributes")
    again = installer.ok("--project", repo)
    assert "  keep     .gitattributes (memory's merge rule present)" in again.stdout


def test_the_rule_joins_a_gitattributes_of_the_users_and_leaves_its_lines(installer, repo):
    write(path_in(repo, ".gitattributes"), "*.png binary\r\n*.sh text eol=lf\r\n")
    done = installer.ok("--project", repo)
    assert "  appended .gitattributes (added the memory's merge rule)" in done.stdout
    block = template_text(installer, "gitattributes").replace("\n", "\r\n")
    assert text_of(repo, ".gitattributes") == "*.png binary\r\n*.sh text eol=lf\r\n" + block


def test_the_rule_holds_for_every_memory_file_in_git(installer, repo):
    installer.ok("--project", repo)
    done = git(repo, "check-attr", "merge", "--", "memory/MEMORY.md", "memory/gotchas/ipv6.md",
               "src/app.py", env=installer.env)
    assert done.splitlines() == ["memory/MEMORY.md: merge: union",
                                 "memory/gotchas/ipv6.md: merge: union",
                                 "src/app.py: merge: unspecified"]


def test_uninstall_takes_the_rule_out_and_gives_the_users_file_back(installer, repo):
    write(path_in(repo, ".gitattributes"), "*.png binary\n")
    installer.ok("--project", repo)
    installer.ok("--uninstall", repo)
    assert read(path_in(repo, ".gitattributes")) == b"*.png binary\n"


def test_uninstall_removes_a_gitattributes_the_install_wrote(installer, repo):
    installer.ok("--project", repo)
    done = installer.ok("--uninstall", repo)
    assert "  removed  .gitattributes (held only the memory's merge rule)" in done.stdout
    assert not os.path.exists(path_in(repo, ".gitattributes"))


def test_update_restores_a_missing_rule_and_check_says_so_first(installer, repo):
    installer.ok("--project", repo)
    os.remove(path_in(repo, ".gitattributes"))
    check = installer.run("--check", repo)
    assert check.returncode == 1
    assert "--update would: write .gitattributes (added the memory's merge rule)" in check.stdout
    installer.ok("--update", repo)
    assert text_of(repo, ".gitattributes") == template_text(installer, "gitattributes")


def stamped_repo(installer, tmp_path):
    return make_repo(str(tmp_path / "stamped"), installer.env, {
        "README.md": "# demo\n", "memory/MEMORY.md": STAMPED_INDEX,
        "memory/deployment.md": STAMPED_TOPIC})


def test_project_leaves_a_stamped_memory_as_it_is_and_check_advises_the_move(installer, tmp_path):
    repo = stamped_repo(installer, tmp_path)
    installer.ok("--project", repo)
    assert text_of(repo, "memory/MEMORY.md") == STAMPED_INDEX
    assert text_of(repo, "memory/deployment.md") == STAMPED_TOPIC
    check = installer.run("--check", repo)
    assert check.returncode == 0 and check.stdout.startswith("ok: "), check.stdout
    report = json.loads(installer.run("--check", "--json", repo).stdout)
    [advice] = [f for f in report["memory_health"]["findings"] if f["check"] == "stamped-format"]
    assert advice["severity"] == "advice" and "--update" in advice["repair"]
    dry = installer.ok("--update", "--dry-run", repo)
    assert any(line.split()[:3] == ["would", "replace", "memory/deployment.md"]
               for line in dry.stdout.splitlines())


def test_update_moves_a_stamped_memory_to_the_team_format(installer, tmp_path):
    repo = stamped_repo(installer, tmp_path)
    installer.ok("--project", repo)
    done = installer.ok("--update", repo)
    lines = [line for line in done.stdout.splitlines() if "memory/" in line
             and not line.startswith("  next ")]
    assert lines == [
        "  replaced memory/MEMORY.md (to the team format: no Last dream stamp, the Active Context "
        "moved to a file it links)",
        "  replaced memory/deployment.md (to the team format: no Last updated stamp, dated facts a "
        "blank line apart)",
        "  wrote    memory/work-in-progress.md (the index's Active Context, line for line, for the "
        "team format)"]
    index = text_of(repo, "memory/MEMORY.md")
    assert "Last dream" not in index and "## Active Context" not in index
    assert "- [Deployment](deployment.md) — one instance behind the gateway" in index
    assert "](work-in-progress.md) — " in index
    assert text_of(repo, "memory/work-in-progress.md") == (
        "# What was in progress on 2026-11-29\n\n"
        "Shipping the rate table; next: per-customer rates.\n")
    assert text_of(repo, "memory/deployment.md") == (
        "# Deployment\n\n- 2026-09-29: one instance behind the gateway.\n\n"
        "- 2026-10-02: a rate change ships by a reviewed commit.\n")
    again = installer.ok("--update", repo)
    assert "memory/" not in again.stdout.replace("memory/MEMORY.md (exists", "")


def test_a_dry_run_of_the_update_moves_nothing(installer, tmp_path):
    repo = stamped_repo(installer, tmp_path)
    installer.ok("--project", repo)
    done = installer.ok("--update", repo, "--dry-run")
    assert any(line.split()[:3] == ["would", "replace", "memory/MEMORY.md"]
               for line in done.stdout.splitlines())
    assert text_of(repo, "memory/MEMORY.md") == STAMPED_INDEX


def test_a_teammates_clone_without_any_setup_merges_one_line_changed_on_two_branches(
        installer, repo, tmp_path):
    write(path_in(repo, "memory/retry.md"), "# Retry\n\n- 2026-10-01: three times.\n")
    installer.ok("--project", repo)
    git(repo, "add", "-A", env=installer.env)
    git(repo, "commit", "-q", "-m", "protocol", env=installer.env)
    clone = str(tmp_path / "teammate")
    env = dict(installer.env, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(["git", "clone", "-q", repo, clone], check=True, env=env)
    for branch, change in (("alice", "five times"), ("bob", "twice")):
        git(clone, "checkout", "-q", "-b", branch, "main", env=env)
        write(path_in(clone, "memory/retry.md"), "# Retry\n\n- 2026-10-05: %s.\n" % change)
        git(clone, "commit", "-q", "-am", branch, env=env)
        git(clone, "checkout", "-q", "main", env=env)
    git(clone, "merge", "-q", "--no-edit", "alice", env=env)
    git(clone, "merge", "-q", "--no-edit", "bob", env=env)  # would stop on a conflict
    assert text_of(clone, "memory/retry.md") == ("# Retry\n\n- 2026-10-05: five times.\n"
                                                 "- 2026-10-05: twice.\n")
    assert git(clone, "config", "--list", "--show-origin", env=env).count("merge.") == 0


def test_an_empty_gitattributes_of_the_users_comes_back_empty(installer, project):
    write(path_in(project, ".gitattributes"), "")
    installer.ok("--project", project)
    assert text_of(project, ".gitattributes") == template_text(installer, "gitattributes")
    installer.ok("--uninstall", project)
    assert read(path_in(project, ".gitattributes")) == b""


# --- the move reads Markdown's structure ----------------------------------------------------

def stamped_memory(project, index, topics=None):
    write(path_in(project, "memory/MEMORY.md"), index)
    for name, text in (topics or {"deployment.md": STAMPED_TOPIC}).items():
        write(path_in(project, "memory/" + name), text)


def test_the_move_never_writes_over_a_file_it_could_not_read(installer, repo):
    installer.ok("--project", repo)
    stamped_memory(repo, STAMPED_INDEX)
    unreadable = "# Travail en cours\n\nCaf\xe9 \xe0 faire\n".encode("latin-1")
    write(path_in(repo, "memory/work-in-progress.md"), unreadable)
    installer.ok("--update", repo)
    assert read(path_in(repo, "memory/work-in-progress.md")) == unreadable
    moved = text_of(repo, "memory/work-in-progress-2.md")
    assert "Shipping the rate table" in moved
    assert "(work-in-progress-2.md)" in text_of(repo, "memory/MEMORY.md")


FENCED_STAMP = ("# Release notes\n\nHow a stamp looked:\n\n```markdown\n"
                "<!-- Last updated: 2026-01-02 -->\n```\n\n"
                "- 2026-09-29: one instance behind the gateway.\n")


def test_a_stamp_inside_a_code_fence_is_a_sample_and_stays(installer, repo):
    installer.ok("--project", repo)
    index = STAMPED_INDEX.replace("## Topics\n", "## Topics\n```\n<!-- Last dream: 2026-01-01 -->"
                                  "\n```\n")
    stamped_memory(repo, index, {"deployment.md": STAMPED_TOPIC, "releases.md": FENCED_STAMP})
    installer.ok("--update", repo)
    assert text_of(repo, "memory/releases.md") == FENCED_STAMP
    moved_index = text_of(repo, "memory/MEMORY.md")
    assert "```\n<!-- Last dream: 2026-01-01 -->\n```" in moved_index
    assert "<!-- Last dream: 2026-11-29 -->" not in moved_index


ACTIVE_WITH_A_FENCE = (
    "# Project Memory Index\n<!-- Last dream: 2026-11-29 -->\n\n## Active Context\n"
    "Reproducing the deploy failure:\n\n```bash\n# retry the deploy\n./deploy.sh --retry\n```\n"
    "\n## Topics\n- [Deployment](deployment.md) — one instance behind the gateway\n"
    "- [Rates](rates.md) — the rate table\n")


def test_a_heading_like_line_in_a_fence_does_not_cut_the_active_context(installer, repo):
    installer.ok("--project", repo)
    stamped_memory(repo, ACTIVE_WITH_A_FENCE, {"deployment.md": STAMPED_TOPIC,
                                               "rates.md": "# Rates\n\nFlat.\n"})
    installer.ok("--update", repo)
    moved = text_of(repo, "memory/work-in-progress.md")
    assert "```bash\n# retry the deploy\n./deploy.sh --retry\n```" in moved
    index = text_of(repo, "memory/MEMORY.md")
    assert "```" not in index and "- [Rates](rates.md)" in index
    done = installer.run("--check", "--memory", repo)
    assert "orphan" not in done.stdout, done.stdout


def test_an_active_context_whose_fence_never_closes_is_not_moved(installer, repo):
    installer.ok("--project", repo)
    index = ("# Project Memory Index\n<!-- Last dream: 2026-11-29 -->\n\n## Active Context\n"
             "```\nhalf a sample\n\n## Topics\n- [Deployment](deployment.md)\n")
    stamped_memory(repo, index)
    installer.ok("--update", repo)
    assert text_of(repo, "memory/MEMORY.md") == index.replace(
        "<!-- Last dream: 2026-11-29 -->\n", "")
    assert not os.path.exists(path_in(repo, "memory/work-in-progress.md"))


# --- an index for a memory that has none --------------------------------------------------

def test_an_install_into_a_memory_without_an_index_writes_one_that_reaches_it(installer, repo):
    for name in ("deploys.md", "gotchas.md", "on call.md"):
        write(path_in(repo, "memory/" + name), "# %s\n\nA fact.\n" % name[:-3])
    write(path_in(repo, "memory/api/auth.md"), "# Auth\n\nTokens expire.\n")
    before = {name: read(path_in(repo, "memory/" + name)) for name in os.listdir(
        path_in(repo, "memory")) if name.endswith(".md")}
    installer.ok("--project", repo)
    index = text_of(repo, "memory/MEMORY.md")
    assert index.startswith(template_text(installer, "MEMORY.md").rstrip("\n"))
    for line in ("- [deploys](deploys.md)", "- [gotchas](gotchas.md)", "- [on call](<on call.md>)"):
        assert line in index
    done = installer.run("--check", "--memory", repo)
    assert "orphan" not in done.stdout, done.stdout
    installer.ok("--uninstall", repo)
    assert not os.path.exists(path_in(repo, "memory/MEMORY.md"))
    assert {name: read(path_in(repo, "memory/" + name)) for name in os.listdir(
        path_in(repo, "memory")) if name.endswith(".md")} == before
