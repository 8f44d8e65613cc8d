"""Reading a file the user named (a shard report, a plan) without reading more than a limit."""

from __future__ import annotations

from pathlib import Path

from .errors import UsageError


def read_bounded(path: Path, limit: int, what: str) -> bytes:
    """The bytes of ``path``, or a :class:`UsageError` naming ``what`` it is, the file and the
    problem: it cannot be read, or it holds more than ``limit`` bytes."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise UsageError(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(data) > limit:
        raise UsageError(f"{what} {path} is larger than {limit} bytes")
    return data
