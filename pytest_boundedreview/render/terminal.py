"""The terminal summary of a report (pytest's summary section and ``bounded-review report``)."""

from __future__ import annotations

from collections.abc import Iterator

from ..models.report import LaneReport, Report, Statuses, SuiteInfo, TestFailure, Usage
from .escape import terminal
from .verdict import verdict

ADDED = ", a waiver the change itself adds"


def _where(path: str | None, line: int | None) -> str:
    return f"{path or '-'}:{line or '-'}"


def _failures(title: str, failures: list[TestFailure]) -> Iterator[str]:
    if not failures:
        return
    yield f"{title} ({len(failures)}):"
    for failure in failures:
        yield f"  {terminal(failure.nodeid)} - {terminal(failure.reason or '')}"


def tool_of(lane: LaneReport) -> str:
    """The reviewing program and its version, naming the program once (unescaped)."""
    tool, version = lane.tool or "", lane.tool_version or ""
    if not version:
        return tool
    return version if tool.lower() in version.lower() else f"{tool} {version}"


def spent(usage: Usage) -> str:
    """What reviewer attempts reported spending, in one line (numbers only: nothing to escape)."""
    parts = []
    if usage.turns is not None:
        parts.append(f"{usage.turns} turn(s)")
    if usage.input_tokens is not None or usage.output_tokens is not None:
        parts.append(f"{usage.input_tokens or 0} in / {usage.output_tokens or 0} out tokens")
    if usage.cost_usd is not None:
        parts.append(f"{usage.cost_usd:.4f} USD")
    return ", ".join(parts) or "nothing reported"


def lines(
    report: Report, exit_status: int | None = None, *, verbose: bool = False
) -> Iterator[str]:
    """The report as plain lines, every untrusted string escaped; the last is the verdict,
    with the exit status it causes when given. Statuses nobody checked show when ``verbose``."""
    yield from _header(report)
    yield from _counts(report)
    yield from _waivers(report)
    yield from _details(report)
    yield from _verdict(report, verbose)
    yield verdict(report, exit_status)


def _header(report: Report) -> Iterator[str]:
    """What was reviewed, under which authorization, risk and budget; the loop; the shard."""
    target = report.target
    yield (
        f"target {target.kind} (base {terminal(target.base or '-')}), {target.revision}, "
        f"{len(target.files)} file(s)" + (" - nothing to review" if target.empty else "")
    )
    if target.reason:
        yield f"  {terminal(target.reason)}"
    risk, budget, loop = report.risk, report.budget, report.loop
    why = "; ".join(terminal(r.rule) for r in risk.reasons[:5])
    yield (
        f"authorization {report.authorization}; risk {risk.tier}"
        + (f" ({why})" if why else "")
        + f"; budget {budget.max_lanes} lane(s), {budget.max_concurrent} at once, "
        f"{budget.max_repair_loops} repair loop(s)"
    )
    if loop.status == "not-started":
        yield "loop: not started" + (f" ({terminal(loop.stop_reason)})" if loop.stop_reason else "")
    else:
        flags = f", flags: {', '.join(loop.flags)}" if loop.flags else ""
        stop = f" ({terminal(loop.stop_reason)})" if loop.stop_reason else ""
        yield (
            f"loop {terminal(loop.loop_id or '-')}: {loop.status}{stop}, round {loop.round}, "
            f"repair loops used {loop.repair_loops_used}/{budget.max_repair_loops}{flags}"
        )
    if report.shard is not None:
        shard = report.shard
        yield (
            f"shard: {'complete' if shard.complete else 'incomplete'}, rootdir "
            f"{terminal(shard.rootdir)}, {shard.deselected} deselected; "
            "`bounded-review merge` gates the shards together"
        )


def _counts(report: Report) -> Iterator[str]:
    """How many tests, checks and findings of each kind."""
    tests = report.tests
    yield (
        f"tests: {tests.passed} passed, {tests.failed} failed; target-related "
        f"{len(tests.target_related)}, pre-existing {len(tests.pre_existing)}, flaky "
        f"{len(tests.flaky)}, unknown {len(tests.unknown)}"
    )
    if report.suite is not None:
        yield "suite: " + terminal(suite_text(report.suite))
    if report.checks:
        counts = {
            state: sum(1 for c in report.checks if c.status == state)
            for state in ("pass", "fail", "not-run")
        }
        yield "checks: " + ", ".join(f"{n} {state}" for state, n in counts.items())
    found = report.findings
    waived = len(found.waived) + sum(len(c.waived) for c in report.checks)
    yield (
        f"findings: {len(found.blocking)} blocking, {len(found.advisory)} advisory, "
        f"{len(found.rejected)} rejected, {waived} waived; blockers fixed since the last "
        f"round: {len(report.blockers_fixed)}"
    )


