"""`bounded-review run --plan` end to end: real feasibility and acceptance reviewer scripts on a
real repository, the loop over plan revisions (repair, convergence, objective drift), and what
a plan pass does and does not claim."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

REVIEWER = """
import json, os, sys
packet = json.load(sys.stdin)
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"lens": packet["lane"]["lens"], "kind": packet["target"]["kind"],
                          "revision": packet["target"]["revision"],
                          "scope": [f["path"] for f in packet["scope"]]}) + "\\n")
lines = open("PLAN.md").read().splitlines()
findings = [
    {"path": "PLAN.md", "line": n, "severity": "blocking", "category": "prerequisite",
     "failure_mode": "a step depends on something nobody has", "evidence": "the step says TODO",
     "quote": text, "remediation": "say who provides it"}
    for n, text in enumerate(lines, 1) if "TODO" in text
]
result = {"schema": "bounded-review/lane-result/v1", "verdict": "revise" if findings else "pass",
          "rationale": "read every step", "findings": findings}
if sys.argv[2] == "assure":
    result["assurances"] = {"root_proven": "yes", "scope_unchanged": "yes",
                            "verification_adequate": "yes"}
print(json.dumps(result))
"""

PLAN = """# Objective
Make `double` return twice its argument.

## Steps
1. Change app.py:2 to `return 2 * x`.
2. Ask the owner for the TODO list.

