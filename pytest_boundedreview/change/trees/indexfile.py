"""A small git index file read from its bytes: the paths it tracks, and whether it marks any
entry assume-unchanged or skip-worktree.

Two questions of every session would otherwise take a git process each: the snapshot clears
those bits before ``git add`` reads the working tree (see livetree.py), and the modules the
tests imported are checked against git's ignore rules unless git tracks them (imported.py).
A small index of version 2 or 3 (git's default) is read here instead, each entry walked by
its documented layout (gitformat-index). Anything else, or anything that does not add up (a
checksum that is not the SHA-1 of the rest: a SHA-256 repository, ``index.skipHash``, a torn
file; a version 4 index, an entry that runs past the end; an extension that keeps entries
elsewhere: a split index's ``link`` to its shared file, a sparse index's ``sdir``, or any
other a reader must understand), is ``None``: git is asked.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

# Entries read here at most: walking one costs about 0.35 µs, a git process about 1.5 ms.
MAX_ENTRIES = 3000
_HEADER = struct.Struct(">4sII")
_FIXED = 62  # ten 32-bit stat and mode fields, a 20-byte object id, 16 bits of flags
_ASSUME_VALID, _EXTENDED, _NAME_MASK = 0x8000, 0x4000, 0x0FFF
_SKIP_WORKTREE = 0x4000  # in the extended flags (version 3)
_CHECKSUM = 20


def flagged(index: Path) -> bool | None:
    """True when an entry of ``index`` is marked assume-unchanged or skip-worktree, False when
    none is, ``None`` when the file cannot be read that way. A missing index marks nothing."""
    entries = _read(index)
    return None if entries is None else entries[0]


def tracked(index: Path) -> frozenset[str] | None:
    """The paths ``index`` holds (relative to the top of the work tree, undecodable bytes as
    surrogate escapes), ``None`` when the file cannot be read that way."""
    entries = _read(index)
    if entries is None:
        return None
    return frozenset(name.decode("utf-8", "surrogateescape") for name in entries[1])


def _read(index: Path) -> tuple[bool, list[bytes]] | None:
    try:
        data = index.read_bytes()
    except FileNotFoundError:
        return False, []
    except OSError:
        return None
    return _entries(data)


def _entries(data: bytes) -> tuple[bool, list[bytes]] | None:
    """Whether any entry is marked, and every entry's path."""
    if len(data) < _HEADER.size + _CHECKSUM:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3) or count > MAX_ENTRIES:
        return None
    end = len(data) - _CHECKSUM
    if hashlib.sha1(memoryview(data)[:end], usedforsecurity=False).digest() != data[end:]:
        return None
    marked = False
    names = []
    position = _HEADER.size
    for _ in range(count):
        if position + _FIXED > end:
            return None
        (flags,) = struct.unpack_from(">H", data, position + _FIXED - 2)
        name_at = position + _FIXED
        if flags & _EXTENDED:
            if version < 3:
                return None
            (extended,) = struct.unpack_from(">H", data, name_at)
            marked = marked or bool(extended & _SKIP_WORKTREE)
            name_at += 2
        marked = marked or bool(flags & _ASSUME_VALID)
        length = flags & _NAME_MASK
        if length == _NAME_MASK:  # a name of 4095 bytes or more: up to its NUL
            length = data.find(b"\0", name_at, end) - name_at
            if length < 0:
                return None
        # The name, then 1 to 8 NULs to the next multiple of 8 from the entry's start.
        size = name_at - position + length
        padded = position + (size + 8) // 8 * 8
        if padded > end or data[name_at + length : padded].strip(b"\0"):
            return None
        names.append(data[name_at : name_at + length])
        position = padded
    return (marked, names) if _only_optional_extensions(data, position, end) else None


def _only_optional_extensions(data: bytes, position: int, end: int) -> bool:
    """Whether the extensions from ``position`` to ``end`` add up, each a 4-byte signature
    and a 32-bit size, and all are optional ones (a signature starting with ``A`` to ``Z``):
    none keeps entries (or their bits) outside the ones read."""
    while position < end:
        if position + 8 > end:
            return False
        signature = data[position : position + 4]
        if not b"A"[0] <= signature[0] <= b"Z"[0]:
            return False  # required: "link" (a split index), "sdir" (a sparse one), ...
        (size,) = struct.unpack_from(">I", data, position + 4)
        position += 8 + size
    return position == end
