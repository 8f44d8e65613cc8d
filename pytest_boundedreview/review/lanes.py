"""The lanes phase of a session: select, route, dispatch on a frozen copy, check the live
tree did not move, and turn the attempts into report rows and gate reasons.

Scout findings reach verdict lanes validated and located (with their fingerprints); every
lane finding is then triaged (see ``triage``) before it may block.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import Any

from ..change import git
from ..change.freeze import Target
from ..change.trees.treefiles import TreeFiles
from ..core.ceilings import Ceilings
from ..core.settings.config import Settings
from ..core.settings.tables import LaneConfig
from ..hookspec import PluginLane
from ..lanes.dispatch import LaneRun, dispatch
from ..lanes.kinds import PROMPTED, LaneCall, runner_of
from ..lanes.packet import build_packet, requirements
from ..lanes.result import Attempt, with_retries
from ..lanes.routing import route, routing_tier
from ..lanes.snapshot import live_fingerprint, mutated, snapshot_copy
from ..loop.result import RoundResult
from ..models.finding import ReportFinding
from ..models.lane import ModelReviewPacket
from ..models.loop import LaneState
from ..models.record import record
from ..models.report import LaneReport, TestFailure
from ..triage.merge import Candidate
from ..triage.steps import Answer, Raised, Reproduce_, screened, triage
from ..triage.triaged import Triaged
from .choice import candidates, choose, retained, with_reviewer
from .lanerows import lane_row, lane_states, unrun_row
from .possible import none_ran


@record(frozen=True)
class Carried:
    """What a delta round carries over from the previous round of the loop."""

    round: int
    redispatch: frozenset[str] | None  # ``None``: every selected lane
    delta: str = ""  # the diff since that round's snapshot
    rows: dict[str, LaneReport] = field(default_factory=dict)
    open_findings: dict[str, list[ReportFinding]] = field(default_factory=dict)
    reviewer: str | None = None  # the model-review lane, heard before every other lane
    model_review: ModelReviewPacket | None = None  # what it hears


@record
class LanesOutcome(RoundResult):
    """The round as the lanes phase ran it (``lane_states``: attempt chains, for the ledger)."""

    ran: bool = False  # whether any lane was configured and considered at all


@record(frozen=True)
class LaneRound:
    """What the lanes phase of one round is given: the change under review and its context,
    the budget of its risk tier, and what a delta round carries over (``carried``)."""

    settings: Settings
    repo: git.Repo
    target: Target
    tier: str
    budget: Ceilings
    failures: tuple[Sequence[TestFailure], Sequence[TestFailure]]  # caused, pre-existing
    plugins: Sequence[object]  # objects that may offer lanes (the session's conftests)
    progress: Callable[[str], None]
    deterministic_clean: bool = False
    reproduce: Reproduce_ | None = None
    carried: Carried | None = None


def run_lanes(request: LaneRound) -> LanesOutcome:
    """Review the target with the configured and plugin lanes, within the budget: select,
    order (the model review first), retain, route, dispatch, collect, triage, and check the
    live tree did not move."""
    outcome = LanesOutcome()
    found = candidates(request.settings, request.plugins)
    outcome.problems += found.problems
    if request.settings.no_lanes or not found.lanes:
        no_lanes = request.settings.no_lanes
        why = "--bounded-review-no-lanes" if no_lanes else "no reviewer lanes configured"
        outcome.limitations.append(none_ran(why))
        return outcome
    outcome.ran = True
    chosen, reviewer = _select(request, found.lanes, outcome)
    chosen = _retain(request.carried, chosen, reviewer, outcome)
    routed = _route(request, chosen)
    before = live_fingerprint(request.repo)
    runner = _LaneRunner(request, found.plugin_objects, routed.unroutable, reviewer)
    runs = _dispatch(request, routed.lanes, runner, reviewer, outcome)
    raised, answers = _collect(runs, routed.notes, runner.handed_to, request, outcome)
    outcome.triaged = _triage(request, found.lanes, raised, answers, runner.files)
    outcome.problems += outcome.triaged.problems
    _check_tree(request.repo, before, outcome)
    return outcome


def _select(
    request: LaneRound, lanes: Sequence[LaneConfig], outcome: LanesOutcome
) -> tuple[list[LaneConfig], LaneConfig | None]:
    """The lanes the tier's selection dispatches, the model-review lane first whatever the
    selection says (and that lane, when a delta round names one); the others as rows saying
    why they were skipped."""
    settings, carried, budget = request.settings, request.carried, request.budget
    chosen, skipped = choose(
        settings, request.target, lanes, request.tier, budget, request.deterministic_clean
    )
    reviewer = next((lane for lane in lanes if carried and lane.name == carried.reviewer), None)
    if reviewer is not None:
        chosen, skipped = with_reviewer(reviewer, chosen, skipped, budget.max_lanes)
    outcome.rows += [unrun_row(lane, "skipped", why) for lane, why in skipped]
    return chosen, reviewer


def _retain(
    carried: Carried | None,
    chosen: list[LaneConfig],
    reviewer: LaneConfig | None,
    outcome: LanesOutcome,
) -> list[LaneConfig]:
    """``chosen`` without the lanes that passed last round and keep their result (as
    retained rows); a lane new to the loop still runs."""
    if carried is None:
        return chosen
    note = f"passed in round {carried.round}: retained by reference"
    named = reviewer.name if reviewer else None
    kept = retained(chosen, carried.redispatch, carried.rows, named)
    for lane in kept:
        # Its spend belongs to the round that ran it, not this one.
        update: dict[str, Any] = {"status": "retained", "note": note, "usage": None}
        outcome.rows.append(dataclasses.replace(carried.rows[lane.name], **update))
    return [lane for lane in chosen if lane not in kept]


@record
class _Routed:
    lanes: list[LaneConfig] = field(default_factory=list)  # command lanes with their model
    notes: dict[str, str | None] = field(default_factory=dict)  # how each lane was routed
    unroutable: dict[str, str] = field(default_factory=dict)  # lane name -> why


def _route(request: LaneRound, chosen: Sequence[LaneConfig]) -> _Routed:
    """Each command lane given the model its routing picks for the tier; a lane no route
    serves is kept, to fail as an attempt of its round (it reviewed nothing)."""
    routed = _Routed()
    for lane in chosen:
        if lane.kind != "command":
            routed.lanes.append(lane)
            continue
        decision = route(
            lane, request.settings.routing, request.repo.root, tier=routing_tier(request.tier)
        )
        if decision.model is None and decision.problem is not None:
            routed.unroutable[lane.name] = decision.problem
            routed.lanes.append(lane)
            continue
        routed.notes[lane.name] = decision.note
        routed.lanes.append(dataclasses.replace(lane, model=decision.model))
    return routed


class _LaneRunner:
    """Runs one lane with its retries (see dispatch.LaneRunner): its packet, its copy of the
    tree, its kind's runner (see lanes/kinds.py); notes what each verdict lane was handed."""

    def __init__(
        self,
        request: LaneRound,
        plugin_lanes: Mapping[str, PluginLane],
        unroutable: Mapping[str, str],
        reviewer: LaneConfig | None,
    ) -> None:
        self.request, self.plugin_lanes = request, plugin_lanes
        self.unroutable, self.reviewer = unroutable, reviewer
        repo, target = request.repo, request.target
        self.instructions = requirements(repo, target, request.settings.instructions)
        self.files = TreeFiles(repo, target.tree)
        self.handed_to: dict[str, dict[str, str]] = {}  # lane -> scout findings handed

    def __call__(self, lane: LaneConfig, scouts: Sequence[Attempt]) -> list[Attempt]:
        if lane.name in self.unroutable:
            return [Attempt(None, "error", self.unroutable[lane.name])]
        try:
            return self._attempts(lane, scouts)
        except Exception as exc:  # a lane must never take the session down with it
            return [Attempt(None, "error", f"the lane could not be run: {exc!r}")]

    def _attempts(self, lane: LaneConfig, scouts: Sequence[Attempt]) -> list[Attempt]:
        settings, repo, target = self.request.settings, self.request.repo, self.request.target
        packet = self._packet(lane, scouts)
        # Each lane gets a copy of its own: nothing one lane writes reaches another.
        with snapshot_copy(repo, target.tree) as workdir:
            call = LaneCall(lane, packet, workdir, self.plugin_lanes)
            once = runner_of(lane)(call)
            if isinstance(once, Attempt):  # the lane cannot run at all: nothing to retry
                return [once]
            # A verdict lane's answer without a verdict is a failure, so it is retried too.
            needed = settings.require_assurances
            return with_retries(lambda: require_verdict(lane, once(), needed), settings.max_retries)

    def _packet(self, lane: LaneConfig, scouts: Sequence[Attempt]) -> bytes:
        """The lane's packet: the scouts' findings for a verdict lane, the findings it left
        open last round, the delta of a delta round, the model review for its reviewer."""
        carried, target = self.request.carried, self.request.target
        handed = scout_findings(scouts, self.files) if lane.role == "verdict" else []
        self.handed_to[lane.name] = {
            f.fingerprint: f"{f.path}:{f.line} ({f.category})" for f in handed
        }
        reopened = carried.open_findings.get(lane.name, []) if carried else []
        packet = build_packet(
            lane,
            target,
            self.instructions,
            *self.request.failures,
            scout_findings=handed,
            open_findings=reopened,
        )
        if carried is not None and carried.delta:
            packet = packet.model_copy(update={"delta": carried.delta})
        if carried is not None and self.reviewer is not None and lane.name == self.reviewer.name:
            packet = packet.model_copy(update={"model_review": carried.model_review})
        return packet.model_dump_json().encode()


