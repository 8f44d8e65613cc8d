"""Whether a file defines the function a node id names, read from its source, never imported.

A node id the base run did not collect is a new test only when its function (or class) is not
there: a parametrized id can be missing at the base because the environment makes the ids (a
case for a compiled extension that imports only where it is built), while its function is the
same. The answer is the definition's decorators, those of its classes too, as text: two files
that parametrize a test the same way give the same text. :func:`not_collected` is the base's
answer for such a test, :func:`new_case` what it makes of the failure at head.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path

from ...models.record import record

# Bases known to add no test methods; any other base the file does not define is unread.
_EMPTY_BASES = {"object", "TestCase", "IsolatedAsyncioTestCase"}
_MAX_DEPTH = 20


@record(frozen=True)
class Defined:
    """The file defines the test: ``decorators`` is how it (and its classes) are decorated."""

    decorators: str


@record(frozen=True)
class Absent:
    """The file does not define the test's function or class."""


@record(frozen=True)
class Unread:
    """Whether the file defines the test cannot be read from it (``why``)."""

    why: str


Answer = Defined | Absent | Unread


def names(nodeid: str) -> list[str]:
    """The names after the file in ``nodeid`` (classes, then the function), parameters cut
    (they may hold ``::`` themselves)."""
    rest = nodeid.partition("::")[2].split("[", 1)[0]
    return rest.split("::") if rest else []


def parametrized(nodeid: str) -> bool:
    return nodeid.endswith("]") and "[" in nodeid.partition("::")[2]


def _bound(body: Sequence[ast.stmt]) -> Iterator[tuple[str, ast.AST]]:
    """The names a block binds, each with what binds it, looking into ``if``/``try``/``with``
    blocks (not into functions or classes)."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    yield target.id, node
        elif isinstance(node, ast.AnnAssign | ast.AugAssign) and isinstance(node.target, ast.Name):
            yield node.target.id, node
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                yield (alias.asname or alias.name).partition(".")[0], node
        elif isinstance(node, ast.If | ast.While | ast.For | ast.AsyncFor):
            yield from _bound(node.body)
            yield from _bound(node.orelse)
        elif isinstance(node, ast.With | ast.AsyncWith):
            yield from _bound(node.body)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _bound(block)
            for handler in node.handlers:
                yield from _bound(handler.body)


def _decorators(node: ast.AST) -> str:
    found = getattr(node, "decorator_list", [])
    return "; ".join(ast.dump(d, annotate_fields=False) for d in found)


def _member(cls: ast.ClassDef, name: str, module: ast.Module, depth: int = 0) -> ast.AST | Answer:
    """What binds ``name`` in ``cls``: its own, or through the bases the module defines."""
    own = dict(_bound(cls.body))
    if name in own:
        return own[name]
    if depth > _MAX_DEPTH:
        return Unread(f"class {cls.name}: bases nested too deep")
    classes = {n: c for n, c in _bound(module.body) if isinstance(c, ast.ClassDef)}
    for base in cls.bases:
        spelled = ast.unparse(base)
        if spelled.rpartition(".")[2] in _EMPTY_BASES:
            continue
        if not isinstance(base, ast.Name) or base.id not in classes:
            return Unread(f"class {cls.name} inherits from {spelled}, which the file does not hold")
        found = _member(classes[base.id], name, module, depth + 1)
        if not isinstance(found, Absent):
            return found
    return Absent()


def _definition(source: str, nodeid: str) -> tuple[ast.AST, list[str]] | Answer:
    """What binds the test ``nodeid`` names in the Python ``source`` of its file, with the
    decorators of its classes."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        return Unread(f"the file does not parse: {exc}")
    chain = names(nodeid)
    if not chain:
        return Unread("the node id names no test in its file")
    node: ast.AST | None = dict(_bound(module.body)).get(chain[0])
    if node is None:
        return Absent()
    decorators = []
    for name in chain[1:]:
        if not isinstance(node, ast.ClassDef):
            return Unread(f"{ast.unparse(node)[:40]!r} is not a class of the file")
        decorators.append(_decorators(node))
        found = _member(node, name, module)
        if not isinstance(found, ast.AST):
            return found
        node = found
    return node, decorators


def defined(source: str, nodeid: str) -> Answer:
    """Whether the Python ``source`` of a test file defines the test ``nodeid`` names."""
    found = _definition(source, nodeid)
    if not isinstance(found, tuple):
        return found
    node, decorators = found
    return Defined("; ".join([*decorators, _decorators(node)]))


def line(source: str, nodeid: str) -> int | None:
    """The first line (its decorators included) of the definition of the test ``nodeid``
    names in ``source``; ``None`` when the file does not show it."""
    found = _definition(source, nodeid)
    if not isinstance(found, tuple):
        return None
    node = found[0]
    first = [getattr(d, "lineno", 0) for d in getattr(node, "decorator_list", [])]
    return min([*first, getattr(node, "lineno", 1)])


def _decorated(answer: Defined) -> str:
    return hashlib.sha256(answer.decorators.encode()).hexdigest()[:16]


def not_collected(nodeid: str, file: Path) -> dict[str, str]:
    """What a test the base did not collect from ``file`` (which it has) is: new when the
    file does not define its function (or class); else the ids differ (``unlisted``), or the
    file cannot tell (``unread``)."""
    if file.suffix != ".py" or "::" not in nodeid:
        return {"kind": "missing"}  # a doctest file, or a file that collected nothing
    try:
        source = file.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        return {"kind": "unread", "detail": f"not collected at base, nor its file read: {exc}"}
    answer = defined(source, nodeid)
    if isinstance(answer, Absent):
        return {"kind": "missing"}
    if isinstance(answer, Unread):
        why = "not collected at base, and whether its function is there cannot be read: "
        return {"kind": "unread", "detail": why + answer.why}
    return {"kind": "unlisted", "decorated": _decorated(answer)}


def new_case(nodeid: str, base_decorated: str, head_rootdir: Path | None) -> tuple[bool, str]:
    """Whether a test whose function the base has, but not its id, is the change's new case
    (its parametrization edited), and why."""
    if not parametrized(nodeid):
        return False, "not collected at base, though its function is there"
    answer: Answer = Unread("")
    if head_rootdir is not None:
        file = head_rootdir / nodeid.split("::", 1)[0]
        with contextlib.suppress(OSError, UnicodeDecodeError):
            answer = defined(file.read_text(encoding="utf-8"), nodeid)
    if isinstance(answer, Defined) and _decorated(answer) != base_decorated:
        return True, "new test case: not at base, and the change edits how it is parametrized"
    why = "parametrized id not at base; its function is: the environment makes the ids differ"
    return False, why
