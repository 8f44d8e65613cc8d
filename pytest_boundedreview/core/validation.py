"""Turn pydantic validation errors into messages a user can act on."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

# A key no model knows: pydantic's word for models, and for the plain dataclasses.
UNKNOWN_KEY = ("extra_forbidden", "unexpected_keyword_argument")


def location(loc: Sequence[int | str], root: str = "") -> str:
    """``("checks", 0, "format")`` → ``checks[0].format`` (prefixed by ``root``)."""
    text = root
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text or "(document)"


def _short(value: object) -> str:
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # a 10**5000 integer, a 100,000-deep nesting
        return f"<{type(value).__name__} too large to show>"
    return text if len(text) <= 80 else text[:77] + "..."


def describe(error: ErrorDetails, root: str = "") -> str:
    """One line: where, what was given, what is allowed."""
    # pydantic adds branch names such as 'function-after[...]' or 'list[str]' to the location;
    # they mean nothing to a user, and no key of ours contains a bracket.
    loc = [part for part in error["loc"] if not (isinstance(part, str) and "[" in part)]
    where = location(loc, root)
    kind = error["type"]
    if kind in UNKNOWN_KEY:
        return f"{where}: unknown key"
    if kind in ("missing", "missing_argument"):
        return f"{where}: required key is missing"
    message = error["msg"].removeprefix("Value error, ")
    if kind == "literal_error":
        expected = error.get("ctx", {}).get("expected", "")
        message = f"invalid value; allowed values: {expected}"
    given = error.get("input")
    if isinstance(given, dict):  # a whole table: the message names its key, the table is noise
        return message if not loc else f"{where}: {message}"
    return f"{where}: {message} (got {_short(given)})"


def describe_all(exc: ValidationError, root: str = "") -> list[str]:
    """Every error of ``exc`` as one line each."""
    return [describe(error, root) for error in exc.errors(include_url=False)]
