"""Built-in scans of the added lines of a change; each finding is verified by construction.

Conflict markers, secrets and report-altering hooks (``hookscan.py``) block by default; debugger
calls, skip/xfail newly added to a test that exists at the base, and deleted test functions are
advisory (``[tool.bounded-review.scans]``
sets each to ``blocking``, ``advisory`` or ``off``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..change import git
from ..change.freeze import Target
from ..change.scope import FileChange
from ..core.fingerprint import finding_fingerprint
from ..core.redaction import SCAN_PATTERN
from ..models.record import record
from . import hookscan

if TYPE_CHECKING:
    from ..models.finding import ReportFinding


@record(frozen=True)
class LineRule:
    name: str
    category: str
    pattern: re.Pattern[str]
    failure_mode: str
    remediation: str
    show_text: bool = True


LINE_RULES = (
    LineRule(
        "conflict_markers",
        "correctness",
        re.compile(r"^(?:<{7}|>{7}|\|{7})(?: |$)"),
        "merge-conflict marker left in the file",
        "resolve the conflict and remove the marker lines",
    ),
    LineRule(
        "secrets",
        "security",
        re.compile(SCAN_PATTERN),  # the formats failures are scrubbed of, too
        "a private key or access token is added to the repository",
        "remove it, rotate the credential, and load it from the environment or a secret store",
        show_text=False,
    ),
    LineRule(
        "debugger",
        "correctness",
        re.compile(
            r"(?<!def )\bbreakpoint\(|\b(?:i?pdb|pudb)\.set_trace\(|^\s*import i?pdb\b"
            r"|__import__\(\s*['\"](?:i?pdb|pudb)['\"]\s*\)"
        ),
        "a debugger call is left in the code",
        "remove the debugger call",
    ),
)
_CONFLICT_EDGE = LINE_RULES[0].pattern
_MIDDLE = (
    "correctness",
    LINE_RULES[0].failure_mode,
    LINE_RULES[0].remediation,
    "conflict_markers",
)
_SKIP = re.compile(
    r"@(?:pytest\.)?mark\.(?:skip|skipif|xfail)\b|\bpytest\.(?:skip|xfail)\(|@(?:unittest\.)?skip|"
    r"^\s*pytestmark\s*=.*\b(?:skip|skipif|xfail)\b"
)


def _finding(
    path: str,
    line: int,
    text: str,
    severity: str,
    category: str,
    failure_mode: str,
    remediation: str,
    rule: str,
    quote: bool = True,
) -> ReportFinding:
    from ..models.finding import ReportFinding  # only for a scan that found something

    return ReportFinding(
        path=path,
        line=line,
        severity=severity,  # type: ignore[arg-type]
        category=category,
        failure_mode=failure_mode,
        evidence=f"added line {line} of {path} matches the built-in `{rule}` scan",
        quote=text.strip() if quote and text.strip() else None,
        remediation=remediation,
        fingerprint=finding_fingerprint(path, category, f"{rule}:{text}"),
        verification="deterministic",
        note=f"scan: {rule}",
    )


def _functions(source: str, classes: bool = False) -> dict[str, tuple[int, int]]:
    """Test functions (and with ``classes``, test classes) by qualified name → (first line
    including decorators, last line)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, tuple[int, int]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                if classes and child.name.startswith("Test"):
                    first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                    found[prefix + child.name] = (first, child.end_lineno or child.lineno)
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                child.name.startswith("test")
            ):
                first = min([d.lineno for d in child.decorator_list] + [child.lineno])
                found[prefix + child.name] = (first, child.end_lineno or child.lineno)

    visit(tree, "")
    return found


def _is_test_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _sides(change: FileChange, target: Target) -> tuple[str | None, str | None]:
    """The objects holding a changed file at the base and in the snapshot, where it exists."""
    base = target.base_commit
    before = f"{base}:{change.old_path or change.path}" if base else None
    after = f"{target.tree}:{change.path}" if change.status != "deleted" else None
    return before, after


