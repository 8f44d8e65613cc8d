"""Whether a piece of code that ran in the session is the base's: the same definition, not
merely the same file.

A function's code is judged by the outermost statement that holds it and is no class: a
method by itself, a closure by the function that defines it, a lambda by the statement it
stands in. That statement is the base's when the base's version of the file holds a
statement of the same syntax tree (so moving or re-indenting it does not count) in the same
classes. A test class is judged by its whole definition; the module that binds a hook by the
statements that bind the hook's name. Whatever cannot be found or parsed is taken as the
change's: the answer must be able to clear the change, never to assume it clear.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

Units = frozenset[tuple[str, str]]  # (the classes holding it, its syntax tree)


def _tree(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _first(node: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    line: int = getattr(node, "lineno", 0)
    return min([line, *(d.lineno for d in decorators)])


def _walk(body: list[ast.stmt], classes: str) -> Iterator[tuple[str, ast.stmt]]:
    """Each statement no class is, with the classes holding it; a class's body is walked."""
    for statement in body:
        if isinstance(statement, ast.ClassDef):
            yield from _walk(statement.body, f"{classes}{statement.name}.")
        else:
            yield classes, statement


def _dump(node: ast.AST) -> str:
    return ast.dump(node, include_attributes=False)


def _holding(tree: ast.Module, line: int) -> tuple[str, ast.stmt] | None:
    """The outermost statement no class is that holds a function whose code starts at
    ``line`` (a decorated one starts at its first decorator)."""
    for classes, statement in _walk(tree.body, ""):
        for node in ast.walk(statement):
            is_code = isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if is_code and _first(node) == line:
                return classes, statement
    return None


def _units(tree: ast.Module) -> Units:
    return frozenset((classes, _dump(s)) for classes, s in _walk(tree.body, ""))


def _class(tree: ast.Module, qualname: str) -> str | None:
    *outer, name = qualname.split(".")
    body: list[ast.stmt] = tree.body
    for part in outer:
        found = [s for s in body if isinstance(s, ast.ClassDef) and s.name == part]
        if not found:
            return None
        body = found[0].body
    named = [s for s in body if isinstance(s, ast.ClassDef) and s.name == name]
    return _dump(named[0]) if named else None


def _binds(statement: ast.stmt, name: str) -> bool:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name == name
    for node in ast.walk(statement):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            return True
        if isinstance(node, ast.alias) and (node.asname or node.name.split(".")[0]) == name:
            return True
    return False


def _bindings(tree: ast.Module, name: str) -> list[str]:
    return [_dump(s) for s in tree.body if _binds(s, name)]


def _specname(statement: ast.stmt, hook: str) -> bool:
    decorators = getattr(statement, "decorator_list", [])
    return any(
        k.arg == "specname" and isinstance(k.value, ast.Constant) and k.value.value == hook
        for d in decorators
        if isinstance(d, ast.Call)
        for k in d.keywords
    )


def _registered(tree: ast.Module, old: ast.Module, hook: str, function: str) -> bool:
    """Whether the statements that bind ``hook`` in a module are the base's: under its own
    name, or a def naming it in ``specname``. A binding no statement makes (``globals()``,
    ``setattr``) cannot be compared, so it is not cleared."""
    if _bindings(tree, hook):
        return _bindings(tree, hook) == _bindings(old, hook)
    named = [_dump(s) for s in tree.body if _binds(s, function) and _specname(s, hook)]
    return bool(named) and named == [
        _dump(s) for s in old.body if _binds(s, function) and _specname(s, hook)
    ]


def unchanged(now: str, base: str | None, line: int, what: str) -> bool:
    """Whether the code ``what`` names at ``line`` of the source ``now`` is the same code in
    ``base`` (the file at the base, None if it has none)."""
    tree = _tree(now)
    old = _tree(base) if base is not None else None
    if tree is None or old is None:
        return False
    if what.startswith("defines the test class "):
        qualname = what.removeprefix("defines the test class ")
        mine = _class(tree, qualname)
        return mine is not None and mine == _class(old, qualname)
    if what.startswith("registers "):  # "registers <hook> (<function's qualified name>)"
        hook, _, label = what.removeprefix("registers ").partition(" (")
        return _registered(tree, old, hook, label.rstrip(")").rpartition(".")[2])
    found = _holding(tree, line)
    if found is None:
        return False
    classes, statement = found
    return (classes, _dump(statement)) in _units(old)
