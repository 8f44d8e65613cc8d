"""Escaping of untrusted text (test names, paths, reviewer and tool output) for the terminal."""

from __future__ import annotations

import re
import unicodedata

# Shown as escapes: controls (C0, C1, DEL), format characters (bidi marks and overrides,
# zero-width characters, soft hyphens, tag characters), line and paragraph separators,
# surrogates and private-use characters.
_HIDDEN = ("Cc", "Cf", "Zl", "Zp", "Cs", "Co")
_FAST_SAFE = re.compile("[\x20-\x7e]*")


def _visible(char: str) -> str:
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal(text: str, *, single_line: bool = True) -> str:
    """``text`` with every control, format (bidi, zero-width, tag), separator, surrogate and
    private-use character shown as a visible escape, so no escape sequence or hidden text
    reaches the terminal; newlines and tabs kept only when not ``single_line``."""
    if _FAST_SAFE.fullmatch(text):
        return text
    out = []
    for char in text:
        if char in "\n\t" and not single_line:
            out.append(char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif unicodedata.category(char) in _HIDDEN:
            out.append(_visible(char))
        else:
            out.append(char)
    return "".join(out)


_COMMAND_START = re.compile(r"^([ \t]*):", re.MULTILINE)


def lines(text: str) -> str:
    """``text`` as lines an agent, a terminal or a CI log may show (what an agent's hook
    prints): every control (ESC, CR, ...), format, separator, surrogate and private-use
    character shown as a visible escape, newlines and tabs kept, and no line starting a
    runner's workflow command (a leading ``:`` shown as ``\\x3a``, ``##[`` as ``#\\x23[``)."""
    text = terminal(text, single_line=False).replace("##[", "#\\x23[")
    return _COMMAND_START.sub(lambda m: m.group(1) + "\\x3a", text)


def workflow_data(text: str) -> str:
    """A GitHub workflow command's message: ``%``, CR and LF encoded (the runner decodes them),
    and every other control shown as a visible escape."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return terminal(text, single_line=False).replace("\t", "\\t")


def workflow_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): also ``:`` and ``,``."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~])")
_MENTION = re.compile(r"@")
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|file|mailto|javascript|data):")


_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_.:/-]")


def identifier(text: str) -> str:
    """A rule id or name a platform shows raw (reviewdog writes ``<code>`` into Markdown): only
    letters, digits and ``_.:/-`` stay, anything else becomes ``_``."""
    return _NOT_IDENTIFIER.sub("_", text) or "_"


def markdown(text: str) -> str:
    """``text`` as inert Markdown on one line: no HTML, links, images, mentions, emphasis,
    table cells or code spans can come out of it; controls shown as visible escapes."""
    text = terminal(text)
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    text = _MENTION.sub("@\u2060", text)  # a word joiner: no mention, no e-mail autolink
    text = _AUTOLINK.sub(lambda m: m.group(1) + "&#58;", text)  # no bare autolinks
    return text


def markdown_code(text: str) -> str:
    """``text`` as an inline code span (shown literally): controls escaped, fenced with more
    backticks than any run inside it."""
    text = terminal(text)
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
