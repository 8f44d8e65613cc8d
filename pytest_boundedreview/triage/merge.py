"""Findings that describe the same defect become one: same path, overlapping lines, and the same
category or the same failure mode (wording normalised). Linear after one sort per group."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import field

from ..models.finding import ReportFinding
from ..models.record import record

_NON_WORD = re.compile(r"[^0-9a-z]+")
RANK = {"deterministic": 3, "reproduced": 2, "quoted": 1, "evidence": 0}


@record
class Candidate:
    """A finding that survived validation, on its way to the report."""

    finding: ReportFinding
    lanes: set[str]
    role: str
    verification: str
    fingerprint: str
    notes: list[str] = field(default_factory=list)
    severity: str = ""
    span: tuple[int, int] = (0, 0)  # first and last line, kept in step with ``finding``

    def __post_init__(self) -> None:
        self.severity = self.severity or self.finding.severity
        self.span = (self.finding.line, self.finding.end_line or self.finding.line)


def failure_mode_key(text: str) -> str:
    """Case, punctuation and spacing folded: "Off-by-one in loop." ≈ "off by one in loop"."""
    return " ".join(_NON_WORD.sub(" ", text.lower()).split())


def _strength(c: Candidate) -> tuple[bool, int, int]:
    """A blocker first (merging never hides one), then verification, then evidence."""
    return c.severity == "blocking", RANK[c.verification], len(c.finding.evidence)


def merged(candidates: Sequence[Candidate]) -> list[Candidate]:
    """One candidate per defect: the strongest (a blocker, then verification, then evidence)
    stands for its group, lists every lane that raised it and carries the group's strongest
    verification. Order of first appearance."""
    parent = list(range(len(candidates)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    keys: tuple[Callable[[Candidate], Hashable], ...] = (
        lambda c: (c.finding.path, c.finding.category),
        lambda c: (c.finding.path, failure_mode_key(c.finding.failure_mode)),
    )
    for key in keys:
        groups: dict[Hashable, list[int]] = defaultdict(list)
        for index, candidate in enumerate(candidates):
            groups[key(candidate)].append(index)
        for members in groups.values():
            members.sort(key=lambda i: candidates[i].span)
            head, reach = -1, 0
            for i in members:
                start, end = candidates[i].span
                if head >= 0 and start <= reach:
                    parent[root(i)] = root(head)
                    reach = max(reach, end)
                else:
                    head, reach = i, end
    clusters: dict[int, list[Candidate]] = defaultdict(list)
    for index, candidate in enumerate(candidates):
        clusters[root(index)].append(candidate)
    out = []
    for cluster in clusters.values():
        best = max(cluster, key=_strength)
        for other in cluster:
            best.lanes |= other.lanes
            if RANK[other.verification] > RANK[best.verification]:
                best.verification = other.verification
        out.append(best)
    return out
