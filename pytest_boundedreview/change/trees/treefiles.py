"""A read-only view of the files of one frozen tree, read from git's object store.

Nothing is ever opened on disk: a symlink is followed through the tree itself, and one that
leads outside the tree (or in a circle) resolves to nothing. Blobs are read in one batch.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Iterable

from .. import git

LINK_MODE = "120000"
MAX_LINK_HOPS = 40


def split_lines(text: str) -> list[str]:
    """Lines as git and editors count them: split on ``\\n`` only (a form feed or U+2028
    inside a line does not start a new one), a trailing ``\\r`` dropped."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


class TreeFiles:
    """The files of ``tree``: their modes, and their text lines on demand."""

    def __init__(self, repo: git.Repo, tree: str) -> None:
        self.repo = repo
        raw = git.run(["ls-tree", "-r", "-z", "--full-tree", tree], repo.root).stdout
        self._entries: dict[str, tuple[str, str, str]] = {}
        for record in raw.split(b"\0"):
            if not record:
                continue
            meta, _, name = record.partition(b"\t")
            mode, kind, oid = meta.decode().split()
            self._entries[git.decode(name)] = (mode, kind, oid)
        self._blobs: dict[str, bytes | None] = {}
        self._lines: dict[str, list[str] | None] = {}
        self._resolved: dict[str, str | None] = {}

    def __contains__(self, path: str) -> bool:
        return path in self._entries

    def resolve(self, path: str) -> str | None:
        """The regular file ``path`` names, following symlinks inside the tree; ``None`` when
        it names nothing, a folder, a submodule, or a link leading outside the tree."""
        if path not in self._resolved:
            self._resolved[path] = self._follow(path)
        return self._resolved[path]

    def _link_target(self, link: str, oid: str) -> str | None:
        """Where the symlink ``link`` points, inside the tree, or ``None`` when outside."""
        target = git.decode(self._read([oid])[oid] or b"")
        if not target or target.startswith("/"):
            return None
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(link), target))
        return None if joined in (".", "..") or joined.startswith("../") else joined

    def _follow(self, path: str) -> str | None:
        """Resolve symlinks part by part (a linked folder in the middle too), within the tree."""
        hops = 0
        parts = path.split("/")
        index = 1
        while index <= len(parts):
            prefix = "/".join(parts[:index])
            entry = self._entries.get(prefix)
            if entry is not None and entry[0] == LINK_MODE:
                hops += 1
                target = self._link_target(prefix, entry[2])
                if target is None or hops > MAX_LINK_HOPS:
                    return None
                parts = target.split("/") + parts[index:]
                index = 1
                continue
            index += 1
        resolved = "/".join(parts)
        entry = self._entries.get(resolved)
        return resolved if entry is not None and entry[1] == "blob" else None

    def lines(self, path: str) -> list[str] | None:
        """The text lines of the regular file ``path`` (already resolved), or ``None`` when it
        is not text (binary or not UTF-8)."""
        if path in self._lines:
            return self._lines[path]
        entry = self._entries.get(path)
        if entry is None:
            return None
        data = self._read([entry[2]])[entry[2]]
        text = None
        if data is not None and b"\0" not in data:
            with contextlib.suppress(UnicodeDecodeError):
                text = split_lines(data.decode("utf-8"))
        self._lines[path] = text
        return text

    def prefetch(self, paths: Iterable[str]) -> None:
        """Read the blobs of ``paths`` in one batch (unknown paths are ignored)."""
        self._read([self._entries[p][2] for p in paths if p in self._entries])

    def _read(self, oids: list[str]) -> dict[str, bytes | None]:
        missing = sorted({oid for oid in oids if oid not in self._blobs})
        if missing:
            self._blobs.update(git.read_objects(self.repo.root, missing))
        return {oid: self._blobs[oid] for oid in oids}
