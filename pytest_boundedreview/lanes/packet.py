"""The packet a lane reviews: minimal, task-local and read-only (CONTRACT §6).

It holds the frozen scope, the raw diff, the text of the instruction files present in the
snapshot, the baseline's target-related and pre-existing failures, the lane's one lens, the
scout's findings for verdict lanes, and the finding schema — never another verdict lane's
conclusions or any conversation.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..change import git
from ..change.freeze import Target
from ..core.settings.tables import LaneConfig
from ..models.finding import ReportFinding
from ..models.lane import (
    PACKET_SCHEMA,
    LaneInfo,
    Packet,
    PacketBaseline,
    PacketFile,
    PacketTarget,
    Requirement,
)
from ..models.report import TestFailure

MAX_INSTRUCTION_BYTES = 256 * 1024


def requirements(repo: git.Repo, target: Target, names: Sequence[str]) -> list[Requirement]:
    """Instruction files named in configuration, as they are in the reviewed snapshot."""
    found = []
    for name in names:
        text = repo.show(target.tree, name)
        if text is not None:
            found.append(Requirement(path=name, text=text[:MAX_INSTRUCTION_BYTES]))
    return found


def build_packet(
    lane: LaneConfig,
    target: Target,
    instructions: Sequence[Requirement],
    target_related: Sequence[TestFailure] = (),
    pre_existing: Sequence[TestFailure] = (),
    scout_findings: Sequence[ReportFinding] = (),
    open_findings: Sequence[ReportFinding] = (),
) -> Packet:
    """The packet of one lane; scouts never see scout findings (they are the scout)."""
    return Packet(
        schema=PACKET_SCHEMA,
        lane=LaneInfo(name=lane.name, lens=lane.lens, role=lane.role),
        target=PacketTarget(kind=target.kind, base=target.base, revision=target.revision),
        scope=[
            PacketFile(path=c.path, status=c.status, added_lines=sorted(c.added))
            for c in target.scope
        ],
        diff=target.diff,
        requirements=list(instructions),
        baseline=PacketBaseline(
            target_related=list(target_related), pre_existing=list(pre_existing)
        ),
        scout_findings=list(scout_findings) if lane.role == "verdict" else [],
        open_findings=list(open_findings),
        model=lane.model,
        reasoning=lane.reasoning,
    )
