"""Reviewer lanes inside a real pytest session: dispatched on a snapshot copy, reported, and
kept from a clean verdict when they fail, find something untriaged, or touch the live tree."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

LANE = """
import json, os, sys
packet = json.load(sys.stdin)
mode = sys.argv[1]
if mode == "fail":
    sys.exit(1)
if mode == "vandal":
    open(sys.argv[2], "a").write("# touched by a reviewer\\n")
findings = []
finding = {"path": "app.py", "line": 1, "severity": "blocking", "category": "correctness",
           "failure_mode": "f", "evidence": "e", "remediation": "r"}
if mode == "finds":
    findings = [finding]
if mode == "revise-rejected":  # a line the file does not have
    findings = [{**finding, "line": 99}]
if mode == "revise-demoted":  # style never blocks
    findings = [{**finding, "category": "style"}]
if mode == "revise-unsure":  # under the configured min_confidence
    findings = [{**finding, "confidence": 0.3}]
if mode == "revise-misquoted":  # a quote the file does not have
    findings = [{**finding, "quote": "x = 3"}]
if mode == "revise-quoted":  # a quote the file has, at the line cited
    findings = [{**finding, "quote": "x = 2"}]
verdict = "pass" if not findings else "revise"
if mode == "revise-bare":  # the bug named in prose, and no finding
    verdict = "revise"
    with open(os.path.join(os.path.dirname(sys.argv[0]), "tries"), "a") as tries:
        tries.write("x")
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": verdict,
                  "rationale": f"reviewed {len(packet['scope'])} file(s)",
                  "findings": findings}))
"""


def configure(project: GitRepo, tmp_path: Path, mode: str, extra: str = "", top: str = "") -> None:
    script = tmp_path / "lane.py"
    script.write_text(LANE)
    command = [sys.executable, str(script), mode, str(project.path / "app.py")]
    config = (
        f"[tool.bounded-review]\nmax_retries = 1\n{top}"
        "[[tool.bounded-review.lanes]]\n"
        f'name = "bot"\nlens = "correctness"\ncommand = {json.dumps(command)}\n' + extra
    )
    commit_change(project, config)


def review(pytester: pytest.Pytester) -> tuple[pytest.RunResult, dict[str, Any]]:
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    path = pytester.path / ".bounded-review" / "report.json"
    return result, json.loads(path.read_text())


def test_a_passing_lane_keeps_the_gate_clean(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    configure(
        project,
        tmp_path,
        "pass",
        '[[tool.bounded-review.lanes]]\nname = "sec"\nlens = "security"\ncommand = ["unused"]\n',
    )
    result, report = review(pytester)
    rows = {row["name"]: row for row in report["lanes"]}
    assert rows["bot"]["status"] == "pass"
    assert rows["bot"]["rationale"] == "reviewed 1 file(s)"
    assert rows["bot"]["attempts"] == 1
    assert rows["sec"]["status"] == "skipped"
    assert rows["sec"]["note"] == "the security lens is not needed: a small target"
    assert report["gate"]["review_clean"] == "yes"
    assert not any("no reviewer lanes ran" in item for item in report["limitations"])
    result.stdout.fnmatch_lines(
        [
            "bounded-review: lane bot [correctness] started",
            "bounded-review: lane bot finished: pass in *",
        ]
    )
    assert result.ret == 0


@pytest.mark.parametrize(
    ("mode", "reason", "status", "attempts"),
    [
        ("fail", "lane 'bot' unverified: exit 1", "unverified", 2),
        ("vandal", "artifact mutated during review: app.py", "pass", 1),
    ],
)
def test_lanes_that_cannot_be_trusted_keep_the_gate_from_yes(
    pytester: pytest.Pytester,
    project: GitRepo,
    tmp_path: Path,
    mode: str,
    reason: str,
    status: str,
    attempts: int,
) -> None:
    configure(project, tmp_path, mode)
    result, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == (status, attempts)
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any(reason in r for r in report["gate"]["reasons"]), report["gate"]
    assert result.ret == 1
    if mode == "vandal":
        project.git("checkout", "--", "app.py")


def test_a_lane_finding_that_survives_triage_blocks(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    configure(project, tmp_path, "finds")
    result, report = review(pytester)
    (blocker,) = report["findings"]["blocking"]
    assert (blocker["path"], blocker["line"], blocker["lanes"]) == ("app.py", 1, ["bot"])
    assert blocker["verification"] == "evidence"
    assert report["gate"]["review_clean"] == "no"
    assert report["gate"]["reasons"] == ["blocking finding: app.py:1 f"]
    assert report["next_action"] == (
        "fix 1 verified blocker(s): app.py:1 (correctness); then re-run pytest --bounded-review"
    )
    assert result.ret == 1


def test_a_revise_without_a_finding_is_an_unverified_attempt(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    """The bug named in the rationale alone: not a lane result. Retried like any failure,
    and the gate is indeterminate, the loop open."""
    configure(project, tmp_path, "revise-bare")
    result, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 2)  # max_retries = 1
    assert (tmp_path / "tries").read_text() == "xx"
    assert "a `revise` verdict without a finding" in row["note"]
    assert report["gate"]["review_clean"] == "indeterminate"
    assert any(
        r.startswith("lane 'bot' unverified: not a lane result:") and "without a finding" in r
        for r in report["gate"]["reasons"]
    ), report["gate"]
    assert report["loop"]["status"] == "open"
    assert result.ret == 1


DISAGREEMENT = (
    "revise not backed by a verified blocker: its findings were rejected or demoted "
    "(a disagreement, not a blocker)"
)


def tree_state(project: GitRepo) -> tuple[str, bytes, str]:
    """What a review must leave alone: the working tree's status, the index, the stash."""
    index = (project.path / ".git" / "index").read_bytes()
    return project.git("status", "--porcelain"), index, project.git("stash", "list")


