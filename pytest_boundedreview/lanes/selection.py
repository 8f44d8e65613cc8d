"""Which configured lanes review a target, within the tier's lane ceiling (CONTRACT §6).

Small changes get one correctness lane; normal ones add security when the change is
security-relevant; large ones add architecture; plans get feasibility and acceptance. Scouts go
first, lanes with a lens of their own (a custom word) follow, never two lanes with one lens.
Every lane left out is returned with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..core.settings.tables import LaneConfig

Size = Literal["small", "normal", "large", "plan"]
STANDARD_LENSES = ("correctness", "security", "architecture", "feasibility", "acceptance")
_WANTED: dict[Size, tuple[str, ...]] = {
    "small": ("correctness",),
    "normal": ("correctness", "security"),
    "large": ("correctness", "security", "architecture"),
    "plan": ("feasibility", "acceptance"),
}


def size_of(kind: str, changed_lines: int, small_lines: int, large_lines: int) -> Size:
    """The size class of a target: plans are plans; else by added + removed lines."""
    if kind == "plan":
        return "plan"
    if changed_lines <= small_lines:
        return "small"
    return "large" if changed_lines > large_lines else "normal"


def select(
    lanes: Sequence[LaneConfig],
    kind: str,
    size: Size,
    security_relevant: bool,
    max_lanes: int,
) -> tuple[list[LaneConfig], list[tuple[LaneConfig, str]]]:
    """The lanes to dispatch, in order, and the lanes skipped with their reasons."""
    wanted = [lens for lens in _WANTED[size] if lens != "security" or security_relevant]
    skipped: list[tuple[LaneConfig, str]] = []
    eligible = []
    for lane in lanes:
        if kind in lane.targets:
            eligible.append(lane)
        else:
            skipped.append((lane, f"configured for {', '.join(lane.targets)} targets, not {kind}"))

    def rank(lane: LaneConfig) -> tuple[int, int]:
        if lane.role == "scout":
            return (0, 0)
        if lane.lens in wanted:
            return (1, wanted.index(lane.lens))
        return (2, 0)  # a custom lens, or a standard one this size does not need

    # A scout never takes the last slot a verdict lane needs.
    reserve = 1 if any(lane.role == "verdict" for lane in eligible) else 0
    chosen: list[LaneConfig] = []
    for lane in sorted(eligible, key=rank):  # sorted() is stable: config order breaks ties
        holder = next((c for c in chosen if c.lens == lane.lens), None)
        if holder is not None:
            skipped.append((lane, f"lens {lane.lens!r} is already covered by lane {holder.name!r}"))
        elif lane.lens in STANDARD_LENSES and lane.lens not in wanted and lane.role != "scout":
            needed_here = lane.lens in _WANTED[size]  # wanted by size, dropped for relevance
            why = "not security-relevant" if needed_here else f"a {size} target"
            skipped.append((lane, f"the {lane.lens} lens is not needed: {why}"))
        elif size == "small" and lane.lens not in STANDARD_LENSES and lane.role != "scout":
            skipped.append((lane, "a small target gets one correctness lane"))
        elif lane.role == "scout" and len(chosen) >= max_lanes - reserve:
            skipped.append((lane, f"the lane ceiling of {max_lanes} leaves no room for a scout"))
        elif len(chosen) >= max_lanes:
            skipped.append((lane, f"over the lane ceiling of {max_lanes}"))
        else:
            chosen.append(lane)
    return chosen, skipped
