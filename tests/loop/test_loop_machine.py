"""A hypothesis state machine over the loop operations, with crashes (a fault in the middle of a
write, and reloading from disk) between steps: the invariants hold after every step."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)
from orchestrator import STYLE as FINDING
from orchestrator import T1, T2, T3, T4

from pytest_boundedreview.core.errors import LedgerError
from pytest_boundedreview.loop import attempts
from pytest_boundedreview.loop import ledger as ledger_module
from pytest_boundedreview.loop import ops as loopops
from pytest_boundedreview.loop.ledger import Ledger
from pytest_boundedreview.loop.structure import violations
from pytest_boundedreview.models.lane import LaneResult

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

LANES = ("rev", "sec", "scout")
REVISIONS = (
    T1,
    T2,
    T3,
    T4,
)
ROUNDS_SEEN: set[int] = set()
COVERAGE_SEEN: set[str] = set()


def answer(verdict: str | None, found: bool = False, reconcile: Sequence[str] = ()) -> LaneResult:
    document: dict[str, Any] = {"schema": "bounded-review/lane-result/v1", "rationale": "r"}
    if verdict:
        document["verdict"] = verdict
    if found or verdict == "revise":  # a revise names a finding, or it is no lane result
        document["findings"] = [FINDING]
    document["reconciliation"] = [{"fingerprint": f, "decision": "accepted"} for f in reconcile]
    return LaneResult.model_validate(document)


class LoopMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.folder = Path(tempfile.mkdtemp(prefix="loop-machine-"))
        self.book = Ledger(self.folder, "m")
        self.applied = 0
        self.attempts = 0
        self.closed_bytes: bytes | None = None

    def teardown(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def _bytes(self) -> bytes:
        return self.book.path.read_bytes() if self.book.path.exists() else b""

    def _do(self, op: Any) -> None:
        before = self._bytes()
        self.applied += 1
        try:
            self.book.mutate(f"op{self.applied}", {"n": self.applied}, op)
            if self._bytes() == before:  # a no-op (a closed loop replaying its close)
                self.applied -= 1
        except LedgerError as exc:
            if exc.code == "COMMIT_UNCERTAIN":  # replaced; only the folder sync failed
                return
            self.applied -= 1
            assert self._bytes() == before  # a refusal or a failed write changes nothing

    @initialize()
    def begin(self) -> None:
        lanes = [
            ("rev", "correctness", "verdict"),
            ("sec", "security", "verdict"),
            ("scout", "scope", "scout"),
        ]
        self._do(lambda s: loopops.begin(s, "m", "pr", T1, lanes, 2))

    def _ids(self) -> list[str]:
        """Every attempt id in the loop, and one nobody issued."""
        state = self.book.read()
        found = [
            a.attempt_id
            for r in (state.rounds if state else [])
            for lane in r.lanes
            for a in lane.attempts
        ]
        return [*found, "bogus"]

    def _pick(self, which: int) -> str:
        ids = self._ids()
        return ids[which % len(ids)]

    @rule(
        lane=st.sampled_from(LANES), revision=st.sampled_from(REVISIONS), which=st.integers(0, 50)
    )
    def run(self, lane: str, revision: str, which: int) -> None:
        attempt = self._pick(which)
        self._do(lambda s: attempts.mark_running(s, lane, attempt, revision))

    @rule(
        lane=st.sampled_from(LANES),
        verdict=st.sampled_from(["pass", "revise", None]),
        which=st.integers(0, 50),
        revision=st.sampled_from(REVISIONS),
        found=st.booleans(),
    )
    def result(
        self, lane: str, verdict: str | None, which: int, revision: str, found: bool
    ) -> None:
        attempt = self._pick(which)
        answered = answer(verdict, found)
        self._do(lambda s: attempts.record_result(s, lane, attempt, revision, answered))

    @rule(
        lane=st.sampled_from(LANES), which=st.integers(0, 50), revision=st.sampled_from(REVISIONS)
    )
    def fail(self, lane: str, which: int, revision: str) -> None:
        attempt = self._pick(which)
        self._do(lambda s: attempts.record_failure(s, lane, attempt, revision, "error", "boom"))

    @rule(lane=st.sampled_from(LANES), which=st.integers(0, 50))
    def retry(self, lane: str, which: int) -> None:
        of = self._pick(which)
        self._do(lambda s: attempts.admit_retry(s, lane, of))

    @rule(verdict=st.sampled_from(["pass", "revise"]), reconcile=st.booleans())
    def answer_all(self, verdict: str, reconcile: bool = True, rev: str | None = None) -> None:
        """Every lane of the open round answers with its admitted attempt (keeps the machine
        moving through rounds); verdict lanes reconcile the scout's findings or not."""
        state = self.book.read()
        if state is None or state.status != "open":
            return
        current = state.rounds[-1]
        for lane in sorted(current.lanes, key=lambda lane: lane.role != "scout"):
            if lane.status == "retained" or not lane.attempts:
                continue
            name, attempt, revision = lane.name, lane.attempts[-1].attempt_id, current.revision
            self._do(lambda s: attempts.mark_running(s, name, attempt, revision))  # noqa: B023
            role_verdict = (rev or verdict) if name == "rev" else verdict
            role_verdict = role_verdict if lane.role == "verdict" else None
            scouted = (self.book.read() or state).rounds[-1].scout_findings
            answered = answer(role_verdict, lane.role == "scout", scouted if reconcile else [])
            self._do(
                lambda s: attempts.record_result(s, name, attempt, revision, answered)  # noqa: B023
            )

    @rule(revision=st.sampled_from(REVISIONS[1:]))
    def repair_round(self, revision: str) -> None:
        """A whole round in one step — every lane asks for revisions, the round completes and
        the next opens — so the machine reaches repair loops and their ceiling."""
        self.answer_all("revise")
        self.complete()
        self.next_round(revision, None)

    @rule(revision=st.sampled_from(REVISIONS[1:]))
    def delta_round(self, revision: str) -> None:
        """Only ``rev`` asks for revisions; the next round re-runs it alone."""
        self.answer_all("pass", rev="revise")
        self.complete()
        self.next_round(revision, ["rev"])

    @rule()
    def complete(self) -> None:
        self._do(loopops.complete_round)

    @rule()
    def begin_again(self) -> None:
        """A second begin: refused while the loop is open, and once it is closed."""
        self.begin()

    @rule()
    def reset(self) -> None:
        """``bounded-review reset``: the loop is archived and its id starts anew."""
        if self.book.archive() is not None:
            self.applied = 0
            self.closed_bytes = None
            self.begin()

    @rule(
        revision=st.sampled_from(REVISIONS),
        affected=st.none() | st.lists(st.sampled_from([*LANES, "nosuch", ""]), max_size=3),
    )
    def next_round(self, revision: str, affected: list[str] | None) -> None:
        self._do(lambda s: loopops.next_round(s, revision, affected))

    @rule(outcome=st.sampled_from(["converged", "drift", "deadlock"]))
    def close(self, outcome: str) -> None:
        self._do(lambda s: loopops.close(s, outcome))

    @rule(
        at=st.integers(1, 3),
        call=st.sampled_from(["open", "write", "fsync", "replace"]),
        step=st.sampled_from(["complete", "delta", "answer"]),
    )
    def crash_mid_write(self, at: int, call: str, step: str) -> None:
        """The ``at``-th ``call`` to the file system during a step fails (a full disk, a
        failed rename): the state is the old one or the new one, whole, and still valid."""
        op: Any = loopops.complete_round
        if step == "delta":
            op = lambda s: loopops.next_round(s, REVISIONS[-1], ["rev"])  # noqa: E731
        state = self.book.read()
        waiting = [
            (lane.name, lane.attempts[-1].attempt_id, r.revision)
            for r in (state.rounds[-1:] if state else [])
            for lane in r.lanes
            if lane.attempts and lane.attempts[-1].status == "admitted"
        ]
        if step == "answer" and waiting:
            name, attempt, revision = waiting[0]
            op = lambda s: attempts.mark_running(s, name, attempt, revision)  # noqa: E731
        calls = {"n": 0}
        real = getattr(ledger_module.fs, call)

        def failing(*args: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == at:
                raise OSError(28, "No space left on device")
            return real(*args)

        setattr(ledger_module.fs, call, failing)
        try:
            self._do(op)
        finally:
            setattr(ledger_module.fs, call, real)

    @rule()
    def reload(self) -> None:
        self.book = Ledger(self.folder, "m")

    @invariant()
    def state_is_valid_and_bounded(self) -> None:
        state = self.book.read()  # the structural check runs on every load: it must pass
        if state is None:
            return
        assert list(violations(state)) == []
        ROUNDS_SEEN.add(len(state.rounds))
        assert len(state.operations) == self.applied
        assert state.repair_loops_used <= state.max_repair_loops
        assert [r.number for r in state.rounds] == list(range(1, len(state.rounds) + 1))
        assert all(r.status == "complete" for r in state.rounds[:-1])
        for round_ in state.rounds:
            COVERAGE_SEEN.add(round_.coverage)
            for lane in round_.lanes:
                completes = [a for a in lane.attempts if a.status == "complete"]
                assert len(completes) <= 1
                if completes:
                    assert lane.attempts[-1].status == "complete"  # nothing after an answer
                if lane.role == "scout":
                    assert lane.status not in ("pass", "revise")
        if state.status == "converged":  # on a revision a verdict lane reviewed, no blocker
            last = state.rounds[-1]
            assert last.gate is not None
            assert last.gate.review_clean == "yes"
            assert not last.blocking  # a `revise` without a verified blocker is a disagreement
            fresh = [lane for lane in last.lanes if lane.status != "retained"]
            assert any(
                lane.role == "verdict" and lane.status in ("pass", "revise") for lane in fresh
            )
            assert set(last.scout_findings) <= set(last.reconciled)
        if state.status in ("converged", "drift", "deadlock"):
            if self.closed_bytes is None:
                self.closed_bytes = self._bytes()
            assert self._bytes() == self.closed_bytes  # a closed loop never changes


def test_the_loop_invariants_hold_through_any_sequence_with_crashes() -> None:
    ROUNDS_SEEN.clear()
    COVERAGE_SEEN.clear()
    # Derandomized: the coverage asserted below must not depend on the draw (a random draw of
    # 40 sequences sometimes made no delta round, and the test failed on nothing).
    run_state_machine_as_test(
        LoopMachine,
        settings=settings(max_examples=40, stateful_step_count=30, deadline=None, derandomize=True),
    )
    assert max(ROUNDS_SEEN, default=0) >= 2  # it explored repair loops, not only round 1
    assert sorted(COVERAGE_SEEN) == ["delta", "full"]  # and delta rounds
