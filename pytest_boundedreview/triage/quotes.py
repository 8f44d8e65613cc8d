"""Does the code a finding quotes exist where it says? The check that catches invented code."""

from __future__ import annotations

from ..core.fingerprint import normalise_text

WINDOW = 3
MAX_SPAN = 200  # lines of a cited range searched for its quote


def quote_line(folded: list[str], line: int, end_line: int | None, quote: str) -> int | None:
    """The first cited line at which ``quote`` appears, in a file's lines with whitespace
    already folded (see :func:`fold`): the cited line if it is there, else the nearest start
    within ±``WINDOW`` lines; ``None`` when it is nowhere near."""
    wanted = normalise_text(quote)
    if not wanted:
        return None
    span = min(max((end_line or line) - line + 1, quote.count("\n") + 1), MAX_SPAN)
    for offset in sorted(range(-WINDOW, WINDOW + 1), key=abs):
        start = line + offset
        if start < 1 or start > len(folded):
            continue
        if wanted in " ".join(part for part in folded[start - 1 : start - 1 + span] if part):
            return start
    return None


PINS = 12  # characters of a quote that pin a line longer than that


def pins(folded: list[str], at: int, quote: str) -> bool:
    """Whether ``quote``, found at line ``at``, is enough of the code to check a claim: the
    whole line, or at least :data:`PINS` characters of it (whitespace folded). A quote of one
    name or one bracket is found on many lines and shows nothing."""
    return len(normalise_text(quote)) >= min(len(folded[at - 1]), PINS)


def fold(lines: list[str]) -> list[str]:
    """Each line with its whitespace folded, for quote searches."""
    return [normalise_text(text) for text in lines]
