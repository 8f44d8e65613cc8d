"""A report as a GitLab Code Quality report (the Code Climate issue format GitLab reads from
``artifacts:reports:codequality``): one issue per finding, test failure or check finding with
a place, blockers ``critical``, advice ``minor``, what was there before ``info``. GitLab shows
the description as plain text: hidden and control characters are made visible."""

from __future__ import annotations

from typing import Any

from ..models.report import Report
from .escape import identifier, terminal
from .issues import issues

SEVERITY = {"blocking": "critical", "advisory": "minor", "pre-existing": "info"}


def codeclimate(report: Report) -> list[dict[str, Any]]:
    """The Code Quality issues of ``report``; an issue with no file has no place in it."""
    return [
        {
            "type": "issue",
            "description": terminal(issue.message),
            "check_name": identifier(issue.rule),
            "fingerprint": issue.fingerprint,
            "severity": SEVERITY[issue.level],
            "location": {"path": issue.path, "lines": {"begin": issue.line or 1}},
        }
        for issue in issues(report)
        if issue.path
    ]
