"""``bounded-review loop ...`` for orchestrators: receipts, the attempt chain rules, round and
close rules, replays, refusals with their ``BR_<CODE>`` and exit statuses, Ctrl-C."""

from __future__ import annotations

from typing import Any

import pytest
from orchestrator import BUG, STYLE, T0, T1, T2, T9, Orchestrator, begin

from pytest_boundedreview.loop import ledger as ledger_module


def test_a_loop_from_begin_to_converged(run: Orchestrator) -> None:
    opened = begin(run)
    assert opened == {
        "event": "BOUNDED_REVIEW_STATE_V1",
        "loop_id": "L",
        "round": 1,
        "revision": T1,
        "status": "open",
        "lanes": ["rev", "scout"],
        "coverage": "full",
        "admitted": [
            {"lane": "rev", "attempt_id": "r1-rev-1"},
            {"lane": "scout", "attempt_id": "r1-scout-1"},
        ],
    }
    scouted = run.answer("scout", T1, findings=[STYLE])
    (fingerprint,) = scouted["scout_fingerprints"]
    first = run.start("rev", T1)
    assert run.fail("rev", first, T1, "died")[0] == 0
    code, err = run("complete-round")
    assert (code, err) == (
        4,
        "BR_UNRESOLVED_FAILURE: lane 'rev' failed and was not retried to an answer",
    )
    code, retry = run("admit-retry", "--lane", "rev", "--retry-of", first)
    assert (retry["attempt_id"], retry["retry_of"]) == ("r1-rev-2", "r1-rev-1")
    run.answer(
        "rev",
        T1,
        verdict="revise",
        findings=[BUG],
        rationale="bug",
        reconciliation=[{"fingerprint": fingerprint, "decision": "accepted"}],
    )
    code, out = run("complete-round", "--blocking", "fp1")
    assert (out["status"], out["review_clean"]) == ("complete", "no")
    assert run("next-round", "--revision", T1) == (
        4,
        f"BR_ARTIFACT_UNCHANGED: {T1} was reviewed in round 1",
    )
    code, out = run("next-round", "--revision", T2)
    assert (out["round"], out["repair_loops_used"], out["coverage"]) == (2, 1, "full")
    assert [a["attempt_id"] for a in out["admitted"]] == ["r2-rev-1", "r2-scout-1"]
    run.answer("rev", T2, verdict="pass", rationale="fixed")
    run.answer("scout", T2, findings=[])
    assert run("complete-round")[1]["review_clean"] == "yes"
    code, out = run("close", "--outcome", "converged", op="close-1")
    assert out["status"] == "converged"
    assert run("close", "--outcome", "converged", op="close-1")[1]["replayed"] is True
    assert run("close", "--outcome", "converged")[1]["replayed"] is True  # a closed loop replays
    code, state = run("show")
    assert [r["number"] for r in state["rounds"]] == [1, 2]
    chain = state["rounds"][0]["lanes"][0]["attempts"]
    assert [(a["attempt_id"], a["retry_of"]) for a in chain] == [
        ("r1-rev-1", None),
        ("r1-rev-2", "r1-rev-1"),
    ]
    assert run("validate")[1]["valid"] is True


def test_the_retry_chain_only_grows_at_its_end(run: Orchestrator) -> None:
    begin(run)
    first = run.start("rev", T1)
    code, err = run("admit-retry", "--lane", "rev", "--retry-of", first)
    assert code == 4
    assert err.startswith("BR_ATTEMPT_MISMATCH: only a failed attempt may be retried")
    chain = [first]
    for _ in range(3):
        run.fail("rev", chain[-1], T1)
        code, out = run("admit-retry", "--lane", "rev", "--retry-of", chain[-1])
        assert code == 0, out
        chain.append(run.start("rev", T1))
    assert chain == ["r1-rev-1", "r1-rev-2", "r1-rev-3", "r1-rev-4"]
    run.fail("rev", chain[-1], T1, "limit")
    refusals = {
        "a fourth edge": ("r1-rev-4", "used its 3 retries"),
        "a branch": ("r1-rev-2", "is not the last attempt"),
        "another lane's attempt": ("r1-scout-1", "is not an attempt of lane 'rev'"),
        "an unknown attempt": ("zz", "is not an attempt of lane 'rev'"),
    }
    for of, why in refusals.values():
        code, err = run("admit-retry", "--lane", "rev", "--retry-of", of)
        assert code == 4
        assert err.startswith("BR_ATTEMPT_MISMATCH"), err
        assert why in err, err


