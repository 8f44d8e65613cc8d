"""Every output format of a report, by name (``bounded-review report --format``)."""

from __future__ import annotations

import json

from ..models.plain import dumps
from ..models.report import Report

FORMATS = ("text", "json", "markdown", "sarif", "github", "codeclimate", "rdjson")


def render(report: Report, fmt: str) -> str:
    """``report`` in format ``fmt`` (one of :data:`FORMATS`), ending with a newline. Each
    format's module is imported when asked for: a session writes its JSON alone, unless
    told otherwise."""
    if fmt == "json":
        return dumps(report, indent=2) + "\n"
    if fmt == "markdown":
        from .markdown import markdown_report

        return markdown_report(report)
    if fmt == "sarif":
        from .sarif import sarif

        return json.dumps(sarif(report), indent=2) + "\n"
    if fmt == "codeclimate":
        from .codeclimate import codeclimate

        return json.dumps(codeclimate(report), indent=2, ensure_ascii=False) + "\n"
    if fmt == "rdjson":
        from .rdjson import rdjson

        return json.dumps(rdjson(report), indent=2, ensure_ascii=False) + "\n"
    if fmt == "github":
        from .github import workflow_commands

        return "\n".join(workflow_commands(report)) + "\n"
    from .terminal import lines

    return "\n".join(lines(report)) + "\n"