def _dispatch(
    request: LaneRound,
    lanes: Sequence[LaneConfig],
    runner: _LaneRunner,
    reviewer: LaneConfig | None,
    outcome: LanesOutcome,
) -> list[LaneRun]:
    """Run the lanes within the budget's concurrency: the model review first; the others
    only once it answered (held, as skipped rows, when it did not)."""
    budget, progress = request.budget, request.progress
    first = [lane for lane in lanes if reviewer is not None and lane.name == reviewer.name]
    rest = [lane for lane in lanes if lane not in first]
    runs = dispatch(first, runner, budget.max_concurrent, progress)
    heard = any(r.attempts and r.attempts[-1].result is not None for r in runs)
    if reviewer is not None and not heard:  # unroutable or failed: correctness waits
        why = f"held until the model review by lane {reviewer.name!r} answers"
        outcome.rows += [unrun_row(lane, "skipped", why) for lane in rest]
        rest = []
    return runs + dispatch(rest, runner, budget.max_concurrent, progress)


def _collect(
    runs: Sequence[LaneRun],
    notes: Mapping[str, str | None],
    handed_to: Mapping[str, dict[str, str]],
    request: LaneRound,
    outcome: LanesOutcome,
) -> tuple[list[Raised], list[Answer]]:
    """The rows, problems and ledger states of the lanes that ran; what they raised, and
    how each verdict lane answered the scout findings it was handed."""
    carried = request.carried
    retained_rows = [row for row in outcome.rows if row.status == "retained"]
    if runs and not retained_rows and all(r.lane.role == "scout" for r in runs):
        outcome.problems.append("no verdict lane reviewed this revision: scouts cast no verdict")
    if not runs:
        outcome.limitations.append("no reviewer lanes ran: every configured lane was skipped")
    outcome.lane_states = lane_states(runs, request.target.revision)
    outcome.lane_states += [
        LaneState(
            name=row.name,
            lens=row.lens,
            role=row.role,
            status="retained",
            retained_from=carried.round if carried else None,
        )
        for row in retained_rows
    ]
    raised, answers = [], []
    for lane_run in runs:
        outcome.rows.append(lane_row(lane_run, notes.get(lane_run.lane.name)))
        last = lane_run.attempts[-1] if lane_run.attempts else None
        if last is None or last.result is None:
            detail = last.detail if last else "no attempt"
            outcome.problems.append(f"lane {lane_run.lane.name!r} unverified: {detail}")
            continue
        name = lane_run.lane.name
        raised += [Raised(name, lane_run.lane.role, f) for f in last.result.findings]
        if handed_to.get(name):
            answers.append(Answer(name, handed_to[name], last.result.reconciliation))
    return raised, answers


