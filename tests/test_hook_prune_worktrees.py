"""prune-worktrees.py: removes merged, clean agent worktrees, and never anything that holds work."""
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import (age_worktree, git, load_hook, make_repo, run_hook, set_age,
                      worktree_admin_folder)

WORKTREES = ".claude/worktrees"


def add_worktree(repo, branch, commit=True, location=WORKTREES, base=None):
    path = repo / location / branch
    git(repo, "worktree", "add", "-q", "-b", branch, str(path), base or "HEAD")
    if commit:
        (path / (branch + ".txt")).write_text(branch + "\n", encoding="utf-8")
        git(path, "add", branch + ".txt")
        git(path, "commit", "-q", "-m", "work on " + branch)
    age_worktree(path)  # an hour's use keeps a worktree; these stand for finished ones
    return path


def merge(repo, branch):
    git(repo, "merge", "-q", "--ff-only", branch)


def run_pruner(project, **options):
    """Session start, which prunes before anything else, with only the lines pruning printed
    kept of its output."""
    done = run_hook("session-start.py", project, **options)
    kept = [line for line in done.stdout.decode("utf-8").split("\n") if line.startswith("pruned ")]
    return subprocess.CompletedProcess(done.args, done.returncode,
                                       "".join(line + "\n" for line in kept).encode("utf-8"),
                                       done.stderr)


def prune(repo, stdin=b"", **env):
    done = run_pruner(repo, stdin=stdin, env=env)
    assert done.returncode == 0
    assert done.stderr == b""
    return done.stdout.decode("utf-8")


def branches(repo):
    return git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/").split()


@pytest.fixture
def repo(tmp_path):
    root = make_repo(tmp_path / "repo")
    (root / ".gitignore").write_text(".claude/\n*.env\n", encoding="utf-8")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "ignore")
    return root


@pytest.fixture
def estate(repo):
    """One merged, one unmerged and one merged-but-locked agent worktree."""
    merged = add_worktree(repo, "merged")
    merge(repo, "merged")
    unmerged = add_worktree(repo, "unmerged")
    locked = add_worktree(repo, "locked")
    merge(repo, "locked")
    git(repo, "worktree", "lock", str(locked))
    return {"merged": merged, "unmerged": unmerged, "locked": locked}


def test_removes_exactly_the_merged_unlocked_worktree(repo, estate):
    output = prune(repo)
    assert output == "pruned 1 merged agent worktree(s): merged\n"
    assert not estate["merged"].exists()
    assert estate["unmerged"].is_dir()
    assert estate["locked"].is_dir()


def test_deletes_the_merged_branch_and_keeps_the_others(repo, estate):
    prune(repo)
    assert "merged" not in branches(repo)
    assert {"unmerged", "locked", "main"} <= set(branches(repo))


def test_is_silent_when_nothing_is_merged(repo):
    add_worktree(repo, "unmerged")
    assert prune(repo) == ""


def test_silent_outside_a_git_repository(plain_dir):
    (plain_dir / WORKTREES).mkdir(parents=True)
    assert prune(plain_dir) == ""


def test_silent_when_git_is_not_installed(repo, estate, tmp_path):
    empty_bin = tmp_path / "empty-bin"
    empty_bin.mkdir()
    assert prune(repo, PATH=str(empty_bin)) == ""
    assert estate["merged"].is_dir()


def test_prunes_in_a_repository_whose_path_has_a_space(tmp_path):
    repo = make_repo(tmp_path / "re po")
    clean = add_worktree(repo, "clean", commit=False)
    dirty = add_worktree(repo, "dirty", commit=False)
    (dirty / "result.txt").write_text("agent output\n", encoding="utf-8")
    assert prune(repo) == "pruned 1 merged agent worktree(s): clean\n"
    assert not clean.exists()
    assert (dirty / "result.txt").read_text(encoding="utf-8") == "agent output\n"


