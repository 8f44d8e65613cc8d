"""Compile the base's translation catalogues (``x.po``) into the ``x.mo`` beside them in a
checkout of the base, as ``msgfmt`` does: the base runs with its own translations, never the
working tree's compiled ones (see ``artefacts.py``).

Run as ``python -I -S compilemo.py CHECKOUT REPORT NAME...`` (each ``NAME`` an ``.mo``,
relative) by the base re-run's child once the checkout is made, it imports the standard
library only. A ``.po`` the checkout lacks gives no ``.mo`` (the base has no such
translation); a catalogue that does not compile gives none either, and its reason is written
to ``REPORT`` (read back by :func:`failures`). The GNU format is written: entries sorted by
their key (``context\\x04msgid``, plural ids joined by ``\\0``), no hash table. As ``msgfmt``
does, fuzzy entries (but the header), untranslated ones and obsolete ones (``#~``) are left
out; bytes are kept in the catalogue's charset, which must decode them.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import struct
import sys
from collections.abc import Sequence

MAGIC = 0x950412DE
REPORT = "translations.json"  # in the re-run's record folder
# Charsets whose multi-byte characters may hold the bytes of `"` or `\`: read as text.
_SPLIT_BYTES = {"shift_jis", "cp932", "big5", "big5hkscs", "gbk", "gb18030", "johab", "cp949"}
_SPLIT_BYTES |= {"cp950", "cp936", "shift_jisx0213", "shift_jis_2004"}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
_ESCAPES |= {"\\": "\\", '"': '"', "'": "'", "?": "?"}
_KEYWORD = re.compile(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s*(\".*)$", re.S)


class Malformed(ValueError):
    """A catalogue ``msgfmt`` would refuse, with the line and what is wrong there."""


def _string(text: str, number: int) -> str:
    """The value of the C string literal ``text`` (a line's rest, starting with ``"``)."""
    out: list[str] = []
    i = 1
    while i < len(text):
        char = text[i]
        if char == '"':
            if text[i + 1 :].strip():
                raise Malformed(f"line {number}: text after the closing quote")
            return "".join(out)
        if char == "\\":
            i += 1
            nxt = text[i : i + 1]
            if nxt in _ESCAPES:
                out.append(_ESCAPES[nxt])
            elif nxt.isdigit() and nxt < "8":
                digits = re.match(r"[0-7]{1,3}", text[i:])
                assert digits is not None
                out.append(chr(int(digits.group(), 8) & 0xFF))
                i += len(digits.group()) - 1
            elif nxt == "x" and re.match(r"[0-9a-fA-F]", text[i + 1 : i + 2]):
                digits = re.match(r"[0-9a-fA-F]+", text[i + 1 :])
                assert digits is not None
                out.append(chr(int(digits.group(), 16) & 0xFF))
                i += len(digits.group())
            else:
                raise Malformed(f"line {number}: unknown escape sequence \\{nxt}")
        else:
            out.append(char)
        i += 1
    raise Malformed(f"line {number}: a string with no closing quote")


class _Entry:
    def __init__(self, fuzzy: bool, number: int) -> None:
        self.fuzzy, self.number = fuzzy, number
        self.context: str | None = None
        self.msgid: str | None = None
        self.plural: str | None = None
        self.strings: list[str] = []  # msgstr, or msgstr[0], msgstr[1], ...
        self.last = ""  # the field a continuation line extends


def parse(text: str) -> list[_Entry]:
    """The entries of the catalogue ``text``, obsolete ones left out."""
    entries: list[_Entry] = []
    entry: _Entry | None = None
    fuzzy = False

    def close() -> None:
        if entry is not None:
            if not entry.strings:
                raise Malformed(f"line {entry.number}: a message with no msgstr")
            entries.append(entry)

    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("#~"):
            fuzzy = False  # an obsolete entry's flags are its own
            continue
        if not line:
            continue
        if line.startswith("#"):
            if line.startswith("#,"):
                fuzzy = fuzzy or "fuzzy" in (f.strip() for f in line[2:].split(","))
            continue
        if line.startswith('"'):
            if entry is None or not entry.last:
                raise Malformed(f"line {number}: a string that continues nothing")
            value = _string(line, number)
            if entry.last == "msgctxt":
                entry.context = (entry.context or "") + value
            elif entry.last == "msgid":
                entry.msgid = (entry.msgid or "") + value
            elif entry.last == "msgid_plural":
                entry.plural = (entry.plural or "") + value
            else:
                entry.strings[-1] += value
            continue
        found = _KEYWORD.match(line)
        if found is None:
            raise Malformed(f"line {number}: neither a keyword nor a string nor a comment")
        keyword, index, rest = found.group(1), found.group(2), found.group(3)
        value = _string(rest, number)
        starts = keyword == "msgctxt" or (
            keyword == "msgid" and (entry is None or entry.msgid is not None)
        )
        if starts:
            close()
            entry, fuzzy = _Entry(fuzzy, number), False
        if entry is None or (not starts and keyword != "msgid" and entry.msgid is None):
            raise Malformed(f"line {number}: {keyword} with no msgid before it")
        if keyword == "msgctxt":
            entry.context = value
        elif keyword == "msgid":
            entry.msgid = value
        elif keyword == "msgid_plural":
            if entry.plural is not None or entry.strings:
                raise Malformed(f"line {number}: msgid_plural out of place")
            entry.plural = value
        elif index is None:
            if entry.plural is not None or entry.strings:
                raise Malformed(f"line {number}: msgstr out of place (msgstr[N] expected?)")
            entry.strings.append(value)
        else:
            if entry.plural is None or int(index) != len(entry.strings):
                raise Malformed(f"line {number}: msgstr[{index}] out of place")
            entry.strings.append(value)
        entry.last = keyword if index is None else "msgstr"
    close()
    return entries


def _charset(entries: Sequence[_Entry]) -> str | None:
    """The charset the header entry names (as ``gettext`` reads it), if any."""
    header = next((e for e in entries if e.context is None and e.msgid == ""), None)
    for line in header.strings[0].split("\n") if header is not None else ():
        key, _, value = line.partition(":")
        if key.strip().lower() == "content-type" and "charset=" in value:
            return value.split("charset=")[1].strip() or None
    return None


def _codec(charset: str) -> str:
    try:
        return codecs.lookup(charset).name
    except LookupError:
        raise Malformed(f"its header names the charset {charset!r}, which is unknown") from None


def compile_po(data: bytes) -> bytes:
    """The ``.mo`` of the catalogue ``data``; :class:`Malformed` when ``msgfmt`` would refuse
    it or ``gettext`` could not read what it makes."""
    # Read byte for byte (latin-1), or as text where a character's bytes may hold `"` or `\`.
    sniffed = re.search(rb"charset=([-\w.:]+)", data)
    try:
        codec = codecs.lookup(sniffed.group(1).decode()).name if sniffed else ""
    except LookupError:  # the header's is checked below
        codec = ""
    codec = codec if codec in _SPLIT_BYTES else "latin-1"
    try:
        entries = parse(data.decode(codec))
    except UnicodeDecodeError as exc:
        raise Malformed(f"it is not valid {codec} (byte {exc.start})") from None
    charset = _charset(entries)
    if charset is not None and _codec(charset) in _SPLIT_BYTES - {codec}:
        raise Malformed(f"its header's charset {charset} is not the one it names first")
    catalogue: dict[bytes, bytes] = {}
    seen: set[tuple[str | None, str | None]] = set()
    for entry in entries:
        if (entry.context, entry.msgid) in seen:
            raise Malformed(f"line {entry.number}: a message defined twice")
        seen.add((entry.context, entry.msgid))
        header = entry.context is None and entry.msgid == ""
        if not entry.strings[0] or (entry.fuzzy and not header):
            continue
        key = (entry.msgid or "") + ("" if entry.plural is None else "\0" + entry.plural)
        key = key if entry.context is None else entry.context + "\x04" + key
        try:
            pair = key.encode(codec), "\0".join(entry.strings).encode(codec)
            for part in pair:
                part.decode(charset or "ascii")
        except UnicodeError:
            what = f"valid {charset}" if charset else "ASCII, and its header names no charset"
            raise Malformed(f"line {entry.number}: the text is not {what}") from None
        catalogue[pair[0]] = pair[1]
    return mo_bytes(catalogue)


def mo_bytes(catalogue: dict[bytes, bytes]) -> bytes:
    """A GNU ``.mo`` file of ``catalogue`` (keys and values as stored), keys sorted."""
    keys = sorted(catalogue)
    start = 7 * 4 + 16 * len(keys)
    ids, strs, originals, translations = [], [], [], []
    at = 0
    for key in keys:
        originals.append(struct.pack("<2I", len(key), start + at))
        ids.append(key + b"\0")
        at += len(key) + 1
    for key in keys:
        value = catalogue[key]
        translations.append(struct.pack("<2I", len(value), start + at))
        strs.append(value + b"\0")
        at += len(value) + 1
    count = len(keys)
    header = struct.pack("<7I", MAGIC, 0, count, 28, 28 + 8 * count, 0, start)
    return b"".join([header, *originals, *translations, *ids, *strs])


def _inside(path: str, top: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), top]) == top


