"""The fenced examples of README.md and the documentation pages, as the tests read them.

A block may be preceded by a marker comment saying how it is meant, visible in the page's
source: ``<!-- example: invalid -->`` (a configuration the settings refuse, on purpose),
``<!-- example: continues the block above -->`` (keys that sit in the previous TOML block's
last table), ``<!-- example: file NAME -->`` (another tool's file: parsed, not validated)."""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GENERATED = sorted((ROOT / "docs" / "reference").glob("*.md"))

_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)\s*$")
_MARKER = re.compile(r"^\s*<!-- example: (?P<what>.+?) -->\s*$")


@dataclasses.dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its text (dedented) and its marker."""

    path: Path
    line: int
    lang: str
    text: str
    marker: str | None
    section: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> Iterator[Block]:
    """Every fenced block of the Markdown file ``path``, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    section, number = "", 0
    while number < len(lines):
        line = lines[number]
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        opened = _FENCE.match(line)
        if opened is None:
            number += 1
            continue
        indent, start = opened["indent"], number
        end = next(i for i in range(start + 1, len(lines)) if lines[i].rstrip() == f"{indent}```")
        body = [x[len(indent) :] if x.startswith(indent) else x for x in lines[start + 1 : end]]
        before = next((lines[i] for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        marked = _MARKER.match(before)
        text = "\n".join(body) + "\n"
        marker = marked["what"] if marked else None
        yield Block(path, start + 1, opened["lang"], text, marker, section)
        number = end + 1


def all_blocks(*langs: str, generated: bool = False) -> list[Block]:
    """The blocks of every page in one of ``langs`` (the generated reference pages too when
    ``generated``)."""
    pages = [*PAGES, *GENERATED] if generated else PAGES
    return [b for page in pages for b in blocks(page) if b.lang in langs]


def commands(text: str) -> Iterator[list[str]]:
    """The simple commands of a shell block: continuations joined, comments dropped, split at
    ``&&``, ``||``, ``|`` and ``;``, ``$NAME`` replaced by an earlier ``NAME=value`` of the
    block (word-split, as the shell does unquoted)."""
    joined = re.sub(r"\\\n\s*", " ", text)
    variables: dict[str, str] = {}
    for line in joined.splitlines():
        for name, value in variables.items():
            line = re.sub(rf"\$\{{{name}\}}|\${name}\b", lambda _, v=value: v, line)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for word in [*lexer, ";"]:
            if word not in ("&&", "||", "|", ";", ">", "<"):
                words.append(word)
                continue
            if word in (">", "<"):  # a redirection: its file is not an argument
                words.append(word)
                continue
            argv = _without_redirections(words)
            words = []
            assignments = [w for w in argv if re.fullmatch(r"[A-Za-z_]\w*=.*", w)]
            if argv and len(assignments) == len(argv):
                variables.update(w.split("=", 1) for w in assignments)  # type: ignore[misc]
            elif argv:
                yield argv[len(assignments) :] if assignments == argv[: len(assignments)] else argv


def _without_redirections(words: list[str]) -> list[str]:
    kept, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in (">", "<"):
            skip = True
        else:
            kept.append(word)
    return kept
