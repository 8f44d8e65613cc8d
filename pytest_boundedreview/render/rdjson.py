"""A report in reviewdog's diagnostic format (rdjson, the ``DiagnosticResult`` message), so
``reviewdog -f=rdjson -reporter=github-pr-review`` (or gitlab-mr-discussion, bitbucket,
gitea) posts each finding as a review comment: blockers ``ERROR``, advice ``WARNING``, what was
there before ``INFO``. Review comments are Markdown: messages are escaped as inert Markdown."""

from __future__ import annotations

from typing import Any

from ..models.report import Report
from .escape import identifier, markdown
from .issues import issues

SEVERITY = {"blocking": "ERROR", "advisory": "WARNING", "pre-existing": "INFO"}
SOURCE = {"name": "bounded-review", "url": "https://pypi.org/project/pytest-boundedreview/"}


def rdjson(report: Report) -> dict[str, Any]:
    """The rdjson document of ``report``; an issue with no file has no place in it."""
    diagnostics = []
    for issue in issues(report):
        if not issue.path:
            continue
        location: dict[str, Any] = {"path": issue.path}
        if issue.line is not None:
            location["range"] = {"start": {"line": issue.line}}
            if issue.end_line is not None and issue.end_line > issue.line:
                location["range"]["end"] = {"line": issue.end_line}
        diagnostics.append(
            {
                "message": markdown(issue.message),
                "location": location,
                "severity": SEVERITY[issue.level],
                "code": {"value": identifier(issue.rule)},
            }
        )
    return {"source": SOURCE, "diagnostics": diagnostics}
