"""A JSON reader for untrusted documents: rejects what ``json.loads`` quietly accepts.

Refused with a reason: bad UTF-8, a byte order mark, documents over a size limit, nesting over
a depth limit (checked before parsing, so deep input cannot exhaust the stack), duplicate keys,
``NaN``/``Infinity``, numbers that overflow to infinity, integers too long to convert, and lone
surrogates in strings.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import FatalError

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64


class StrictJSONError(FatalError):
    """The document is not acceptable JSON; the message says why."""

    exit_code = 1


def _check_depth(text: str, limit: int) -> None:
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                raise StrictJSONError(f"nesting deeper than {limit} levels")
        elif char in "]}":
            depth -= 1


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise StrictJSONError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not a JSON number")


def _float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise StrictJSONError(f"number {literal[:40]} is out of range")
    return value


def _check_strings(value: Any) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise StrictJSONError("string holds a lone surrogate escape") from exc
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_strings(key)
            _check_strings(item)
    elif isinstance(value, list):
        for item in value:
            _check_strings(item)


def loads(data: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """Parse one JSON document from ``data`` or raise :class:`StrictJSONError`."""
    if len(data) > max_bytes:
        raise StrictJSONError(f"document is {len(data)} bytes, over the limit of {max_bytes}")
    if data.startswith(b"\xef\xbb\xbf"):
        raise StrictJSONError("document starts with a UTF-8 byte order mark")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJSONError(f"not valid UTF-8 at byte {exc.start}") from exc
    _check_depth(text, max_depth)
    try:
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float
        )
    except json.JSONDecodeError as exc:
        raise StrictJSONError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except ValueError as exc:  # e.g. an integer longer than Python converts
        raise StrictJSONError(f"unreadable number: {exc}") from exc
    _check_strings(value)
    return value
