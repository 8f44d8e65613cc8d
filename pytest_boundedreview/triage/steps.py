"""The triage steps of lane findings, in their fixed order (see the package)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from ..change.trees.treefiles import TreeFiles
from ..core.fingerprint import finding_fingerprint
from ..models.finding import BLOCKING_CATEGORIES, Finding, RejectedFinding, ReportFinding, Reproduce
from ..models.lane import Reconciliation
from ..models.record import record
from .merge import RANK, Candidate, merged
from .quotes import PINS, fold, pins, quote_line
from .reproduce import Reproduced, key
from .triaged import Triaged
from .validate import checked, located, outside, raw_fields, text_at

FINDING_KEYS = set(Finding.model_fields)
Reproduce_ = Callable[[Sequence[Reproduce]], Mapping[str, Reproduced]]


@record(frozen=True)
class Raised:
    """One raw finding as a lane emitted it."""

    lane: str
    role: str
    raw: Any


@record(frozen=True)
class Answer:
    """A verdict lane's reconciliation of the scout findings it was handed (fingerprints)."""

    lane: str
    handed: Mapping[str, str]  # fingerprint -> "path:line (category)"
    reconciliation: Sequence[Reconciliation]


def fingerprinted(finding: ReportFinding, lines: list[str]) -> str:
    """The identity of a located finding across rounds."""
    located_text = text_at(lines, finding.line, finding.end_line)
    return finding_fingerprint(finding.path, finding.category, located_text)


def candidate(
    raised: Raised, finding: ReportFinding, files: TreeFiles, folded: dict[str, list[str]]
) -> Candidate | list[str]:
    """A valid finding located and quote-checked, or the reasons it is rejected (``folded``:
    a cache of files' whitespace-folded lines)."""
    where = located(finding, files)
    if isinstance(where, str):
        return [where]
    real, lines = where
    verification, notes = "evidence", []
    past = finding.end_line is not None and finding.end_line > len(lines)
    quote = finding.quote
    if quote is not None:
        if real not in folded:
            folded[real] = fold(lines)
        at = quote_line(folded[real], finding.line, finding.end_line, quote)
        if at is None:
            missing = ["quote not found at location"]
            return [*missing, outside(finding.end_line or 0, len(lines))] if past else missing
        if at != finding.line:
            notes.append(f"quote found at line {at}, not at line {finding.line} as cited")
            end = finding.end_line + at - finding.line if finding.end_line else None
            finding = finding.model_copy(update={"line": at, "end_line": end})
        if finding.end_line is not None and finding.end_line > len(lines):
            notes.append(f"end_line {finding.end_line} is past the end: clamped to {len(lines)}")
            finding = finding.model_copy(update={"end_line": len(lines)})
        if pins(folded[real], at, quote):
            verification = "quoted"
        else:
            notes.append(f"the quote is too short to check the claim (under {PINS} characters)")
    fingerprint = fingerprinted(finding, lines)
    return Candidate(finding, {raised.lane}, raised.role, verification, fingerprint, notes)


def screened(
    raised: Sequence[Raised], files: TreeFiles
) -> list[tuple[Raised, Candidate | list[str]]]:
    """Each raw finding validated, located and quote-checked (the snapshot's files read in one
    batch): a candidate, or the reasons it is rejected."""
    valid = [(item, *checked(item.raw)) for item in raised]
    files.prefetch(filter(None, (files.resolve(f.path) for _, f, _ in valid if f is not None)))
    folded: dict[str, list[str]] = {}
    return [
        (item, candidate(item, finding, files, folded) if finding is not None else reasons)
        for item, finding, reasons in valid
    ]


def _rejected(raised: Raised, reasons: list[str]) -> RejectedFinding:
    return RejectedFinding(reason="; ".join(reasons), lanes=[raised.lane], **raw_fields(raised.raw))


def _reproduce(kept: list[Candidate], run: Reproduce_ | None) -> list[tuple[Candidate, str]]:
    """Run the offered reproductions; the candidates they refute, with the reason."""
    offered = [c for c in kept if c.finding.reproduce is not None]
    if not offered:
        return []
    if run is None:
        for c in offered:
            c.notes.append("reproduction not run: no test session to run it in")
        return []
    results = run([c.finding.reproduce for c in offered if c.finding.reproduce])
    refuted = []
    for c in offered:
        assert c.finding.reproduce is not None
        result = results[key(c.finding.reproduce)]
        if result.status == "did-not-reproduce":
            refuted.append((c, f"did not reproduce: {result.detail}"))
        elif result.status == "pre-existing":
            c.severity = "advisory"
            c.notes.append(f"pre-existing, not a blocker of this target: {result.detail}")
            c.verification = "reproduced"
        elif result.status == "reproduced":
            c.verification = "reproduced"
            c.notes.append(f"reproduced: {result.detail}")
        else:
            c.notes.append(f"reproduction {result.detail}")
    return refuted


