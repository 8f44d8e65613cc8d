"""The source text of a failure's frames, for its signature: the statement a frame was
running, as pytest finds it, and the call a frame was making.

Finding a statement takes the parse of its file; only where the file's statements begin is kept
(for the rest of the session), not the parse.
"""

from __future__ import annotations

import ast
import bisect
import functools
import itertools
import linecache
import sys
import warnings
from types import TracebackType
from typing import TYPE_CHECKING

from _pytest._code.source import getstatementrange_ast

if TYPE_CHECKING:
    from _pytest._code.code import TracebackEntry

# Whether code objects keep each instruction's source span (Python 3.11 and later).
POSITIONS = sys.version_info >= (3, 11)


def statement(entry: TracebackEntry) -> str:
    """The statement a traceback entry was running as written, whitespace folded ("" when its
    source cannot be read): pytest's (``TracebackEntry.statement``), found from where its
    file's statements begin, worked out once for the session: a file of many failures, or a
    failure re-run, is parsed once."""
    try:
        source = entry.frame.code.fullsource
        if source is None or not 0 <= entry.lineno < len(source):
            return ""
        around = _around(_starts(str(source)), entry.lineno)
        _, start, end = getstatementrange_ast(entry.lineno, source, astnode=around)
        return " ".join(str(source[start:end]).split())
    except Exception:  # no source to read (a compiled or generated frame)
        return ""


@functools.lru_cache(maxsize=32)
def _starts(text: str) -> tuple[int, ...]:
    """The lines (from 0) where pytest's statement finder sees a statement of ``text`` begin:
    each statement and ``except`` clause, each decorator of a definition, and the line before
    an ``else`` or ``finally`` part's first statement. Kept instead of the parse, which is
    thousands of objects the garbage collector would walk on every full collection for the
    rest of the session (on a large suite, seconds)."""
    with warnings.catch_warnings():  # as pytest parses it: its warnings were shown once
        warnings.simplefilter("ignore")
        tree = ast.parse(text, "source", "exec")
    starts: list[int] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.stmt, ast.ExceptHandler)):
            continue
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            starts += (decorator.lineno - 1 for decorator in node.decorator_list)
        starts.append(node.lineno - 1)
        for name in ("orelse", "finalbody"):
            part = getattr(node, name, None)
            if part:
                starts.append(part[0].lineno - 2)
    return tuple(sorted(starts))


def _around(starts: tuple[int, ...], lineno: int) -> ast.Module:
    """A stand-in for the parse of a file whose statements begin at ``starts``, holding the
    two around ``lineno``: pytest finds the same statement in it as in the whole file."""
    at = bisect.bisect_right(starts, lineno)
    edges = starts[max(at - 1, 0) : at + 1]
    return ast.Module(body=[ast.Pass(lineno=line + 1) for line in edges], type_ignores=[])


def expression(tb: TracebackType) -> str | None:
    """The source text of the call a traceback entry was making, whitespace folded: its
    expression's span, from the code's positions; "" when they name no span of the file the
    code says it comes from (code compiled from other source, then given a test's file and
    line); None where the interpreter keeps no positions (before Python 3.11)."""
    code = tb.tb_frame.f_code
    positions = getattr(code, "co_positions", None)
    if not POSITIONS or positions is None:
        return None
    at = next(itertools.islice(positions(), tb.tb_lasti // 2, None), None)
    if at is None or None in at:
        return ""
    start, end, column, end_column = at  # the columns count UTF-8 bytes
    lines = linecache.getlines(code.co_filename, tb.tb_frame.f_globals)
    if not code.co_firstlineno <= start <= end <= len(lines):
        return ""
    span = [line.encode() for line in lines[start - 1 : end]]
    span[-1] = span[-1][:end_column]
    span[0] = span[0][column:]
    return " ".join(b"".join(span).decode(errors="replace").split())
