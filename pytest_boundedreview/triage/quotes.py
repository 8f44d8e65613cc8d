"""Does the code a finding quotes exist where it says? The check that catches invented code."""

from __future__ import annotations

from ..fingerprint import normalise_text

WINDOW = 3


def quote_line(lines: list[str], line: int, end_line: int | None, quote: str) -> int | None:
    """The first cited line at which ``quote`` appears (whitespace folded): the cited line if it
    is there, else the nearest start within ±``WINDOW`` lines; ``None`` when it is nowhere near."""
    wanted = normalise_text(quote)
    if not wanted:
        return None
    span = max((end_line or line) - line + 1, quote.count("\n") + 1)
    for offset in sorted(range(-WINDOW, WINDOW + 1), key=abs):
        start = line + offset
        if start < 1 or start > len(lines):
            continue
        if wanted in normalise_text(" ".join(lines[start - 1 : start - 1 + span])):
            return start
    return None
