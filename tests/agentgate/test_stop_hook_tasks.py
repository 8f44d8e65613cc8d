"""The stop hook's budget and base, end to end on real repositories and real review sessions:
the ceiling bounds the blocks of one task (not the agent session), every task that ends on a
new unreviewed tree is held, the review command a block names is exactly the one whose report
satisfies the hook, and what the turn did (commits, pushes, resets, upstream moves) is judged
however it did it. Run with bytecode written and not (agents' shells write it)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import warmstart
from agenthooks import BROKEN, FIXED, Said, event, hook, make_repo, named_command, review
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

TEST = "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"


@pytest.fixture
def repo(tmp_path: Path, bytecode: bool) -> GitRepo:
    return make_repo(tmp_path / "repo")


def run_named(repo: GitRepo, said: Said) -> dict[str, object]:
    """Run exactly the review command the block names (``Run `COMMAND```, in a block of
    blockers too); its report."""
    command = named_command(said.instruction)
    assert command is not None, said.instruction
    return review(repo, command)


def the_named_review_holds_the_regression(repo: GitRepo, said: Said) -> None:
    """Run the review the block names; the next stop is blocked on the regression."""
    run_named(repo, said)
    said = hook(repo, "claude")
    assert said.blocked
    assert "test test_app.py::test_add: passes at base" in said.instruction


def a_task(repo: GitRepo, agent: str, n: int) -> int:
    """One task as an obedient agent does it: a broken edit, the review the hook names, the
    fix, the review again; the blocks it took (asserting the hook let go on the clean fix)."""
    hook(repo, agent, kind="start")
    repo.write("app.py", BROKEN + f"# task {n}\n")
    for blocks in range(6):
        said = hook(repo, agent)
        if not said.blocked:
            assert said.message == "", said  # let go only on the clean review of the fix
            return blocks
        if agent == "gemini":  # its retry after a block fires BeforeAgent again
            hook(repo, agent, kind="start")
        if "not clean" in said.instruction:
            repo.write("app.py", FIXED + f"# task {n}, fixed\n")
        review(repo)  # the base is configured and not behind: a bare review is the named one
    raise AssertionError("the task never ended")


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_three_tasks_in_one_session_are_each_held(repo: GitRepo, agent: str) -> None:
    spent = [a_task(repo, agent, n) for n in range(3)]
    assert spent == [2, 2, 2]  # no review, then the blockers; each task held anew


@pytest.mark.parametrize("agent", ["claude", "gemini"])
def test_a_stubborn_agent_is_let_go_at_the_ceiling_plus_one_within_a_task(
    repo: GitRepo, agent: str
) -> None:
    hook(repo, agent, kind="start")
    blocks = 0
    for attempt in range(8):  # keeps editing, never reviews
        repo.write("app.py", BROKEN + f"# attempt {attempt}\n")
        said = hook(repo, agent)
        if not said.blocked:
            break
        blocks += 1
        if agent == "gemini":  # the retry is the same task: the count goes on
            hook(repo, agent, kind="start")
    assert blocks == 3  # standard tier: 2 repair loops, + 1
    assert said.message.startswith("stop allowed: 3 block(s) spent on this task")


def test_a_clean_task_ends_without_a_block(repo: GitRepo) -> None:
    hook(repo, "claude", kind="start")
    assert not hook(repo, "claude").blocked  # a question answered: nothing changed
    repo.write("app.py", FIXED + "# a harmless comment\n")
    review(repo)  # the agent reviewed before it stopped
    said = hook(repo, "claude")
    assert (said.blocked, said.message) == (False, "")


def remote(tmp_path: Path, repo: GitRepo) -> None:
    """A real bare remote holding ``main`` (``origin/HEAD``) and ``feature``, the branch's
    upstream."""
    bare = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    repo.git("remote", "add", "origin", str(bare))
    repo.git("push", "-q", "origin", "main", "feature")
    repo.git("remote", "set-head", "origin", "main")
    repo.git("branch", "-q", "--set-upstream-to=origin/feature")


def unconfigured(tmp_path: Path, with_remote: bool) -> GitRepo:
    """A feature branch with no `base` configured: the review's base is the upstream when
    there is one, else ``HEAD``."""
    repo = make_repo(tmp_path / "repo")
    repo.commit({"pyproject.toml": '[tool.bounded-review]\nmode = "review-and-fix"\n'}, "cfg")
    if with_remote:
        remote(tmp_path, repo)
    return repo


def test_on_a_branch_ahead_of_its_base_the_named_command_satisfies_the_hook(
    tmp_path: Path,
) -> None:
    repo = unconfigured(tmp_path, with_remote=True)
    repo.commit({"extra.py": "Y = 1\n"}, "an unpushed commit")  # ahead of origin/feature
    hook(repo, "claude", kind="start")
    repo.write("app.py", BROKEN)
    said = hook(repo, "claude")
    assert "--bounded-review-base=" in said.instruction
    the_named_review_holds_the_regression(repo, said)
    repo.write("app.py", FIXED + "# fixed\n")
    run_named(repo, said)  # "run the review again": the command named before
    assert hook(repo, "claude").message == ""  # clean: let go silently


def test_on_a_branch_ahead_of_its_base_a_harmless_change_ends_clean(tmp_path: Path) -> None:
    repo = unconfigured(tmp_path, with_remote=True)
    repo.commit({"extra.py": "Y = 1\n"}, "an unpushed commit")
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED + "# harmless\n")
    said = hook(repo, "claude")
    run_named(repo, said)
    after = hook(repo, "claude")
    assert (after.blocked, after.message) == (False, "")


def test_a_regression_committed_during_the_turn_is_judged_with_it(tmp_path: Path) -> None:
    repo = unconfigured(tmp_path, with_remote=False)
    hook(repo, "claude", kind="start")
    repo.commit({"app.py": BROKEN}, "the regression, committed by the agent")
    repo.write("notes.txt", "something else\n")
    review(repo)  # against HEAD: only notes.txt, clean
    said = hook(repo, "claude")
    assert said.blocked, "a review against HEAD leaves the turn's own commit out"
    assert "reviewed against" in said.instruction
    the_named_review_holds_the_regression(repo, said)


def test_a_clean_commit_during_the_turn_ends_clean(tmp_path: Path) -> None:
    repo = unconfigured(tmp_path, with_remote=False)
    hook(repo, "claude", kind="start")
    repo.commit({"app.py": FIXED + "# harmless\n"}, "a harmless commit")
    said = hook(repo, "claude")
    assert said.blocked
    run_named(repo, said)
    assert hook(repo, "claude").message == ""


def test_a_regression_pushed_to_the_upstream_is_still_judged(tmp_path: Path) -> None:
    repo = unconfigured(tmp_path, with_remote=True)
    hook(repo, "claude", kind="start")
    repo.commit({"app.py": BROKEN}, "the regression")
    repo.git("push", "-q", "origin", "feature")  # the upstream, the hook's base, moves
    said = hook(repo, "claude")
    assert said.blocked, "pushing the regression made it the base"
    the_named_review_holds_the_regression(repo, said)


def test_a_reset_onto_a_regression_and_a_moved_upstream_are_still_judged(
    tmp_path: Path,
) -> None:
    repo = unconfigured(tmp_path, with_remote=False)
    hook(repo, "claude", kind="start")
    repo.git("checkout", "-q", "-b", "elsewhere")
    repo.commit({"app.py": BROKEN}, "the regression, on another branch")
    repo.git("checkout", "-q", "feature")
    repo.git("reset", "-q", "--hard", "elsewhere")
    repo.git("branch", "-q", "--set-upstream-to=elsewhere")  # the base now holds it
    said = hook(repo, "claude")
    assert said.blocked
    the_named_review_holds_the_regression(repo, said)


def test_without_a_start_record_the_base_is_the_merge_base_with_head(tmp_path: Path) -> None:
    repo = unconfigured(tmp_path, with_remote=True)
    repo.commit({"app.py": BROKEN}, "an unpushed regression")  # no start hook installed
    repo.write("notes.txt", "and an edit\n")
    said = hook(repo, "claude")
    fork = repo.git("rev-parse", "origin/feature")
    assert f"--bounded-review-base={fork}" in said.instruction  # not HEAD
    the_named_review_holds_the_regression(repo, said)


def test_an_error_blocks_once_per_task(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    config = (repo.path / "pyproject.toml").read_text()
    for task in range(2):
        hook(repo, "claude", kind="start")
        repo.write("app.py", FIXED + f"# task {task}\n")
        (repo.path / "pyproject.toml").write_text("[tool.bounded-review\n")  # broken
        first, second = hook(repo, "claude"), hook(repo, "claude")
        assert first.blocked
        assert "could not decide" in first.instruction
        assert not second.blocked
        assert "could not decide" in second.message
        (repo.path / "pyproject.toml").write_text(config)
        review(repo)
        assert hook(repo, "claude").message == ""  # the task ends clean


def test_moving_the_base_back_during_the_turn_does_not_move_what_it_is_judged_against(
    tmp_path: Path,
) -> None:
    """The base is recorded when the turn starts: pointing the upstream (or a local branch)
    at an older commit during the turn, and leaving that commit's tree, reverts a fix."""
    repo = unconfigured(tmp_path, with_remote=False)
    old = repo.git("rev-parse", "HEAD")
    repo.commit({"app.py": FIXED + "# a later fix\n"}, "a later commit")
    hook(repo, "claude", kind="start")
    repo.git("branch", "-q", "old", old)
    repo.git("branch", "-q", "--set-upstream-to=old")
    repo.git("checkout", "-q", "old", "--", ".")  # the tree is now the old commit's
    said = hook(repo, "claude")
    assert said.blocked, "the tree the turn left was never reviewed"
    report = run_named(repo, said)
    assert report["target"]["base_commit"] == repo.git("rev-parse", "feature")  # not `old`