def test_keeps_a_worktree_with_a_modified_tracked_file(repo):
    path = add_worktree(repo, "edited", commit=False)
    (path / "README.md").write_text("changed\n", encoding="utf-8")
    assert prune(repo) == ""
    assert (path / "README.md").read_text(encoding="utf-8") == "changed\n"


def test_keeps_a_worktree_with_staged_changes(repo):
    path = add_worktree(repo, "staged", commit=False)
    (path / "new.txt").write_text("staged\n", encoding="utf-8")
    git(path, "add", "new.txt")
    assert prune(repo) == ""
    assert (path / "new.txt").exists()


def test_keeps_a_worktree_holding_only_ignored_files(repo):
    path = add_worktree(repo, "ignored", commit=False)
    (path / "local.env").write_text("TOKEN=1\n", encoding="utf-8")
    assert prune(repo) == ""
    assert (path / "local.env").read_text(encoding="utf-8") == "TOKEN=1\n"


def test_keeps_a_detached_worktree(repo):
    path = repo / WORKTREES / "detached"
    git(repo, "worktree", "add", "-q", "--detach", str(path), "HEAD")
    assert prune(repo) == ""
    assert path.is_dir()


def test_keeps_a_worktree_on_the_base_branch_itself(repo):
    git(repo, "checkout", "-q", "-b", "side")
    path = repo / WORKTREES / "main-checkout"
    git(repo, "worktree", "add", "-q", str(path), "main")
    assert prune(repo) == ""
    assert path.is_dir()
    assert "main" in branches(repo)


def test_ignores_merged_worktrees_outside_the_agent_folder(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    git(repo, "worktree", "add", "-q", "-b", "outside", str(outside))
    lookalike = add_worktree(repo, "lookalike", commit=False, location=".claude/worktrees-old")
    (repo / WORKTREES).mkdir(parents=True, exist_ok=True)
    assert prune(repo) == ""
    assert outside.is_dir() and lookalike.is_dir()


def test_keeps_the_worktree_the_session_stands_in(repo):
    """End to end; on Linux the hook's own process standing there keeps it too, so the
    session folders alone are pinned by the test after the next."""
    here = add_worktree(repo, "here", commit=False)
    done = run_pruner(repo, cwd=here)
    assert done.stdout == b"" and here.is_dir()


def test_keeps_the_worktree_named_as_cwd_on_stdin(repo):
    here = add_worktree(repo, "here", commit=False)
    assert prune(repo, stdin={"cwd": str(here)}) == ""
    assert here.is_dir()


def test_keeps_the_worktree_the_caller_names_as_the_session_folder(repo):
    """Through the Python interface no process of the test stands in the worktree, so only
    the folder passed in keeps it."""
    here = add_worktree(repo, "here", commit=False)
    pruner = load_pruner()
    assert pruner.prune(str(repo), {}, [str(here / "src")]) == [] and here.is_dir()
    assert pruner.prune(str(repo), {}, []) == ["pruned 1 merged agent worktree(s): here"]


def test_keeps_the_worktree_that_is_the_project_itself(repo):
    """A worktree folder named relative to the project can hold the project: `..` seen from
    an agent worktree is the folder of its siblings and of itself."""
    inside = add_worktree(repo, "inside", commit=False)
    sibling = add_worktree(repo, "sibling", commit=False)
    done = run_pruner(inside, cwd=repo, env={"MCP_WORKTREE_DIR": ".."})
    assert done.stdout == b"pruned 1 merged agent worktree(s): sibling\n"
    assert inside.is_dir() and not sibling.exists()


def test_prunes_on_a_master_repository(tmp_path):
    repo = make_repo(tmp_path / "old-style", branch="master")
    path = add_worktree(repo, "done")
    merge(repo, "done")
    assert prune(repo) == "pruned 1 merged agent worktree(s): done\n"
    assert not path.exists()


def test_base_branch_can_be_named(tmp_path):
    repo = make_repo(tmp_path / "dev", branch="develop")
    git(repo, "branch", "main")
    path = add_worktree(repo, "feature")
    merge(repo, "feature")
    assert prune(repo, MCP_BASE_BRANCH="main") == ""  # not in main yet
    assert prune(repo, MCP_BASE_BRANCH="develop") == "pruned 1 merged agent worktree(s): feature\n"
    assert not path.exists()


def test_base_branch_follows_the_remote_head(tmp_path):
    upstream = make_repo(tmp_path / "upstream", branch="trunk")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(upstream), str(clone))
    git(clone, "branch", "main")  # a stale local main must not be mistaken for the base
    git(clone, "commit", "-q", "--allow-empty", "-m", "trunk moves on")
    path = add_worktree(clone, "landed")
    merge(clone, "landed")
    assert prune(clone) == "pruned 1 merged agent worktree(s): landed\n"
    assert not path.exists()


