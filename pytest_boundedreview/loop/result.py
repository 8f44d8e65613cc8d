"""What a session reports about its round of the loop (or about having none)."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..models.record import record
from ..models.report import LaneReport, LoopInfo
from ..triage.triaged import Triaged

if TYPE_CHECKING:
    from ..models.loop import LaneState


@record
class RoundResult:
    """What the session reports about its round."""

    rows: list[LaneReport] = field(default_factory=list)
    triaged: Triaged = field(default_factory=Triaged)
    problems: list[str] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)
    lane_states: list[LaneState] = field(default_factory=list)
    loop: LoopInfo | None = None
    blockers_fixed: list[str] = field(default_factory=list)
