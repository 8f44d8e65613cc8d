"""One session's round of the review loop: plan it from the ledger, run (or reuse, or refuse)
the lanes, and record the round once the gate is known."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..change import git
from ..change.freeze import DIFF_OPTIONS, Target
from ..core.errors import EXIT_INDETERMINATE, GitError, LedgerError
from ..core.statefile import utc_now
from ..models.lane import Manifestation, ModelReviewPacket
from ..models.loop import LaneState, LoopState, Mark, RoundState
from ..models.report import Findings, Gate, LoopInfo
from ..triage.triaged import Triaged
from .coverage import attempt_id
from .ledger import Ledger, new_state
from .machine import Plan, blockers_fixed, flags_after, is_systemic, loop_id_for, plan
from .mismatch import after_round, answered
from .result import RoundResult

if TYPE_CHECKING:
    from ..core.settings.config import Settings


def issued(lane: LaneState, round_number: int) -> LaneState:
    """``lane``'s attempt chain under the ids the engine issues in round ``round_number``."""
    ids = {
        a.attempt_id: attempt_id(round_number, lane.name, n) for n, a in enumerate(lane.attempts, 1)
    }
    attempts = [
        a.model_copy(
            update={"attempt_id": ids[a.attempt_id], "retry_of": ids.get(a.retry_of or "")}
        )
        for a in lane.attempts
    ]
    return lane.model_copy(update={"attempts": attempts})


def _where(state: LoopState | None) -> tuple[object, ...]:
    """Where a loop stands, to tell whether another session moved it."""
    if state is None:
        return ()
    last = state.rounds[-1] if state.rounds else None
    return (state.status, len(state.rounds), last.revision if last else None, state.created_at)