def compile_in(checkout: str, names: Sequence[str]) -> list[list[str]]:
    """Write each ``.mo`` of ``names`` (relative) in ``checkout`` from the ``.po`` of the same
    name there; return ``[name, po, why]`` of each whose ``.po`` does not compile. One the
    checkout already has, or whose ``.po`` it lacks, is left out."""
    top = os.path.realpath(checkout)
    failed = []
    for name in names:
        if not name.endswith(".mo") or os.path.isabs(name) or ".." in name.split("/"):
            continue
        po = name[: -len(".mo")] + ".po"
        source, there = os.path.join(checkout, po), os.path.join(checkout, name)
        if not os.path.isfile(source) or os.path.lexists(there):
            continue
        if not (_inside(source, top) and _inside(os.path.dirname(there), top)):
            failed.append([name, po, "it leads out of the checkout"])
            continue
        try:
            with open(source, "rb") as file:
                data = compile_po(file.read())
            with open(there, "xb") as out:
                out.write(data)
        except Malformed as exc:
            failed.append([name, po, str(exc)])
        except Exception as exc:  # any other: the base runs without it, and says why
            failed.append([name, po, f"{type(exc).__name__}: {exc}"])
    return failed


def failures(folder: str) -> tuple[str, ...]:
    """Why base answers say nothing after :func:`compile_in` ran for the re-run recording
    into ``folder``: each ``.mo`` the base ran without, as its ``.po`` did not compile."""
    try:
        with open(os.path.join(folder, REPORT), encoding="utf-8") as file:
            failed = json.load(file)
    except (OSError, ValueError):
        return ()
    return tuple(
        f"compiled translation {name}: the base's {po} does not compile ({why}), so the base "
        f"ran without {name}; `base_setup` can build it there"
        for name, po, why in failed
    )


if __name__ == "__main__":
    found = compile_in(sys.argv[1], sys.argv[3:])
    if found:
        with open(sys.argv[2], "w", encoding="utf-8") as report:
            json.dump(found, report)