def test_a_turn_that_starts_on_an_unborn_branch_and_commits_is_not_passed(
    tmp_path: Path,
) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".gitignore", ".bounded-review/\n__pycache__/\n")
    hook(repo, "claude", kind="start")
    repo.commit({"app.py": BROKEN, "test_app.py": TEST}, "the agent's first commit")
    repo.write("notes.txt", "and an edit\n")
    review(repo)  # against HEAD: the first commit's failure is pre-existing there
    said = hook(repo, "claude")
    assert said.blocked
    assert "started on a branch with no commit" in said.instruction
    for _ in range(4):
        if not said.blocked:
            break
        said = hook(repo, "claude")
    assert not said.blocked
    assert "not reviewed" in said.message


def test_a_turn_that_starts_on_an_unborn_branch_and_commits_nothing_is_reviewed(
    tmp_path: Path,
) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".gitignore", ".bounded-review/\n__pycache__/\n")
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED)
    repo.write("test_app.py", TEST)
    said = hook(repo, "claude")
    assert said.blocked
    run_named(repo, said)
    assert hook(repo, "claude").message == ""


def test_the_working_tree_gate_judges_the_last_turn_as_the_hook_does(tmp_path: Path) -> None:
    """After a headless agent exits, `gate --stage working-tree` takes the base the last
    turn's start recorded: a regression committed during the turn is not passed."""
    repo = unconfigured(tmp_path, with_remote=False)
    hook(repo, "claude", kind="start")
    repo.commit({"app.py": BROKEN}, "the regression, committed by the agent")
    repo.write("notes.txt", "something else\n")
    review(repo)  # against HEAD: clean
    assert hook(repo, "claude").blocked  # the agent's stop, then it exits
    gated = working_tree_gate(repo)
    assert gated.returncode == 2, gated.stdout + gated.stderr
    assert "--bounded-review-base=" in gated.stderr


