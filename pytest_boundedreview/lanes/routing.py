"""Model routing for command lanes: the model must be one the reviewer runtime lists now.

A ``models_command`` (on the lane, or in ``[tool.bounded-review.routing]``) prints the live
capability list (see :func:`parse_listing`). The lane's model is used when
listed, else its first listed fallback; otherwise the lane is unverified. Without a command
the model is passed through unchecked, and the report says so.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..core import subproc
from ..core.settings.tables import LaneConfig, RoutingConfig
from ..models.record import record
from .environment import lane_env

UNVERIFIED_NOTE = "model not verified against a live list"


@record(frozen=True)
class Route:
    """The model a lane will use, or why it cannot run (``problem``), and a note."""

    model: str | None
    problem: str | None = None
    note: str | None = None


def parse_listing(text: str) -> dict[str, set[str]]:
    """Model id → offered reasoning levels (empty: levels not listed).

    JSON: an array of ids or of ``{"id", "reasoning": [levels]}`` objects, or an object whose
    ``data`` is such an array (the OpenAI shape). Anything else: one id per line, taken whole
    (ids such as ``llama3:70b`` contain colons). Malformed entries are left out, never guessed.
    """
    try:
        data = json.loads(text)
    except ValueError:
        return {line.strip(): set() for line in text.splitlines() if line.strip()}
    if isinstance(data, dict):
        data = data.get("data")
    listed: dict[str, set[str]] = {}
    for item in data if isinstance(data, list) else []:
        if isinstance(item, str):
            listed[item] = set()
        elif isinstance(item, dict) and isinstance(item.get("id"), str):
            levels = item.get("reasoning", [])
            if isinstance(levels, list) and all(isinstance(x, str) for x in levels):
                listed[item["id"]] = set(levels)
    return listed


def tier_models(routing: RoutingConfig, tier: str) -> Sequence[str]:
    """The ordered models of a routing tier (``routine``, ``complex``, ``arbitration``)."""
    return {
        "routine": routing.routine,
        "complex": routing.complex,
        "arbitration": routing.arbitration,
    }[tier]


def routing_tier(risk_tier: str) -> str:
    """The routing tier for a change of ``risk_tier``: ``complex`` for strict ones."""
    return "complex" if risk_tier == "strict" else "routine"


def route(
    lane: LaneConfig,
    routing: RoutingConfig,
    cwd: Path,
    environ: Mapping[str, str] | None = None,
    tier: str = "routine",
) -> Route:
    """Resolve ``lane``'s model against the live list, if there is one. A lane without a
    model takes the models of the routing ``tier`` in order."""
    command = lane.models_command or routing.models_command
    if lane.model is None:
        ordered = list(tier_models(routing, tier))
        if not ordered:
            return Route(None, note="no model configured: the reviewer picks its own")
        lane = dataclasses.replace(lane, model=ordered[0], fallback_models=ordered[1:])
        assert lane.model is not None
    if command is None:
        return Route(lane.model, note=UNVERIFIED_NOTE)
    assert lane.model is not None
    env = lane_env(lane.env, environ=os.environ if environ is None else environ)
    out = subproc.run(command, cwd=cwd, env=env, timeout=min(lane.timeout, 60))
    if not out.ok:
        why = out.start_error or ("timed out" if out.timed_out else f"exit {out.returncode}")
        return Route(None, problem=f"the model list could not be read: {why}")
    listed = parse_listing(out.stdout.decode("utf-8", "replace"))
    for candidate in [lane.model, *lane.fallback_models]:
        if candidate not in listed:
            continue
        levels = listed[candidate]
        if lane.reasoning and levels and lane.reasoning not in levels:
            offered = ", ".join(sorted(levels))
            return Route(
                None,
                problem=f"reasoning {lane.reasoning!r} not offered by {candidate} ({offered})",
            )
        return Route(candidate)
    shown = ", ".join(list(listed)[:20]) or "none"
    return Route(None, problem=f"model not available: {lane.model} (listed: {shown})")
