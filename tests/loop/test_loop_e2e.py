"""The bounded loop end to end: real pytest sessions over real commits, and a real reviewer
script that counts its invocations — repair loops up to the ceiling, deadlock, reuse of an
unchanged snapshot, convergence with the fixed blocker named, and drift."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import warmstart
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

REVIEWER = """
import json, sys
packet = json.load(sys.stdin)
with open(sys.argv[1], "a") as counter:
    counter.write("x\\n")
with open(sys.argv[1] + ".packets", "a") as seen:
    seen.write(json.dumps({"open": len(packet["open_findings"]), "delta": packet["delta"]}) + "\\n")
lines = open("app.py").read().splitlines()
findings = [
    {"path": "app.py", "line": n, "severity": "blocking", "category": "correctness",
     "failure_mode": "a known bug is still there", "evidence": "the line says so",
     "quote": text, "remediation": "remove the bug"}
    for n, text in enumerate(lines, 1) if "BUG" in text
]
print(json.dumps({"schema": "bounded-review/lane-result/v1",
                  "verdict": "revise" if findings else "pass",
                  "rationale": "looked at app.py", "findings": findings}))
"""


class Loop:
    def __init__(
        self, pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, extra: str = ""
    ) -> None:
        self.pytester = pytester
        self.project = project
        self.counter = tmp_path / "invocations"
        script = tmp_path / "reviewer.py"
        script.write_text(REVIEWER)
        command = json.dumps([sys.executable, str(script), str(self.counter)])
        config = (
            '[tool.bounded-review]\nmode = "review-and-fix"\nrisk = "standard"\n'
            '[[tool.bounded-review.lanes]]\nname = "rev"\nlens = "correctness"\n'
            f"command = {command}\n" + extra
        )
        project.commit(
            {
                "pyproject.toml": config,
                "app.py": "x = 1\n",
                "other.py": "y = 1\n",
                "test_app.py": "def test_a():\n    pass\n",
            },
            "base",
        )
        project.git("checkout", "--quiet", "-b", "feature")

    def cli(self, *argv: str) -> str:
        """Run a ``bounded-review`` command from the project folder; its output."""
        ran = warmstart.run(
            [sys.executable, "-m", "pytest_boundedreview", *argv],
            cwd=self.pytester.path,
            capture_output=True,
            text=True,
            check=True,
        )
        return ran.stdout.strip()

    def invocations(self) -> int:
        return len(self.counter.read_text().splitlines()) if self.counter.exists() else 0

    def review(self, files: dict[str, str] | None = None, *args: str) -> dict[str, Any]:
        if files:
            self.project.commit(files, "edit")
        with self.project.untouched():
            result = self.pytester.runpytest_subprocess(
                "--bounded-review", "--bounded-review-base=main", *args
            )
        report: dict[str, Any] = json.loads(
            (self.pytester.path / ".bounded-review" / "report.json").read_text()
        )
        assert result.ret == (0 if report["gate"]["review_clean"] == "yes" else 1)
        return report


@pytest.fixture
def loop(pytester: pytest.Pytester, project: GitRepo, tmp_path: Path) -> Loop:
    return Loop(pytester, project, tmp_path)


def test_repair_loops_end_in_deadlock_at_the_ceiling(loop: Loop) -> None:
    seen = []
    for n in range(1, 4):
        report = loop.review({"app.py": f"x = {n}  # BUG {n}\n"})
        seen.append(
            (report["loop"]["round"], report["loop"]["repair_loops_used"], report["loop"]["status"])
        )
        assert report["gate"]["review_clean"] == "no"
        assert loop.invocations() == n
    assert seen == [(1, 0, "open"), (2, 1, "open"), (3, 2, "open")]
    assert report["loop"]["loop_id"] == "pr-main-feature"
    assert report["budget"]["max_repair_loops"] == 2

    report = loop.review({"app.py": "x = 4  # BUG 4\n"})
    assert loop.invocations() == 3  # not invoked on round 4
    assert report["loop"]["status"] == "deadlock"
    assert "ceiling of 2 repair loop(s) is reached" in report["loop"]["stop_reason"]
    assert report["lanes"] == []
    assert report["gate"]["review_clean"] != "yes"
    assert any("loop deadlock" in r for r in report["gate"]["reasons"])

    report = loop.review()  # nothing changed: still refused, still not invoked
    assert (loop.invocations(), report["loop"]["status"]) == (3, "deadlock")
    assert loop.cli("status") == (
        "pr-main-feature: deadlock (the ceiling of 2 repair loop(s) is reached with blockers "
        "left (last round 3)), round 3, repair loops 2/2, review_clean no, "
        "flags: model-mismatch"  # one lane, one category, a new place in each of 3 rounds
    )

    report = loop.review({"app.py": "x = 5\n"}, "--bounded-review-reset")
    assert loop.invocations() == 4
    assert (report["loop"]["round"], report["loop"]["status"]) == (1, "converged")


def test_an_unchanged_snapshot_is_reused_and_a_fix_converges(loop: Loop) -> None:
    first = loop.review({"app.py": "x = 1  # BUG here\n"})
    (blocker,) = first["findings"]["blocking"]
    assert first["loop"]["round"] == 1

    again = loop.review()
    assert loop.invocations() == 1
    assert [row["status"] for row in again["lanes"]] == ["reused"]
    assert "result of round 1 is reused" in again["lanes"][0]["note"]
    assert again["findings"]["blocking"] == first["findings"]["blocking"]
    assert (again["loop"]["round"], again["gate"]["review_clean"]) == (1, "no")

    fixed = loop.review({"app.py": "x = 2\n"})
    assert loop.invocations() == 2
    assert (fixed["loop"]["round"], fixed["loop"]["repair_loops_used"]) == (2, 1)
    assert fixed["loop"]["status"] == "converged"
    assert fixed["blockers_fixed"] == [blocker["fingerprint"]]
    assert fixed["gate"]["review_clean"] == "yes"


def test_a_repair_outside_the_scope_is_drift(loop: Loop) -> None:
    loop.review({"app.py": "x = 1  # BUG\n"})
    report = loop.review({"app.py": "x = 2\n", "other.py": "y = 2\n"})
    assert loop.invocations() == 1
    assert report["loop"]["status"] == "drift"
    assert "outside the initial scope: other.py" in report["loop"]["stop_reason"]
    assert report["gate"]["review_clean"] != "yes"


def test_test_edits_can_count_as_drift(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    loop = Loop(pytester, project, tmp_path, "[tool.bounded-review.loop]\ntests_in_scope = false\n")
    loop.review({"app.py": "x = 1  # BUG\n"})
    report = loop.review({"app.py": "x = 2\n", "test_app.py": "def test_a():\n    assert 1\n"})
    assert report["loop"]["status"] == "drift"
    assert "test_app.py" in report["loop"]["stop_reason"]


def test_a_stuck_blocker_is_flagged(loop: Loop) -> None:
    loop.review({"app.py": "x = 1  # BUG\n"})
    report = loop.review(
        {"app.py": "x = 1  # BUG\n", "test_app.py": "def test_a():\n    assert 1\n"}
    )
    assert report["loop"]["round"] == 2
    assert "stuck" in report["loop"]["flags"]


def test_a_delta_round_retains_the_lanes_that_passed(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    other = tmp_path / "sec-invocations"
    passing = (
        "import json, sys\n"
        f"open({str(other)!r}, 'a').write('x\\n')\n"
        "print(json.dumps({'schema': 'bounded-review/lane-result/v1', 'verdict': 'pass',"
        " 'rationale': 'nothing security-relevant'}))\n"
    )
    (tmp_path / "sec.py").write_text(passing)
    extra = (
        '[[tool.bounded-review.lanes]]\nname = "sec"\nlens = "security"\n'
        f"command = {json.dumps([sys.executable, str(tmp_path / 'sec.py')])}\n"
        "[tool.bounded-review.selection]\nsmall_lines = 0\n"
    )
    loop = Loop(pytester, project, tmp_path, extra)
    first = loop.review({"app.py": "x = 1  # BUG\n"}, "--bounded-review-risk=strict")
    assert {r["name"]: r["status"] for r in first["lanes"]} == {"rev": "revise", "sec": "pass"}
    second = loop.review({"app.py": "x = 1  # BUG again\n"}, "--bounded-review-risk=strict")
    rows = {r["name"]: r for r in second["lanes"]}
    assert rows["sec"]["status"] == "retained"
    state = json.loads(
        (loop.pytester.path / ".bounded-review/loops/pr-main-feature/state.json").read_text()
    )
    lanes = {lane["name"]: lane for lane in state["rounds"][1]["lanes"]}
    assert (lanes["sec"]["status"], lanes["sec"]["retained_from"]) == ("retained", 1)
    assert (state["rounds"][1]["coverage"], state["rounds"][1]["affected"]) == ("delta", ["rev"])
    (attempt,) = lanes["rev"]["attempts"]
    assert attempt["attempt_id"] == "r2-rev-1"  # issued by the engine: unique in the loop
    assert (attempt["status"], attempt["verdict"]) == ("complete", "revise")
    assert attempt["revision"] == state["rounds"][1]["revision"]
    assert state["origin"] == "the first review of this target"
    assert rows["sec"]["note"] == "passed in round 1: retained by reference"
    assert rows["rev"]["status"] == "revise"
    assert (loop.invocations(), len(other.read_text().splitlines())) == (2, 1)
    packets = [
        json.loads(line) for line in Path(f"{loop.counter}.packets").read_text().splitlines()
    ]
    assert (packets[0]["open"], packets[0]["delta"]) == (0, None)
    assert packets[1]["open"] == 1  # its own open finding from round 1
    assert "-x = 1  # BUG\n+x = 1  # BUG again" in packets[1]["delta"]
    full = loop.review(
        {"app.py": "x = 1  # BUG 3\n"}, "--bounded-review-risk=strict", "--bounded-review-full"
    )
    assert {r["name"]: r["status"] for r in full["lanes"]} == {"rev": "revise", "sec": "pass"}
    assert len(other.read_text().splitlines()) == 2


def test_a_corrupt_loop_state_is_kept_and_keeps_the_gate_open(loop: Loop) -> None:
    loop.review({"app.py": "x = 3\n"})
    state = loop.pytester.path / ".bounded-review" / "loops" / "pr-main-feature" / "state.json"
    state.write_text("{torn")
    report = loop.review({"app.py": "x = 2\n"})
    assert state.read_text() == "{torn"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any("BR_RECOVERY_REQUIRED" in r for r in report["gate"]["reasons"])


def test_bounded_review_reset_lets_a_deadlocked_target_start_over(loop: Loop) -> None:
    for n in range(1, 5):
        report = loop.review({"app.py": f"x = {n}  # BUG {n}\n"})
    assert report["loop"]["status"] == "deadlock"
    folder = loop.pytester.path / ".bounded-review" / "loops" / "pr-main-feature"
    deadlocked = (folder / "state.json").read_bytes()
    receipt = json.loads(loop.cli("reset"))
    assert (receipt["status"], receipt["was"]) == ("archived", "deadlock")
    assert (folder / "archive" / "0001.json").read_bytes() == deadlocked
    assert "no review loop in" in loop.cli("status")
    report = loop.review()
    assert (report["loop"]["round"], report["loop"]["status"]) == (1, "open")
    assert loop.invocations() == 4


def test_a_new_review_after_a_converged_loop_archives_it(loop: Loop) -> None:
    loop.review({"app.py": "x = 3\n"})
    folder = loop.pytester.path / ".bounded-review" / "loops" / "pr-main-feature"
    converged = (folder / "state.json").read_bytes()
    assert json.loads(converged)["status"] == "converged"
    report = loop.review({"app.py": "x = 4\n"})
    assert (report["loop"]["round"], report["loop"]["status"]) == (1, "converged")
    assert (folder / "archive" / "0001.json").read_bytes() == converged  # kept, not replaced


ARCHITECT = """
import json, os, sys
packet = json.load(sys.stdin)
runs = sys.argv[2]
before = len(open(runs).read().splitlines()) if os.path.exists(runs) else 0
with open(sys.argv[1], "a") as seen:
    seen.write(json.dumps({"review": packet["model_review"], "rev_runs_before": before}) + "\\n")
