"""A lane's answer given as text (an agent's final message): the one JSON object in it, read
strictly and validated like any lane result. Prose around it or a Markdown fence is tolerated;
an answer with no valid object is a failed attempt, never a pass."""

from __future__ import annotations

import re

from ..result import OUTPUT_CAP, Attempt, read_result

_FENCED = re.compile(r"```(?:json)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)


def _candidates(text: str) -> list[str]:
    found = [text.strip(), *(block.strip() for block in _FENCED.findall(text))]
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        found.append(text[first : last + 1])
    return list(dict.fromkeys(found))


def read_text(text: str, model: str | None = None, cap: int = OUTPUT_CAP) -> Attempt:
    """The lane result in ``text``; the reason of the whole text's failure when none is valid."""
    if not text.strip():
        return Attempt(None, "error", "the answer is empty", model)
    attempts = [read_result(candidate.encode(), cap, model) for candidate in _candidates(text)]
    return next((attempt for attempt in attempts if attempt.ok), attempts[0])