def test_only_an_admitted_attempt_runs_and_answers_echo_the_revision(run: Orchestrator) -> None:
    begin(run)
    code, err = run.on_attempt("mark-running", "rev", "mine", T1)
    assert (code, err) == (
        4,
        "BR_ATTEMPT_MISMATCH: 'mine' is not an admitted attempt of lane 'rev'; "
        "its admitted attempt is 'r1-rev-1'",
    )
    code, err = run.on_attempt("mark-running", "rev", "r1-rev-1", T0)
    assert (code, err) == (
        4,
        f"BR_REVISION_MISMATCH: the attempt is for {T0} but round 1 reviews {T1}",
    )
    attempt = run.start("rev", T1)
    for refused in (
        run.record(
            "rev",
            attempt,
            T2,
            verdict="pass",
            rationale="fine",
        ),
        run.fail("rev", attempt, T2),
    ):
        assert refused == (
            4,
            f"BR_REVISION_MISMATCH: the attempt is for {T2} but round 1 reviews {T1}",
        )
    assert (
        run.record(
            "rev",
            attempt,
            T1,
            verdict="pass",
            rationale="fine",
        )[0]
        == 0
    )
    code, err = run.fail("rev", attempt, T1)
    assert code == 4
    assert "is complete, not running" in err
    code, err = run.on_attempt("mark-running", "rev", attempt, T1)
    assert code == 4
    assert err.startswith("BR_ATTEMPT_MISMATCH: 'r1-rev-1' is not an admitted attempt")


@pytest.mark.slow
@pytest.mark.parametrize("revision", ["", "tree:", "1234", "tree:XYZ", "blob:12", "tree:12 "])
def test_begin_and_next_round_refuse_a_malformed_revision(run: Orchestrator, revision: str) -> None:
    code, err = run("begin", "--target-kind", "pr", "--revision", revision, "--lane", "r:c")
    assert code == 4
    assert err.startswith(f"BR_INVALID: revision {revision!r} is not tree: or commit: with 40")
    assert not run.state_file.exists()
    run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        "commit:ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12",
        "--lane",
        "r:c",
    )
    run.answer(
        "r",
        "commit:ab12ab12ab12ab12ab12ab12ab12ab12ab12ab12",
        verdict="revise",
        findings=[BUG],
        rationale="r",
    )
    run("complete-round")
    code, err = run("next-round", "--revision", revision)
    assert code == 4
    assert err.startswith(f"BR_INVALID: revision {revision!r}")


@pytest.mark.slow
@pytest.mark.parametrize(
    ("verdicts", "blocking", "outcome", "allowed"),
    [
        (("pass",), False, "converged", True),
        (("revise",), True, "converged", False),
        # a revise whose finding triage did not verify is a disagreement (CONTRACT §7)
        (("revise",), False, "converged", True),
        (("revise",), True, "drift", True),
        (("pass",), False, "deadlock", False),
    ],
)
def test_close_rules(
    run: Orchestrator, verdicts: tuple[str, ...], blocking: bool, outcome: str, allowed: bool
) -> None:
    begin(run, lanes=("rev:correctness",))
    found = [BUG] if verdicts[0] == "revise" else []
    run.answer("rev", T1, verdict=verdicts[0], rationale="r", findings=found)
    run("complete-round", *(["--blocking", "fp-bug"] if blocking else []))
    code, out = run("close", "--outcome", outcome)
    assert (code == 0) == allowed, out


