"""``bounded-review loop ...`` for orchestrators: receipts, the attempt chain rules, round and
close rules, replays, refusals with their ``BR_<CODE>`` and exit statuses, Ctrl-C."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_boundedreview import cli
from pytest_boundedreview.loop import ledger as ledger_module


class Orchestrator:
    def __init__(self, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.folder = folder
        self.capsys = capsys
        self.ops = 0

    def __call__(self, command: str, *args: str, op: str | None = None) -> tuple[int, Any]:
        argv = ["loop", command, "--loop-id", "L", "--state-dir", str(self.folder / "state")]
        if command not in ("show", "validate"):
            self.ops += 1
            argv += ["--operation-id", op or f"op{self.ops}"]
        code = cli.main([*argv, *args])
        out, err = self.capsys.readouterr()
        if code == 0:
            return code, json.loads(out)
        return code, err.strip()

    def result(self, name: str, **document: Any) -> str:
        path = self.folder / f"{name}.json"
        path.write_text(json.dumps({"schema": "bounded-review/lane-result/v1", **document}))
        return str(path)

    def answer(self, lane: str, attempt: str, revision: str, **document: Any) -> Any:
        assert (
            self("mark-running", "--lane", lane, "--attempt-id", attempt, "--revision", revision)[0]
            == 0
        )
        code, out = self(
            "record-result",
            "--lane",
            lane,
            "--attempt-id",
            attempt,
            "--result",
            self.result(attempt, **document),
        )
        assert code == 0, out
        return out


@pytest.fixture
def run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Orchestrator:
    return Orchestrator(tmp_path, capsys)


def begin(run: Orchestrator, *extra: str) -> Any:
    code, out = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        "tree:1",
        "--lane",
        "rev:correctness",
        "--lane",
        "scout:scope:scout",
        *extra,
    )
    assert code == 0, out
    return out


def test_a_loop_from_begin_to_converged(run: Orchestrator) -> None:
    opened = begin(run)
    assert opened == {
        "event": "BOUNDED_REVIEW_STATE_V1",
        "loop_id": "L",
        "round": 1,
        "revision": "tree:1",
        "status": "open",
        "lanes": ["rev", "scout"],
    }
    scouted = run.answer(
        "scout",
        "s1",
        "tree:1",
        findings=[
            {
                "path": "a.py",
                "line": 1,
                "severity": "advisory",
                "category": "style",
                "failure_mode": "f",
                "evidence": "e",
                "quote": "x = 1",
                "remediation": "r",
            }
        ],
    )
    (fingerprint,) = scouted["scout_fingerprints"]
    assert (
        run("mark-running", "--lane", "rev", "--attempt-id", "a1", "--revision", "tree:1")[0] == 0
    )
    assert (
        run(
            "record-failure",
            "--lane",
            "rev",
            "--attempt-id",
            "a1",
            "--kind",
            "died",
            "--detail",
            "killed",
        )[0]
        == 0
    )
    code, err = run("complete-round")
    assert (code, err) == (
        4,
        "BR_UNRESOLVED_FAILURE: lane 'rev' failed and was not retried to an answer",
    )
    assert run("admit-retry", "--lane", "rev", "--attempt-id", "a2", "--retry-of", "a1")[0] == 0
    run.answer(
        "rev",
        "a2",
        "tree:1",
        verdict="revise",
        rationale="bug",
        reconciliation=[{"fingerprint": fingerprint, "decision": "accepted"}],
    )
    code, out = run("complete-round", "--blocking", "fp1")
    assert (out["status"], out["review_clean"]) == ("complete", "no")
    assert run("next-round", "--revision", "tree:1") == (
        4,
        "BR_ARTIFACT_UNCHANGED: tree:1 was reviewed in round 1",
    )
    code, out = run("next-round", "--revision", "tree:2")
    assert (out["round"], out["repair_loops_used"]) == (2, 1)
    run.answer("rev", "a3", "tree:2", verdict="pass", rationale="fixed")
    run.answer("scout", "s2", "tree:2", findings=[])
    assert run("complete-round")[1]["review_clean"] == "yes"
    code, out = run("close", "--outcome", "converged", op="close-1")
    assert out["status"] == "converged"
    assert run("close", "--outcome", "converged", op="close-1")[1]["replayed"] is True
    assert run("close", "--outcome", "converged")[1]["replayed"] is True  # a closed loop replays
    code, err = run("next-round", "--revision", "tree:3")
    assert (code, err) == (4, "BR_INVALID: no open loop")
    code, state = run("show")
    assert [r["number"] for r in state["rounds"]] == [1, 2]
    assert [a["attempt_id"] for a in state["rounds"][0]["lanes"][0]["attempts"]] == ["a1", "a2"]
    assert state["rounds"][0]["lanes"][0]["attempts"][1]["retry_of"] == "a1"
    assert run("validate")[1]["valid"] is True


def test_the_retry_chain_only_grows_at_its_end(run: Orchestrator) -> None:
    begin(run)
    run("mark-running", "--lane", "rev", "--attempt-id", "a1", "--revision", "tree:1")
    assert run("admit-retry", "--lane", "rev", "--attempt-id", "b", "--retry-of", "a1")[
        1
    ].startswith("BR_ATTEMPT_MISMATCH: only a failed attempt may be retried")
    chain = ["a1"]
    for n in range(2, 5):
        run("record-failure", "--lane", "rev", "--attempt-id", chain[-1], "--kind", "error")
        assert (
            run("admit-retry", "--lane", "rev", "--attempt-id", f"a{n}", "--retry-of", chain[-1])[0]
            == 0
        )
        run("mark-running", "--lane", "rev", "--attempt-id", f"a{n}", "--revision", "tree:1")
        chain.append(f"a{n}")
    run("record-failure", "--lane", "rev", "--attempt-id", "a4", "--kind", "limit")
    refusals = {
        "a fourth edge": ("a5", "a4", "used its 3 retries"),
        "a branch": ("a5", "a2", "is not the last attempt"),
        "a cycle": ("a1", "a4", "already used"),
        "another lane's attempt": ("a5", "s1", "is not an attempt of lane 'rev'"),
    }
    for attempt, of, why in refusals.values():
        code, err = run("admit-retry", "--lane", "rev", "--attempt-id", attempt, "--retry-of", of)
        assert code == 4
        assert err.startswith("BR_ATTEMPT_MISMATCH"), err
        assert why in err, err


def test_a_complete_lane_cannot_fail_and_attempts_carry_the_revision(run: Orchestrator) -> None:
    begin(run)
    code, err = run("mark-running", "--lane", "rev", "--attempt-id", "a1", "--revision", "tree:0")
    assert (code, err) == (4, "BR_REVISION_MISMATCH: attempt for tree:0 but round 1 reviews tree:1")
    run.answer("rev", "a1", "tree:1", verdict="pass", rationale="fine")
    code, err = run("record-failure", "--lane", "rev", "--attempt-id", "a1", "--kind", "error")
    assert code == 4
    assert "is complete, not running" in err
    code, err = run("mark-running", "--lane", "rev", "--attempt-id", "a9", "--revision", "tree:1")
    assert err == "BR_ATTEMPT_MISMATCH: lane 'rev' is complete: it cannot run again"


@pytest.mark.parametrize(
    ("verdicts", "outcome", "allowed"),
    [
        (("pass",), "converged", True),
        (("revise",), "converged", False),
        (("revise",), "drift", True),
        (("pass",), "deadlock", False),
    ],
)
def test_close_rules(
    run: Orchestrator, verdicts: tuple[str, ...], outcome: str, allowed: bool
) -> None:
    code, out = run(
        "begin", "--target-kind", "pr", "--revision", "tree:1", "--lane", "rev:correctness"
    )
    run.answer("rev", "a1", "tree:1", verdict=verdicts[0], rationale="r")
    run("complete-round")
    code, out = run("close", "--outcome", outcome)
    assert (code == 0) == allowed, out


def test_unreconciled_scout_findings_block_converged(run: Orchestrator) -> None:
    begin(run)
    run.answer(
        "scout",
        "s1",
        "tree:1",
        findings=[
            {
                "path": "a.py",
                "line": 1,
                "severity": "advisory",
                "category": "style",
                "failure_mode": "f",
                "evidence": "e",
                "remediation": "r",
            }
        ],
    )
    run.answer("rev", "a1", "tree:1", verdict="pass", rationale="ok")
    run("complete-round")
    code, err = run("close", "--outcome", "converged")
    assert code == 4
    assert "every scout finding reconciled" in err


def test_round_cap_and_plan_assurances(run: Orchestrator) -> None:
    run(
        "begin",
        "--target-kind",
        "plan",
        "--revision",
        "sha256:1",
        "--lane",
        "f:feasibility",
        "--max-repair-loops",
        "1",
    )
    code, err = run("mark-running", "--lane", "f", "--attempt-id", "a1", "--revision", "sha256:1")
    code, err = run(
        "record-result",
        "--lane",
        "f",
        "--attempt-id",
        "a1",
        "--result",
        run.result("bare", verdict="revise", rationale="r"),
    )
    assert (code, err) == (
        4,
        "BR_INVALID: lane 'f' answered without assurances, which this loop requires",
    )
    assurances = {"root_proven": "yes", "scope_unchanged": "yes", "verification_adequate": "no"}
    assert (
        run(
            "record-result",
            "--lane",
            "f",
            "--attempt-id",
            "a1",
            "--result",
            run.result("ok", verdict="revise", rationale="r", assurances=assurances),
        )[0]
        == 0
    )
    run("complete-round")
    assert run("next-round", "--revision", "sha256:2")[0] == 0
    run.answer("f", "a2", "sha256:2", verdict="revise", rationale="r", assurances=assurances)
    run("complete-round")
    code, err = run("next-round", "--revision", "sha256:3")
    assert (code, err) == (4, "BR_ROUND_CAP: round 3 would exceed 1 repair loop(s)")


def test_replay_conflict_and_bad_input(run: Orchestrator) -> None:
    first = begin(run)
    assert run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        "tree:1",
        "--lane",
        "rev:correctness",
        "--lane",
        "scout:scope:scout",
        op="op1",
    )[1] == {**first, "replayed": True}
    code, err = run(
        "begin", "--target-kind", "pr", "--revision", "tree:9", "--lane", "x:y", op="op1"
    )
    assert code == 4
    assert err.startswith("BR_OPERATION_CONFLICT")
    bad = run.folder / "bad.json"
    bad.write_text('{"schema": "bounded-review/lane-result/v1", "verdict": "pass"}')
    run("mark-running", "--lane", "rev", "--attempt-id", "a1", "--revision", "tree:1")
    code, err = run("record-result", "--lane", "rev", "--attempt-id", "a1", "--result", str(bad))
    assert code == 4
    assert err.startswith("BR_INVALID")
    assert "bare verdict" in err
    assert run("show")[0] == 0


def test_ctrl_c_is_exit_130_and_leaves_the_state_whole(
    run: Orchestrator, monkeypatch: pytest.MonkeyPatch
) -> None:
    begin(run)
    state_file = run.folder / "state" / "loops" / "L" / "state.json"
    before = state_file.read_bytes()

    def interrupted(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ledger_module.fs, "replace", interrupted)
    code, err = run("mark-running", "--lane", "rev", "--attempt-id", "a1", "--revision", "tree:1")
    assert code == 130
    assert err.startswith("BR_CANCELLED")
    assert state_file.read_bytes() == before
    assert [p.name for p in state_file.parent.iterdir() if p.suffix == ".tmp"] == []