if sys.argv[3] == "fail":
    sys.exit("the architect is unavailable")
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                  "rationale": "the places share no cause"}))
"""


def architect_loop(pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, mode: str) -> Loop:
    (tmp_path / "architect.py").write_text(ARCHITECT)
    argv = [sys.executable, str(tmp_path / "architect.py"), str(tmp_path / "architect-heard")]
    command = json.dumps([*argv, str(tmp_path / "invocations"), mode])
    extra = '[[tool.bounded-review.lanes]]\nname = "arch"\nlens = "architecture"\n'
    extra += f"command = {command}\n"
    return Loop(pytester, project, tmp_path, extra)


def test_model_mismatch_dispatches_the_architecture_lane_first_with_the_history(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    loop = architect_loop(pytester, project, tmp_path, "pass")
    heard = tmp_path / "architect-heard"
    for n in (1, 2, 3):
        report = loop.review({"app.py": f"x = {n}  # BUG {n}\n"}, "--bounded-review-risk=strict")
        assert [row["name"] for row in report["lanes"] if row["status"] != "skipped"] == ["rev"]
    assert "model-mismatch" in report["loop"]["flags"]
    assert not heard.exists()  # a small change: the architecture lens was not needed so far
    project.commit({"app.py": "x = 4  # BUG 4\n"}, "edit")
    dry = loop.cli("lanes", "--base", "main", "--risk", "strict")
    assert "lane arch [architecture, verdict, command]: would run first - the model review" in dry

    report = loop.review(None, "--bounded-review-risk=strict")
    rows = {row["name"]: row["status"] for row in report["lanes"]}
    assert rows == {"arch": "pass", "rev": "revise"}  # heard first, then correctness resumed
    (seen,) = [json.loads(line) for line in heard.read_text().splitlines()]
    assert seen["rev_runs_before"] == 3  # heard before the correctness lane of round 4
    review = seen["review"]
    assert (review["lane"], review["category"]) == ("rev", "correctness")
    history = review["history"]
    assert [h["round"] for h in history] == [1, 2, 3]
    assert [h["findings"][0]["quote"] for h in history] == [
        f"x = {n}  # BUG {n}" for n in (1, 2, 3)
    ]
    assert history[0]["fix"] is None
    assert "-x = 1  # BUG 1\n+x = 2  # BUG 2" in history[1]["fix"]
    assert "-x = 2  # BUG 2\n+x = 3  # BUG 3" in history[2]["fix"]
    state = json.loads(
        (loop.pytester.path / ".bounded-review/loops/pr-main-feature/state.json").read_text()
    )
    assert state["model_review"]["answered_round"] == 4
    assert loop.invocations() == 4


def test_model_mismatch_without_an_architecture_lane_stops_as_deadlock(loop: Loop) -> None:
    for n in (1, 2, 3):
        loop.review({"app.py": f"x = {n}  # BUG {n}\n"}, "--bounded-review-risk=strict")
    report = loop.review({"app.py": "x = 4  # BUG 4\n"}, "--bounded-review-risk=strict")
    assert report["loop"]["status"] == "deadlock"
    assert report["loop"]["stop_reason"].startswith(
        "model review needed: no architecture lane configured (lane 'rev' raised 'correctness'"
    )
    assert loop.invocations() == 3  # no correctness-only round after the mismatch
    assert report["gate"]["review_clean"] != "yes"


def test_a_model_review_that_fails_holds_the_correctness_lanes(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    loop = architect_loop(pytester, project, tmp_path, "fail")
    for n in (1, 2, 3, 4):
        report = loop.review({"app.py": f"x = {n}  # BUG {n}\n"}, "--bounded-review-risk=strict")
    rows = {row["name"]: row for row in report["lanes"]}
    assert rows["arch"]["status"] == "unverified"
    assert rows["rev"]["status"] == "skipped"
    assert rows["rev"]["note"] == "held until the model review by lane 'arch' answers"
    assert loop.invocations() == 3  # no correctness round until the model review answers
    assert report["gate"]["review_clean"] == "indeterminate"
    state = json.loads(
        (loop.pytester.path / ".bounded-review/loops/pr-main-feature/state.json").read_text()
    )
    assert state["model_review"]["answered_round"] is None


SCOUT = """
import json
print(json.dumps({"schema": "bounded-review/lane-result/v1", "rationale": "facts only"}))
"""


def test_a_round_where_only_a_scout_would_answer_is_a_full_round(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    (tmp_path / "scout.py").write_text(SCOUT)
    command = json.dumps([sys.executable, str(tmp_path / "scout.py")])
    extra = '[[tool.bounded-review.lanes]]\nname = "facts"\nlens = "facts"\nrole = "scout"\n'
    loop = Loop(pytester, project, tmp_path, extra + f"command = {command}\n")
    failing = "def test_a():\n    assert 0\n"
    first = loop.review({"app.py": "x = 2\n", "test_app.py": failing})
    assert {r["name"]: r["status"] for r in first["lanes"]} == {"facts": "scout", "rev": "pass"}
    assert first["gate"]["review_clean"] == "no"  # a target-related failure, not the lanes
    second = loop.review({"test_app.py": "def test_a():\n    pass\n"})
    rows = {r["name"]: r["status"] for r in second["lanes"]}
    assert rows == {"facts": "scout", "rev": "pass"}  # reviewed again, not retained
    assert loop.invocations() == 2
    assert second["loop"]["status"] == "converged"


PASSER = """
import json
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                  "rationale": "nothing of its lens"}))
"""
LISTER = """
import os, sys
if os.path.exists(sys.argv[1]):
    sys.exit("the model list is unavailable")
