"""A report as GitHub Actions workflow commands: ``::error``/``::warning`` annotations with
file and line, blockers first, at most 10 per level and 50 in all, then one notice saying how
many more the summary holds. Reviewer text is printed only inside ``::stop-commands::``."""

from __future__ import annotations

from collections.abc import Iterator

from ..models.report import Report
from .escape import workflow_data, workflow_property

PER_LEVEL = 10
TOTAL = 50


def _command(level: str, message: str, path: str | None, line: int | None, title: str) -> str:
    props = []
    if path:
        props.append(f"file={workflow_property(path)}")
        if line:
            props.append(f"line={line}")
    props.append(f"title={workflow_property(title)}")
    return f"::{level} {','.join(props)}::{workflow_data(message)}"


def _candidates(report: Report) -> Iterator[tuple[str, str, str | None, int | None, str]]:
    for f in report.findings.blocking:
        yield (
            "error",
            f"{f.failure_mode} ({f.verification})",
            f.path,
            f.line,
            f"blocker: {f.category}",
        )
    for t in [*report.tests.target_related, *report.tests.unknown]:
        yield (
            "error",
            f"{t.nodeid}: {t.reason or 'fails'}",
            t.nodeid.split("::", 1)[0],
            None,
            "test failure",
        )
    for check in report.checks:
        if check.required:
            for c in check.target_related:
                yield "error", f"{c.rule}: {c.message}", c.path, c.line, f"check {check.name}"
    for f in report.findings.advisory:
        yield (
            "warning",
            f"{f.failure_mode} ({f.verification})",
            f.path,
            f.line,
            f"advisory: {f.category}",
        )
    for t in report.tests.flaky:
        yield "warning", f"{t.nodeid}: flaky", t.nodeid.split("::", 1)[0], None, "flaky test"


def workflow_commands(report: Report, token: str | None = None) -> list[str]:
    """The workflow command lines for ``report`` (``token``: the stop-commands token)."""
    out: list[str] = []
    per_level: dict[str, int] = {}
    skipped = 0
    for level, message, path, line, title in _candidates(report):
        if per_level.get(level, 0) >= PER_LEVEL or len(out) >= TOTAL:
            skipped += 1
            continue
        per_level[level] = per_level.get(level, 0) + 1
        out.append(_command(level, message, path, line, title))
    if skipped:
        out.append(f"::notice title=bounded review::{skipped} more finding(s) are in the summary")
    verdict = f"review_clean {report.gate.review_clean}: {report.next_action}"
    out.append(f"::notice title=bounded review::{workflow_data(verdict)}")
    rationales = [f"lane {lane.name}: {lane.rationale}" for lane in report.lanes if lane.rationale]
    if rationales:
        import secrets  # only for a multi-line value

        token = token or secrets.token_hex(16)
        out.append(f"::stop-commands::{token}")
        out += [workflow_data(text).replace("%0A", " ") for text in rationales]
        out.append(f"::{token}::")
    return out