def _test_scans(
    change: FileChange, target: Target, sources: dict[str, bytes | None], levels: dict[str, str]
) -> Iterator[ReportFinding]:
    old_path = change.old_path or change.path
    before_source, after_source = (
        git.decode(sources.get(side) or b"") if side else "" for side in _sides(change, target)
    )
    before, after = _functions(before_source), _functions(after_source)
    owners_before = _functions(before_source, classes=True)
    owners_after = _functions(after_source, classes=True)
    if levels["skip_added"] != "off":
        for line, text in sorted(change.added_text.items()):
            if not _SKIP.search(text):
                continue
            # The innermost test function or class around the line owns the skip.
            spans = [(b - a, name) for name, (a, b) in owners_after.items() if a <= line <= b]
            owners = [name for _, name in sorted(spans)]
            if (owners and owners[0] in owners_before) or (not owners and before):
                yield _finding(
                    change.path,
                    line,
                    text,
                    levels["skip_added"],
                    "regression",
                    f"skip/xfail added to existing test {owners[0] if owners else '(module)'}",
                    "fix the test instead of skipping it, or explain why in the change",
                    "skip_added",
                )
    if levels["deleted_tests"] != "off":
        for name in sorted(set(before) - set(after)):
            from ..models.finding import ReportFinding  # only for a test that was deleted

            line = before[name][0]
            yield ReportFinding(
                path=change.path,
                line=line,
                severity=levels["deleted_tests"],  # type: ignore[arg-type]
                category="regression",
                failure_mode=f"test {name} was deleted",
                evidence=f"{old_path} defines {name} at the base (line {line}); "
                "the change removes it",
                remediation="keep the test, or say in the change why it no longer applies",
                fingerprint=finding_fingerprint(old_path, "regression", f"deleted:{name}"),
                verification="deterministic",
                note="scan: deleted_tests (line at base)",
            )


def _python(target: Target) -> list[FileChange]:
    """The Python files the change adds or edits: conftest files and local plugins among them."""
    return [c for c in target.scope if c.path.endswith(".py") and c.status != "deleted"]


def scan(target: Target, repo: git.Repo, levels: dict[str, str]) -> list[ReportFinding]:
    """Every scan finding of ``target``; ``levels`` maps scan name → severity or ``off``."""
    findings: list[ReportFinding] = []
    tests = [
        c
        for c in target.scope
        if _is_test_file(c.path) or (c.old_path is not None and _is_test_file(c.old_path))
    ]
    tested = {id(change) for change in tests}
    hooked = [] if levels["report_hooks"] == "off" else _python(target)
    read = [*tests, *(c for c in hooked if id(c) not in tested)]
    sides = [side for change in read for side in _sides(change, target) if side]
    sources = git.read_objects(repo.root, sides) if sides else {}
    for change in target.scope:
        # A bare "=======" is a conflict marker only beside "<<<<<<<" or ">>>>>>>" lines;
        # alone it is a heading underline.
        markers = [ln for ln, text in change.added_text.items() if _CONFLICT_EDGE.match(text)]
        if markers and levels["conflict_markers"] != "off":
            for line, text in sorted(change.added_text.items()):
                if text == "=======":
                    findings.append(
                        _finding(change.path, line, text, levels["conflict_markers"], *_MIDDLE)
                    )
        for rule in LINE_RULES:
            level = levels[rule.name]
            if level == "off":
                continue
            for line, text in sorted(change.added_text.items()):
                if rule.pattern.search(text):
                    findings.append(
                        _finding(
                            change.path,
                            line,
                            text,
                            level,
                            rule.category,
                            rule.failure_mode,
                            rule.remediation,
                            rule.name,
                            quote=rule.show_text,
                        )
                    )
        if id(change) in tested:
            findings.extend(_test_scans(change, target, sources, levels))
    for change in hooked:
        before, after = (
            git.decode(sources.get(s) or b"") if s else "" for s in _sides(change, target)
        )
        findings.extend(hookscan.findings(change.path, before, after, levels["report_hooks"]))
    return sorted(findings, key=lambda f: (f.path, f.line))
