"""Findings of configured checks: SARIF and GNU-style output, and drift-resistant fingerprints.

A fingerprint is the rule, the path, the normalised text of the flagged line and the
occurrence index among identical (rule, path, text) triples — not the line number, so a
finding whose line moved keeps its fingerprint, and a second identical finding gets a new one.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from ..core import strictjson
from ..core.errors import FatalError
from ..models.finding import CheckFinding
from ..models.record import record


class CheckOutputError(FatalError):
    """A check's output is not in the format its configuration names."""


@record(frozen=True)
class RawFinding:
    rule: str
    path: str | None
    line: int | None
    message: str


_GNU = re.compile(
    r"^(?P<path>[^\s:][^:\n]*):(?P<line>\d{1,9})(?::(?P<col>\d{1,9}))?:\s*(?P<msg>.*\S)\s*$"
)
SARIF_MAX_BYTES = 64 * 1024 * 1024
SARIF_MAX_DEPTH = 256
MAX_SOURCE_BYTES = 16 * 1024 * 1024  # a flagged file larger than this is not read for its line
_CODE_SUFFIX = re.compile(r"\[(?P<code>[A-Za-z0-9_.-]+)\]\s*$")
_CODE_PREFIX = re.compile(r"^(?P<code>[A-Z]{1,4}\d{1,5})\b")
_LEVEL_PREFIX = re.compile(r"^(?P<level>error|warning|note|info)\s*:\s*", re.IGNORECASE)


def relative(path: str, root: Path) -> str:
    """A reported path relative to ``root`` (``file://`` URIs and absolute paths included)."""
    if path.startswith("file:"):
        path = unquote(urlparse(path).path)
    candidate = Path(path)
    if candidate.is_absolute():
        for base in (root, root.resolve()):
            try:
                return candidate.relative_to(base).as_posix()
            except ValueError:
                continue
        return candidate.as_posix()
    return Path(path).as_posix().removeprefix("./")


def parse_gnu(text: str, root: Path) -> list[RawFinding]:
    """``path:line[:col]: message`` lines (mypy, flake8, pylint --output-format=parseable);
    notes and lines of other shapes are ignored."""
    findings = []
    for line in text.splitlines():
        match = _GNU.match(line)
        if not match:
            continue
        message = match["msg"]
        level = _LEVEL_PREFIX.match(message)
        if level and level["level"].lower() == "note":
            continue
        code = _CODE_SUFFIX.search(message) or _CODE_PREFIX.match(message)
        rule = code["code"] if code else (level["level"].lower() if level else "finding")
        findings.append(
            RawFinding(rule, relative(match["path"], root), int(match["line"]), message)
        )
    return findings


def _get(node: Any, *keys: str | int) -> Any:
    for key in keys:
        if isinstance(key, int):
            node = node[key] if isinstance(node, list) and len(node) > key else None
        else:
            node = node.get(key) if isinstance(node, dict) else None
    return node


def parse_sarif(data: bytes, root: Path) -> list[RawFinding]:
    """Results of every run of a SARIF log."""
    try:  # a tool's output is untrusted: no recursion bomb, NaN or duplicate keys
        log = strictjson.loads(data, max_bytes=SARIF_MAX_BYTES, max_depth=SARIF_MAX_DEPTH)
    except strictjson.StrictJSONError as exc:
        raise CheckOutputError(f"output is not SARIF JSON: {exc}") from exc
    runs = _get(log, "runs")
    if not isinstance(runs, list):
        raise CheckOutputError("output is not a SARIF log: no `runs` list")
    findings = []
    for number, run in enumerate(runs, 1):
        results = _get(run, "results")
        if results is not None and not isinstance(results, list):
            raise CheckOutputError(
                f"output is not a SARIF log: `results` of run {number} is not a list"
            )
        for result in results or []:
            physical = _get(result, "locations", 0, "physicalLocation")
            uri = _get(physical, "artifactLocation", "uri")
            line = _get(physical, "region", "startLine")
            message = _get(result, "message", "text") or _get(result, "message", "id") or ""
            findings.append(
                RawFinding(
                    rule=str(_get(result, "ruleId") or _get(result, "rule", "id") or "finding"),
                    path=relative(uri, root) if isinstance(uri, str) else None,
                    line=line if isinstance(line, int) and not isinstance(line, bool) else None,
                    message=str(message),
                )
            )
    return findings


def _read_lines(root: Path, path: str) -> list[str]:
    """The lines of ``path`` when it is a regular file inside ``root`` of at most
    :data:`MAX_SOURCE_BYTES`; a tool's output may name anything (``/dev/zero``, ``../x``, a NUL),
    and none of that is read."""
    try:
        resolved = (root / path).resolve()
        if not resolved.is_relative_to(root.resolve()) or not resolved.is_file():
            return []
        if resolved.stat().st_size > MAX_SOURCE_BYTES:
            return []
        return resolved.read_text(encoding="utf-8", errors="replace").splitlines()
    except (OSError, ValueError):
        return []


def _line_text(root: Path, path: str | None, line: int | None, cache: dict[str, list[str]]) -> str:
    if path is None or line is None:
        return ""
    if path not in cache:
        cache[path] = _read_lines(root, path)
    lines = cache[path]
    return " ".join(lines[line - 1].split()) if 0 < line <= len(lines) else ""


def fingerprinted(
    findings: Sequence[RawFinding],
    root: Path,
    added: Callable[[str, int], bool] | None = None,
) -> list[CheckFinding]:
    """Attach drift-resistant fingerprints, reading flagged lines from the tree at ``root``.

    Identical findings are numbered in line order, except that findings on lines the change
    added (``added``) come last: when head has one more than the base, the extra one is the
    one the change added.
    """
    seen: Counter[tuple[str, str, str]] = Counter()
    cache: dict[str, list[str]] = {}
    result = []

    def order(f: RawFinding) -> tuple[bool, str, int, str]:
        new = (
            added is not None
            and f.path is not None
            and f.line is not None
            and added(f.path, f.line)
        )
        return (new, f.path or "", f.line or 0, f.rule)

    for finding in sorted(findings, key=order):
        text = _line_text(root, finding.path, finding.line, cache)
        if not text:  # no line to anchor on: fall back to the message without numbers
            text = re.sub(r"\d+", "N", finding.message)
        triple = (finding.rule, finding.path or "", text)
        index = seen[triple]
        seen[triple] += 1
        digest = hashlib.sha256("\0".join([*triple, str(index)]).encode()).hexdigest()[:20]
        result.append(
            CheckFinding(
                rule=finding.rule,
                path=finding.path,
                line=finding.line,
                message=finding.message,
                fingerprint=digest,
            )
        )
    return sorted(result, key=lambda f: (f.path or "", f.line or 0, f.rule))