def test_from_a_folder_below_the_top_the_named_command_reviews_the_whole_repository(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    repo.commit({"docs/notes.txt": "a folder with no tests\n"}, "docs")
    below = repo.path / "docs"
    starts = json.dumps(event("claude", below, "s1", stop=False)).encode()
    stops = json.dumps(event("claude", below, "s1")).encode()
    hook(repo, "claude", kind="start", raw=starts, cwd=below)
    repo.write("app.py", FIXED + "# harmless\n")
    said = hook(repo, "claude", raw=stops, cwd=below)
    assert said.blocked
    found = re.search(r"[Rr]un `([^`]+)`", said.instruction)
    assert found is not None
    assert found.group(1).startswith(f"cd {shlex.quote(str(repo.path))} && ")
    done = subprocess.run(
        found.group(1), shell=True, cwd=below, env=clean_env(), capture_output=True, check=False
    )
    assert done.returncode == 0, done.stdout
    assert hook(repo, "claude", raw=stops, cwd=below).message == ""


REVIEW_ONLY = [sys.executable, "-m", "pytest", "-q", "--bounded-review-mode=review-only"]


def test_a_review_run_review_only_spends_no_repair_loop_of_the_rules(repo: GitRepo) -> None:
    # the rules say review-and-fix; a review run with the mode lowered records a ceiling of 0
    hook(repo, "claude", kind="start")
    repo.write("app.py", BROKEN)
    report = review(repo, [*REVIEW_ONLY, "--bounded-review"])
    assert report["budget"]["max_repair_loops"] == 0
    said = hook(repo, "claude")
    assert said.blocked  # the regression is not let go at the first stop
    assert "test test_app.py::test_add: passes at base" in said.instruction


def test_a_harmless_change_reviewed_review_only_ends_clean(repo: GitRepo) -> None:
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED + "# a harmless comment\n")
    review(repo, [*REVIEW_ONLY, "--bounded-review"])
    said = hook(repo, "claude")
    assert (said.blocked, said.message) == (False, "")


def working_tree_gate(repo: GitRepo) -> subprocess.CompletedProcess[str]:
    return warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "gate", "--stage", "working-tree"],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_working_tree_gate_leaves_out_a_turn_on_another_branch(tmp_path: Path) -> None:
    """Yesterday's turn on another branch does not decide today's tree: a clean review of it
    against the base a review takes is accepted."""
    repo = make_repo(tmp_path / "repo")
    hook(repo, "claude", kind="start")
    repo.commit({"notes.txt": "yesterday\n"}, "yesterday's work on feature")
    repo.git("checkout", "-q", "main")
    repo.commit({"README": "main moved on\n"}, "main moves")
    repo.git("checkout", "-q", "-b", "today")
    repo.write("app.py", FIXED + "# today\n")
    review(repo)
    done = working_tree_gate(repo)
    assert done.returncode == 0, done.stderr


