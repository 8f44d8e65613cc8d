"""Failure signatures: what stays the same when the same failure happens again elsewhere.

A signature is the exception type, the message with volatile parts folded (addresses, numbers,
temporary paths, the checkout's own location) and the failing frame's file and function, so the
same failure at the base checkout and at head compares equal.

What differs between two runs of the same failure is folded too: the end of an object's repr
that pytest shortened in the middle (``<pkg.tests....x7f3ab90>``: what is left there depends on
the address) is one token, and the elements of a ``{...}`` group (a set's order follows the
hash seed) are sorted.
"""

from __future__ import annotations

import functools
import inspect
import re
import sys
import tempfile
from pathlib import Path
from types import CodeType, TracebackType
from typing import TYPE_CHECKING

import pytest

from ...core.redaction import Redact
from .statements import expression, statement

if TYPE_CHECKING:
    from _pytest._code.code import TracebackEntry

_HEX = r"0x[0-9a-fA-F]+"
# A hex number without its 0x (an id, a digest): eight or more hex digits, a digit and a
# letter among them, as one word; folded whole, where the number rule would fold a piece.
_BARE_HEX = r"(?<!\w)(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}(?!\w)"
# pytest's saferepr keeps the two ends of a long repr around "...": its start, as many
# characters whatever the repr holds, and its end, where the address is (so what is left of it,
# and of the words before it, depends on the address). A shortened ``<...>`` repr keeps its
# start and folds from the cut to its end; elsewhere hex digits at the cut and the word after
# it fold.
_CUT_REPR = r"(<[^<>]*?)[0-9a-fA-Fx]*\.{3,}[^<>]*>"
_CUT = r"[0-9a-fA-Fx]*\.{3,}\w*"
_GROUP = r"\{([^{}]*)\}"
_OPEN, _CLOSE = "\x00", "\x01"  # a group already put in order, while its parent is
_PAIRS = {"(": ")", "[": "]", "<": ">", _OPEN: _CLOSE}
_NUMBER = r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?"
_TEMP_DIRS = sorted({tempfile.gettempdir(), "/tmp", "/var/folders", "/private/var"}, key=len)
_TEMP = "(?:" + "|".join(re.escape(d) for d in reversed(_TEMP_DIRS)) + r")/[^\s'\":]*"
_SPACE = r"\s+"
MAX_MESSAGE = 200
MAX_WHERE = 3  # where-lines of an assertion's explanation kept in its signature


@functools.cache
def _rx(pattern: str) -> re.Pattern[str]:
    """``pattern`` compiled at its first use: a session with no failure folds no message."""
    return re.compile(pattern)


@functools.cache
def _library_roots() -> list[str]:
    """The folders installed and standard code live in, longest first (worked out at the
    first frame outside the checkout: sysconfig's import and paths take about 2 ms)."""
    import sysconfig

    paths = sysconfig.get_paths()
    return sorted({paths["purelib"], paths["stdlib"], sys.prefix}, key=len, reverse=True)


def normalise_message(message: str, root: Path, redact: Redact) -> str:
    """First line of ``message`` with its secrets scrubbed (``redact``), then the checkout
    path, temp paths, addresses and numbers folded. Scrubbed first: folding digits and hex runs
    would leave pieces of a token no format recognises, and base and head must compare the same
    scrubbed text."""
    text = redact(message.strip().splitlines()[0]) if message.strip() else ""
    for prefix in {str(root), str(root.resolve())}:
        text = text.replace(prefix, "<root>")
    text = _rx(_TEMP).sub("<tmp>", text)
    text = _rx(_CUT).sub("...", _rx(_CUT_REPR).sub(r"\1...>", text))
    text = _rx(_HEX).sub("<addr>", text)
    text = _rx(_BARE_HEX).sub("<addr>", text)
    text = _rx(_NUMBER).sub("N", text)
    text = _rx(_SPACE).sub(" ", text)
    return in_order(text)[:MAX_MESSAGE]


