"""A report as Markdown, for pull-request comments and ``$GITHUB_STEP_SUMMARY``: the exact
state first, then what blocks, then the rest; capped below 1 MiB with an "N more omitted" line.
Every untrusted string goes through :func:`escape.markdown`."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..models.report import Report, TestFailure
from .escape import markdown as md
from .escape import markdown_code as code
from .terminal import ADDED, spent, suite_text, tool_of

if TYPE_CHECKING:
    from ..models.finding import ReportFinding

CAP = 1024 * 1024 - 4096  # below GitHub's 1 MiB summary limit, with room for the last line
VERDICT = {"yes": "✅ review clean", "no": "❌ not clean", "indeterminate": "⚠️ indeterminate"}


def _finding(f: ReportFinding) -> str:
    where = code(f"{f.path}:{f.line}")
    note = f" — _{md(f.note)}_" if f.note else ""
    lanes = f" ({md(', '.join(f.lanes))})" if f.lanes else ""
    return f"- {where} **{md(f.category)}**, {f.verification}{lanes}: {md(f.failure_mode)}{note}"


def _added(by_change: bool) -> str:
    """The mark of a waiver the change under review adds itself."""
    return ADDED if by_change else ""


def _where(path: str | None, line: int | None) -> str:
    return f"{path or '-'}:{line or '-'}"


def _failure(f: TestFailure) -> str:
    reason = f" — {md(f.reason)}" if f.reason else ""
    return f"- {code(f.nodeid)}{reason}"


def _lines(report: Report) -> Iterator[str]:
    yield from _summary(report)
    for title, items in _sections(report):
        if items:
            yield ""
            yield f"### {title} ({len(items)})"
            yield from items


def _summary(report: Report) -> Iterator[str]:
    """The verdict, the next action, the statuses, what was reviewed, and why the gate said
    what it said."""
    gate, statuses, target = report.gate, report.statuses, report.target
    yield f"## bounded review: {VERDICT[gate.review_clean]}"
    yield ""
    yield f"**Next action:** {md(report.next_action)}"
    yield ""
    yield "| status | value |"
    yield "| --- | --- |"
    for name, value in dataclasses.asdict(statuses).items():
        yield f"| {name.replace('_', ' ')} | {md(str(value))} |"
    yield ""
    base = md(target.base or "-")
    yield (
        f"Target {code(target.kind)} (base {base}), {code(target.revision)}, "
        f"{len(target.files)} file(s)."
        + (f" {md(target.reason[0].upper() + target.reason[1:])}." if target.reason else "")
    )
    yield (
        f"Authorization {report.authorization}; risk **{report.risk.tier}**; budget "
        f"{report.budget.max_lanes} lane(s), {report.budget.max_repair_loops} repair loop(s); "
        f"loop {report.loop.status}, round {report.loop.round}, "
        f"{report.loop.repair_loops_used} repair loop(s) used."
    )
    if report.usage is not None:
        yield f"Reviewers spent {spent(report.usage)}."
    if report.suite is not None:
        yield f"Suite: {md(suite_text(report.suite))}."
    if report.shard is not None:
        state = "complete" if report.shard.complete else "incomplete"
        yield f"A shard report ({state}): `bounded-review merge` gates the shards together."
    for reason in report.risk.reasons:
        yield f"- risk: {md(reason.rule)}" + (f" ({code(reason.path)})" if reason.path else "")
    if gate.reasons:
        yield ""
        yield "### Why"
        yield from (f"- {md(reason)}" for reason in gate.reasons)


def _sections(report: Report) -> list[tuple[str, list[str]]]:
    """The lists of the report, each with its title, most important first."""
    tests = report.tests
    sections = [
        ("Blocking findings", [_finding(f) for f in report.findings.blocking]),
        ("Target-related test failures", [_failure(f) for f in tests.target_related]),
        ("Unclassified test failures (fail closed)", [_failure(f) for f in tests.unknown]),
    ]
    for check in report.checks:
        new = [
            f"- {code(_where(c.path, c.line))} {md(c.rule)}: {md(c.message)}"
            for c in check.target_related
        ]
        sections.append((f"Check {md(check.name)}: {check.status}", new))
    sections += [
        (
            "Lanes",
            [
                f"- **{md(lane.name)}** [{md(lane.lens)}, {lane.role}]: {lane.status}"
                + (f", model {md(lane.model)}" if lane.model else "")
                + (f", {md(tool_of(lane))}" if lane.tool else "")
                + (f", {spent(lane.usage)}" if lane.usage else "")
                + (f" — {md(lane.note)}" if lane.note else "")
                for lane in report.lanes
            ],
        ),
        ("Advisory findings", [_finding(f) for f in report.findings.advisory]),
        ("Pre-existing test failures (do not block)", [_failure(f) for f in tests.pre_existing]),
        ("Flaky tests", [_failure(f) for f in tests.flaky]),
        (
            "Rejected findings",
            [
                f"- {md(str(f.path))}:{md(str(f.line))} ({md(', '.join(f.lanes))}): {md(f.reason)}"
                for f in report.findings.rejected
            ],
        ),
        (
            "Waived findings",
            [
                f"- {code(_where(f.path, f.line))} {md(f.failure_mode)} ({md(f.category)}) — "
                f"{f.waiver.disposition} waiver by {md(f.waiver.by)}{_added(f.added_by_change)}: "
                f"{md(f.waiver.reason)}"
                for f in report.findings.waived
            ]
            + [
                f"- {code(_where(f.path, f.line))} {md(f.rule)} (check {md(f.check)}) — "
                f"{f.waiver.disposition} waiver by {md(f.waiver.by)}{_added(f.added_by_change)}: "
                f"{md(f.waiver.reason)}"
                for c in report.checks
                for f in c.waived
            ],
        ),
        (
            "Waivers that did not apply",
            [
                f"- {note.state}: {code(note.fingerprint)} ({note.disposition}, by "
                f"{md(note.by)}{_added(note.added_by_change)}): {md(note.why)}"
                for note in report.waivers
            ],
        ),
        ("Blockers fixed since the last round", [f"- {code(fp)}" for fp in report.blockers_fixed]),
        ("Limitations", [f"- {md(item)}" for item in report.limitations]),
    ]
    return sections


CLOSING_ROOM = 100  # bytes kept for the "N more line(s) omitted" line
MARKER = "<!-- bounded-review -->"  # hidden: finds the sticky PR comment to edit


def markdown_report(report: Report, cap: int = CAP) -> str:
    """The report as Markdown of at most ``cap`` bytes (UTF-8), opening with :data:`MARKER`."""
    out: list[str] = [MARKER]
    size = len(MARKER) + 1
    lines = list(_lines(report))
    whole = size + sum(len(line.encode()) + 1 for line in lines)
    room = cap if whole <= cap else cap - CLOSING_ROOM  # the closing line fits in the cap
    for index, line in enumerate(lines):
        cost = len(line.encode()) + 1
        if size + cost > room:
            rest = sum(1 for later in lines[index:] if later.startswith("- "))
            out.append(f"\n_{rest} more line(s) omitted: the JSON report has everything._")
            break
        out.append(line)
        size += cost
    return "\n".join(out) + "\n"