def test_base_branch_follows_init_default_branch(tmp_path):
    repo = make_repo(tmp_path / "configured", branch="stable")
    git(repo, "branch", "main")
    git(repo, "config", "init.defaultBranch", "stable")
    git(repo, "commit", "-q", "--allow-empty", "-m", "stable moves on")
    path = add_worktree(repo, "landed")
    merge(repo, "landed")
    assert prune(repo) == "pruned 1 merged agent worktree(s): landed\n"
    assert not path.exists()


def test_does_not_forget_worktrees_whose_folder_is_missing(repo, tmp_path, estate):
    offline = tmp_path / "usb-drive" / "wt"
    git(repo, "worktree", "add", "-q", "-b", "offline", str(offline))
    os.rename(str(offline), str(tmp_path / "unplugged"))
    prune(repo)
    assert str(offline) in git(repo, "worktree", "list", "--porcelain")


def test_worktree_path_with_spaces_is_kept_whole(repo):
    spaced = repo / WORKTREES / "agent one"
    git(repo, "worktree", "add", "-q", "-b", "agent-one", str(spaced))
    age_worktree(spaced)
    assert prune(repo) == "pruned 1 merged agent worktree(s): agent one\n"
    assert not spaced.exists()


def load_pruner():
    return load_hook("prune-worktrees.py")


def test_branch_that_moved_is_not_deleted(repo):
    """The branch ref goes only if it still points at the commit that was checked out."""
    path = add_worktree(repo, "moving", commit=False)
    first = git(repo, "rev-parse", "HEAD")
    git(repo, "commit", "-q", "--allow-empty", "-m", "main moves on")
    git(repo, "update-ref", "refs/heads/moving", "main")  # it moves after it was listed
    worktree = {"path": str(path), "branch": "moving", "head": first}
    pruner = load_pruner()
    assert pruner.remove_worktree(pruner.Git(time.monotonic() + 20), str(repo), worktree, False)
    assert "moving" in branches(repo)


def test_python_interface_returns_the_lines(repo, estate):
    assert load_pruner().prune(str(repo), {}, []) == ["pruned 1 merged agent worktree(s): merged"]


# --- work that status does not show, and worktrees in use -----------------------------------

def finished_worktree(repo, name):
    """A worktree whose branch is merged and which looks unused: a candidate for removal."""
    path = add_worktree(repo, name)
    merge(repo, name)
    return path


def test_untracked_and_ignored_files_count_even_when_status_hides_untracked_files(repo):
    path = finished_worktree(repo, "hidden-untracked")
    (path / "new_module.py").write_text("work\n", encoding="utf-8")
    (path / "secret.env").write_text("KEY=1\n", encoding="utf-8")
    git(repo, "config", "status.showUntrackedFiles", "no")
    age_worktree(path)
    assert prune(repo) == ""
    assert (path / "new_module.py").exists() and (path / "secret.env").exists()


@pytest.mark.parametrize("where", ["node_modules/pkg/index.js", "new/deep/local.env",
                                   "new/deep/module.py"])
