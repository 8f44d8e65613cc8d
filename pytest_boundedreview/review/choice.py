"""Which lanes a review runs and why each other one does not: the configured lanes and those
plugins offer, then the selection by target size and risk within the lane ceiling. Shared by
the review itself and its dry run (``bounded-review lanes``)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import field
from typing import Any

from ..change.freeze import Target
from ..core.ceilings import Ceilings
from ..core.settings.config import Settings
from ..core.settings.tables import LaneConfig
from ..lanes import plugin as plugins
from ..lanes.selection import Size, select, size_of
from ..models.record import record


@record
class Candidates:
    """Every lane that could review: configured first, then those plugins offer (a plugin
    lane named like a configured one is left out, with a problem)."""

    lanes: list[LaneConfig] = field(default_factory=list)
    plugin_objects: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def candidates(settings: Settings, extra_plugins: Sequence[object]) -> Candidates:
    found = Candidates()
    pm = plugins.manager(settings.blocked_plugins, extra_plugins)
    offered = plugins.plugin_lanes(pm, settings, found.problems)
    configured = {lane.name for lane in settings.lanes}
    for config, _ in offered:
        if config.name in configured:
            why = f"a configured lane is already named {config.name!r}"
            found.problems.append(f"plugin lane {config.name!r} left out: {why}")
    offered = [(config, lane) for config, lane in offered if config.name not in configured]
    offered = list({config.name: (config, lane) for config, lane in reversed(offered)}.values())
    found.plugin_objects = {config.name: lane for config, lane in offered}
    found.lanes = [*settings.lanes, *(config for config, _ in offered)]
    return found


def target_size(settings: Settings, target: Target) -> tuple[Size, int]:
    """The size class of ``target`` and the lines it changes."""
    changed = sum(len(c.added) + len(c.removed) for c in target.scope)
    small, large = settings.selection.small_lines, settings.selection.large_lines
    return size_of(target.kind, changed, small, large), changed


def choose(
    settings: Settings,
    target: Target,
    lanes: Sequence[LaneConfig],
    tier: str,
    budget: Ceilings,
    deterministic_clean: bool = False,
) -> tuple[list[LaneConfig], list[tuple[LaneConfig, str]]]:
    """The lanes to dispatch, in order, and those skipped with the reason."""
    size, _ = target_size(settings, target)
    chosen, skipped = select(lanes, target.kind, size, tier == "strict", budget.max_lanes)
    if settings.selection.settle_trivial and tier == "economy" and deterministic_clean:
        why = "a small change the tests and checks found clean (selection.settle_trivial)"
        skipped, chosen = [*skipped, *((lane, why) for lane in chosen)], []
    return chosen, skipped


def retained(
    chosen: Sequence[LaneConfig],
    redispatch: Collection[str] | None,
    valid: Collection[str],
    reviewer: str | None = None,
) -> list[LaneConfig]:
    """The chosen lanes a delta round keeps from the round before: not to be re-dispatched,
    with a result that stays valid, not the model-review lane; none when no verdict lane would
    be left to review the new snapshot (that is a full round)."""
    if redispatch is None:
        return []
    kept = [
        lane
        for lane in chosen
        if lane.name not in redispatch and lane.name in valid and lane.name != reviewer
    ]
    fresh = [lane for lane in chosen if lane not in kept]
    # a verdict lane must review the new snapshot: scouts cast none
    return kept if any(lane.role == "verdict" for lane in fresh) else []


def with_reviewer(
    reviewer: LaneConfig,
    chosen: list[LaneConfig],
    skipped: list[tuple[LaneConfig, str]],
    max_lanes: int,
) -> tuple[list[LaneConfig], list[tuple[LaneConfig, str]]]:
    """The selection with the model-review lane first; within the lane ceiling, the last
    lane chosen gives way to it."""
    others = [lane for lane in chosen if lane.name != reviewer.name]
    skipped = [(lane, why) for lane, why in skipped if lane.name != reviewer.name]
    room = max(0, max_lanes - 1)
    why = f"over the lane ceiling of {max_lanes}: the model review takes its place"
    return [reviewer, *others[:room]], [*skipped, *((lane, why) for lane in others[room:])]