print("m1")
"""


def test_a_lane_that_cannot_be_routed_is_a_failed_attempt_of_a_recorded_round(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    (tmp_path / "pass.py").write_text(PASSER)
    (tmp_path / "lister.py").write_text(LISTER)
    flag = tmp_path / "lists-nothing"
    lister = json.dumps([sys.executable, str(tmp_path / "lister.py"), str(flag)])
    passer = json.dumps([sys.executable, str(tmp_path / "pass.py")])
    extra = f'model = "m1"\nmodels_command = {lister}\n'  # for the lane `rev` above
    extra += f'[[tool.bounded-review.lanes]]\nname = "sty"\nlens = "house"\ncommand = {passer}\n'
    extra += "[tool.bounded-review.selection]\nsmall_lines = 0\n"
    loop = Loop(pytester, project, tmp_path, extra)
    first = loop.review({"app.py": "x = 2  # BUG 2\n"}, "--bounded-review-risk=strict")
    assert {r["name"]: r["status"] for r in first["lanes"]} == {"rev": "revise", "sty": "pass"}
    flag.write_text("")
    second = loop.review({"app.py": "x = 3  # BUG 3\n"}, "--bounded-review-risk=strict")
    rows = {r["name"]: r["status"] for r in second["lanes"]}
    assert rows == {"rev": "unverified", "sty": "retained"}
    assert (second["loop"]["round"], second["loop"]["repair_loops_used"]) == (2, 1)  # recorded
    assert second["gate"]["review_clean"] == "indeterminate"
    state = json.loads(
        (loop.pytester.path / ".bounded-review/loops/pr-main-feature/state.json").read_text()
    )
    rev = next(lane for lane in state["rounds"][1]["lanes"] if lane["name"] == "rev")
    assert [a["status"] for a in rev["attempts"]] == ["failed"]
    assert "the model list" in rev["attempts"][0]["detail"]
