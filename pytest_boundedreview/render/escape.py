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


def workflow_data(text: str) -> str:
    """A GitHub workflow command's message: ``%``, CR and LF encoded (the runner decodes them),
    and every other control shown as a visible escape."""
    text = terminal(text, single_line=False)
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def workflow_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): also ``:`` and ``,``."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")
_MENTION = re.compile(r"@")
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|file|mailto|javascript|data):")


def markdown(text: str) -> str:
    """``text`` as inert Markdown on one line: no HTML, links, images, mentions, emphasis,
    table cells or code spans can come out of it; controls shown as visible escapes."""
    text = terminal(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    text = _MENTION.sub("&#64;", text)  # shows as @, but pings no one
    text = _AUTOLINK.sub(lambda m: m.group(1) + "&#58;", text)  # no bare autolinks
    return text
