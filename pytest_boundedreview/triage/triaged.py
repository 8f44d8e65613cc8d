"""What triage kept, demoted and rejected: all that a round's result needs of triage, so a
session with no findings to triage does not load the finding models."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ..models.record import record

if TYPE_CHECKING:
    from ..models.finding import RejectedFinding, ReportFinding


@record
class Triaged:
    blocking: list[ReportFinding] = field(default_factory=list)
    advisory: list[ReportFinding] = field(default_factory=list)
    rejected: list[RejectedFinding] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # what keeps the gate from ``yes``
    kept_raw: int = 0  # raw findings behind the kept ones (merging makes fewer kept)
