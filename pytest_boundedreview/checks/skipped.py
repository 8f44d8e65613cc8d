"""Newly skipped by outcome: a test the session skipped (or xfailed) that passes at the base is
a finding with the ``skip_added`` severity, however the skip was made — a marker, an aliased
one, ``pytest.importorskip``, ``unittest.SkipTest``, a conftest hook, a condition the change
made true."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..baseline.suite import testdefs
from ..core.fingerprint import finding_fingerprint

if TYPE_CHECKING:
    from ..baseline.suite.narrowing import Change
    from ..models import TestFailure
    from ..models.finding import ReportFinding


def newly_skipped(
    tests: Sequence[TestFailure], level: str, change: Change | None
) -> list[ReportFinding]:
    """A finding of ``level`` (``blocking`` or ``advisory``; ``off``: none) for each test in
    ``tests`` (skipped at head, passing at the base), at its definition in the change's
    tree."""
    if level == "off" or not tests or change is None:
        return []
    from ..models.finding import ReportFinding

    found = []
    base = change.base_commit[:12]
    moved = change.renamed()
    for test in tests:
        file = test.nodeid.split("::", 1)[0]
        path = change.path_of(moved.get(file, file))  # a file renamed: where it is now
        source = change.head(path)
        at = testdefs.line(source, test.nodeid) if source is not None else None
        found.append(
            ReportFinding(
                path=path,
                line=at or 1,
                severity=level,  # type: ignore[arg-type]
                category="regression",
                failure_mode=f"test {test.nodeid} is skipped after the change",
                evidence=(
                    f"re-run at base {base}: passed; in this session: skipped or xfailed "
                    f"({test.reason})"
                ),
                remediation="fix what the test finds instead of skipping it, or say in the "
                "change why it no longer applies (a waiver)",
                fingerprint=finding_fingerprint(path, "regression", f"skipped:{test.nodeid}"),
                verification="deterministic",
                note="scan: skip_added (by outcome)",
            )
        )
    return found
