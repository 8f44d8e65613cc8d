"""A report as a SARIF 2.1.0 log: one run per source (the tests, each check, the built-in
scans, each lane), results with stable ``partialFingerprints`` and a ``baselineState``;
pre-existing results are carried with a suppression rather than dropped."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from ..models.report import Report, TestFailure

if TYPE_CHECKING:
    from ..models.finding import CheckFinding, ReportFinding
    from ..models.waiver import Waiver

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
BASE_ID = "SRCROOT"
INFO_URI = "https://pypi.org/project/pytest-boundedreview/"
PRE_EXISTING = [{"kind": "external", "justification": "pre-existing: fails the same at the base"}]


def _uri(path: str) -> str:
    return quote(path.replace("\\", "/"), safe="/")


def _location(path: str | None, line: int | None = None, end: int | None = None) -> list[Any]:
    if not path:
        return []
    physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path), "uriBaseId": BASE_ID}}
    if line is not None and line >= 1:  # a tool's line 0 or -1 is no region at all
        region = {"startLine": line}
        if end is not None and end >= line:
            region["endLine"] = end
        physical["region"] = region
    return [{"physicalLocation": physical}]


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:20]


def _run(name: str, version: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    rules = sorted({r["ruleId"] for r in results})
    return {
        "tool": {
            "driver": {
                "name": name,
                "version": version,
                "informationUri": INFO_URI,
                "rules": [{"id": rule} for rule in rules],
            }
        },
        "originalUriBaseIds": {BASE_ID: {"description": {"text": "the repository root"}}},
        "columnKind": "unicodeCodePoints",
        "results": results,
    }


def _test(failure: TestFailure, level: str, state: str, rule: str) -> dict[str, Any]:
    text = f"{failure.nodeid}: {failure.reason or rule}"
    if failure.signature:
        text += f" ({failure.signature})"
    result: dict[str, Any] = {
        "ruleId": rule,
        "level": level,
        "message": {"text": text},
        "locations": _location(failure.nodeid.split("::", 1)[0]),
        "partialFingerprints": {
            "boundedReview/test/v1": _digest(failure.nodeid, failure.signature)
        },
        "baselineState": state,
    }
    if state == "unchanged":
        result["suppressions"] = PRE_EXISTING
    return result


def _check(finding: CheckFinding, new: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": finding.rule or "check",
        "level": "error" if new else "note",
        "message": {"text": finding.message or finding.rule},
        "locations": _location(finding.path, finding.line),
        "partialFingerprints": {"boundedReview/check/v1": finding.fingerprint},
        "baselineState": "new" if new else "unchanged",
    }
    if not new:
        result["suppressions"] = PRE_EXISTING
    return result


def _finding(finding: ReportFinding) -> dict[str, Any]:
    pre_existing = (finding.note or "").startswith("pre-existing")
    text = f"{finding.failure_mode} — {finding.evidence} Remediation: {finding.remediation}"
    result: dict[str, Any] = {
        "ruleId": finding.category,
        "level": "error" if finding.severity == "blocking" else "warning",
        "message": {"text": text},
        "locations": _location(finding.path, finding.line, finding.end_line),
        "partialFingerprints": {"boundedReview/finding/v1": finding.fingerprint},
        "baselineState": "unchanged" if pre_existing else "new",
        "properties": {"verification": finding.verification, "lanes": finding.lanes},
    }
    if pre_existing:
        result["suppressions"] = PRE_EXISTING
    return result


def _waived(result: dict[str, Any], waiver: Waiver) -> dict[str, Any]:
    """``result`` carried with the accepted, typed disposition that took it out of the gate."""
    why = f"waived ({waiver.disposition}) by {waiver.by}: {waiver.reason}"
    if waiver.expires:
        why += f" (until {waiver.expires.isoformat()})"
    suppression = {"kind": "external", "status": "accepted", "justification": why}
    return {**result, "suppressions": [suppression]}


def sarif(report: Report) -> dict[str, Any]:
    """The SARIF log of ``report``."""
    version = report.tool_version
    tests = report.tests
    test_results = [
        *(_test(f, "error", "new", "target-related-failure") for f in tests.target_related),
        *(_test(f, "error", "new", "unclassified-failure") for f in tests.unknown),
        *(_test(f, "note", "unchanged", "pre-existing-failure") for f in tests.pre_existing),
        *(_test(f, "note", "new", "flaky-test") for f in tests.flaky),
    ]
    runs = [_run("bounded-review tests", version, test_results)]
    for check in report.checks:
        results = [_check(f, True) for f in check.target_related]
        results += [_check(f, False) for f in check.pre_existing]
        results += [_waived(_check(f, True), f.waiver) for f in check.waived]
        runs.append(_run(f"bounded-review check {check.name}", version, results))
    waived = report.findings.waived
    found = [*report.findings.blocking, *report.findings.advisory, *waived]

    def result(finding: ReportFinding) -> dict[str, Any]:
        from ..models.waiver import WaivedFinding  # a finding exists: the models are loaded

        shown = _finding(finding)
        return _waived(shown, finding.waiver) if isinstance(finding, WaivedFinding) else shown

    scans = [result(f) for f in found if not f.lanes]
    runs.append(_run("bounded-review scans", version, scans))
    for lane in report.lanes:
        results = [result(f) for f in found if lane.name in f.lanes]
        runs.append(_run(f"bounded-review lane {lane.name}", version, results))
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": runs}
