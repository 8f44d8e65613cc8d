"""Secrets kept out of what tests and checks say: the values of the session's secret variables
and the well-known token formats, replaced by what they were (``[secret: GITHUB_TOKEN]``,
``[secret: github-token]``) wherever a failure's or a check's text enters the review.

The same replacement on the same text in the same environment gives the same result, so a
failure scrubbed at head and at the base still compares equal. Nothing is compiled until the
first text is scrubbed: a session without failures never pays for it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping

from ..models.record import record

Redact = Callable[[str], str]


@record(frozen=True)
class TokenFormat:
    """A credential format recognisable by itself: ``pattern`` as the built-in ``secrets``
    scan finds it on an added line, ``cut`` its start where pytest shortened the text around
    it (``'ghp_a1B2c3D4...2c3D4e5f6G7h8'``), ``extends`` what follows it and belongs to it."""

    label: str
    pattern: str
    cut: str
    marks: tuple[str, ...]  # one of them is in every match: no mark, no pattern run
    extends: str = ""


_KEY_BODY = (
    r"(?:(?!-----END)[A-Za-z0-9+/=\s\\.:,-])*"
    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----)?"
)
TOKEN_FORMATS = (
    # A private key takes its body along: base64, line breaks (or their escapes), header
    # fields, a cut, up to its END line where the text still has it.
    TokenFormat(
        "private-key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIV[A-Z ]*",
        ("-----BEGIN ",),
        _KEY_BODY,
    ),
    TokenFormat(
        "aws-access-key-id",
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        r"\b(?:AKIA|ASIA)[0-9A-Z]*",
        ("AKIA", "ASIA"),
    ),
    TokenFormat(
        "github-token",
        r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
        r"\bgh[pousr]_[A-Za-z0-9]*",
        tuple(f"gh{kind}_" for kind in "pousr"),
    ),
    TokenFormat(
        "github-token",
        r"\bgithub_pat_[A-Za-z0-9_]{40,}\b",
        r"\bgithub_pat_[A-Za-z0-9_]*",
        ("github_pat_",),
    ),
    TokenFormat(
        "slack-token",
        r"\bxox[baprse]-[A-Za-z0-9-]{10,}\b",
        r"\bxox[baprse]-[A-Za-z0-9-]*",
        tuple(f"xox{kind}-" for kind in "baprse"),
    ),
)
# What the built-in ``secrets`` scan matches on an added line.
SCAN_PATTERN = "|".join(f.pattern for f in TOKEN_FORMATS)
_MARKS = tuple(mark for form in TOKEN_FORMATS for mark in form.marks)
_CUT = r"\.{3,}[\w+/=-]*"  # pytest's "..." and what is left of the end after it

# A variable is secret when a word of its name says so (``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_
# KEY``, ``PGPASSWORD``, ``NPM_AUTH``), or it is one of the well-known credential variables
# whose names do not.
_SECRET_PART = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|APIKEY|ACCESSKEY|PRIVATEKEY|CREDENTIAL", re.I
)
_SECRET_WORD = re.compile(r"(?:^|[_.-])(?:KEYS?|PASS|PAT|AUTH|DSN|COOKIE|CREDS)(?:$|[_.-])", re.I)
WELL_KNOWN = frozenset({"DATABASE_URL", "MYSQL_PWD", "SSHPASS", "NETRC_PASSWORD"})
# Shorter values are words like ``true`` or ``1``: replaced, they would break ordinary text.
MIN_VALUE = 8
MIN_PIECE = 4  # the least of a value's start or end, next to pytest's "...", that is replaced
_PATH = re.compile(r"^(?:[/~]|\.{1,2}[/\\]|[A-Za-z]:[/\\])")
_MAX_PIECE = 256  # pytest keeps far less of a shortened text on either side of its "..."


def secret_name(name: str) -> bool:
    """Whether the variable ``name`` holds a secret by its name."""
    return (
        name.upper() in WELL_KNOWN
        or _SECRET_PART.search(name) is not None
        or _SECRET_WORD.search(name) is not None
    )


def secret_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` whose values are scrubbed, by name: a secret name, and a
    value of at least :data:`MIN_VALUE` characters that is not a path (a ``*_KEY_FILE`` or
    ``PASSWORD_STORE_DIR`` names where a secret is, not the secret)."""
    return {
        name: value
        for name, value in sorted(environ.items())
        if len(value.strip()) >= MIN_VALUE and not _PATH.match(value) and secret_name(name)
    }


