"""Field-by-field checks of one raw finding, and its location in the snapshot."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from pydantic import ValidationError

from ..change.trees.treefiles import TreeFiles
from ..core.validation import describe_all
from ..models.finding import Finding, ReportFinding
from .paths import normalised, path_problem

MAX_LINE = 10**9
REQUIRED = ("failure_mode", "evidence", "remediation")


def _blank(value: object) -> bool:
    return not value or (isinstance(value, str) and not value.strip())


def _line_problem(key: str, value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        shown = repr(_short(value, 40))
        return f"{key} must be a positive integer, not {type(value).__name__} {shown}"
    if value < 1:
        return f"{key} must be a positive integer (got {value})"
    if value > MAX_LINE:
        return f"{key} is out of range"
    return None


TRIAGE_KEYS = ("fingerprint", "lanes", "verification", "note")  # triage's to set, not a lane's


def checked(raw: object) -> tuple[ReportFinding | None, list[str]]:
    """The finding ``raw`` describes (with triage's own keys still to be set), or every reason
    it is not one."""
    if not isinstance(raw, dict):
        return None, [f"a finding must be a JSON object, not {type(raw).__name__}"]
    reasons = []
    if "path" not in raw or "line" not in raw:
        reasons.append("missing location (`path` and `line` are required)")
    if "path" in raw and (problem := path_problem(raw["path"])):
        reasons.append(problem)
    for key in ("line", "end_line"):
        if raw.get(key) is not None and (problem := _line_problem(key, raw[key])):
            reasons.append(problem)
    reasons += [f"missing {key}" for key in REQUIRED if _blank(raw.get(key))]
    reasons += [f"{key}: unknown key" for key in TRIAGE_KEYS if key in raw]
    reproduce = raw.get("reproduce")
    if isinstance(reproduce, dict) and isinstance(reproduce.get("pytest"), str):
        test_file = reproduce["pytest"].split("::", 1)[0]
        if problem := path_problem(test_file):
            reasons.append(f"reproduce.pytest: {problem.replace('path', 'test path', 1)}")
    if reasons:
        return None, reasons
    pending = {"fingerprint": "pending", "verification": "evidence"}
    try:
        finding = ReportFinding.model_validate({**raw, "path": normalised(raw["path"]), **pending})
    except ValidationError as exc:
        return None, describe_all(exc)
    return finding, []


def located(finding: Finding, files: TreeFiles) -> tuple[str, list[str]] | str:
    """The file ``finding`` cites (symlinks resolved) and its lines, or why its location is
    not in the snapshot. An ``end_line`` one past the last line passes when the finding has a
    quote (a reviewer counting the diff's final newline as a line): the quote decides, and a
    found one has its range clamped (see ``triage.steps.candidate``)."""
    real = files.resolve(finding.path)
    if real is None:
        if finding.path in files:
            return "path is a symlink leading outside the snapshot, a folder or a submodule"
        return "no such file in the reviewed snapshot (or a symlink leading outside it)"
    lines = files.lines(real)
    if lines is None:
        return "not a text file: lines cannot be cited"
    last = finding.end_line or finding.line
    slack = 1 if finding.quote is not None and finding.end_line is not None else 0
    if finding.line > len(lines) or last > len(lines) + slack:
        return outside(last, len(lines))
    return real, lines


def outside(line: int, count: int) -> str:
    """The reason a cited line is not in a file of ``count`` lines."""
    return f"line {line} is outside the file ({count} lines)"


MAX_LOCATED = 200  # lines of a cited range that make its fingerprint


def text_at(lines: list[str], line: int, end_line: int | None) -> str:
    """The cited lines (at most ``MAX_LOCATED`` of them), joined."""
    last = min(end_line or line, line + MAX_LOCATED - 1)
    return "\n".join(lines[line - 1 : last])


def raw_fields(raw: Any) -> dict[str, Any]:
    """The known fields of a rejected finding, shortened, for the report."""
    if not isinstance(raw, dict):
        return {"evidence": _short(raw)}
    known = Finding.model_fields
    return {k: _short(v) for k, v in raw.items() if k in known}


def _short(value: Any, limit: int = 2000) -> Any:
    if isinstance(value, str):
        return value if len(value) <= limit else value[:limit] + "…"
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if abs(value) <= 2**63 else f"<integer of {value.bit_length()} bits>"
    if isinstance(value, (list, dict)):
        with contextlib.suppress(ValueError, TypeError, RecursionError):
            if len(json.dumps(value)) <= limit:
                return value
        return f"<{'array' if isinstance(value, list) else 'object'} of {len(value)} item(s)>"
    return repr(value)[:limit]
