"""A plan's Markdown headings, and which of them is the objective, the steps, the verification
and the rollback (by configurable names)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..models.record import record

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_NUMBERING = re.compile(r"^(?:(?:step|part|phase)\s+)?(?:\d+|[ivx]+|[a-z])[.):]\s+")


@record(frozen=True)
class Section:
    title: str
    line: int  # 1-based line of the heading
    end: int  # last line of the section's body
    body: str


def normalise_title(title: str) -> str:
    """Lower case, numbering and punctuation folded: ``2. Roll-back plan`` → ``roll back
    plan``."""
    text = _NUMBERING.sub("", title.strip().lower())
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text).split())


def code_lines(lines: Sequence[str]) -> set[int]:
    """The 1-based numbers of lines inside fenced code blocks (the fences included)."""
    inside: set[int] = set()
    fence: str | None = None
    for number, line in enumerate(lines, 1):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            inside.add(number)
        elif fence is not None:
            inside.add(number)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
    return inside


def sections(lines: Sequence[str]) -> list[Section]:
    """Every heading (ATX or setext, outside code blocks) with the body up to the next one."""
    code = code_lines(lines)
    heads: list[tuple[int, str]] = []
    for number, line in enumerate(lines, 1):
        if number in code:
            continue
        atx = _ATX.match(line)
        if atx:
            heads.append((number, atx.group(2)))
        elif (
            _SETEXT.match(line)
            and number > 1
            and lines[number - 2].strip()
            and number - 1 not in code
            and not _ATX.match(lines[number - 2])
            and (not heads or heads[-1][0] != number - 1)
        ):
            heads.append((number - 1, lines[number - 2].strip()))
    found = []
    for index, (number, title) in enumerate(heads):
        end = heads[index + 1][0] - 1 if index + 1 < len(heads) else len(lines)
        body_start = number + (1 if _ATX.match(lines[number - 1]) else 2)
        found.append(Section(title, number, end, "\n".join(lines[body_start - 1 : end]).strip()))
    return found


def named(found: Sequence[Section], names: Sequence[str]) -> Section | None:
    """The first section whose normalised title is one of ``names`` or starts with one."""
    wanted = [normalise_title(n) for n in names]
    for section in found:
        title = normalise_title(section.title)
        if any(title == w or title.startswith(w + " ") for w in wanted if w):
            return section
    return None
