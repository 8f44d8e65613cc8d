"""The frozen scope of a change: which files and which lines it touches.

Paths come from ``git diff --raw -z`` (exact bytes, no quoting); line numbers come from the
unified diff parsed with unidiff. git prints both in the same order, one entry per file.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Literal

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchedFile, PatchSet

from ..core.errors import DiffParseError
from ..models.record import record

ChangeStatus = Literal["added", "modified", "deleted", "renamed", "copied", "type-changed"]

_STATUS = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type-changed",
}
SUBMODULE_MODE = "160000"
SYMLINK_MODE = "120000"


@record(frozen=True)
class FileChange:
    """One changed file. ``path`` is the new path (the old one for a deletion)."""

    path: str
    status: ChangeStatus
    old_path: str | None = None
    old_mode: str | None = None
    new_mode: str | None = None
    binary: bool = False
    added: frozenset[int] = field(default_factory=frozenset)
    removed: frozenset[int] = field(default_factory=frozenset)
    added_text: Mapping[int, str] = field(default_factory=dict, compare=False, repr=False)
    removed_text: Mapping[int, str] = field(default_factory=dict, compare=False, repr=False)

    @property
    def mode_only(self) -> bool:
        """True when only the file mode changed (e.g. ``chmod +x``)."""
        return (
            self.status == "modified"
            and self.old_mode != self.new_mode
            and not (self.added or self.removed or self.binary)
        )

    @property
    def submodule(self) -> bool:
        return SUBMODULE_MODE in (self.old_mode, self.new_mode)

    @property
    def symlink(self) -> bool:
        return SYMLINK_MODE in (self.old_mode, self.new_mode)


@record(frozen=True)
class Scope:
    """Changed files by path, with O(1) line membership."""

    files: Mapping[str, FileChange] = field(default_factory=dict)

    def __iter__(self) -> Iterator[FileChange]:
        return iter(self.files.values())

    def __len__(self) -> int:
        return len(self.files)

    def __contains__(self, path: object) -> bool:
        return path in self.files

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(self.files)

    def is_added(self, path: str, line: int) -> bool:
        """Whether ``line`` of ``path`` at the snapshot is an added or changed line."""
        change = self.files.get(path)
        return change is not None and line in change.added

    def is_removed(self, path: str, line: int) -> bool:
        """Whether ``line`` of ``path`` at the base was removed by the change."""
        change = self.files.get(path)
        return change is not None and line in change.removed


def _parse_raw(raw: str) -> list[tuple[str, str, str, str, str | None]]:
    """``git diff --raw -z`` → (status letter, old mode, new mode, path, old path)."""
    fields = raw.split("\0")
    entries: list[tuple[str, str, str, str, str | None]] = []
    i = 0
    while i < len(fields) and fields[i]:
        meta = fields[i].lstrip(":").split(" ")
        old_mode, new_mode, letter = meta[0], meta[1], meta[4][0]
        if letter in "RC":
            old, new = fields[i + 1], fields[i + 2]
            entries.append((letter, old_mode, new_mode, new, old))
            i += 3
        else:
            entries.append((letter, old_mode, new_mode, fields[i + 1], None))
            i += 2
    return entries


def _lines(sections: list[PatchedFile]) -> tuple[dict[int, str], dict[int, str], bool]:
    """Added lines by new number and removed lines by old number, with their text."""
    added: dict[int, str] = {}
    removed: dict[int, str] = {}
    for line in (ln for pf in sections for hunk in pf for ln in hunk):
        if line.is_added and line.target_line_no:
            added[line.target_line_no] = line.value.rstrip("\r\n")
        elif line.is_removed and line.source_line_no:
            removed[line.source_line_no] = line.value.rstrip("\r\n")
    return added, removed, any(pf.is_binary_file for pf in sections)


def parse_scope(raw: str, patch: str) -> Scope:
    """Build a :class:`Scope` from ``git diff --raw -z`` and the unified diff of one range."""
    try:
        entries = _parse_raw(raw)
    except IndexError:
        raise DiffParseError(f"could not read git's file list: {raw[:200]!r}") from None
    try:
        patched = list(PatchSet(patch))
    except (UnidiffParseError, ValueError, IndexError) as exc:
        raise DiffParseError(f"could not parse the diff: {exc}") from exc
    # A type change (file <-> symlink or submodule) is one raw entry but two patch sections:
    # the old object deleted, the new one created.
    wanted = sum(2 if letter == "T" else 1 for letter, *_ in entries)
    if wanted != len(patched):
        raise DiffParseError(
            f"could not parse the diff: git listed {len(entries)} files "
            f"but the patch holds {len(patched)} sections"
        )
    files: dict[str, FileChange] = {}
    sections = iter(patched)
    for letter, old_mode, new_mode, path, old_path in entries:
        taken = [next(sections) for _ in range(2 if letter == "T" else 1)]
        added_text, removed, binary = _lines(taken)
        files[path] = FileChange(
            path=path,
            status=_STATUS.get(letter, "modified"),  # type: ignore[arg-type]
            old_path=old_path,
            old_mode=None if old_mode == "000000" else old_mode,
            new_mode=None if new_mode == "000000" else new_mode,
            binary=binary,
            added=frozenset(added_text),
            removed=frozenset(removed),
            added_text=added_text,
            removed_text=removed,
        )
    return Scope(files=files)