@pytest.mark.parametrize(
    ("mode", "where", "why"),
    [
        ("revise-rejected", "rejected", "line 99 is outside the file (1 lines)"),
        ("revise-misquoted", "rejected", "quote not found at location"),
        ("revise-demoted", "advisory", "category 'style' is advisory-only: demoted"),
        ("revise-unsure", "advisory", "confidence 0.3 is below the floor of 0.8: advisory"),
    ],
)
def test_a_revise_whose_findings_do_not_hold_is_a_disagreement_not_a_blocker(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, mode: str, where: str, why: str
) -> None:
    """A revise backed by nothing triage verified: nothing blocks, so the gate is clean; the
    report keeps the lane's revise and its finding with the reason, and the loop converges
    (no repair round), on the first review and on the reused one alike."""
    configure(project, tmp_path, mode, top="min_confidence = 0.8\n")
    before = tree_state(project)
    for run in range(2):  # the second run reuses the first round's results
        result, report = review(pytester)
        (row,) = report["lanes"]
        (finding,) = report["findings"][where]
        reason = finding["reason"] if where == "rejected" else finding["note"]
        assert why in reason, finding
        assert report["findings"]["blocking"] == []
        assert report["gate"] == {"review_clean": "yes", "reasons": []}
        assert report["loop"]["status"] == "converged"
        # no repair round was opened
        assert (report["loop"]["round"], report["loop"]["repair_loops_used"]) == (1, 0)
        assert result.ret == 0, result.stdout.str()
        if run == 0:
            assert row["status"] == "revise"
            assert row["note"].endswith(DISAGREEMENT)
    assert row["status"] == "reused"
    assert tree_state(project) == before


@pytest.mark.parametrize("mode", ["revise-quoted", "finds"])
def test_a_revise_with_a_verified_blocker_still_blocks(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, mode: str
) -> None:
    """The control: a finding that holds (quoted at its line, or on evidence) blocks, and
    the lane's revise carries no disagreement note."""
    configure(project, tmp_path, mode)
    result, report = review(pytester)
    (row,) = report["lanes"]
    assert row["status"] == "revise"
    assert DISAGREEMENT not in row["note"]
    (blocker,) = report["findings"]["blocking"]
    expected = "quoted" if mode == "revise-quoted" else "evidence"
    assert (blocker["lanes"], blocker["verification"]) == (["bot"], expected)
    assert report["gate"] == {"review_clean": "no", "reasons": ["blocking finding: app.py:1 f"]}
    assert report["loop"]["status"] == "open"
    assert result.ret == 1