def _waivers(report: Report) -> Iterator[str]:
    """Each waiver's state, and what the change's own waivers took out of the gate."""
    found = report.findings
    for note in report.waivers:
        yield (
            f"waiver {note.state}: {terminal(note.fingerprint)} ({note.disposition}, by "
            f"{terminal(note.by)}{ADDED if note.added_by_change else ''}): {terminal(note.why)}"
        )
    added = [
        (f.fingerprint, f.waiver.by, _where(f.path, f.line))
        for f in found.waived
        if f.added_by_change
    ]
    added += [
        (f.fingerprint, f.waiver.by, _where(f.path, f.line))
        for c in report.checks
        for f in c.waived
        if f.added_by_change
    ]
    for fingerprint, by, where in added:
        yield f"waived{ADDED}: {terminal(where)} {terminal(fingerprint)} (by {terminal(by)})"


def _details(report: Report) -> Iterator[str]:
    """Each failure, check, finding and lane."""
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
        tool = f", {terminal(tool_of(lane))}" if lane.tool else ""
        cost = f", {spent(lane.usage)}" if lane.usage else ""
        yield (
            f"lane {terminal(lane.name)} [{terminal(lane.lens)}]: {lane.status}{model}{tool}{cost}"
            + (f" - {terminal(lane.note)}" if lane.note else "")
        )


def _verdict(report: Report, verbose: bool) -> Iterator[str]:
    """What the reviewers spent, the limitations, the statuses, the gate's reasons, the next
    action (the verdict line itself follows)."""
    if report.usage:
        yield f"reviewers spent: {spent(report.usage)}"
    for limitation in report.limitations:
        yield f"limitation: {terminal(limitation)}"
    yield "status: " + ", ".join(status_items(report, verbose))
    gate = report.gate
    if gate.reasons:
        yield f"why the gate says {gate.review_clean}:"
    for reason in gate.reasons:
        yield f"  {terminal(reason)}"
    yield f"next action: {terminal(report.next_action)}"


_STATUS_NAMES = (
    ("local_verification", "local verification"),
    ("review_clean", "review clean"),
    ("pr_ci", "PR/CI"),
    ("committed", "committed"),
    ("merged", "merged"),
    ("deployed", "deployed"),
    ("production_verified", "production verified"),
)


def status_items(report: Report, verbose: bool = False) -> list[str]:
    """Each status as ``name value``: those nobody checked only when ``verbose``; a partial
    local verification says what made it partial."""
    statuses: Statuses = report.statuses
    items = []
    for key, name in _STATUS_NAMES:
        value = str(getattr(statuses, key))
        if value == "not-checked" and not verbose:
            continue
        if key == "local_verification" and value == "partial":
            value += f" ({partial_why(report)})"
        items.append(f"{name} {value}")
    return items


def partial_why(report: Report) -> str:
    """Why local verification is partial rather than passed: failures that are not the
    change's, checks that did not run, or tests the session left out (numbers only)."""
    tests = report.tests
    parts = [
        (len(tests.pre_existing), "pre-existing failure(s)"),
        (len(tests.flaky), "flaky test(s)"),
        (sum(1 for c in report.checks if c.status == "not-run"), "check(s) not run"),
        (sum(1 for c in report.checks if c.pre_existing), "check(s) with pre-existing findings"),
        (report.suite.left_out_total if report.suite else 0, "left out of the suite"),
    ]
    why = ", ".join(f"{n} {what}" for n, what in parts if n)
    return why or "part of the suite or its checks did not run"


def suite_text(suite: SuiteInfo) -> str:
    """What defined the suite and, for a partial run, what it left out (raw text)."""
    text = "defined by " + "; ".join(suite.defined_by)
    if suite.left_out_total:
        more = suite.left_out_total - len(suite.left_out)
        text += f"; left out: {', '.join(suite.left_out)}" + (f" and {more} more" if more else "")
    return text