def _below_floor(c: Candidate, floors: Mapping[str, float], required: bool) -> None:
    """A blocking finding under its lane's confidence floor (or without a confidence, when
    one is required) is advisory, with a note; never rejected."""
    if c.severity != "blocking":
        return
    confidence = c.finding.confidence
    floor = max((floors[lane] for lane in c.lanes if lane in floors), default=None)
    if confidence is None and required:
        c.severity = "advisory"
        c.notes.append("no confidence given (require_confidence): advisory")
    elif confidence is not None and floor is not None and confidence < floor:
        c.severity = "advisory"
        c.notes.append(f"confidence {confidence:g} is below the floor of {floor:g}: advisory")


UNCHECKED = (
    "neither a quote found at the cited lines nor a reproduction that fails at head: "
    "a model's blocker must be checkable, advisory"
)


def _unchecked(c: Candidate, prompted: Collection[str]) -> None:
    """A model's blocker triage could not check (no quote it found, no reproduction that
    failed at head) is the model's word alone: advisory, with the reason. ``prompted``: the
    lanes told so by the contract they were given (see ``lanes.kinds.PROMPTED``)."""
    if c.severity != "blocking" or not c.lanes & set(prompted):
        return
    if RANK[c.verification] < RANK["quoted"]:
        c.severity = "advisory"
        c.notes.append(UNCHECKED)


def _demote(c: Candidate, scope: Collection[str]) -> None:
    if c.severity == "blocking" and c.finding.category not in BLOCKING_CATEGORIES:
        c.severity = "advisory"
        c.notes.append(f"category {c.finding.category!r} is advisory-only: demoted")
    if c.finding.path not in scope:
        c.severity = "advisory"
        c.notes.append("out-of-scope")


def _reconcile(kept: list[Candidate], answers: Sequence[Answer]) -> list[str]:
    """Apply the verdict lanes' answers to scout findings; what they left unanswered."""
    scouted: dict[str, list[Candidate]] = defaultdict(list)
    for c in kept:
        if c.role == "scout":
            scouted[c.fingerprint].append(c)
    problems = []
    decisions: dict[str, list[tuple[str, Reconciliation]]] = defaultdict(list)
    for answer in answers:
        given = {r.fingerprint: r for r in answer.reconciliation}
        ignored = [where for fp, where in answer.handed.items() if fp not in given]
        if ignored:
            shown = ", ".join(ignored[:10]) + (" ..." if len(ignored) > 10 else "")
            problems.append(
                f"lane {answer.lane!r} did not reconcile {len(ignored)} scout finding(s): {shown}"
            )
        for fp in answer.handed.keys() & given.keys():
            decisions[fp].append((answer.lane, given[fp]))
    for fp, said in decisions.items():
        accepted = [lane for lane, r in said if r.decision == "accepted"]
        dismissed = [(lane, r.reason) for lane, r in said if r.decision == "dismissed"]
        for c in scouted.get(fp, []):
            if accepted:
                c.notes.append(f"accepted by {', '.join(accepted)}")
            for lane, reason in dismissed:
                c.notes.append(f"dismissed by {lane}: {reason}")
            if dismissed and not accepted and RANK[c.verification] < RANK["reproduced"]:
                c.severity = "advisory"
    return problems


def triage(
    raised: Sequence[Raised],
    files: TreeFiles,
    scope: Collection[str],
    reproduce: Reproduce_ | None = None,
    answers: Sequence[Answer] = (),
    require_reproduction: bool = False,
    floors: Mapping[str, float] = {},
    require_confidence: bool = False,
    prompted: Collection[str] = (),
) -> Triaged:
    """Turn the lanes' raw findings into kept (blocking/advisory) and rejected ones
    (``floors``: each lane's confidence floor; ``prompted``: the lanes whose blockers must be
    quoted or reproduced)."""
    out = Triaged()
    kept: list[Candidate] = []
    for item, result in screened(raised, files):
        if isinstance(result, Candidate):
            kept.append(result)
        else:
            out.rejected.append(_rejected(item, result))
    refuted = _reproduce(kept, reproduce)
    for c, reason in refuted:
        lanes = sorted(c.lanes)
        out.rejected.append(
            RejectedFinding(
                reason=reason, lanes=lanes, **c.finding.model_dump(include=FINDING_KEYS)
            )
        )
    gone = {id(c) for c, _ in refuted}
    kept = [c for c in kept if id(c) not in gone]
    for c in kept:
        _demote(c, scope)
        _unchecked(c, prompted)
        _below_floor(c, floors, require_confidence)
    out.problems += _reconcile(kept, answers)
    out.kept_raw = len(kept)
    for c in merged(kept):
        if (
            c.severity == "blocking"
            and require_reproduction
            and RANK[c.verification] < RANK["reproduced"]
        ):
            c.severity = "advisory"
            c.notes.append("not reproduced: require_reproduction makes it advisory")
        report = c.finding.model_copy(
            update={
                "severity": c.severity,
                "fingerprint": c.fingerprint,
                "lanes": sorted(c.lanes),
                "verification": c.verification,
                "note": "; ".join(c.notes) or None,
            }
        )
        (out.blocking if c.severity == "blocking" else out.advisory).append(report)
    return out
