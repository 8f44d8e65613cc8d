"""Every output format of a report, by name (``bounded-review report --format``)."""

from __future__ import annotations

import json

from ..models.plain import dumps
from ..models.report import Report
from .codeclimate import codeclimate
from .github import workflow_commands
from .markdown import markdown_report
from .rdjson import rdjson
from .sarif import sarif
from .terminal import lines

FORMATS = ("text", "json", "markdown", "sarif", "github", "codeclimate", "rdjson")


def render(report: Report, fmt: str) -> str:
    """``report`` in format ``fmt`` (one of :data:`FORMATS`), ending with a newline."""
    if fmt == "json":
        return dumps(report, indent=2) + "\n"
    if fmt == "markdown":
        return markdown_report(report)
    if fmt == "sarif":
        return json.dumps(sarif(report), indent=2) + "\n"
    if fmt == "codeclimate":
        return json.dumps(codeclimate(report), indent=2, ensure_ascii=False) + "\n"
    if fmt == "rdjson":
        return json.dumps(rdjson(report), indent=2, ensure_ascii=False) + "\n"
    if fmt == "github":
        return "\n".join(workflow_commands(report)) + "\n"
    return "\n".join(lines(report)) + "\n"
