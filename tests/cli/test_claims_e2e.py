"""A report counts only for the review it claims to be: where the rules configure lanes, a clean
report whose review an option made less than they ask (lanes switched off, a lower risk tier,
repair rounds over a review-only rule), that does not say what it ran under, or whose loop was
kept in another state folder, lets neither ``bounded-review gate`` nor the agent's stop hook
through; each answer names the option and the command that gives the whole review. The same
options change nothing where no lane is configured, and a stricter one is accepted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

LANE = """import json, sys
packet = json.load(sys.stdin)
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                  "rationale": f"reviewed {len(packet['scope'])} file(s)", "findings": []}))
"""
# A change of a normal size: the automatic risk tier is standard, not economy.
CALC = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(8))
STAGED = "pytest --bounded-review --bounded-review-target=staged --bounded-review-base=HEAD"
REVIEW = [sys.executable, "-m", "pytest", "-q", *STAGED.split()[1:]]


def make(path: Path, lanes: bool) -> GitRepo:
    """A base with (or without) a passing command lane, and a feature branch whose change is
    staged, not committed."""
    repo = GitRepo.init(path)
    table = '[tool.bounded-review]\nbase = "main"\n'
    if lanes:
        script = path.parent / "lane.py"
        script.write_text(LANE)
        command = json.dumps([sys.executable, str(script)])
        table += '[[tool.bounded-review.lanes]]\nname = "bot"\nlens = "correctness"\n'
        table += f"command = {command}\n"
    repo.commit(
        {
            ".gitignore": ".bounded-review/\n__pycache__/\n.pytest_cache/\n",
            "pyproject.toml": table,
            "test_calc.py": "def test_one():\n    assert 1 + 1 == 2\n",
        },
        "base",
    )
    repo.git("checkout", "--quiet", "-b", "feature")
    repo.write("calc.py", CALC)
    repo.git("add", "calc.py")
    return repo


@pytest.fixture
def lanes(tmp_path: Path) -> GitRepo:
    return make(tmp_path / "repo", lanes=True)


def review(repo: GitRepo, *options: str) -> dict[str, Any]:
    """``pytest --bounded-review`` of the staged change with ``options``: clean, and the
    user's tree, index and stash untouched."""
    with repo.untouched():
        done = subprocess.run(
            [*REVIEW, *options],
            cwd=repo.path,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    assert report["gate"]["review_clean"] == "yes"
    return report


def bounded_review(repo: GitRepo, *argv: str, data: bytes = b"") -> tuple[int, str]:
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", *argv],
        cwd=repo.path,
        env=clean_env(),
        input=data,
        capture_output=True,
        timeout=120,
        check=False,
    )
    return done.returncode, (done.stdout + done.stderr).decode()


def gate(repo: GitRepo) -> tuple[int, str]:
    with repo.untouched():
        return bounded_review(repo, "gate")


def stop(repo: GitRepo) -> dict[str, Any]:
    """The Claude Code stop hook's answer: ``{}`` allows silently."""
    event = {"session_id": "s1", "cwd": str(repo.path), "hook_event_name": "Stop"}
    code, out = bounded_review(
        repo, "hook", "stop", "--agent", "claude", data=json.dumps(event).encode()
    )
    assert code == 0
    line = out.strip().splitlines()[0] if out.strip() else "{}"
    parsed = json.loads(line)
    assert isinstance(parsed, dict)
    return parsed


@pytest.mark.parametrize(
    ("options", "key", "said"),
    [
        (["--bounded-review-no-lanes"], "no_lanes", "--bounded-review-no-lanes=true"),
        (["--bounded-review-no-lanes", "-n", "2"], "no_lanes", "--bounded-review-no-lanes=true"),
        (
            ["--bounded-review-risk=economy"],
            "risk",
            "--bounded-review-risk=economy (economy) where the rules give auto (standard)",
        ),
        (
            ["--bounded-review-mode=review-and-fix"],
            "mode",
            "--bounded-review-mode=review-and-fix where the rules give review-only",
        ),
    ],
)
def test_a_review_an_option_made_less_lets_nothing_through(
    lanes: GitRepo, options: list[str], key: str, said: str
) -> None:
    report = review(lanes, *options)
    assert [r["key"] for r in report["invocation"]["reduced"]] == [key]
    assert any(said in item for item in report["limitations"])
    status, why = gate(lanes)
    assert status == 2, why
    assert said in why
    assert "less than the rules of this repository ask" in why
    assert f"run {STAGED}\n" in why
    reason = stop(lanes)["reason"]
    assert said in reason
    assert "-m pytest --bounded-review` and report its state" in reason
    review(lanes)  # the whole review: accepted
    assert gate(lanes)[0] == 0
    assert stop(lanes) == {}


def test_the_whole_review_and_a_stricter_tier_are_accepted(lanes: GitRepo) -> None:
    report = review(lanes)
    assert report["invocation"] == {"state_dir": ".bounded-review", "reduced": []}
    assert [row["status"] for row in report["lanes"]] == ["pass"]
    assert gate(lanes)[0] == 0
    assert stop(lanes) == {}
    report = review(lanes, "--bounded-review-risk=strict")
    assert report["invocation"]["reduced"] == []
    assert gate(lanes)[0] == 0


def test_without_lanes_the_deterministic_gate_is_the_whole_review(tmp_path: Path) -> None:
    plain = make(tmp_path / "plain", lanes=False)
    report = review(plain, "--bounded-review-no-lanes", "--bounded-review-risk=economy")
    assert report["invocation"]["reduced"] == []
    status, why = gate(plain)
    assert status == 0, why
    assert stop(plain) == {}


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda r: r.pop("invocation"), "does not record what its review ran under"),
        (
            lambda r: r["invocation"].update(state_dir=".elsewhere"),
            "kept its loop in the state folder '.elsewhere'",
        ),
    ],
)
def test_a_report_that_does_not_say_what_it_ran_under_is_not_accepted(
    lanes: GitRepo, edit: Any, said: str
) -> None:
    review(lanes)
    path = lanes.path / ".bounded-review" / "report.json"
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document, indent=2))
    status, why = gate(lanes)
    assert status == 2, why
    assert said in why
    assert f"run {STAGED}\n" in why
    assert said in stop(lanes)["reason"]
