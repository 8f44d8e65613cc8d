"""The agent's stop hook on real repositories and real review sessions: it lets the agent stop
only on a tree the gate passed (or with nothing to review), blocks with the next concrete step
otherwise, never blocks more than the loop's ceiling + 1 times in one agent session, never
blocks twice on the same (tree, report) without progress, and never traps the agent when it
cannot decide. It touches neither the index nor the working tree."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from agenthooks import BROKEN, FIXED, hook, make_repo, review
from gitrepo import GitRepo, clean_env


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo")


def stop(
    repo: GitRepo, agent: str = "claude", session: str = "s1", raw: bytes | None = None
) -> tuple[int, str]:
    event = {
        "session_id": session,
        "cwd": str(repo.path),
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    data = raw if raw is not None else json.dumps(event).encode()
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "hook", "stop", "--agent", agent],
        input=data,
        capture_output=True,
        cwd=repo.path,
        env=clean_env(),
        timeout=60,
        check=False,
    )
    return done.returncode, done.stdout.decode()


def answer(out: str) -> dict[str, Any]:
    parsed = json.loads(out) if out.strip() else {}
    assert isinstance(parsed, dict)
    return parsed


@pytest.mark.slow
def test_a_report_that_is_not_clean_blocks_with_its_blockers(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    review(repo)
    code, out = stop(repo)
    reason = answer(out)["reason"]
    assert "test test_app.py::test_add: passes at base" in reason
    assert "Next: fix 1 target-related test failure(s)" in reason
    assert code == 0


@pytest.mark.slow
def test_a_tree_edited_after_its_review_is_not_clean(repo: GitRepo) -> None:
    repo.write("app.py", FIXED + "\n# reviewed\n")
    review(repo)
    repo.write("app.py", BROKEN)  # the agent edited after the clean review
    reason = answer(stop(repo)[1])["reason"]
    assert "the last report is of another tree" in reason


def test_nothing_to_review_allows_at_once(repo: GitRepo) -> None:
    assert stop(repo) == (0, "")  # the tree is the base's: a question answered, no code


@pytest.mark.slow
def test_the_hook_never_blocks_more_than_the_ceiling_plus_one_in_a_task(repo: GitRepo) -> None:
    blocks = 0
    for attempt in range(8):  # an agent that keeps editing and never runs the review
        repo.write("app.py", BROKEN + f"# attempt {attempt}\n")
        said = answer(stop(repo)[1])
        if said.get("decision") != "block":
            break
        blocks += 1
    assert blocks == 3  # standard tier: 2 repair loops, + 1
    assert said["systemMessage"].startswith("stop allowed: 3 block(s) spent on this task")
    repo.write("app.py", BROKEN + "# the next task\n")  # the allowed stop ended the task
    assert answer(stop(repo)[1])["decision"] == "block"
    other = answer(stop(repo, session="s2")[1])  # another agent session counts anew
    assert other["decision"] == "block"


def test_an_unreadable_event_lets_the_agent_stop_with_the_error(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    code, out = stop(repo, raw=b"not json")
    said = answer(out)
    assert code == 0
    assert "decision" not in said
    assert said["systemMessage"].startswith("bounded-review stop hook: unreadable event")


@pytest.mark.slow
def test_a_byte_order_mark_is_read(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    event = {"session_id": "s1", "cwd": str(repo.path), "stop_hook_active": False}
    raw = b"\xef\xbb\xbf" + json.dumps(event).encode()
    assert answer(stop(repo, raw=raw)[1])["decision"] == "block"


@pytest.mark.slow
def test_a_corrupt_state_blocks_once_with_the_error_then_lets_go(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    counter = repo.path / ".bounded-review" / "agents" / "claude-s1.json"
    counter.parent.mkdir(parents=True)
    counter.write_text("{torn")
    first = answer(stop(repo)[1])
    assert first["decision"] == "block"
    assert "could not decide" in first["reason"]
    second = answer(stop(repo)[1])
    assert "decision" not in second
    assert "could not decide" in second["systemMessage"]


def test_review_only_asks_for_the_review_never_for_edits(repo: GitRepo) -> None:
    repo.commit({"pyproject.toml": '[tool.bounded-review]\nbase = "main"\n'}, "review-only")
    repo.write("app.py", BROKEN)
    reason = answer(stop(repo)[1])["reason"]
    review = f"{sys.executable} -m pytest --bounded-review"
    assert reason.startswith("No review of this tree (no report at ")
    assert reason.endswith(f"Run `{review}` and report its state to the user; do not edit.")


@pytest.mark.slow
def test_a_report_it_cannot_use_is_never_clean(repo: GitRepo) -> None:
    repo.write("app.py", FIXED + "\n# reviewed\n")
    review(repo)
    path = repo.path / ".bounded-review" / "report.json"
    good = path.read_bytes()
    data = json.loads(good)
    corrupt = {
        "truncated": good[: len(good) // 2],
        "another schema": json.dumps(data | {"schema": "bounded-review/report/v0"}).encode(),
        "an unknown gate value": json.dumps(data | {"gate": {"review_clean": "YES"}}).encode(),
        "a mistyped finding list": json.dumps(
            data | {"findings": {**data["findings"], "blocking": [{"path": 1}]}}
        ).encode(),
        "a missing next action": json.dumps(
            {k: v for k, v in data.items() if k != "next_action"}
        ).encode(),
    }
    for n, (what, raw) in enumerate(corrupt.items()):
        path.write_bytes(raw)
        said = answer(stop(repo, session=f"c{n}")[1])
        assert said.get("decision") == "block", what
        assert "is not a usable bounded-review report" in said["reason"], what
    path.write_bytes(good)
    assert stop(repo, session="after") == (0, "")  # the same report, whole, is clean


@pytest.mark.slow
def test_the_first_hook_in_a_new_repository_keeps_the_state_folder_out_of_git(
    tmp_path: Path,
) -> None:
    # a repository that never had a review and does not ignore the state folder itself
    project = GitRepo.init(tmp_path / "repo")
    project.commit({"app.py": FIXED, "test_app.py": "def test_a():\n    pass\n"}, "base")
    project.commit({"pyproject.toml": '[tool.bounded-review]\nbase = "HEAD~1"\n'}, "config")
    hook(project, "claude", kind="start")
    project.write("app.py", BROKEN)
    assert project.git("status", "--porcelain") == " M app.py"
    assert hook(project, "claude").blocked
    review(project)  # the review the block asks for still runs
    assert project.user_state()[0] == " M app.py"  # (and the bytecode the tests' imports wrote)


@pytest.mark.slow
def test_a_review_against_another_base_is_not_a_review_of_the_change(repo: GitRepo) -> None:
    repo.write("app.py", FIXED + "# a change no review has seen\n")
    repo.commit(message="the change, committed")
    warmstart.run(  # an empty diff against HEAD: nothing to look at, gate yes
        [sys.executable, "-m", "pytest", "-q", "--bounded-review", "--bounded-review-base=HEAD"],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        check=False,
    )
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    assert (report["target"]["empty"], report["gate"]["review_clean"]) == (True, "yes")
    said = hook(repo, "claude")
    assert said.blocked
    assert "the last report reviewed against" in said.instruction


@pytest.mark.slow
def test_a_configured_pr_target_is_told_to_review_the_working_tree(repo: GitRepo) -> None:
    config = '[tool.bounded-review]\nmode = "review-and-fix"\nbase = "main"\ntarget = "pr"\n'
    repo.commit({"pyproject.toml": config}, "pr target")
    repo.write("app.py", FIXED + "# harmless\n")
    said = hook(repo, "claude")
    command = f"{sys.executable} -m pytest --bounded-review --bounded-review-target=local-diff"
    assert f"Run `{command}`" in said.instruction
    argv = command.split()
    subprocess.run(argv, cwd=repo.path, env=clean_env(), capture_output=True, check=False)
    assert not hook(repo, "claude", session="after").blocked  # the instruction can be met


@pytest.mark.slow
def test_a_configured_review_command_is_the_one_asked_for(repo: GitRepo) -> None:
    config = '[tool.bounded-review]\nbase = "main"\nreview_command = "tox -e review"\n'
    repo.commit({"pyproject.toml": config}, "command")
    repo.write("app.py", BROKEN)
    assert "Run `tox -e review` and report its state" in hook(repo, "claude").instruction


@pytest.mark.slow
def test_an_uncommitted_edit_in_a_submodule_is_not_passed(repo: GitRepo, tmp_path: Path) -> None:
    library = GitRepo.init(tmp_path / "lib")
    library.commit({"lib.py": "X = 1\n"}, "lib")
    repo.git(
        "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library.path), "vendor"
    )
    repo.commit(message="vendor")
    repo.write("app.py", FIXED + "# reviewed\n")
    review(repo)
    assert not hook(repo, "claude").blocked
    (repo.path / "vendor" / "lib.py").write_text("X = 2\n")  # the tree still names its commit
    said = hook(repo, "claude", session="s2")
    assert said.blocked
    assert "vendor (submodule with uncommitted files)" in said.instruction
    hook(repo, "claude", session="s3", kind="start")  # a turn that edits only the submodule
    (repo.path / "vendor" / "lib.py").write_text("X = 3\n")
    assert hook(repo, "claude", session="s3").blocked


@pytest.mark.slow
def test_with_no_report_the_configured_ceiling_bounds_the_blocks(repo: GitRepo) -> None:
    config = '[tool.bounded-review]\nmode = "review-and-fix"\nbase = "main"\nmax_repair_loops = 0\n'
    repo.commit({"pyproject.toml": config}, "no repair loops")
    blocks = 0
    for attempt in range(4):
        repo.write("app.py", BROKEN + f"# attempt {attempt}\n")
        if not hook(repo, "claude").blocked:
            break
        blocks += 1
    assert blocks == 1  # a ceiling of 0 repair loops, + 1


@pytest.mark.slow
def test_hooks_of_one_session_run_at_once_block_once(repo: GitRepo) -> None:
    # an agent that runs the same stop hook twice (configured at two levels) at the same time
    repo.write("app.py", BROKEN)
    event = {"session_id": "twice", "cwd": str(repo.path), "stop_hook_active": False}
    argv = [sys.executable, "-m", "pytest_boundedreview", "hook", "stop", "--agent", "claude"]
    runs = [
        subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=repo.path, env=clean_env()
        )
        for _ in range(6)
    ]
    for run in runs:  # every hook started and reading its event...
        assert run.stdin is not None
        run.stdin.write(json.dumps(event).encode())
    for run in runs:  # ...then all let go at once
        assert run.stdin is not None
        run.stdin.close()
    answers = []
    for run in runs:
        assert run.stdout is not None
        answers.append(run.stdout.read())
        run.wait(timeout=60)
        run.stdout.close()
    blocks = [a for a in answers if b'"decision": "block"' in a]
    assert len(blocks) == 1, answers