def test_round_cap_and_plan_assurances(run: Orchestrator) -> None:
    run(
        "begin",
        "--target-kind",
        "plan",
        "--revision",
        "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        "--lane",
        "f:feasibility",
        "--max-repair-loops",
        "1",
    )
    attempt = run.start(
        "f", "sha256:1111111111111111111111111111111111111111111111111111111111111111"
    )
    code, err = run.record(
        "f",
        attempt,
        "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        verdict="revise",
        findings=[BUG],
        rationale="r",
    )
    assert (code, err) == (
        4,
        "BR_INVALID: lane 'f' answered without assurances, which this loop requires",
    )
    assurances = {"root_proven": "yes", "scope_unchanged": "yes", "verification_adequate": "no"}
    done = run.record(
        "f",
        attempt,
        "sha256:1111111111111111111111111111111111111111111111111111111111111111",
        verdict="revise",
        findings=[BUG],
        rationale="r",
        assurances=assurances,
    )
    assert done[0] == 0
    run("complete-round")
    assert (
        run(
            "next-round",
            "--revision",
            "sha256:2222222222222222222222222222222222222222222222222222222222222222",
        )[0]
        == 0
    )
    run.answer(
        "f",
        "sha256:2222222222222222222222222222222222222222222222222222222222222222",
        verdict="revise",
        findings=[BUG],
        rationale="r",
        assurances=assurances,
    )
    run("complete-round")
    code, err = run(
        "next-round",
        "--revision",
        "sha256:3333333333333333333333333333333333333333333333333333333333333333",
    )
    assert (code, err) == (4, "BR_ROUND_CAP: round 3 would exceed 1 repair loop(s)")


def test_replay_conflict_and_bad_input(run: Orchestrator) -> None:
    first = begin(run)
    assert run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T1,
        "--lane",
        "rev:correctness",
        "--lane",
        "scout:scope:scout",
        op="op1",
    )[1] == {**first, "replayed": True}
    code, err = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T9,
        "--lane",
        "x:y",
        op="op1",
    )
    assert code == 4
    assert err.startswith("BR_OPERATION_CONFLICT")
    bad = run.folder / "bad.json"
    bad.write_text('{"schema": "bounded-review/lane-result/v1", "verdict": "pass"}')
    attempt = run.start("rev", T1)
    code, err = run(
        "record-result",
        "--lane",
        "rev",
        "--attempt-id",
        attempt,
        "--revision",
        T1,
        "--result",
        str(bad),
    )
    assert code == 4
    assert err.startswith("BR_INVALID")
    assert "bare verdict" in err
    assert run("show")[0] == 0


def test_record_result_refuses_a_revise_without_a_finding(run: Orchestrator) -> None:
    """The orchestrator's face reads answers with the same schema: the attempt stays
    running (the state untouched), and the same attempt may still answer properly."""
    begin(run)
    attempt = run.start("rev", T1)
    code, err = run.record("rev", attempt, T1, verdict="revise", rationale="a.py:1 is wrong")
    assert code == 4
    assert err.startswith("BR_INVALID: ")
    assert "a `revise` verdict without a finding" in err
    code, out = run.record("rev", attempt, T1, verdict="revise", rationale="r", findings=[BUG])
    assert (code, out["status"]) == (0, "revise")


def test_ctrl_c_is_exit_130_and_leaves_the_state_whole(
    run: Orchestrator, monkeypatch: pytest.MonkeyPatch
) -> None:
    begin(run)
    before = run.state_file.read_bytes()

    def interrupted(*args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(ledger_module.fs, "replace", interrupted)
    code, err = run.on_attempt("mark-running", "rev", "r1-rev-1", T1)
    assert code == 130
    assert err.startswith("BR_CANCELLED")
    assert run.state_file.read_bytes() == before
    assert [p.name for p in run.state_file.parent.iterdir() if p.suffix == ".tmp"] == []