## Verification
`pytest -q` must report no failure.
"""


class Project:
    def __init__(self, tmp_path: Path, assure: bool = True) -> None:
        self.repo = GitRepo.init(tmp_path / "project")
        self.log = tmp_path / "lanes.log"
        script = tmp_path / "reviewer.py"
        script.write_text(REVIEWER)
        lanes = ""
        for lens in ("feasibility", "acceptance"):
            argv = [sys.executable, str(script), str(self.log), "assure" if assure else "bare"]
            lanes += (
                f'[[tool.bounded-review.lanes]]\nname = "{lens}"\nlens = "{lens}"\n'
                f"command = {json.dumps(argv)}\n"
            )
        self.repo.commit(
            {
                ".gitignore": ".bounded-review/\n",
                "pyproject.toml": '[tool.bounded-review]\nmode = "review-and-fix"\n' + lanes,
                "app.py": "def double(x):\n    return x\n",
            },
            "base",
        )
        self.plan = self.repo.path / "PLAN.md"

    def run(self, text: str, *args: str) -> tuple[subprocess.CompletedProcess[str], Any]:
        self.plan.write_text(text)
        env = clean_env()
        with self.repo.untouched():
            ran = warmstart.run(
                [sys.executable, "-m", "pytest_boundedreview", "run", "--plan", "PLAN.md", *args],
                cwd=self.repo.path,
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
        report = json.loads((self.repo.path / ".bounded-review" / "report.json").read_text())
        return ran, report

    def dispatched(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def test_a_plan_is_reviewed_repaired_and_passes_without_claiming_it_was_done(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    ran, report = project.run(PLAN)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    digest = hashlib.sha256(PLAN.encode()).hexdigest()
    assert report["target"]["kind"] == "plan"
    assert report["target"]["revision"] == f"sha256:{digest}"
    assert report["target"]["files"] == ["PLAN.md"]
    # The plan lenses, each once, on the plan itself.
    assert sorted(d["lens"] for d in project.dispatched()) == ["acceptance", "feasibility"]
    assert all(d["kind"] == "plan" and d["scope"] == ["PLAN.md"] for d in project.dispatched())
    blocking = report["findings"]["blocking"]
    assert [(f["line"], f["category"], sorted(f["lanes"])) for f in blocking] == [
        (6, "prerequisite", ["acceptance", "feasibility"])
    ]
    assert report["loop"]["round"] == 1
    assert report["statuses"]["local_verification"] == "not-run"
    assert report["statuses"]["committed"] == "not-applicable"
    assert report["next_action"].endswith(f"then re-run bounded-review run --plan {project.plan}")

    fixed = PLAN.replace("Ask the owner for the TODO list.", "Update the docstring.")
    ran, report = project.run(fixed)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert report["gate"]["review_clean"] == "yes"
    assert report["loop"]["round"] == 2
    assert report["loop"]["status"] == "converged"
    assert len(report["blockers_fixed"]) == 1
    # A pass is about the plan only, and says so.
    assert any("not that it was carried out" in lim for lim in report["limitations"])
    assert report["next_action"].startswith("carry the plan out")
    assert report["statuses"]["local_verification"] == "not-run"
    assert "review_clean: yes" in ran.stdout
    # The unchanged plan is not dispatched again.
    before = len(project.dispatched())
    ran, report = project.run(fixed)
    assert len(project.dispatched()) == before
    assert {lane["status"] for lane in report["lanes"]} == {"reused"}


def test_changing_the_objective_mid_loop_is_drift(tmp_path: Path) -> None:
    project = Project(tmp_path)
    ran, report = project.run(PLAN)
    assert report["gate"]["review_clean"] == "no"
    calls = len(project.dispatched())
    moved = PLAN.replace("return twice its argument", "return its argument squared")
    ran, report = project.run(moved.replace("TODO", "done"))
    assert ran.returncode != 0
    assert report["loop"]["status"] == "drift"
    assert "objective changed since it was pinned" in report["loop"]["stop_reason"]
    assert "--reset starts a new loop" in " ".join(report["gate"]["reasons"])
    assert len(project.dispatched()) == calls  # nothing dispatched on a drifted loop
    assert report["gate"]["review_clean"] != "yes"


def test_plan_verdicts_without_assurances_are_not_accepted(tmp_path: Path) -> None:
    project = Project(tmp_path, assure=False)
    ran, report = project.run(PLAN.replace("TODO", "done"))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert report["gate"]["review_clean"] == "indeterminate"
    assert {lane["status"] for lane in report["lanes"]} == {"unverified"}
    assert any("assurances" in (lane["note"] or "") for lane in report["lanes"])


def test_plan_checks_block_without_lanes_and_bad_input_is_a_usage_error(
    tmp_path: Path,
) -> None:
    project = Project(tmp_path)
    ran, report = project.run("Just do it.\n", "--no-lanes")
    assert ran.returncode == 1
    assert {f["failure_mode"] for f in report["findings"]["blocking"]} == {
        "the plan has no objective section",
        "the plan has no steps section",
        "the plan has no verification section",
    }
    missing = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "run", "--plan", "NOPE.md"],
        cwd=project.repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert missing.returncode == 4
    assert "cannot read the plan" in missing.stderr
    assert "NOPE.md" in missing.stderr


@pytest.mark.parametrize("extra", [["--base", "HEAD"], ["--", "-q"]])
def test_plan_takes_no_code_options(tmp_path: Path, extra: list[str]) -> None:
    project = Project(tmp_path)
    project.plan.write_text(PLAN)
    ran = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "run", "--plan", "PLAN.md", *extra],
        cwd=project.repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 4
    assert "--plan reviews a plan file" in ran.stderr


def test_an_objective_is_pinned_when_it_first_appears(tmp_path: Path) -> None:
    project = Project(tmp_path)
    no_objective = PLAN.replace("# Objective\nMake `double` return twice its argument.\n", "")
    ran, report = project.run(no_objective)
    assert "the plan has no objective section" in {
        f["failure_mode"] for f in report["findings"]["blocking"]
    }
    ran, report = project.run(PLAN)  # round 2: the objective appears and is pinned
    assert report["loop"]["round"] == 2
    assert report["loop"]["status"] == "open"
    ran, report = project.run(PLAN.replace("twice its argument", "its square"))
    assert report["loop"]["status"] == "drift"
    assert ran.returncode != 0


def test_plans_kept_outside_the_repository(tmp_path: Path) -> None:
    project = Project(tmp_path)
    env = clean_env()

    def review(path: Path, text: str) -> Any:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        with project.repo.untouched():
            warmstart.run(
                [sys.executable, "-m", "pytest_boundedreview", "run", "--plan", str(path)],
                cwd=project.repo.path,
                capture_output=True,
                env=env,
                check=False,
            )
        return json.loads((project.repo.path / ".bounded-review" / "report.json").read_text())

    first = review(tmp_path / "a" / "app.py", PLAN)
    second = review(tmp_path / "b" / "app.py", PLAN.replace("twice", "thrice"))
    # Two plans of one name are two loops, and neither replaces the repository's app.py:
    # their citation of app.py:2 resolves against the repository's own file.
    assert first["loop"]["loop_id"] != second["loop"]["loop_id"]
    assert second["loop"]["status"] == "open"
    for report in (first, second):
        (where,) = report["target"]["files"]
        assert where.startswith(".bounded-review-plan/")
        assert where.endswith("/app.py")
        assert "plan-contradiction" not in {f["category"] for f in report["findings"]["blocking"]}