def in_order(text: str) -> str:
    """``text`` with the elements of each ``{...}`` group sorted, innermost groups first: a
    set's repr lists its elements in the order of their hashes, which the hash seed changes
    from run to run. A group pytest shortened (holding ``...``) is ``{...}``: which elements
    it shows depends on that order too."""

    def ordered(match: re.Match[str]) -> str:
        inside = match[1]
        if "..." in inside:
            return _OPEN + "..." + _CLOSE
        return _OPEN + ", ".join(sorted(_elements(inside))) + _CLOSE

    while True:
        done = _rx(_GROUP).sub(ordered, text)
        if done == text:
            return text.replace(_OPEN, "{").replace(_CLOSE, "}")
        text = done


def _elements(inside: str) -> list[str]:
    """``inside`` split at the ``, `` that separate its elements: outside quotes and
    brackets."""
    parts, start, closing, quote, i = [], 0, [], "", 0
    while i < len(inside):
        char = inside[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char in _PAIRS:
            closing.append(_PAIRS[char])
        elif closing and char == closing[-1]:
            closing.pop()
        elif not closing and inside.startswith(", ", i):
            parts.append(inside[start:i])
            start = i + 2
            i += 1
        i += 1
    parts.append(inside[start:])
    return parts


def location(path: str | Path, root: Path) -> str:
    """A frame's file relative to the checkout, or to the library folder it lives in."""
    resolved = Path(path)
    for base in (root, root.resolve()):
        try:
            return resolved.relative_to(base).as_posix()
        except ValueError:
            pass
    for library in _library_roots():
        if str(resolved).startswith(library):
            return "<lib>/" + Path(str(resolved)[len(library) :].lstrip("/")).as_posix()
    return resolved.as_posix()


def checkout_root(rootdir: Path) -> Path:
    """The top of the checkout holding ``rootdir`` (the nearest folder with a ``.git``, which
    is a file in a linked worktree), so frames outside pytest's rootdir fold too."""
    for folder in [rootdir, *rootdir.parents]:
        if (folder / ".git").exists():
            return folder
    return rootdir


def _doctest(value: BaseException, root: Path, redact: Redact) -> str | None:
    """Doctest failures all raise from pytest's runner: name the failing example instead. Its
    source is code, so it is kept as written (whitespace folded) rather than number-folded."""
    doctest = sys.modules.get("doctest")  # a doctest failure was raised by a loaded doctest
    if doctest is None:
        return None
    failures = getattr(value, "failures", None)  # MultipleDoctestFailures
    for failure in failures if isinstance(failures, list) else [value]:
        if isinstance(failure, doctest.DocTestFailure):
            got = normalise_message(failure.got, root, redact)
            source = redact(" ".join(failure.example.source.split()))
            return f"DocTestFailure: {source} -> {got} @ {failure.test.name}"
        if isinstance(failure, doctest.UnexpectedException):
            error = failure.exc_info[1]
            message = normalise_message(str(error), root, redact)
            source = redact(" ".join(failure.example.source.split()))
            return f"{type(error).__name__}: {message} in {source} @ {failure.test.name}"
    return None


def from_excinfo(
    excinfo: pytest.ExceptionInfo[BaseException],
    root: Path,
    test: object = None,
    *,
    redact: Redact,
) -> str:
    """The signature of a raised exception; ``test`` is the test function that raised it, if
    known: where it called into the failing frame (when that is another) is part of it. Every
    text it holds from the failure (message, explanation, source) is scrubbed by ``redact``."""
    if (special := _doctest(excinfo.value, root, redact)) is not None:
        return special
    typename = type(excinfo.value).__name__
    text = str(excinfo.value)
    message = normalise_message(text, root, redact)
    frames = _shown(excinfo)
    if not frames:
        return f"{typename}: {message} @ ?"
    frame = f"{location(frames[-1].path, root)}::{frames[-1].name}"
    try:
        called = _called_from(excinfo, frames, test, root, redact)
    except Exception:  # a signature never breaks the session: the call is left out
        called = ""
    failing = f"{frame}{_said(statement(frames[-1]), redact)}{called}"
    return f"{typename}: {message}{_explained(text, root, redact)} @ {failing}"


def _shown(excinfo: pytest.ExceptionInfo[BaseException]) -> list[TracebackEntry]:
    """The frames pytest shows for a failure: without those that hide themselves
    (``__tracebackhide__``) and, as for a ``unittest`` test, without unittest's own (its
    modules set ``__unittest``), so a failed ``self.assertTrue`` is found in the test at its
    call, not at the ``raise`` inside unittest that every such assertion shares."""
    frames = list(excinfo.traceback.filter(excinfo)) or list(excinfo.traceback)
    own = [entry for entry in frames if not entry.frame.f_globals.get("__unittest")]
    return own or frames


def _called_from(
    excinfo: pytest.ExceptionInfo[BaseException],
    frames: list[TracebackEntry],
    test: object,
    root: Path,
    redact: Redact,
) -> str:
    """Where the test's own function called into the failing frame, when that is another
    (a helper's assertion, a library's ``raise``): `` <- file::test :: call`` with the call's
    source text, so one helper failing at another of its calls in the test is another
    failure; "" when the test's frame is the failing one or is not in the traceback."""
    code = _code_of(test)
    if code is None or frames[-1].frame.code.raw is code:
        return ""
    tb: TracebackType | None = excinfo.tb
    called = None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            called = tb
        tb = tb.tb_next
    if called is None:
        return ""
    text = expression(called)
    if text is None:  # no positions (Python 3.10): the statement the call is in
        text = next((statement(e) for e in frames if e.frame.raw is called.tb_frame), "")
    return f" <- {location(code.co_filename, root)}::{code.co_name}{_said(text, redact)}"


def _code_of(test: object) -> CodeType | None:
    """The code of a test function: its decorators' wrappers (``functools.wraps``) unwrapped,
    Hypothesis's ``@given`` proxy taken for the test it runs, a method's function taken; None
    for anything else."""
    try:
        function = inspect.unwrap(test) if callable(test) else None
        inner = getattr(getattr(function, "hypothesis", None), "inner_test", None)
        if callable(inner):
            function = inspect.unwrap(inner)
    except ValueError:  # a cycle of __wrapped__
        return None
    code = getattr(getattr(function, "__func__", function), "__code__", None)
    return code if isinstance(code, CodeType) else None


def _said(text: str, redact: Redact) -> str:
    """Source text as a signature holds it, scrubbed: `` :: text``, cut short; "" for
    none."""
    return f" :: {redact(text)[:MAX_MESSAGE]}" if text else ""


def _explained(text: str, root: Path, redact: Redact) -> str:
    """pytest's explanation of a failed assertion, its ``where`` lines (numbers folded): which
    call gave the value, so two assertions of one shape stay apart."""
    where = [line for line in text.splitlines()[1:] if line.lstrip(" +").startswith("where ")]
    return "".join(f" / {normalise_message(line, root, redact)}" for line in where[:MAX_WHERE])


def from_text(longrepr: str, path: str, root: Path, redact: Redact) -> str:
    """The signature of a failure known only by its text (collection errors): the last
    ``E   Type: message`` line (scrubbed by ``redact``), and the collected file."""
    errors = [line[1:].strip() for line in longrepr.splitlines() if line.startswith("E ")]
    last = errors[-1] if errors else (longrepr.strip().splitlines() or ["?"])[-1]
    typename, _, message = last.partition(": ")
    if not _ or not typename.replace(".", "").isidentifier():
        typename, message = "CollectError", last
    folded = normalise_message(message, root, redact)
    return f"{typename}: {folded} @ {path}::<module>"