def test_the_working_tree_gate_says_how_to_clear_an_unborn_turn(tmp_path: Path) -> None:
    repo = GitRepo.init(tmp_path / "repo")
    repo.write(".gitignore", ".bounded-review/\n__pycache__/\n")
    hook(repo, "claude", kind="start")
    repo.commit({"app.py": FIXED, "test_app.py": TEST}, "the agent's first commit")
    repo.write("notes.txt", "an edit\n")
    review(repo, [sys.executable, "-m", "pytest", "--bounded-review", "--bounded-review-base=HEAD"])
    hook(repo, "claude")  # the agent's stop, then it exits
    done = working_tree_gate(repo)
    assert done.returncode == 2
    assert "delete that file and run the gate again" in done.stderr
    for record in (repo.path / ".bounded-review" / "agents").glob("*.json"):
        record.unlink()  # the user reviewed the first commit
    done = working_tree_gate(repo)
    assert done.returncode == 0, done.stderr


def test_a_turn_whose_base_was_pruned_is_not_passed(tmp_path: Path) -> None:
    repo = unconfigured(tmp_path, with_remote=False)
    hook(repo, "claude", kind="start")
    repo.write("app.py", BROKEN)
    repo.git("add", "app.py")
    repo.git("commit", "-q", "--amend", "-m", "the regression, amended into the turn's start")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    repo.write("notes.txt", "an edit\n")
    review(repo)  # against HEAD: clean
    said = hook(repo, "claude")
    assert said.blocked
    assert "is gone from the repository" in said.instruction
    assert "Run `" not in said.instruction  # no review can satisfy it: none is named
    for _ in range(4):
        said = hook(repo, "claude")
        if not said.blocked:
            break
    assert not said.blocked
    assert "not reviewed" in said.message


def test_the_commit_a_block_names_is_its_own_merge_base_with_head(tmp_path: Path) -> None:
    """A review takes a named base's merge base with HEAD; the commit the hook names is an
    ancestor of HEAD, so that merge base is the commit itself: the review it names is the one
    the hook judges against."""
    repo = unconfigured(tmp_path, with_remote=True)
    repo.commit({"extra.py": "Y = 1\n"}, "an unpushed commit")
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED + "# harmless\n")
    said = hook(repo, "claude")
    fork = repo.git("rev-parse", "origin/feature")
    assert f"--bounded-review-base={fork}" in said.instruction
    assert repo.git("merge-base", fork, "HEAD") == fork
    report = run_named(repo, said)
    assert report["target"]["base_commit"] == fork  # type: ignore[index]
    assert hook(repo, "claude").message == ""


def test_a_configured_base_that_moved_on_is_reviewed_from_the_branch_point(
    tmp_path: Path,
) -> None:
    """``base = "main"`` configured, ``main`` moved on after the branch point: a bare review
    of the working tree takes the merge base, which the hook judges against, so the command
    it names needs no base."""
    repo = make_repo(tmp_path / "repo")
    fork = repo.git("rev-parse", "HEAD")
    repo.git("checkout", "--quiet", "main")
    repo.commit({"later.py": "Z = 1\n"}, "main moves on")
    repo.git("checkout", "--quiet", "feature")
    hook(repo, "claude", kind="start")
    repo.write("app.py", FIXED + "# harmless\n")
    said = hook(repo, "claude")
    assert said.blocked
    assert "--bounded-review-base" not in said.instruction
    report = run_named(repo, said)
    assert report["target"]["base_commit"] == fork  # type: ignore[index]
    assert hook(repo, "claude").message == ""


def test_head_moved_back_behind_the_turn_s_base_is_not_passed(tmp_path: Path) -> None:
    """A reset past the commit the turn is judged against undoes commits no review against a
    named base can see (its merge base with HEAD is older): never passed as reviewed."""
    repo = unconfigured(tmp_path, with_remote=False)
    repo.commit({"app.py": FIXED + "# a later fix\n"}, "a fix before the turn")
    hook(repo, "claude", kind="start")
    repo.git("reset", "-q", "--hard", "HEAD~1")  # the fix undone
    said = hook(repo, "claude")
    assert said.blocked
    assert "no longer descends from the commit the turn is judged against" in said.instruction
    for _ in range(4):
        if not said.blocked:
            break
        said = hook(repo, "claude")
    assert not said.blocked
    assert "not reviewed" in said.message
