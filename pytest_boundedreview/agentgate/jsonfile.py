"""A JSON settings file read and written back by ``bounded-review init --agent``: its object
with every key in order, and the layout it was written in (indentation, line endings, a
byte-order mark, ASCII-only or not), so a rewrite looks like the file it replaces.

Only plain JSON is edited. A file with comments, trailing commas, a duplicate key or a value
JSON does not have (``NaN``) is refused with its line: rewriting it would drop what it holds.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..core import strictjson
from ..core.errors import UsageError
from ..models.record import record

BOM = "\ufeff"


@record(frozen=True)
class Layout:
    """How a JSON file is written: ``indent`` None is one line; an empty string puts each
    item on its own line without indentation."""

    indent: str | None = "  "
    newline: str = "\n"
    final_newline: bool = True
    bom: bool = False
    ascii_only: bool = True

    def dump(self, data: dict[str, Any]) -> bytes:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ascii_only)
        text = text.replace("\n", self.newline)  # JSON strings hold no raw newline
        if self.final_newline:
            text += self.newline
        return ((BOM if self.bom else "") + text).encode("utf-8")


def layout_of(text: str) -> Layout:
    """The layout ``text`` (a file's whole text) is written in."""
    bom = text.startswith(BOM)
    body = text[1:] if bom else text
    newline = "\r\n" if "\r\n" in body else "\n"
    indent: str | None = None
    if "\n" in body.strip():
        found = re.search(r"^([ \t]*)\S", body.split("\n", 1)[1], re.MULTILINE)
        indent = found.group(1) if found else ""
    return Layout(indent, newline, body.endswith("\n"), bom, body.isascii())


def parse(label: str, raw: bytes, by_hand: str) -> tuple[dict[str, Any], Layout]:
    """The object in ``raw`` (the bytes of the file shown as ``label``) and its layout; a file
    that cannot be rewritten is refused with ``by_hand``, what to add to it by hand."""
    fix = (
        "nothing was written: init rewrites only plain JSON; fix the file, or add this to it "
        f"by hand:\n{by_hand}"
    )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{label}: not UTF-8 text (byte {exc.start}); {fix}") from None
    body = text[1:] if text.startswith(BOM) else text
    try:
        data = strictjson.loads(body.encode("utf-8"))
    except strictjson.StrictJSONError as exc:
        hint = " (comments are not JSON)" if re.search(r"^\s*(//|/\*)", body, re.M) else ""
        raise UsageError(f"{label}: {exc}{hint}; {fix}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{label}: holds a JSON {type(data).__name__}, not an object; {fix}")
    return data, layout_of(text)


def line_of(raw: bytes, text: str) -> int | None:
    """The line of ``raw`` where ``text``, written as a JSON string, first appears."""
    found = raw.find(json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8"))
    return raw.count(b"\n", 0, found) + 1 if found >= 0 else None