def test_a_folder_untracked_or_ignored_as_a_whole_keeps_the_worktree(repo, where):
    """Named once by status, not walked; whatever it holds, even only ignored files below a
    folder that is not ignored, and even with untracked files hidden by config."""
    (repo / ".gitignore").write_text(".claude/\n*.env\nnode_modules/\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "ignore node_modules")
    path = finished_worktree(repo, "folder")
    (path / where).parent.mkdir(parents=True)
    (path / where).write_text("work\n", encoding="utf-8")
    git(repo, "config", "status.showUntrackedFiles", "no")
    age_worktree(path)
    assert prune(repo) == "" and (path / where).exists()
    shutil.rmtree(str(path / where.split("/")[0]))
    age_worktree(path)
    assert prune(repo) == "pruned 1 merged agent worktree(s): folder\n"


@pytest.mark.parametrize("flag", ["--skip-worktree", "--assume-unchanged"])
def test_keeps_edits_git_was_told_not_to_look_at(repo, flag):
    path = finished_worktree(repo, "hidden-" + flag.strip("-"))
    git(path, "update-index", flag, path.name + ".txt")
    (path / (path.name + ".txt")).write_text("edited in place\n", encoding="utf-8")
    age_worktree(path)
    assert prune(repo) == "" and path.is_dir()


def test_keeps_a_commit_that_only_the_reflog_still_reaches(repo):
    path = finished_worktree(repo, "reset-away")
    (path / "draft.txt").write_text("draft\n", encoding="utf-8")
    git(path, "add", "draft.txt")
    git(path, "commit", "-q", "-m", "a draft the base branch lacks")
    lost = git(path, "rev-parse", "HEAD")
    git(path, "reset", "-q", "--hard", "HEAD~1")
    age_worktree(path)
    assert prune(repo) == "" and path.is_dir()
    assert lost in git(path, "log", "-g", "--format=%H", "HEAD")  # still reachable from its reflog


def test_a_reflog_that_holds_only_merged_commits_does_not_keep_it(repo):
    path = finished_worktree(repo, "only-merged")
    git(path, "reset", "-q", "--hard", "HEAD~1")  # moves back, within the base branch
    age_worktree(path)
    assert prune(repo) == "pruned 1 merged agent worktree(s): only-merged\n"


@pytest.mark.parametrize("touched", ["", "HEAD", "index", "logs/HEAD"])
def test_keeps_a_worktree_git_saw_in_use_within_the_hour(repo, touched):
    """Each sign of use on its own: the worktree's folder in .git, its HEAD, its index, its
    HEAD reflog."""
    path = repo / WORKTREES / ("fresh-" + (touched.replace("/", "-") or "made"))
    git(repo, "worktree", "add", "-q", "-b", path.name, str(path))  # at HEAD: already "merged"
    age_worktree(path)
    admin = worktree_admin_folder(path)
    set_age(admin / touched if touched else admin, 59 * 60)
    assert prune(repo) == "" and path.is_dir()
    age_worktree(path, seconds=61 * 60)
    assert prune(repo) == "pruned 1 merged agent worktree(s): %s\n" % path.name


def test_a_sparse_checkout_does_not_keep_a_finished_worktree(repo):
    (repo / "docs").mkdir()
    (repo / "docs" / "guide.md").write_text("guide\n", encoding="utf-8")
    git(repo, "add", "docs")
    git(repo, "commit", "-q", "-m", "docs")
    path = finished_worktree(repo, "sparse")
    git(path, "sparse-checkout", "set", "--no-cone", "/*.txt", "/.gitignore")
    assert not (path / "docs").exists()
    age_worktree(path)
    assert prune(repo) == "pruned 1 merged agent worktree(s): sparse\n"


def test_a_removal_does_not_start_without_time_to_finish(repo, estate):
    pruner = load_pruner()
    assert pruner.prune(str(repo), {}, [], time.monotonic() + pruner.REMOVAL_START_SECONDS * 0.5) == []
    assert estate["merged"].is_dir()


# --- refs of its own, paths with newlines, branches checked out twice, processes inside -------

def commit_only(path, name):
    """A commit in the worktree that its branch and reflogs no longer reach."""
    (path / name).write_text("draft\n", encoding="utf-8")
    git(path, "add", name)
    git(path, "commit", "-q", "-m", "a draft the base branch lacks")
    commit = git(path, "rev-parse", "HEAD")
    git(path, "reset", "-q", "--hard", "HEAD~1")
    git(path, "reflog", "expire", "--expire=now", "--all")
    return commit


@pytest.mark.parametrize("ref", ["refs/worktree/keep", "refs/bisect/bad", "refs/rewritten/onto"])
def test_keeps_a_worktree_holding_a_ref_of_its_own(repo, ref):
    """Per-worktree refs live in the worktree's folder in .git; removal would take them, and
    the commits only they reach, with it."""
    path = finished_worktree(repo, "own-ref")
    draft = commit_only(path, "draft.txt")
    git(path, "update-ref", ref, draft)
    age_worktree(path)
    assert prune(repo) == "" and path.is_dir()
    assert git(path, "rev-parse", ref) == draft
    git(path, "update-ref", "-d", ref)
    age_worktree(path)
    assert prune(repo) == "pruned 1 merged agent worktree(s): own-ref\n"


def test_a_ref_of_another_worktree_does_not_keep_this_one(repo):
    path = finished_worktree(repo, "finished")
    git(repo, "update-ref", "refs/worktree/main-only", "HEAD")
    assert prune(repo) == "pruned 1 merged agent worktree(s): finished\n"
    assert not path.exists()


NO_NEWLINES_IN_NAMES = pytest.mark.skipif(os.name == "nt", reason="Windows forbids newlines in names")


def newline_estate(repo):
    """A worktree whose path, read line by line, holds the line `worktree <…>/b`: the path of
    a second worktree, b. The first holds an untracked file (so it stays); b is finished."""
    folder = repo / WORKTREES
    folder.mkdir(parents=True, exist_ok=True)
    real = folder.resolve()
    tricky = real / ("a\nworktree " + str(real / "b") + "\nrest")
    git(repo, "worktree", "add", "-q", "-b", "tricky", str(tricky))
    (tricky / "notes.txt").write_text("kept\n", encoding="utf-8")
    age_worktree(tricky)
    plain = add_worktree(repo, "b", commit=False)
    return tricky, plain


@NO_NEWLINES_IN_NAMES
def test_a_newline_in_a_path_makes_up_no_worktree(repo):
    tricky, plain = newline_estate(repo)
    assert prune(repo) == "pruned 1 merged agent worktree(s): b\n"
    assert not plain.exists() and (tricky / "notes.txt").exists()
    assert branches(repo) == ["main", "tricky"]
    assert git(tricky, "rev-parse", "--abbrev-ref", "HEAD") == "tricky"


@NO_NEWLINES_IN_NAMES
def test_a_worktree_whose_path_holds_a_newline_is_pruned_whole(repo):
    tricky, plain = newline_estate(repo)
    (tricky / "notes.txt").unlink()
    assert prune(repo) in ("pruned 2 merged agent worktree(s): b?rest, b\n",
                           "pruned 2 merged agent worktree(s): b, b?rest\n")
    assert not tricky.exists() and not plain.exists()
    assert branches(repo) == ["main"]


@pytest.mark.parametrize("elsewhere", [WORKTREES + "/second", "../outside"])
def test_never_deletes_a_branch_another_worktree_has_checked_out(repo, elsewhere):
    first = finished_worktree(repo, "shared")
    second = (repo / elsewhere).resolve()
    git(repo, "worktree", "add", "-q", "-f", str(second), "shared")
    (second / "notes.txt").write_text("work in progress\n", encoding="utf-8")
    age_worktree(second)
    assert prune(repo) == "pruned 1 merged agent worktree(s): shared\n"
    assert not first.exists()
    assert "shared" in branches(repo)
    assert git(second, "rev-parse", "--abbrev-ref", "HEAD") == "shared"
    assert git(second, "rev-parse", "HEAD") == git(repo, "rev-parse", "main")


def test_a_branch_both_its_finished_worktrees_had_goes_with_the_second(repo):
    first = finished_worktree(repo, "shared")
    second = repo / WORKTREES / "second"
    git(repo, "worktree", "add", "-q", "-f", str(second), "shared")
    age_worktree(second)
    assert prune(repo) in ("pruned 2 merged agent worktree(s): shared, second\n",
                           "pruned 2 merged agent worktree(s): second, shared\n")
    assert not first.exists() and not second.exists()
    assert branches(repo) == ["main"]


def git_refusing(tmp_path, *arguments):
    """A folder to put first on PATH: a `git` that fails with a usage error (exit 129) when
    given all of `arguments`, and otherwise runs the real one."""
    folder = tmp_path / "refusing-git"
    folder.mkdir()
    script = folder / "git"
    script.write_text(
        "#!%s\nimport os, sys\n"
        "if all(word in sys.argv for word in %r):\n"
        "    sys.stderr.write('error: unknown switch\\n')\n"
        "    sys.exit(129)\n"
        "os.execv(%r, [%r] + sys.argv[1:])\n"
        % (sys.executable, arguments, shutil.which("git"), "git"),
        encoding="utf-8")
    script.chmod(0o755)
    return str(folder) + os.pathsep + os.environ["PATH"]


def git_without_nul_listing(tmp_path):
    """A `git` that rejects `worktree list -z` as gits before 2.36 do."""
    return git_refusing(tmp_path, "list", "-z")


@NO_NEWLINES_IN_NAMES
def test_on_a_git_without_nul_listing_a_newline_in_a_path_still_misleads_nothing(repo, tmp_path):
    tricky, plain = newline_estate(repo)
    assert prune(repo, PATH=git_without_nul_listing(tmp_path)) == \
        "pruned 1 merged agent worktree(s): b\n"
    assert not plain.exists() and (tricky / "notes.txt").exists()
    assert branches(repo) == ["main", "tricky"]


@pytest.mark.skipif(os.name == "nt", reason="a script stands in for git through its #! line")
def test_on_a_git_without_nul_listing_finished_worktrees_are_still_pruned(repo, estate, tmp_path):
    assert prune(repo, PATH=git_without_nul_listing(tmp_path)) == \
        "pruned 1 merged agent worktree(s): merged\n"
    assert "merged" not in branches(repo)
    assert estate["unmerged"].is_dir() and estate["locked"].is_dir()


LISTS_WORKING_DIRECTORIES = os.path.islink("/proc/self/cwd")


@pytest.mark.skipif(not LISTS_WORKING_DIRECTORIES, reason="no /proc/<pid>/cwd on this platform")
@pytest.mark.parametrize("where", ["", "src/deep"])
def test_keeps_a_worktree_a_running_process_stands_in(repo, where):
    path = finished_worktree(repo, "occupied")
    inside = path / where
    inside.mkdir(parents=True, exist_ok=True)
    age_worktree(path)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"],
                               cwd=str(inside))
    try:
        assert prune(repo) == "" and path.is_dir()
    finally:
        sleeper.kill()
        sleeper.wait()
    if where:
        os.rmdir(str(inside))
        os.rmdir(str(inside.parent))
    age_worktree(path)
    assert prune(repo) == "pruned 1 merged agent worktree(s): occupied\n"


