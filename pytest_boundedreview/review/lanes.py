"""The lanes phase of a session: select, route, dispatch on a frozen copy, check the live
tree did not move, and turn the attempts into report rows and gate reasons.

Scout findings reach verdict lanes validated and located (with their fingerprints); every
lane finding is then triaged (see ``triage``) before it may block.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.ceilings import Ceilings
from ..core.config import Settings
from ..core.errors import UsageError
from ..core.tables import LaneConfig
from ..lanes import agent, command
from ..lanes import plugin as plugins
from ..lanes.agents import AGENTS
from ..lanes.dispatch import dispatch
from ..lanes.packet import build_packet, requirements
from ..lanes.prompt import lens_prompt
from ..lanes.result import Attempt, with_retries
from ..lanes.routing import route, routing_tier
from ..lanes.snapshot import live_fingerprint, mutated, snapshot_copy
from ..loop.result import RoundResult
from ..models.finding import ReportFinding
from ..models.lane import ModelReviewPacket
from ..models.loop import LaneState
from ..models.report import LaneReport, TestFailure
from ..target import git
from ..target.freeze import Target
from ..target.treefiles import TreeFiles
from ..triage.merge import Candidate
from ..triage.steps import Answer, Raised, Reproduce_, screened, triage
from .choice import candidates, choose, retained, with_reviewer
from .lanerows import lane_row, lane_states, unrun_row
from .possible import none_ran


@dataclass(frozen=True)
class Carried:
    """What a delta round carries over from the previous round of the loop."""

    round: int
    redispatch: frozenset[str] | None  # ``None``: every selected lane
    delta: str = ""  # the diff since that round's snapshot
    rows: dict[str, LaneReport] = field(default_factory=dict)
    open_findings: dict[str, list[ReportFinding]] = field(default_factory=dict)
    reviewer: str | None = None  # the model-review lane, heard before every other lane
    model_review: ModelReviewPacket | None = None  # what it hears


@dataclass
class LanesOutcome(RoundResult):
    """The round as the lanes phase ran it (``lane_states``: attempt chains, for the ledger)."""

    ran: bool = False  # whether any lane was configured and considered at all


def run_lanes(
    settings: Settings,
    repo: git.Repo,
    target: Target,
    tier: str,
    budget: Ceilings,
    failures: tuple[Sequence[TestFailure], Sequence[TestFailure]],
    extra_plugins: Sequence[object],
    progress: Callable[[str], None],
    deterministic_clean: bool = False,
    reproduce: Reproduce_ | None = None,
    carried: Carried | None = None,
) -> LanesOutcome:
    """Review ``target`` with the configured and plugin lanes, within ``budget``."""
    outcome = LanesOutcome()
    found = candidates(settings, extra_plugins)
    outcome.problems += found.problems
    plugin_objects = found.plugin_objects
    if settings.no_lanes or not found.lanes:
        why = "--bounded-review-no-lanes" if settings.no_lanes else "no reviewer lanes configured"
        outcome.limitations.append(none_ran(why))
        return outcome
    chosen, skipped = choose(settings, target, found.lanes, tier, budget, deterministic_clean)
    reviewer = next(
        (lane for lane in found.lanes if carried and lane.name == carried.reviewer), None
    )
    if reviewer is not None:  # a model review comes first, whatever the selection says
        chosen, skipped = with_reviewer(reviewer, chosen, skipped, budget.max_lanes)
    outcome.ran = True
    for lane, why in skipped:
        outcome.rows.append(unrun_row(lane, "skipped", why))
    if carried is not None:
        # Lanes that passed last round keep their result; a lane new to the loop still runs.
        note = f"passed in round {carried.round}: retained by reference"
        named = reviewer.name if reviewer else None
        kept = retained(chosen, carried.redispatch, carried.rows, named)
        for lane in kept:
            # Its spend belongs to the round that ran it, not this one.
            update: dict[str, Any] = {"status": "retained", "note": note, "usage": None}
            outcome.rows.append(dataclasses.replace(carried.rows[lane.name], **update))
        chosen = [lane for lane in chosen if lane not in kept]
    notes: dict[str, str | None] = {}
    unroutable: dict[str, str] = {}
    routed: list[LaneConfig] = []
    for lane in chosen:
        if lane.kind != "command":
            routed.append(lane)
            continue
        decision = route(lane, settings.routing, repo.root, tier=routing_tier(tier))
        if decision.model is None and decision.problem is not None:
            # a failed attempt of its round, recorded like any other: it reviewed nothing
            unroutable[lane.name] = decision.problem
            routed.append(lane)
            continue
        notes[lane.name] = decision.note
        routed.append(dataclasses.replace(lane, model=decision.model))
    instructions = requirements(repo, target, settings.instructions)
    retries = settings.max_retries
    before = live_fingerprint(repo)
    files = TreeFiles(repo, target.tree)
    handed_to: dict[str, dict[str, str]] = {}

    def attempts_of(lane: LaneConfig, scouts: Sequence[Attempt]) -> list[Attempt]:
        handed = scout_findings(scouts, files) if lane.role == "verdict" else []
        handed_to[lane.name] = {f.fingerprint: f"{f.path}:{f.line} ({f.category})" for f in handed}
        reopened = carried.open_findings.get(lane.name, []) if carried else []
        packet = build_packet(
            lane, target, instructions, *failures, scout_findings=handed, open_findings=reopened
        )
        if carried is not None and carried.delta:
            packet = packet.model_copy(update={"delta": carried.delta})
        if carried is not None and reviewer is not None and lane.name == reviewer.name:
            packet = packet.model_copy(update={"model_review": carried.model_review})
        data = packet.model_dump_json().encode()
        # Each lane gets a copy of its own: nothing one lane writes reaches another.
        with snapshot_copy(repo, target.tree) as workdir:
            if lane.kind == "openai":
                from ..lanes import openai  # urllib's import cost only for sessions that use it

                try:
                    lens = lens_prompt(lane, workdir)
                except UsageError as exc:
                    return [Attempt(None, "error", str(exc))]

                def once() -> Attempt:
                    return openai.run_once(lane, data, lens)
            elif lane.kind in AGENTS:

                def once() -> Attempt:
                    return agent.run_once(AGENTS[lane.kind], lane, data, workdir)
            elif lane.kind == "plugin":
                if lane.name not in plugin_objects:
                    why = f"no installed plugin offers a lane named {lane.name!r}"
                    return [Attempt(None, "error", why)]

                def once() -> Attempt:
                    return plugins.run_once(lane, plugin_objects[lane.name], data, workdir)
            else:

                def once() -> Attempt:
                    return command.run_once(lane, data, workdir)

            # A verdict lane's answer without a verdict is a failure, so it is retried too.
            needed = settings.require_assurances
            return with_retries(lambda: require_verdict(lane, once(), needed), retries)

    def run(lane: LaneConfig, scouts: Sequence[Attempt]) -> list[Attempt]:
        if lane.name in unroutable:
            return [Attempt(None, "error", unroutable[lane.name])]
        try:
            return attempts_of(lane, scouts)
        except Exception as exc:  # a lane must never take the session down with it
            return [Attempt(None, "error", f"the lane could not be run: {exc!r}")]

    first = [lane for lane in routed if reviewer is not None and lane.name == reviewer.name]
    rest = [lane for lane in routed if lane not in first]
    runs = dispatch(first, run, budget.max_concurrent, progress)
    heard = any(r.attempts and r.attempts[-1].result is not None for r in runs)
    if reviewer is not None and not heard:  # unroutable or failed: correctness waits
        why = f"held until the model review by lane {reviewer.name!r} answers"
        outcome.rows += [unrun_row(lane, "skipped", why) for lane in rest]
        rest = []
    runs += dispatch(rest, run, budget.max_concurrent, progress)
    retained_rows = [row for row in outcome.rows if row.status == "retained"]
    if runs and not retained_rows and all(r.lane.role == "scout" for r in runs):
        outcome.problems.append("no verdict lane reviewed this revision: scouts cast no verdict")
    if not runs:
        outcome.limitations.append("no reviewer lanes ran: every configured lane was skipped")
    outcome.lane_states = lane_states(runs, target.revision)
    outcome.lane_states += [
        LaneState(
            name=row.name,
            lens=row.lens,
            role=row.role,
            status="retained",
            retained_from=carried.round if carried else None,
        )
        for row in outcome.rows
        if row.status == "retained"
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
    if raised:
        progress(f"triaging {len(raised)} lane finding(s)")
    scope = {change.path for change in target.scope}
    floors = {
        lane.name: floor
        for lane in found.lanes
        if (
            floor := lane.min_confidence
            if lane.min_confidence is not None
            else settings.min_confidence
        )
        is not None
    }
    outcome.triaged = triage(
        raised,
        files,
        scope,
        reproduce,
        answers,
        settings.require_reproduction,
        floors,
        settings.require_confidence,
    )
    outcome.problems += outcome.triaged.problems
    changed_paths = mutated(before, live_fingerprint(repo))
    if changed_paths:
        outcome.problems.append("artifact mutated during review: " + ", ".join(changed_paths[:20]))
    return outcome


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
