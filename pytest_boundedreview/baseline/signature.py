"""Failure signatures: what stays the same when the same failure happens again elsewhere.

A signature is the exception type, the message with volatile parts folded (addresses, numbers,
temporary paths, the checkout's own location) and the failing frame's file and function, so the
same failure at the base checkout and at head compares equal.
"""

from __future__ import annotations

import doctest
import re
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

_HEX = re.compile(r"0x[0-9a-fA-F]+")
_NUMBER = re.compile(r"(?<![A-Za-z_])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")
_TEMP_DIRS = sorted({tempfile.gettempdir(), "/tmp", "/var/folders", "/private/var"}, key=len)
_TEMP = re.compile("(?:" + "|".join(re.escape(d) for d in reversed(_TEMP_DIRS)) + r")/[^\s'\":]*")
_SPACE = re.compile(r"\s+")
MAX_MESSAGE = 200
_LIBRARY_ROOTS = sorted(
    {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["stdlib"], sys.prefix},
    key=len,
    reverse=True,
)


def normalise_message(message: str, root: Path) -> str:
    """First line of ``message`` with the checkout path, temp paths, addresses and numbers
    folded."""
    text = message.strip().splitlines()[0] if message.strip() else ""
    for prefix in {str(root), str(root.resolve())}:
        text = text.replace(prefix, "<root>")
    text = _TEMP.sub("<tmp>", text)
    text = _HEX.sub("<addr>", text)
    text = _NUMBER.sub("N", text)
    text = _SPACE.sub(" ", text)
    return text[:MAX_MESSAGE]


def location(path: str | Path, root: Path) -> str:
    """A frame's file relative to the checkout, or to the library folder it lives in."""
    resolved = Path(path)
    for base in (root, root.resolve()):
        try:
            return resolved.relative_to(base).as_posix()
        except ValueError:
            pass
    for library in _LIBRARY_ROOTS:
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


def _doctest(value: BaseException, root: Path) -> str | None:
    """Doctest failures all raise from pytest's runner: name the failing example instead. Its
    source is code, so it is kept as written (whitespace folded) rather than number-folded."""
    failures = getattr(value, "failures", None)  # MultipleDoctestFailures
    for failure in failures if isinstance(failures, list) else [value]:
        if isinstance(failure, doctest.DocTestFailure):
            got = normalise_message(failure.got, root)
            source = " ".join(failure.example.source.split())
            return f"DocTestFailure: {source} -> {got} @ {failure.test.name}"
        if isinstance(failure, doctest.UnexpectedException):
            error = failure.exc_info[1]
            message = normalise_message(str(error), root)
            source = " ".join(failure.example.source.split())
            return f"{type(error).__name__}: {message} in {source} @ {failure.test.name}"
    return None


def from_excinfo(excinfo: pytest.ExceptionInfo[BaseException], root: Path) -> str:
    """The signature of a raised exception."""
    if (special := _doctest(excinfo.value, root)) is not None:
        return special
    typename = type(excinfo.value).__name__
    message = normalise_message(str(excinfo.value), root)
    frames = excinfo.traceback.filter(excinfo)
    if len(frames) == 0:
        frames = excinfo.traceback
    frame = f"{location(frames[-1].path, root)}::{frames[-1].name}" if len(frames) else "?"
    return f"{typename}: {message} @ {frame}"


def from_text(longrepr: str, path: str, root: Path) -> str:
    """The signature of a failure known only by its text (collection errors): the last
    ``E   Type: message`` line, and the collected file."""
    errors = [line[1:].strip() for line in longrepr.splitlines() if line.startswith("E ")]
    last = errors[-1] if errors else (longrepr.strip().splitlines() or ["?"])[-1]
    typename, _, message = last.partition(": ")
    if not _ or not typename.replace(".", "").isidentifier():
        typename, message = "CollectError", last
    folded = normalise_message(message, root)
    return f"{typename}: {folded} @ {path}::<module>"