def test_every_folder_counts_as_occupied_when_the_processes_cannot_be_read_in_time(tmp_path):
    pruner = load_pruner()
    folders = [str(tmp_path / "one"), str(tmp_path / "two")]
    expected = set(folders) if LISTS_WORKING_DIRECTORIES else set()
    assert pruner.folders_processes_stand_in(folders, time.monotonic() - 1) == expected
    assert pruner.folders_processes_stand_in(folders, time.monotonic() + 5) == set()


# --- operations stopped half-way ------------------------------------------------------------

def stop_half_way(path, operation, repo):
    """Leave `operation` stopped in the worktree at `path` with its working tree clean and HEAD
    on its branch: the state git keeps for it is then all that shows it. `copy` is a commit of
    a branch that makes the change main already has, so applying it changes nothing."""
    if operation == "am":
        patch = path.parent / "copy.patch"
        patch.write_bytes(subprocess.run(["git", "-C", str(repo), "format-patch", "-1", "--stdout",
                                          "copy"], capture_output=True, check=True).stdout)
        git(path, "am", str(patch), check=False)  # note.txt exists: the patch does not apply
        patch.unlink()
        return "am --abort"
    if operation == "cherry-pick":
        git(path, "cherry-pick", "copy", check=False)  # stops: the pick is empty
        return "cherry-pick --abort"
    if operation == "merge":
        git(path, "merge", "-q", "--no-commit", "--no-ff", "copy")
        return "merge --abort"
    git(path, "bisect", "start")
    return "bisect reset"


