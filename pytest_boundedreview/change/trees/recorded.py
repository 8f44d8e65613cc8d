"""Whether each file git records is the file on disk that the tests ran.

``git add`` may convert a file as it records it: a clean filter (``filter=NAME`` with
``filter.NAME.clean`` or ``.process``) may rewrite any byte, ``ident`` collapses ``$Id: ...$``
and ``working-tree-encoding`` re-encodes the text (UTF-7 turns ``a +- b`` into ``a + b``). The
tree a review names then holds other code than the tests ran, and the tree is named as clean
by every path that compares trees, since the conversion runs on both sides. So the working
tree's bytes of each file one of these attributes applies to are compared with its recorded
blob. Every file of the tree counts, changed or not: a conversion can hide an edit entirely
(an unchanged blob for a file that changed on disk), and the recorded code the change works
with is then not the code it was tested with.

``text``, ``eol`` and ``core.autocrlf`` are not asked for: on the way in they only turn CRLF
into LF, a difference accepted below for any file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

from .. import git
from .livetree import CONVERTED, shown

# The attributes whose conversion can record other text than the file holds, asked for by
# pathspec magic: each file of the tree that has any of them set, unset or valued.
CONVERTING = ("filter", "ident", "working-tree-encoding")
_ANY = ":(exclude,attr:" + " ".join(f"!{name}" for name in CONVERTING) + ")"
_SYMLINK, _GITLINK = "120000", "160000"
_EMPTY_TREES = {
    40: "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    64: "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
}
# A Git LFS pointer (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md): it names its
# content by SHA-256 and size, so the file it stands for can be checked without the filter.
_LFS = re.compile(
    rb"version https://git-lfs\.github\.com/spec/v1\n"
    rb"(?:[a-z0-9.-]+ [^\n]*\n)*?oid sha256:(?P<oid>[0-9a-f]{64})\n"
    rb"(?:[a-z0-9.-]+ [^\n]*\n)*?size (?P<size>[0-9]+)\n(?:[a-z0-9.-]+ [^\n]*\n)*\Z"
)


class Converted:
    """The files of the tree ``live`` (the working tree, by content, as ``git add`` wrote
    it) that a converting attribute applies to, asked of git now; :meth:`unlike` compares
    them with the disk once the caller's own work is done."""

    def __init__(self, repo: git.Repo, live: str) -> None:
        self.repo = repo
        empty = _EMPTY_TREES[len(live)]  # the tree ids of the repository's hash
        args = ["diff-tree", "-r", "-z", "--no-renames", empty, live, "--", _ANY]
        self._listed = git.Started(args, repo.root)

    def unlike(self) -> tuple[str, ...]:
        """The files whose bytes on disk the recorded blob does not stand for, each named
        with :data:`CONVERTED`; nothing when no converting attribute applies."""
        out = self._listed.result().stdout
        if not out:
            return ()
        fields = out.split(b"\0")
        # ":000000 <mode> <null> <blob> A", then the path
        blobs = {}
        for meta, name in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.decode().split()
            if len(parts) == 5 and parts[1] not in (_SYMLINK, _GITLINK):
                blobs[git.decode(name)] = parts[3]
        read = git.read_objects(self.repo.root, sorted(set(blobs.values())))
        found = []
        for path, blob in sorted(blobs.items()):
            recorded = read.get(blob)
            if recorded is None or not stands_for(recorded, self.repo.root / path):
                found.append(f"{shown(path)} ({CONVERTED})")
        return tuple(found)

    def cancel(self) -> None:
        self._listed.cancel()


def stands_for(recorded: bytes, path: Path) -> bool:
    """Whether the blob ``recorded`` is the regular file ``path``: the same bytes, the same
    but for line endings (CRLF on disk, LF recorded: what Python's reading of source and every
    checkout with ``text``/``eol`` fold), or a Git LFS pointer naming exactly its bytes. A
    file a sparse checkout leaves out is not on disk: no test ran it, nor other bytes."""
    try:
        about = os.lstat(path)
    except FileNotFoundError:
        return True
    try:
        if not stat.S_ISREG(about.st_mode):
            return False
        pointer = _LFS.match(recorded) if len(recorded) < 1024 else None
        if pointer is not None and about.st_size != len(recorded):  # the content, not the pointer
            return int(pointer["size"]) == about.st_size and _sha256(path) == pointer["oid"]
        on_disk = path.read_bytes()
    except OSError:
        return False
    return recorded == on_disk or on_disk.replace(b"\r\n", b"\n") == recorded


def _sha256(path: Path) -> bytes:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest().encode()