class Redactor:
    """Scrubs text of the secrets of ``environ`` (a copy is kept: the environment as it was
    when the redactor was made) and of the token formats."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = dict(environ)

    @functools.cached_property
    def _values(self) -> list[tuple[str, str]]:
        """(value, name) pairs, longest value first; a value also as Python's ``repr``
        spells it inside quotes; of two names with one value, the first by name."""
        pairs: dict[str, str] = {}
        for name, value in secret_variables(self._environ).items():
            for form in (value, repr(value)[1:-1]):
                pairs.setdefault(form, name)
        return sorted(pairs.items(), key=lambda pair: (-len(pair[0]), pair[0]))

    @functools.cached_property
    def _pattern(self) -> re.Pattern[str]:
        """One pattern for every whole value and format, each alternative named (``v3``,
        ``f1``); values first, so a token held by a variable is named by its variable."""
        parts = [f"(?P<v{i}>{re.escape(value)})" for i, (value, _) in enumerate(self._values)]
        for i, form in enumerate(TOKEN_FORMATS):
            whole = f"(?:{form.pattern}){form.extends}"
            parts.append(f"(?P<f{i}>{whole}|(?:{form.cut}){_CUT})")
        return re.compile("|".join(parts))

    def _label(self, match: re.Match[str]) -> str:
        group = match.lastgroup or ""
        index = int(group[1:])
        name = self._values[index][1] if group[0] == "v" else TOKEN_FORMATS[index].label
        return f"[secret: {name}]"

    def __call__(self, text: str) -> str:
        """``text`` with every secret replaced by ``[secret: <what it was>]``."""
        if not text:
            return text
        # Substring searches first: most failure text holds no secret, and then the pattern
        # (which tries every alternative at every position) is not run.
        if any(value in text for value, _ in self._values) or any(m in text for m in _MARKS):
            text = self._pattern.sub(self._label, text)
        if "..." in text and self._values:
            text = "".join(self._pieces(text))
        return text

    def _pieces(self, text: str) -> Iterator[str]:
        """``text`` with what is left of a value on either side of pytest's "..." (the
        value's start before it, its end after it) replaced too."""
        start = 0
        for cut in re.finditer(r"\.{3,}", text):
            if cut.start() < start:  # inside a piece already replaced
                continue
            before = text[start : cut.start()]
            name, size = self._longest(before[-_MAX_PIECE:], ends=True)
            yield before[: len(before) - size] + (f"[secret: {name}]" if size else "")
            yield cut.group()
            start = cut.end()
            name, size = self._longest(text[start : start + _MAX_PIECE], ends=False)
            if size:
                yield f"[secret: {name}]"
                start += size
        yield text[start:]

    def _longest(self, text: str, ends: bool) -> tuple[str, int]:
        """The name and length of the longest start of a value ``text`` ends with (``ends``),
        or of the longest end of a value it starts with, at least :data:`MIN_PIECE` long;
        ("", 0) for none."""
        best = ("", 0)
        for value, name in self._values:
            size = _overlap(text, value) if ends else _overlap(value, text)
            if size >= MIN_PIECE and size > best[1]:
                best = (name, size)
        return best


def _overlap(left: str, right: str) -> int:
    """The length of the longest end of ``left`` that is a start of ``right``: tried only
    where ``left`` holds ``right``'s first character, longest first."""
    at = max(0, len(left) - len(right))
    while (at := left.find(right[0], at)) != -1:
        if right.startswith(left[at:]):
            return len(left) - at
        at += 1
    return 0