@pytest.mark.parametrize("operation", ["am", "cherry-pick", "merge", "bisect"])
def test_keeps_a_worktree_with_an_operation_stopped_half_way(repo, operation):
    """A patch that failed to apply changes no file, yet the patches still to apply exist only
    in the worktree's folder in .git; so do the picks and the merge still to commit."""
    git(repo, "checkout", "-q", "-b", "copy")
    (repo / "note.txt").write_text("same\n", encoding="utf-8")
    git(repo, "add", "note.txt")
    git(repo, "commit", "-q", "-m", "note, on the side")
    git(repo, "checkout", "-q", "main")
    (repo / "note.txt").write_text("same\n", encoding="utf-8")
    git(repo, "add", "note.txt")
    git(repo, "commit", "-q", "-m", "note")
    path = finished_worktree(repo, "halfway")
    undo = stop_half_way(path, operation, repo)
    assert git(path, "status", "--porcelain", "--ignored") == ""
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD") == "halfway"
    age_worktree(path)
    assert prune(repo) == "" and path.is_dir()
    git(path, *undo.split())
    age_worktree(path)
    assert prune(repo) == "pruned 1 merged agent worktree(s): halfway\n"


@pytest.mark.parametrize("operation", ["rebase", "bisect"])
def test_never_deletes_a_branch_another_worktree_is_rebasing_or_bisecting(repo, tmp_path, operation):
    """A rebase or bisect detaches HEAD and returns to its branch at the end: git counts that
    branch as checked out there, though the worktree list says only `detached`."""
    git(repo, "checkout", "-q", "-b", "shared")
    git(repo, "commit", "-q", "--allow-empty", "-m", "work on shared")
    git(repo, "checkout", "-q", "main")
    merge(repo, "shared")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other), "shared")
    if operation == "rebase":
        git(other, "rebase", "-q", "--exec", "false", "HEAD~1", check=False)  # stops after the pick
        finish = ("rebase", "--abort")
    else:
        git(other, "bisect", "start")
        git(other, "checkout", "-q", "--detach")  # as bisect leaves it between two steps
        finish = ("bisect", "reset")
    assert git(repo, "worktree", "list", "--porcelain").count("branch refs/heads/shared") == 0
    finished = repo / WORKTREES / "finished"
    git(repo, "worktree", "add", "-q", "-f", str(finished), "shared")
    age_worktree(finished)
    assert prune(repo) == "pruned 1 merged agent worktree(s): finished\n"
    assert "shared" in branches(repo)
    git(other, *finish)
    assert git(other, "rev-parse", "--abbrev-ref", "HEAD") == "shared"


@pytest.mark.skipif(os.name == "nt", reason="a script stands in for git through its #! line")
def test_no_branch_is_deleted_when_the_repository_folder_cannot_be_found(repo, estate, tmp_path):
    """Without .git the rebases and bisects under way cannot be read: the worktree goes, its
    branch (all of it merged) stays."""
    assert prune(repo, PATH=git_refusing(tmp_path, "--git-common-dir")) == \
        "pruned 1 merged agent worktree(s): merged\n"
    assert not estate["merged"].exists() and "merged" in branches(repo)
