"""The terminal summary of a report (pytest's summary section and ``bounded-review report``)."""

from __future__ import annotations

from collections.abc import Iterator

from ..models.report import Report, TestFailure
from .escape import terminal


def _failures(title: str, failures: list[TestFailure]) -> Iterator[str]:
    if not failures:
        return
    yield f"{title} ({len(failures)}):"
    for failure in failures:
        yield f"  {terminal(failure.nodeid)} - {terminal(failure.reason or '')}"


def lines(report: Report) -> Iterator[str]:
    """The report as plain lines, most important first; every untrusted string escaped."""
    target = report.target
    yield (
        f"target {target.kind} (base {terminal(target.base or '-')}), {target.revision}, "
        f"{len(target.files)} file(s)" + (" - nothing to review" if target.empty else "")
    )
    tests = report.tests
    yield from _failures("target-related failures (block)", tests.target_related)
    yield from _failures("pre-existing failures (do not block)", tests.pre_existing)
    yield from _failures("flaky (advisory)", tests.flaky)
    yield from _failures("unknown failures (fail closed)", tests.unknown)
    for check in report.checks:
        state = check.status + ("" if check.required else ", not required")
        yield f"check {terminal(check.name)}: {state}" + (
            f" - {terminal(check.detail)}" if check.detail else ""
        )
        for new in check.target_related[:10]:
            where = f"{terminal(new.path or '-')}:{new.line or '-'}"
            yield f"  new: {where} {terminal(new.rule)} {terminal(new.message)}"
    for severity, findings in (
        ("blocking", report.findings.blocking),
        ("advisory", report.findings.advisory),
    ):
        for finding in findings:
            yield (
                f"{severity}: {terminal(finding.path)}:{finding.line} "
                f"{terminal(finding.failure_mode)} ({terminal(finding.note or finding.category)})"
            )
    for lane in report.lanes:
        model = f", model {terminal(lane.model)}" if lane.model else ""
        yield (
            f"lane {terminal(lane.name)} [{terminal(lane.lens)}]: {lane.status}{model}"
            + (f" - {terminal(lane.note)}" if lane.note else "")
        )
    for limitation in report.limitations:
        yield f"limitation: {terminal(limitation)}"
    gate = report.gate
    yield f"review_clean: {gate.review_clean}"
    for reason in gate.reasons:
        yield f"  {terminal(reason)}"
    yield f"next action: {terminal(report.next_action)}"