def test_a_pass_with_a_rationale_is_clean_and_converges(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    configure(project, tmp_path, "pass")
    result, report = review(pytester)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert report["loop"]["status"] == "converged"
    assert result.ret == 0


def test_assurances_can_be_required(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    configure(project, tmp_path, "pass", "")
    config = (pytester.path / "pyproject.toml").read_text()
    project.commit(
        {
            "pyproject.toml": config.replace(
                "max_retries = 1", "max_retries = 1\nrequire_assurances = true"
            )
        },
        "require assurances",
    )
    result, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 2)
    assert "a verdict without assurances (require_assurances)" in row["note"]
    assert report["gate"]["review_clean"] == "indeterminate"
    assert result.ret == 1


def test_no_lanes_flag(pytester: pytest.Pytester, project: GitRepo, tmp_path: Path) -> None:
    configure(project, tmp_path, "finds")
    result = pytester.runpytest_subprocess(
        "--bounded-review", "--bounded-review-base=main", "--bounded-review-no-lanes"
    )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    assert report["lanes"] == []
    assert any("--bounded-review-no-lanes" in item for item in report["limitations"])
    assert result.ret == 0


SCOUT_AND_VERDICT = """
import json, os, subprocess, sys
packet = json.load(sys.stdin)
role = sys.argv[1]
if role == "scout":
    open("SCOUT_WAS_HERE", "w").write("x")
    print(json.dumps({"schema": "bounded-review/lane-result/v1", "findings": [
        {"path": "app.py", "line": 1, "severity": "advisory", "category": "style",
         "failure_mode": "f", "evidence": "e", "remediation": "r"}]}))
elif role == "silent":
    print(json.dumps({"schema": "bounded-review/lane-result/v1", "rationale": "no verdict"}))
elif role == "reconcile":
    answers = [{"fingerprint": f["fingerprint"], "decision": "dismissed", "reason": "by design"}
               for f in packet["scout_findings"]]
    print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                      "rationale": "checked the scout", "reconciliation": answers}))
elif role == "hijack":
    subprocess.run(["git", "-C", sys.argv[2], "checkout", "-q", "-b", "hijacked"], check=True)
    print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                      "rationale": "ok"}))
else:
    seen = sorted(os.listdir("."))
    print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                      "rationale": f"scouts={len(packet['scout_findings'])} "
                                   f"scout-file={'SCOUT_WAS_HERE' in seen}"}))
"""


def lanes_config(tmp_path: Path, project: GitRepo, *lanes: tuple[str, str, str]) -> str:
    script = tmp_path / "two.py"
    script.write_text(SCOUT_AND_VERDICT)
    config = '[tool.bounded-review]\nrisk = "standard"\nmax_retries = 0\n'
    for name, role, mode in lanes:
        command = [sys.executable, str(script), mode, str(project.path)]
        lens = "scope" if role == "scout" else "correctness"
        config += (
            f'[[tool.bounded-review.lanes]]\nname = "{name}"\nlens = "{lens}"\n'
            f'role = "{role}"\ncommand = {json.dumps(command)}\n'
        )
    return config


@pytest.mark.parametrize("mode", ["judge", "reconcile"])
def test_verdict_lanes_must_answer_the_scout(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, mode: str
) -> None:
    commit_change(
        project,
        lanes_config(tmp_path, project, ("scout", "scout", "scout"), ("judge", "verdict", mode)),
    )
    result, report = review(pytester)
    (scouted,) = report["findings"]["advisory"]
    assert (scouted["path"], scouted["lanes"]) == ("app.py", ["scout"])
    if mode == "judge":  # answered nothing about the scout's finding
        assert report["gate"] == {
            "review_clean": "indeterminate",
            "reasons": ["lane 'judge' did not reconcile 1 scout finding(s): app.py:1 (style)"],
        }
        assert result.ret == 1
    else:
        assert scouted["note"] == "dismissed by judge: by design"
        assert report["gate"] == {"review_clean": "yes", "reasons": []}
        assert result.ret == 0


def commit_change(project: GitRepo, config: str) -> None:
    project.commit(
        {
            "pyproject.toml": config,
            "app.py": "x = 1\n",
            "test_app.py": "def test_app():\n    pass\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2\n"}, "change")


def test_scout_findings_reach_verdict_lanes_but_scout_files_do_not(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    commit_change(
        project,
        lanes_config(tmp_path, project, ("scout", "scout", "scout"), ("judge", "verdict", "judge")),
    )
    _, report = review(pytester)
    rows = {row["name"]: row for row in report["lanes"]}
    assert rows["scout"]["status"] == "scout"
    assert rows["judge"]["rationale"] == "scouts=1 scout-file=False"


def test_a_verdict_lane_without_a_verdict_is_unverified(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    config = lanes_config(tmp_path, project, ("quiet", "verdict", "silent"))
    commit_change(project, config.replace("max_retries = 0", "max_retries = 1"))
    result, report = review(pytester)
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 2)  # retried like any failure
    assert "answered without a verdict" in " ".join(report["gate"]["reasons"])
    assert result.ret == 1


def test_a_lane_switching_the_users_branch_is_caught(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    commit_change(project, lanes_config(tmp_path, project, ("rogue", "verdict", "hijack")))
    result, report = review(pytester)
    assert any("artifact mutated during review: (branch)" in r for r in report["gate"]["reasons"])
    assert result.ret == 1


@pytest.mark.parametrize("settle", [True, False])
def test_trivial_changes_can_be_settled_without_model_lanes(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, settle: bool
) -> None:
    extra = f"[tool.bounded-review.selection]\nsettle_trivial = {str(settle).lower()}\n"
    configure(project, tmp_path, "finds", extra)
    result, report = review(pytester)
    (row,) = report["lanes"]
    assert report["risk"]["tier"] == "economy"
    if settle:
        assert row["status"] == "skipped"
        assert "the tests and checks found clean" in row["note"]
        assert report["gate"]["review_clean"] == "yes"
        assert result.ret == 0
    else:
        assert row["status"] == "revise"
        assert result.ret == 1
