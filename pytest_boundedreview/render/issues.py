"""A report's findings as one flat list, for the formats code review platforms read (GitLab
Code Quality, reviewdog): what blocks, what advises and what was there before, each with its
place, a rule and a fingerprint that stays the same from run to run. Waived and rejected
findings are left out; the report, SARIF and the summary keep them. The text is untrusted and
unescaped: each format escapes it as its platform shows it."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from ..models.record import record
from ..models.report import Report, TestFailure

if TYPE_CHECKING:
    from ..models.finding import CheckFinding, ReportFinding

Level = Literal["blocking", "advisory", "pre-existing"]


@record(frozen=True)
class Issue:
    level: Level
    rule: str  # "test/target-related", "check/ruff/F401", "finding/correctness"
    message: str
    path: str | None
    line: int | None  # 1-based; ``None`` for a whole file
    end_line: int | None
    fingerprint: str


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _test(failure: TestFailure, level: Level, kind: str) -> Issue:
    text = f"{failure.nodeid}: {failure.reason or kind}"
    if failure.signature:
        text += f" ({failure.signature})"
    path = failure.nodeid.split("::", 1)[0]
    return Issue(level, f"test/{kind}", text, path, None, None, _digest(kind, failure.nodeid))


def _finding(finding: ReportFinding, level: Level) -> Issue:
    text = f"{finding.failure_mode}: {finding.evidence} Remediation: {finding.remediation}"
    return Issue(
        level,
        f"finding/{finding.category}",
        text,
        finding.path,
        finding.line,
        finding.end_line,
        _digest("finding", level, finding.fingerprint),
    )


def _check(name: str, finding: CheckFinding, level: Level) -> Issue:
    line = finding.line if finding.line is not None and finding.line >= 1 else None
    return Issue(
        level,
        f"check/{name}/{finding.rule}",
        f"{finding.rule}: {finding.message}",
        finding.path,
        line,
        None,
        _digest("check", name, finding.fingerprint, level),
    )


def issues(report: Report) -> Iterator[Issue]:
    """Every issue of ``report``, blockers first, each with its own fingerprint: a second
    issue with the same one (the same text at two places, say) gets its occurrence number."""
    seen: dict[str, int] = {}
    for issue in _all(report):
        count = seen.get(issue.fingerprint, 0)
        seen[issue.fingerprint] = count + 1
        if count:
            issue = dataclasses.replace(issue, fingerprint=_digest(issue.fingerprint, str(count)))
        yield issue


def _all(report: Report) -> Iterator[Issue]:
    tests = report.tests
    for finding in report.findings.blocking:
        yield _finding(finding, "blocking")
    yield from (_test(t, "blocking", "target-related") for t in tests.target_related)
    yield from (_test(t, "blocking", "unknown") for t in tests.unknown)
    for check in report.checks:
        level: Level = "blocking" if check.required else "advisory"
        yield from (_check(check.name, c, level) for c in check.target_related)
    for finding in report.findings.advisory:
        before = (finding.note or "").startswith("pre-existing")
        yield _finding(finding, "pre-existing" if before else "advisory")
    yield from (_test(t, "advisory", "flaky") for t in tests.flaky)
    yield from (_test(t, "pre-existing", "pre-existing") for t in tests.pre_existing)
    for check in report.checks:
        yield from (_check(check.name, c, "pre-existing") for c in check.pre_existing)
