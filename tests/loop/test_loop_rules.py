"""The review-loop engine's rules through ``bounded-review loop ...`` on real state folders:
closed loops never change, retained lanes never run, delta coverage is explicit and never
empty, scouts cast no verdict, every load checks the state's structure, ``validate`` keeps the
containment rules. Every refusal leaves the state's bytes unchanged (the orchestrator checks)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from orchestrator import BUG, STYLE, T1, T2, T4, Orchestrator, begin, tree

from pytest_boundedreview import cli


def two_verdicts(run: Orchestrator) -> None:
    code, out = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T1,
        "--lane",
        "surgical:correctness",
        "--lane",
        "deep:security",
        "--lane",
        "scout:facts:scout",
    )
    assert code == 0, out


def round_one(run: Orchestrator, deep: str = "pass", scout: list[Any] | None = None) -> None:
    """Round 1 answered: surgical asks for a revision, deep answers ``deep``."""
    two_verdicts(run)
    answered = run.answer("scout", T1, findings=scout or [])
    reconciled = [
        {"fingerprint": fp, "decision": "accepted"} for fp in answered["scout_fingerprints"]
    ]
    run.answer(
        "surgical",
        T1,
        verdict="revise",
        findings=[BUG],
        rationale="bug",
        reconciliation=reconciled,
    )
    run.answer("deep", T1, verdict=deep, rationale="r")
    assert run("complete-round")[0] == 0


# 1. A closed loop is immutable -----------------------------------------------------------


def test_a_closed_loop_refuses_every_mutation_and_reset_archives_it(run: Orchestrator) -> None:
    begin(run, lanes=("rev:correctness",))
    run.answer("rev", T1, verdict="pass", rationale="ok")
    run("complete-round")
    run("close", "--outcome", "converged", op="close")
    closed = run.state_file.read_bytes()
    attempts = [
        (
            "begin",
            "--target-kind",
            "pr",
            "--revision",
            T2,
            "--lane",
            "x:correctness",
        ),
        ("next-round", "--revision", T2),
        ("complete-round",),
        ("close", "--outcome", "drift"),
        (
            "mark-running",
            "--lane",
            "rev",
            "--attempt-id",
            "r1-rev-1",
            "--revision",
            T1,
        ),
        ("admit-retry", "--lane", "rev", "--retry-of", "r1-rev-1"),
    ]
    for command in attempts:
        code, err = run(*command)
        assert code == 4, command
        assert err.startswith("BR_LOOP_CLOSED: loop 'L' is converged"), err
    assert run.state_file.read_bytes() == closed
    assert run("close", "--outcome", "converged", op="close")[1]["replayed"] is True

    assert cli.main(["reset", "--loop-id", "L", "--state-dir", str(run.folder / "state")]) == 0
    receipt = json.loads(run.capsys.readouterr().out)
    assert (receipt["status"], receipt["was"]) == ("archived", "converged")
    archived = run.state_file.parent / "archive" / "0001.json"
    assert receipt["archive"] == str(archived)
    assert archived.read_bytes() == closed  # archived, not deleted
    assert not run.state_file.exists()
    code, out = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T2,
        "--lane",
        "rev:correctness",
    )
    assert (code, out["round"]) == (0, 1)


# 2. A retained lane is never launched and never answers ----------------------------------


@pytest.mark.slow
def test_a_retained_lane_is_never_launched_and_never_answers(run: Orchestrator) -> None:
    round_one(run)
    code, out = run(
        "next-round",
        "--revision",
        T2,
        "--affected-lane",
        "surgical",
    )
    assert code == 0, out
    assert out["retained"] == ["deep", "scout"]
    refused = [
        (
            "mark-running",
            "--lane",
            "deep",
            "--attempt-id",
            "r1-deep-1",
            "--revision",
            T2,
        ),
        ("admit-retry", "--lane", "deep", "--retry-of", "r1-deep-1"),
    ]
    for command in refused:
        code, err = run(*command)
        assert (code, err.split(":")[0]) == (4, "BR_LANE_RETAINED"), err
        assert "lane 'deep' is retained from round 1 in round 2" in err
    for code, err in (
        run.record(
            "deep",
            "r1-deep-1",
            T2,
            verdict="pass",
            rationale="r",
        ),
        run.fail("deep", "r1-deep-1", T2),
    ):
        assert (code, err.split(":")[0]) == (4, "BR_LANE_RETAINED"), err


# 3. Delta coverage is explicit and never empty -------------------------------------------


def test_next_round_without_a_flag_is_a_full_round(run: Orchestrator) -> None:
    round_one(run)
    code, out = run("next-round", "--revision", T2)
    assert code == 0
    assert (out["coverage"], out["affected"], out["retained"]) == ("full", [], [])
    assert [a["attempt_id"] for a in out["admitted"]] == [
        "r2-surgical-1",
        "r2-deep-1",
        "r2-scout-1",
    ]
    state = run("show")[1]
    assert all(lane["status"] is None for lane in state["rounds"][1]["lanes"])


def test_full_review_after_an_all_pass_round_reviews_the_new_revision(
    run: Orchestrator,
) -> None:
    begin(run, lanes=("rev:correctness",))
    run.answer("rev", T1, verdict="pass", rationale="ok")
    run("complete-round", "--blocking", "a-test-failure")  # passing lanes, a blocker elsewhere
    code, out = run("next-round", "--revision", T2, "--full-review")
    assert (out["coverage"], out["admitted"]) == (
        "full",
        [{"lane": "rev", "attempt_id": "r2-rev-1"}],
    )
    code, err = run("complete-round")
    assert (code, err) == (4, "BR_ATTEMPT_MISMATCH: lane 'rev' has not answered yet")
    code, err = run("close", "--outcome", "converged")
    assert code == 4  # the new revision has no reviewed answer yet


def test_a_delta_receipt_lists_what_it_admits_and_retains(run: Orchestrator) -> None:
    round_one(run, scout=[STYLE])
    code, out = run(
        "next-round",
        "--revision",
        T2,
        "--affected-lane",
        "surgical",
        "--affected-lane",
        "scout",
    )
    assert code == 0, out
    assert (out["coverage"], out["affected"], out["retained"]) == (
        "delta",
        ["scout", "surgical"],
        ["deep"],
    )
    assert out["admitted"] == [
        {"lane": "surgical", "attempt_id": "r2-surgical-1"},
        {"lane": "scout", "attempt_id": "r2-scout-1"},
    ]
    run.answer(
        "surgical",
        T2,
        verdict="pass",
        rationale="fixed",
    )
    run.answer("scout", T2, findings=[])
    assert run("complete-round")[1]["review_clean"] == "yes"
    assert run("close", "--outcome", "converged")[0] == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("affected", "why"),
    [
        ([""], "a delta needs at least one affected lane"),
        (["surgical", "deep", "scout"], "every lane is affected: that is a full round"),
        (["surgical", "nosuch"], "no lane 'nosuch' in round 1"),
        (["deep"], "lane 'surgical' cannot be retained: its verdict in round 1 is revise"),
    ],
)
def test_a_delta_that_is_not_a_valid_strict_subset_is_refused(
    run: Orchestrator, affected: list[str], why: str
) -> None:
    round_one(run)
    flags = [arg for name in affected for arg in ("--affected-lane", name)]
    code, err = run("next-round", "--revision", T2, *flags)
    assert code == 4
    assert err.startswith(f"BR_COVERAGE: {why}"), err


def test_a_delta_needs_a_verdict_lane_among_the_affected(run: Orchestrator) -> None:
    round_one(run)
    code, err = run("next-round", "--revision", T2, "--affected-lane", "scout")
    assert (code, err) == (
        4,
        "BR_COVERAGE: a delta needs a verdict lane among the affected lanes: scouts cast no "
        "verdict",
    )


def test_a_delta_retaining_nothing_is_not_a_delta(run: Orchestrator) -> None:
    round_one(run)
    run("next-round", "--revision", T2)
    document = run("show")[1]
    document["rounds"][1]["coverage"] = "delta"
    document["rounds"][1]["affected"] = ["deep", "scout", "surgical"]
    run.state_file.write_text(json.dumps(document))
    code, err = run("validate")
    assert code == 3
    assert "$.rounds[1].coverage: a delta retains at least one lane" in err


def test_a_scout_with_an_unreconciled_finding_cannot_be_retained(run: Orchestrator) -> None:
    two_verdicts(run)
    run.answer("scout", T1, findings=[STYLE])
    run.answer(
        "surgical",
        T1,
        verdict="revise",
        findings=[BUG],
        rationale="bug",
    )
    run.answer("deep", T1, verdict="pass", rationale="r")
    run("complete-round")
    code, err = run(
        "next-round",
        "--revision",
        T2,
        "--affected-lane",
        "surgical",
    )
    assert code == 4
    assert err == (
        "BR_COVERAGE: lane 'scout' cannot be retained: 1 of its finding(s) in round 1 are "
        "not reconciled"
    )


def test_full_review_and_affected_lane_exclude_each_other(
    run: Orchestrator, capsys: pytest.CaptureFixture[str]
) -> None:
    round_one(run)
    argv = ["loop", "next-round", "--loop-id", "L", "--operation-id", "x"]
    argv += ["--state-dir", str(run.folder / "state"), "--revision"]
    before = run.state_file.read_bytes()
    assert (
        cli.main(
            [
                *argv,
                T2,
                "--full-review",
                "--affected-lane",
                "deep",
            ]
        )
        == 4
    )
    assert "not allowed with argument --full-review" in capsys.readouterr().err
    assert run.state_file.read_bytes() == before


# 4. Scouts cast no verdict; convergence needs verdict lanes ------------------------------


def test_a_loop_needs_a_verdict_lane(run: Orchestrator) -> None:
    code, err = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T1,
        "--lane",
        "s:facts:scout",
    )
    assert (code, err) == (
        4,
        "BR_INVALID: a loop needs at least one verdict lane: scouts cast none",
    )
    assert not run.state_file.exists()


def test_a_scout_result_with_a_verdict_is_refused(run: Orchestrator) -> None:
    begin(run)
    attempt = run.start("scout", T1)
    code, err = run.record(
        "scout",
        attempt,
        T1,
        verdict="pass",
        rationale="fine",
    )
    assert (code, err) == (
        4,
        "BR_SCOUT_VERDICT: lane 'scout' is a scout: it casts no verdict (got 'pass')",
    )


def test_an_unreconciled_scout_finding_keeps_the_round_and_the_loop_from_clean(
    run: Orchestrator,
) -> None:
    begin(run)
    run.answer("scout", T1, findings=[STYLE])
    run.answer("rev", T1, verdict="pass", rationale="ok")
    code, out = run("complete-round")
    assert out["review_clean"] == "no"
    code, err = run("close", "--outcome", "converged")
    assert code == 4
    assert "converged requires a clean last round (1 scout finding(s) not reconciled)" in err


# 5. Every load checks the structure ------------------------------------------------------


def answered_loop(run: Orchestrator) -> dict[str, Any]:
    """A loop with a retry chain in round 1 and a delta round 2, as its state document."""
    round_one(run)
    run(
        "next-round",
        "--revision",
        T2,
        "--affected-lane",
        "surgical",
    )
    first = run.start("surgical", T2)
    run.fail("surgical", first, T2)
    run("admit-retry", "--lane", "surgical", "--retry-of", first)
    document: dict[str, Any] = run("show")[1]
    return document


def lanes_of(document: dict[str, Any], round_index: int) -> dict[str, Any]:
    return {lane["name"]: lane for lane in document["rounds"][round_index]["lanes"]}


def branch(d: dict[str, Any]) -> str:
    chain = lanes_of(d, 1)["surgical"]["attempts"]
    chain[1]["retry_of"] = "r1-deep-1"
    return "$.rounds[1].lanes[0].attempts[1].retry_of: must retry the attempt before it"


def second_root(d: dict[str, Any]) -> str:
    lanes_of(d, 1)["surgical"]["attempts"][1]["retry_of"] = None
    return "$.rounds[1].lanes[0].attempts[1].retry_of: must retry the attempt before it"


def dangling(d: dict[str, Any]) -> str:
    lanes_of(d, 1)["surgical"]["attempts"][0]["retry_of"] = "ghost"
    return "$.rounds[1].lanes[0].attempts[0].retry_of: the root of a chain retries nothing"


def cycle(d: dict[str, Any]) -> str:
    chain = lanes_of(d, 1)["surgical"]["attempts"]
    chain[0]["retry_of"] = chain[1]["attempt_id"]
    return "$.rounds[1].lanes[0].attempts[0].retry_of: the root of a chain retries nothing"


def too_many_edges(d: dict[str, Any]) -> str:
    chain = lanes_of(d, 1)["surgical"]["attempts"]
    chain[1]["status"] = "failed"
    for n in range(3, 6):
        chain.append({**chain[-1], "attempt_id": f"x{n}", "retry_of": chain[-1]["attempt_id"]})
    return "$.rounds[1].lanes[0].attempts: more than 3 retry edges"


def other_revision(d: dict[str, Any]) -> str:
    lanes_of(d, 0)["deep"]["attempts"][0]["revision"] = T2
    return f"$.rounds[0].lanes[1].attempts[0].revision: '{T2}' is not the round's revision"


def duplicate_id(d: dict[str, Any]) -> str:
    lanes_of(d, 0)["deep"]["attempts"][0]["attempt_id"] = "r1-surgical-1"
    return (
        "$.rounds[0].lanes[1].attempts[0].attempt_id: 'r1-surgical-1' is not the id issued "
        "here ('r1-deep-1')"
    )


def retained_with_attempts(d: dict[str, Any]) -> str:
    deep = lanes_of(d, 1)["deep"]
    deep["attempts"] = [{**lanes_of(d, 0)["deep"]["attempts"][0], "attempt_id": "z"}]
    return "$.rounds[1].lanes[1].attempts: a retained lane has no attempts"


def retained_from_far(d: dict[str, Any]) -> str:
    lanes_of(d, 1)["deep"]["retained_from"] = 7
    return "$.rounds[1].lanes[1].retained_from: a retained lane points at the round before"


def retained_failing(d: dict[str, Any]) -> str:
    lanes_of(d, 0)["deep"]["status"] = "revise"
    return "$.rounds[1].lanes[1].status: lane 'deep' cannot be retained"


def coverage_mismatch(d: dict[str, Any]) -> str:
    d["rounds"][1]["coverage"] = "full"
    d["rounds"][1]["affected"] = []
    return "$.rounds[1].coverage: a full round retains deep, scout"


def scout_verdict(d: dict[str, Any]) -> str:
    lanes_of(d, 0)["scout"]["status"] = "pass"
    return "$.rounds[0].lanes[2].status: a scout casts no verdict"


def dropped_lane(d: dict[str, Any]) -> str:
    d["rounds"][1]["lanes"] = [x for x in d["rounds"][1]["lanes"] if x["name"] != "deep"]
    return "$.rounds[1].lanes: every round has the lanes of round 1"


def flag_edited_away(d: dict[str, Any]) -> str:
    d.pop("lanes_fixed")  # the begin receipt still says which lanes the loop has
    return dropped_lane(d)


def status_lies(d: dict[str, Any]) -> str:
    lanes_of(d, 0)["surgical"]["status"] = "pass"
    return "$.rounds[0].lanes[0].status: 'pass' is not what its last attempt says ('revise')"


def open_attempt(d: dict[str, Any]) -> str:
    lanes_of(d, 0)["deep"]["attempts"][0]["status"] = "running"
    return "$.rounds[0].lanes[1].attempts: a complete round has no attempt still admitted"


def affected_mismatch(d: dict[str, Any]) -> str:
    d["rounds"][1]["affected"] = ["deep", "surgical"]
    return "$.rounds[1].affected: a delta's affected lanes are exactly the lanes that answer anew"


def not_issued(d: dict[str, Any]) -> str:
    chain = lanes_of(d, 1)["surgical"]["attempts"]
    chain[0]["attempt_id"] = chain[1]["retry_of"] = "mine"
    return "$.rounds[1].lanes[0].attempts[0].attempt_id: 'mine' is not the id issued here"


def other_loop(d: dict[str, Any]) -> str:
    d["loop_id"] = "M"
    return "holds loop 'M', not 'L'"


VIOLATIONS = [
    dropped_lane,
    flag_edited_away,
    status_lies,
    open_attempt,
    affected_mismatch,
    not_issued,
    other_loop,
    branch,
    second_root,
    dangling,
    cycle,
    too_many_edges,
    other_revision,
    duplicate_id,
    retained_with_attempts,
    retained_from_far,
    retained_failing,
    coverage_mismatch,
    scout_verdict,
]


@pytest.mark.slow
@pytest.mark.parametrize("violate", VIOLATIONS, ids=[v.__name__ for v in VIOLATIONS])
def test_a_structural_violation_is_named_by_its_path_and_refuses_every_mutation(
    run: Orchestrator, violate: Any
) -> None:
    document = answered_loop(run)
    where = violate(document)
    run.state_file.write_text(json.dumps(document))
    broken = run.state_file.read_bytes()
    for command in (
        ("show",),
        ("validate",),
        (
            "mark-running",
            "--lane",
            "surgical",
            "--attempt-id",
            "r2-surgical-2",
            "--revision",
            T2,
        ),
        ("complete-round",),
    ):
        code, err = run(*command)
        assert code == 3, command
        assert err.startswith("BR_RECOVERY_REQUIRED: "), err
        assert where in err, err
    assert run.state_file.read_bytes() == broken
    # the generic validator applies the same structural rules
    assert cli.main(["validate", str(run.state_file)]) == 1
    shown = run.capsys.readouterr().out
    assert ("loop_id: 'M' is not its folder's 'L'" if violate is other_loop else where) in shown
    # reset is the way out: the state is archived as it is, and the id starts anew
    assert cli.main(["reset", "--loop-id", "L", "--state-dir", str(run.folder / "state")]) == 0
    receipt = json.loads(run.capsys.readouterr().out)
    assert receipt["was"] == "in need of recovery"
    assert Path(receipt["archive"]).read_bytes() == broken
    assert begin(run)["round"] == 1


# 6. validate keeps the containment rules -------------------------------------------------


@pytest.mark.parametrize("link", ["state", "loop", "file"])
def test_validate_refuses_a_symlinked_path(run: Orchestrator, tmp_path: Path, link: str) -> None:
    begin(run)
    state_dir = run.folder / "state"
    elsewhere = tmp_path / "elsewhere"
    if link == "state":
        state_dir.rename(elsewhere)
        os.symlink(elsewhere, state_dir)
    elif link == "loop":
        loop = state_dir / "loops" / "L"
        loop.rename(elsewhere)
        os.symlink(elsewhere, loop)
    else:
        run.state_file.rename(elsewhere)
        os.symlink(elsewhere, run.state_file)
    for command in ("validate", "show"):
        code, err = run(command)
        assert code == 3
        assert err.startswith("BR_PATH_ESCAPE"), err


# 8. The model-mismatch trigger acts ------------------------------------------------------


def bug(n: int) -> dict[str, Any]:
    return {**STYLE, "severity": "blocking", "category": "correctness", "quote": f"x = {n}"}


def three_rounds_of_one_class(run: Orchestrator, *lanes: str) -> Any:
    """Lane ``rev`` raises a correctness finding at a new place in each of three rounds."""
    flags = [arg for lane in lanes for arg in ("--lane", lane)]
    code, out = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T1,
        "--max-repair-loops",
        "3",
        *flags,
    )
    assert code == 0, out
    completed = None
    for n in (1, 2, 3):
        revision = tree(str(n))
        if n > 1:
            affected = ["--affected-lane", "rev"] if len(lanes) > 1 else []
            assert run("next-round", "--revision", revision, *affected)[0] == 0
        run.answer("rev", revision, verdict="revise", rationale="r", findings=[bug(n)])
        if len(lanes) > 1 and n == 1:
            run.answer("arch", revision, verdict="pass", rationale="the design holds")
        code, completed = run("complete-round")
        assert code == 0, completed
        if n < 3:
            assert "model_review_required" not in completed
    return completed


@pytest.mark.slow
def test_model_mismatch_requires_the_architecture_lane_before_correctness_resumes(
    run: Orchestrator,
) -> None:
    completed = three_rounds_of_one_class(run, "rev:correctness", "arch:architecture")
    assert completed["model_review_required"] is True
    assert completed["model_review"] == {
        "lane": "rev",
        "category": "correctness",
        "reviewer": "arch",
        "flagged_round": 3,
    }
    code, err = run(
        "next-round",
        "--revision",
        T4,
        "--affected-lane",
        "rev",
    )
    assert code == 4
    assert err.startswith(
        "BR_COVERAGE: a model review is required (lane 'rev' raised 'correctness' findings at "
        "new places in each of three rounds up to round 3): the round must admit lane 'arch'"
    ), err
    code, out = run("next-round", "--revision", T4, "--full-review")
    assert code == 0, out
    assert out["model_review_required"] is True
    run.answer(
        "arch",
        T4,
        verdict="revise",
        findings=[BUG],
        rationale="the parser's model is wrong",
    )
    state = run("show")[1]
    assert state["model_review"]["answered_round"] == 4
    assert "model-mismatch" in state["flags"]
    run.answer(
        "rev",
        T4,
        verdict="revise",
        rationale="r",
        findings=[bug(4)],
    )
    code, out = run("complete-round")
    assert "model_review_required" not in out  # answered; a new one needs three new rounds


def test_model_mismatch_without_an_architecture_lane_stops_the_loop_as_deadlock(
    run: Orchestrator,
) -> None:
    completed = three_rounds_of_one_class(run, "rev:correctness")
    assert completed["loop_status"] == "deadlock"
    assert completed["stop_reason"].startswith(
        "model review needed: no architecture lane configured (lane 'rev' raised 'correctness'"
    )
    code, err = run("next-round", "--revision", T4)
    assert code == 4
    assert err.startswith("BR_LOOP_CLOSED: loop 'L' is deadlock"), err


def test_the_model_review_lane_must_be_a_lane_of_the_loop(run: Orchestrator) -> None:
    code, err = run(
        "begin",
        "--target-kind",
        "pr",
        "--revision",
        T1,
        "--lane",
        "rev:correctness",
        "--model-review-lane",
        "ghost",
    )
    assert (code, err) == (4, "BR_INVALID: --model-review-lane 'ghost' names no verdict lane")