class LoopRound:
    """The loop bookkeeping around one session's lanes phase."""

    @classmethod
    def configured(
        cls,
        repo: git.Repo,
        target: Target,
        state_dir: Path,
        settings: Settings,
        max_repair_loops: int,
        risk_reasons: Sequence[tuple[str | None, str]],
        objective: str | None = None,
    ) -> LoopRound:
        """The round as ``settings`` configure the loop (reset, full, its ``loop`` table, the
        model reviewer), within ``max_repair_loops``."""
        return cls(
            repo,
            target,
            state_dir,
            max_repair_loops,
            reset=settings.reset,
            full=settings.full,
            risk_reasons=risk_reasons,
            tests_in_scope=settings.loop.tests_in_scope,
            systemic_share=settings.loop.systemic_share,
            objective=objective,
            model_reviewer=settings.model_reviewer,
        )

    def __init__(
        self,
        repo: git.Repo,
        target: Target,
        state_dir: Path,
        max_repair_loops: int,
        *,
        reset: bool = False,
        full: bool = False,
        risk_reasons: Sequence[tuple[str | None, str]] = (),
        tests_in_scope: bool = True,
        systemic_share: float = 0.5,
        objective: str | None = None,
        model_reviewer: str | None = None,
    ) -> None:
        self.repo = repo
        self.target = target
        # One loop per plan file; code targets: one per kind and base.
        where = target.files[0] if target.kind == "plan" and target.files else target.base
        self.loop_id = loop_id_for(target.kind, where, repo.branch())
        self.ledger = Ledger(state_dir, self.loop_id)
        self.max_repair_loops = max_repair_loops
        self.reset = reset
        self.full = full
        self.risk_reasons = risk_reasons
        self.tests_in_scope = tests_in_scope
        self.systemic_share = systemic_share
        self.objective = objective
        self.model_reviewer = model_reviewer
        self.state: LoopState | None = None
        self.plan: Plan | None = None

    def _systemic(self, previous: RoundState) -> bool:
        if self.target.kind == "plan":  # one file: a revision is never systemic
            return False
        old_tree = previous.revision.removeprefix("tree:")
        try:
            out = git.run(
                ["diff", *DIFF_OPTIONS, "--name-only", "-z", old_tree, self.target.tree],
                self.repo.root,
            )
            listed = git.run(
                ["ls-tree", "-r", "--name-only", "-z", self.target.tree], self.repo.root
            )
        except GitError:  # an old revision git no longer has: review everything
            return True
        delta = [p for p in git.decode(out.stdout).split("\0") if p]
        total = len([p for p in listed.stdout.split(b"\0") if p])
        reasons = [rule for path, rule in self.risk_reasons if path in delta]
        return is_systemic(delta, total, reasons, self.systemic_share)

    def delta(self) -> str:
        """The diff from the previous round's snapshot to this one ("" for round 1)."""
        previous = self.plan.previous if self.plan else None
        if previous is None or self.target.kind == "plan":  # plans: the packet has the text
            return ""
        return self._diff(previous.revision, self.target.revision) or ""

    def prepare(self) -> Plan:
        """Read the loop and decide this session's round (raises :class:`LedgerError`)."""
        self.state = self.ledger.read()
        last = self.state.rounds[-1] if self.state and self.state.rounds else None
        systemic = (
            last is not None and last.revision != self.target.revision and self._systemic(last)
        )
        self.plan = plan(
            self.state,
            self.target.revision,
            self.target.files,
            self.max_repair_loops,
            reset=self.reset,
            full=self.full,
            systemic=systemic,
            tests_in_scope=self.tests_in_scope,
            objective=self.objective,
            model_reviewer=self.model_reviewer,
        )
        return self.plan

    def model_review(self) -> ModelReviewPacket | None:
        """What the model-review lane hears this round: each round's findings of the defect
        class that kept reappearing, and the fix (the diff) between consecutive rounds."""
        review = self.plan.model_review if self.plan else None
        if review is None or self.state is None:
            return None
        history: list[Manifestation] = []
        for round_ in self.state.rounds:
            found = round_.findings
            listed = [
                f
                for f in (found.blocking + found.advisory if found else [])
                if review.lane in f.lanes and f.category == review.category
            ]
            if not listed:
                continue
            before = history[-1].revision if history else None
            fix = self._diff(before, round_.revision) if before else None
            history.append(
                Manifestation(
                    round=round_.number, revision=round_.revision, findings=listed, fix=fix
                )
            )
        return ModelReviewPacket(lane=review.lane, category=review.category, history=history)

    def _diff(self, old: str, new: str) -> str | None:
        if self.target.kind == "plan":
            return None
        try:
            out = git.run(
                ["diff", *DIFF_OPTIONS, old.removeprefix("tree:"), new.removeprefix("tree:")],
                self.repo.root,
            )
        except GitError:
            return None
        return git.decode(out.stdout)

    def reused(self) -> RoundResult:
        """The previous round's results for an unchanged snapshot (nothing dispatched)."""
        assert self.plan is not None
        assert self.plan.previous is not None
        previous = self.plan.previous
        note = f"unchanged snapshot: the result of round {previous.number} is reused"
        rows = [
            row
            if row.status == "skipped"
            else dataclasses.replace(row, status="reused", note=note, usage=None)
            for row in previous.rows
        ]
        found = previous.findings or Findings()
        triaged = Triaged(
            blocking=list(found.blocking),
            advisory=list(found.advisory),
            rejected=list(found.rejected),
        )
        return RoundResult(rows=rows, triaged=triaged, problems=list(previous.problems))

    def record(self, result: RoundResult, gate: Gate) -> RoundResult:
        """Write this session's round (or the loop's stop) and fill in the loop's report."""
        assert self.plan is not None
        p = self.plan
        previous = p.previous
        unchanged_stop = (
            p.action == "stop"
            and self.state is not None
            and (self.state.status, self.state.stop_reason) == (p.status, p.stop_reason)
        )
        if p.action == "reuse" or unchanged_stop:
            state = self.state
            assert state is not None
            result.loop = self._info(state, p.round)
            return result
        blocking = list(result.triaged.blocking)
        planned_on = self.state

        def apply(current: LoopState | None) -> tuple[LoopState, dict[str, object]]:
            if _where(current) != _where(planned_on):  # another session recorded meanwhile
                why = (
                    "another review of this loop recorded a round while this one ran; "
                    "run again to review the current state"
                )
                raise LedgerError("LOCKED", why, EXIT_INDETERMINATE)
            now = utc_now()
            base = self._loop(current, now)
            if p.action == "stop":
                state = base.model_copy(
                    update={"status": p.status, "stop_reason": p.stop_reason, "updated_at": now}
                )
                return state, {"round": p.round, "status": p.status}
            clean = gate.review_clean == "yes"
            state = self._with_round(base, self._round(result, gate), clean, now)
            return state, {"round": p.round, "status": "converged" if clean else "open"}

        request = {"revision": self.target.revision, "round": p.round, "action": p.action}
        self.ledger.mutate(uuid.uuid4().hex, request, apply, replace=p.new_loop)
        state = self.ledger.read()
        assert state is not None
        result.loop = self._info(state, p.round)
        if p.action == "dispatch":
            statuses = {row.name: row.status for row in result.rows}
            result.blockers_fixed = blockers_fixed(previous, blocking, statuses)
        return result

    def _loop(self, current: LoopState | None, now: str) -> LoopState:
        """The loop this round is recorded in: the current one, or a new one (the first
        review of the target, or a reset) that keeps the ledger's operations."""
        assert self.plan is not None
        p = self.plan
        if current is not None and not p.new_loop:
            return current
        return new_state(
            self.loop_id,
            target_kind=self.target.kind,
            base=self.target.base,
            branch=self.repo.branch(),
            status="open",
            created_at=now,
            updated_at=now,
            initial_scope=self.target.files,
            max_repair_loops=self.max_repair_loops,
            repair_loops_used=0,
            operations=list(current.operations) if current else [],
            origin="; ".join(p.notes) or "the first review of this target",
            pinned_objective=self.objective or None,
            require_assurances=self.target.kind == "plan",
        )

    def _round(self, result: RoundResult, gate: Gate) -> RoundState:
        """This session's round as the ledger keeps it: each lane's attempt chain with the
        findings it raised, the rows, the triaged findings and the gate."""
        assert self.plan is not None
        number, triaged = self.plan.round, result.triaged
        raised = [*triaged.blocking, *triaged.advisory]
        lanes = [
            issued(lane, number).model_copy(
                update={
                    "findings": [
                        Mark(fingerprint=f.fingerprint, category=f.category)
                        for f in raised
                        if lane.name in f.lanes
                    ]
                }
            )
            for lane in result.lane_states
        ]
        retained = {lane.name for lane in lanes if lane.status == "retained"}
        return RoundState(
            number=number,
            revision=self.target.revision,
            status="complete",
            lanes=lanes,
            coverage="delta" if retained else "full",
            affected=sorted({lane.name for lane in lanes} - retained) if retained else [],
            rows=result.rows,
            findings=Findings(
                blocking=list(triaged.blocking),
                advisory=list(triaged.advisory),
                rejected=list(triaged.rejected),
            ),
            blocking=[f.fingerprint for f in triaged.blocking],
            advisory=[f.fingerprint for f in triaged.advisory],
            gate=gate,
            problems=result.problems,
        )

    def _with_round(
        self, base: LoopState, new_round: RoundState, clean: bool, now: str
    ) -> LoopState:
        """``base`` with ``new_round`` added: converged on a ``clean`` round, else open with
        the next round's plan (see machine.after_round); the model review it heard noted."""
        assert self.plan is not None
        p = self.plan
        rounds = [*base.rounds, new_round]
        status = "converged" if clean else "open"
        state = base.model_copy(
            update={
                "rounds": rounds,
                "status": status,
                "stop_reason": "a clean round" if status == "converged" else None,
                "repair_loops_used": p.repair_loops_used,
                "flags": flags_after(rounds, base.flags),
                "updated_at": now,
                # a plan's objective is pinned the first time it has one
                "pinned_objective": base.pinned_objective or self.objective or None,
            }
        )
        if p.model_review is not None and p.model_review.reviewer:
            state = state.model_copy(update={"model_review": p.model_review})
            if any(
                lane.name == p.model_review.reviewer and lane.status in ("pass", "revise")
                for lane in new_round.lanes
            ):
                state = answered(state, p.round, p.model_review.reviewer)
        if status == "open":
            state = after_round(state, rounds, self.model_reviewer)
        return state

    def _info(self, state: LoopState, number: int) -> LoopInfo:
        return LoopInfo(
            loop_id=state.loop_id,
            round=number,
            repair_loops_used=state.repair_loops_used,
            status=state.status,
            stop_reason=state.stop_reason,
            flags=list(state.flags),
        )
