"""``bounded-review lanes``: a dry run of the reviewer lanes for the current target (tier,
budget, which lanes would run and why the others would not, each lane's tool and model), and
``bounded-review prompt LANE``: the exact text that lane would receive. Neither dispatches a
reviewer."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from ..change import baseconfig, git
from ..change.freeze import Target, freeze
from ..change.statedir import approver
from ..core.ceilings import effective_budget
from ..core.errors import LedgerError, UsageError
from ..core.settings.config import Settings, load_settings, option_overrides
from ..core.settings.tables import LaneConfig
from ..lanes.agents import agent, gemini
from ..lanes.agents.agents import AGENTS
from ..lanes.endpoint import openai
from ..lanes.environment import lane_env
from ..lanes.packet import build_packet, requirements
from ..lanes.prompt import full_prompt, lens_prompt, system_prompt
from ..lanes.routing import route, routing_tier
from ..lanes.snapshot import snapshot_copy
from ..loop.coverage import still_valid
from ..loop.machine import Plan
from ..loop.rounds import LoopRound
from ..render.escape import terminal
from ..report.build import assess_risk
from ..review.choice import candidates, choose, retained, target_size, with_reviewer

PROBE_TIMEOUT = 30.0


def _context(args: argparse.Namespace) -> tuple[git.Repo, Settings, Target]:
    repo = git.open_repo(Path.cwd())
    values = {"base": args.base, "target": args.target, "risk": args.risk}
    overrides = option_overrides(values, Path.cwd())
    settings, path = load_settings(Path.cwd(), repo.root, overrides, approver(repo))
    target = freeze(repo, settings.target, settings.base)
    rules = baseconfig.rule(repo, target.base_commit, settings, path, Path.cwd(), overrides)
    return repo, rules.settings, target


def _readiness(lane: LaneConfig, settings: Settings, repo: git.Repo, tier: str) -> Iterator[str]:
    """What running ``lane`` would meet: its tool and its model."""
    if lane.kind in AGENTS:
        adapter = AGENTS[lane.kind]
        env = lane_env([*adapter.env, *lane.env])
        found = agent.find(adapter, lane, env)
        if isinstance(found, str):
            yield f"tool: {found} (the lane would be unverified)"
            yield f"model: {lane.model or 'the tool default'}"
            return
        yield f"tool: {found.argv[0]} ({found.version or 'version unknown'})"
        usable, note = adapter.verify(lane, found, env)
        named = f"model {lane.model}: " if lane.model else ""
        yield named + note + ("" if usable else " (the lane would be unverified)")
    elif lane.kind == "openai":
        probe = dataclasses.replace(lane, timeout=min(lane.timeout, PROBE_TIMEOUT))
        key = lane_env([lane.api_key_env] if lane.api_key_env else []).get(lane.api_key_env or "")
        try:
            chosen = openai.choose_model(probe, openai.listed_models(probe, key))
        except openai.Failed as exc:
            yield f"model: {lane.model}, not verified: {exc}"
        else:
            listed = f"{chosen}, listed by {lane.base_url}/models" if chosen else None
            yield f"model: {listed or f'{lane.model} is not listed: the lane would be unverified'}"
    elif lane.kind == "command":
        decision = route(lane, settings.routing, repo.root, tier=routing_tier(tier))
        if decision.problem:
            yield f"model: {decision.problem} (the lane would be unverified)"
        else:
            yield f"model: {decision.model or 'not set'}" + (
                f"; {decision.note}" if decision.note else ""
            )
    else:
        yield "a plugin lane: the plugin's object reviews in this process"


def _loop_plan(
    repo: git.Repo,
    settings: Settings,
    target: Target,
    max_repair_loops: int,
    reasons: list[tuple[str | None, str]],
) -> Plan | str:
    """What the review loop recorded for this target would make of this round (read only),
    or why its state cannot be used."""
    state = repo.root / settings.state_dir  # read where it is; never created here
    loop = LoopRound.configured(repo, target, state, settings, max_repair_loops, reasons)
    try:
        return loop.prepare()
    except (LedgerError, OSError) as exc:
        return f"the loop state cannot be used: {exc}; the lanes would run outside the loop"


def _verdicts(chosen: list[LaneConfig], plan: Plan | str) -> dict[str, str]:
    """What this round of the loop would do with each chosen lane (the session's rule)."""
    if isinstance(plan, str):
        return {lane.name: "would run" for lane in chosen}
    if plan.action == "reuse":
        return {lane.name: f"would not run - {plan.notes[0]}" for lane in chosen}
    if plan.action == "stop":
        why = f"would not run - loop {plan.status}: {plan.stop_reason}"
        return {lane.name: why for lane in chosen}
    previous, reviewer = plan.previous, plan.model_review.reviewer if plan.model_review else None
    valid = [
        lane.name
        for lane in (previous.lanes if previous else [])
        if previous and still_valid(lane, previous) is None
    ]
    kept = {lane.name for lane in retained(chosen, plan.redispatch, valid, reviewer)}
    shown = {}
    for lane in chosen:
        if lane.name == reviewer:
            shown[lane.name] = "would run first - the model review the loop asks for"
        elif lane.name in kept and previous is not None:
            shown[lane.name] = f"would be retained - passed in round {previous.number} of the loop"
        else:
            shown[lane.name] = "would run"
    return shown


def _head(lane: LaneConfig) -> str:
    return f"lane {terminal(lane.name)} [{terminal(lane.lens)}, {lane.role}, {lane.kind}]"


def cmd_lanes(args: argparse.Namespace) -> int:
    repo, settings, target = _context(args)
    tier, reasons = assess_risk(settings, target)
    budget = effective_budget(tier, settings.mode, settings.lowered_ceilings)
    size, changed = target_size(settings, target)
    print(
        f"target {target.kind} (base {terminal(target.base or '-')}), {target.revision}, "
        f"{len(target.files)} file(s), {changed} changed line(s): {size}"
    )
    print(f"risk {tier}" + "".join(f"\n  - {terminal(r.rule)}" for r in reasons))
    print(
        f"budget {budget.max_lanes} lane(s), {budget.max_concurrent} at once, "
        f"{budget.max_repair_loops} repair loop(s)"
    )
    found = candidates(settings, [])
    for problem in found.problems:
        print(f"problem: {terminal(problem)}")
    if settings.no_lanes or not found.lanes:
        print("no reviewer lanes configured: the gate would be deterministic only")
        return 0
    if target.empty:
        print("nothing to review: the target is empty, no lane would run")
        return 0
    chosen, skipped = choose(settings, target, found.lanes, tier, budget)
    reasons_at = [(r.path, r.rule) for r in reasons]
    plan = _loop_plan(repo, settings, target, budget.max_repair_loops, reasons_at)
    notes = [plan] if isinstance(plan, str) else list(plan.notes)
    if chosen and settings.selection.settle_trivial and tier == "economy":
        notes.append(
            "selection.settle_trivial: if the tests and checks come out clean, they settle "
            "this change and no lane runs"
        )
    for note in notes:
        print(f"note: {terminal(note)}")
    if isinstance(plan, Plan) and plan.model_review and plan.model_review.reviewer:
        by = {lane.name: lane for lane in found.lanes}
        reviewer = by.get(plan.model_review.reviewer)
        if reviewer is not None:
            chosen, skipped = with_reviewer(reviewer, chosen, skipped, budget.max_lanes)
    verdicts = _verdicts(chosen, plan)
    for lane in chosen:
        print(f"{_head(lane)}: {terminal(verdicts[lane.name])}")
        for line in _readiness(lane, settings, repo, tier):
            print(f"  {terminal(line)}")
    for lane, why in skipped:
        print(f"{_head(lane)}: skipped - {terminal(why)}")
    print("conftest.py plugin lanes are seen only inside a pytest session")
    return 0


def cmd_prompt(args: argparse.Namespace) -> int:
    repo, settings, target = _context(args)
    lane = next((lane for lane in settings.lanes if lane.name == args.lane), None)
    if lane is None:
        known = ", ".join(lane.name for lane in settings.lanes) or "none configured"
        raise UsageError(f"no lane named {args.lane!r} (lanes: {known})")
    instructions = requirements(repo, target, settings.instructions)
    packet = build_packet(lane, target, instructions, [], []).model_dump_json().encode()
    if lane.kind in ("command", "plugin"):
        print(json.dumps(json.loads(packet), indent=2))  # these lanes get the packet alone
        return 0
    with snapshot_copy(repo, target.tree) as workdir:
        lens = lens_prompt(lane, workdir)
    if lane.kind == "openai":
        text = f"--- system ---\n{system_prompt(lens)}--- user ---\n"
        text += packet.decode("utf-8") + "\n"
    else:
        text = AGENTS[lane.kind].shield(full_prompt(packet, lens))
        if lane.kind == "gemini":  # what --prompt appends to it
            text += f"\n{gemini.NUDGE}\n"
    # Exact bytes into a pipe or file; on a terminal, control characters are shown, not run.
    sys.stdout.write(terminal(text, single_line=False) if sys.stdout.isatty() else text)
    return 0