def _triage(
    request: LaneRound,
    lanes: Sequence[LaneConfig],
    raised: list[Raised],
    answers: list[Answer],
    files: TreeFiles,
) -> Triaged:
    """The lanes' findings triaged (see ``triage``), each lane held to its confidence
    floor."""
    settings = request.settings
    if raised:
        request.progress(f"triaging {len(raised)} lane finding(s)")
    scope = {change.path for change in request.target.scope}
    floors = {
        lane.name: floor
        for lane in lanes
        if (
            floor := lane.min_confidence
            if lane.min_confidence is not None
            else settings.min_confidence
        )
        is not None
    }
    return triage(
        raised,
        files,
        scope,
        request.reproduce,
        answers,
        settings.require_reproduction,
        floors,
        settings.require_confidence,
        {lane.name for lane in lanes if lane.kind in PROMPTED},
    )


def _check_tree(repo: git.Repo, before: Mapping[str, str], outcome: LanesOutcome) -> None:
    """A problem when the live tree moved while the lanes ran."""
    changed_paths = mutated(before, live_fingerprint(repo))
    if changed_paths:
        outcome.problems.append("artifact mutated during review: " + ", ".join(changed_paths[:20]))


def require_verdict(lane: LaneConfig, attempt: Attempt, assurances: bool = False) -> Attempt:
    """A verdict lane that answers without a verdict (or without assurances, when they are
    required) has not reviewed: a failed attempt, retried like any other."""
    result = attempt.result
    if lane.role != "verdict" or result is None:
        return attempt
    if result.verdict is None:
        why = "a verdict lane answered without a verdict"
        return dataclasses.replace(attempt, result=None, failure="error", detail=why)
    if assurances and result.assurances is None:
        why = "a verdict without assurances (require_assurances)"
        return dataclasses.replace(attempt, result=None, failure="error", detail=why)
    return attempt


def scout_findings(scouts: Sequence[Attempt], files: TreeFiles) -> list[ReportFinding]:
    """The scouts' valid, located findings as verdict lanes receive them, each with the
    fingerprint triage will give it (reproductions are run later, by triage)."""
    raised = [
        Raised("", "scout", raw) for a in scouts for raw in (a.result.findings if a.result else [])
    ]
    note = {"note": "scout finding, not yet triaged"}
    return [
        kept.finding.model_copy(
            update={"fingerprint": kept.fingerprint, "verification": kept.verification, **note}
        )
        for _, kept in screened(raised, files)
        if isinstance(kept, Candidate)
    ]
