"""Escaping of untrusted text (test names, paths, reviewer and tool output) for the terminal."""

from __future__ import annotations

import re
import unicodedata

# C0/C1 controls, DEL, bidi overrides/isolates and zero-width characters.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str, *, single_line: bool = True) -> str:
    """``text`` with every control, bidi and zero-width character shown as a visible escape
    (so escape sequences cannot reach the terminal); newlines too when ``single_line``."""
    text = _UNSAFE.sub(_visible, text)
    text = "".join(
        f"\\u{ord(c):04x}" if unicodedata.category(c) in ("Cs", "Co") else c for c in text
    )
    if single_line:
        text = text.replace("\n", "\\n").replace("\t", "\\t")
    return text
