"""The ``report_hooks`` scan: hooks a change adds or changes, in conftest files and local
plugins, that can alter what the session it is judged by reports — a
``pytest_runtest_makereport`` wrapper that turns a failure into a pass, a
``pytest_collection_modifyitems`` that drops tests, a ``pytest_ignore_collect`` that
leaves files out, a ``pytest_sessionfinish`` that sets the
exit status. Such code runs inside the gate's own session, so it is a finding whatever it does;
a team that means it says so with a typed waiver.

A definition counts as changed when its code differs from the base's (its syntax tree, so moving
it or re-indenting it does not count); ``specname`` in ``@pytest.hookimpl`` names the hook too.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from ..core.fingerprint import finding_fingerprint

if TYPE_CHECKING:
    from ..models.finding import ReportFinding

HOOKS = frozenset(
    {
        "pytest_runtest_makereport",
        "pytest_report_teststatus",
        "pytest_runtest_protocol",
        "pytest_runtest_call",
        "pytest_collection_modifyitems",
        "pytest_ignore_collect",
        "pytest_sessionfinish",
    }
)
RULE = "report_hooks"


def _hook_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """The hook a function implements: its ``specname`` if a decorator gives one, else its
    name."""
    for decorator in node.decorator_list:
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "specname" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
    return node.name


def _sets_exit_status(node: ast.AST) -> bool:
    targets = [
        target
        for child in ast.walk(node)
        if isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign))
        for target in (child.targets if isinstance(child, ast.Assign) else [child.target])
    ]
    return any(isinstance(t, ast.Attribute) and t.attr == "exitstatus" for t in targets)


def definitions(source: str) -> dict[str, tuple[int, str, str]]:
    """Report-altering hook definitions in ``source``: qualified name → (line, hook, code)."""
    if "pytest_" not in source:  # no hook by any name: nothing to parse
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    found: dict[str, tuple[int, str, str]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hook = _hook_name(child)
                if hook in HOOKS and (hook != "pytest_sessionfinish" or _sets_exit_status(child)):
                    code = ast.dump(child, include_attributes=False)
                    found[prefix + child.name] = (child.lineno, hook, code)

    visit(tree, "")
    return found


def findings(path: str, before: str, after: str, severity: str) -> list[ReportFinding]:
    """A finding for each report-altering hook ``after`` adds or changes over ``before``."""
    old, new = definitions(before), definitions(after)
    found = []
    for name, (line, hook, code) in sorted(new.items()):
        if name in old and old[name][2] == code:
            continue
        from ..models.finding import ReportFinding  # only for a hook found: pydantic is slow

        how = "changes" if name in old else "adds"
        found.append(
            ReportFinding(
                path=path,
                line=line,
                severity=severity,  # type: ignore[arg-type]
                category="correctness",
                failure_mode=(
                    f"the change {how} {hook} ({name}): code that can alter test outcomes or "
                    "reports runs inside the session that judges the change"
                ),
                evidence=f"{path} line {line} defines {name}, implementing {hook}, "
                + ("unlike the base" if name in old else "absent at the base"),
                remediation=(
                    "keep outcome-altering hooks out of the change, or have the hook reviewed "
                    "and record a typed waiver for this finding"
                ),
                fingerprint=finding_fingerprint(path, "correctness", f"{RULE}:{name}:{code}"),
                verification="deterministic",
                note=f"scan: {RULE}",
            )
        )
    return found
