"""A re-run in a copy of the repository given the working tree's rewritten test modules where
the copy's file has the same bytes.

pytest rewrites a test module's assertions and compiles it when it is imported, and keeps the
result in ``__pycache__``. A fresh checkout of the base has no such cache, so its re-run
rewrites every test file it collects, which can cost more than running the failures (idna's
6,400-test module: about 0.6 s). pytest 9.2 and later check a rewritten module by the hash of
its source's bytes and point its code at the file it is loaded for: the working tree's pyc of a
file is the copy's when the copy's file has the same bytes, which the hash in its header says.
Earlier versions check the file's time instead, and nothing is given then.

The re-run trusts the working tree's cache as the session's own run did: the session loaded
the same pyc for the same bytes. Writes go to the copy only (never with ``sys.pycache_prefix``
set, which would put them elsewhere), and a pyc the copy already holds for its bytes is kept.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

_CHECKED_HASH = b"\x03\x00\x00\x00"  # a pyc checked by its source's hash (PEP 552)


def give(live: Path, copy: Path, files: Iterable[Path]) -> list[Path]:
    """Give each of ``files`` (Python files in ``copy``, a copy of the repository at ``live``)
    the rewritten pyc of the same file in ``live`` when both files have the same bytes and the
    copy has none for them yet; return the files given one."""
    rewrite = _rewriting()
    if rewrite is None:
        return []
    get_cache_dir, tail = rewrite
    top = os.path.realpath(copy)
    given = []
    for file in files:
        try:
            relative = file.relative_to(copy)
        except ValueError:
            continue
        name = file.name[:-3] + tail
        there = get_cache_dir(file) / name
        try:
            source = file.read_bytes()
            digest = importlib.util.source_hash(source)[:8]
            if _header(there) == digest:
                continue  # the copy has it already
            data = (get_cache_dir(live / relative) / name).read_bytes()
        except OSError:
            continue
        if data[:4] != importlib.util.MAGIC_NUMBER or data[4:16] != _CHECKED_HASH + digest:
            continue
        folder = os.path.realpath(there.parent.parent)
        if os.path.commonpath([folder, top]) != top:  # a link out of the copy
            continue
        if _write(there, data):
            given.append(file)
    return given


def conftests(root: Path, paths: Iterable[Path]) -> Iterator[Path]:
    """The ``conftest.py`` files pytest loads for ``paths`` in the rootdir ``root``: in each
    folder from a path up to ``root``, and in the ``test*`` folders of a folder given."""
    seen: set[Path] = set()
    for path in paths:
        folders = [path, *path.parents] if path.is_dir() else list(path.parents)
        if path.is_dir():
            folders += [p for p in path.glob("test*") if p.is_dir()]
        for folder in folders:
            if folder != root and not folder.is_relative_to(root):
                continue
            file = folder / "conftest.py"
            if file not in seen:
                seen.add(file)
                if file.is_file():
                    yield file


def _rewriting() -> tuple[Callable[[Path], Path], str] | None:
    """pytest's ``get_cache_dir`` and pyc name tail when its cache can be given: pyc files
    checked by hash, and code pointed at the file it is loaded for."""
    if sys.pycache_prefix:
        return None
    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return None
    needed = ("get_cache_dir", "PYC_TAIL", "_fix_code_filename")
    if not all(hasattr(rewrite, name) for name in needed):
        return None
    return rewrite.get_cache_dir, rewrite.PYC_TAIL


def _header(pyc: Path) -> bytes | None:
    """The source hash a pytest pyc holds, ``None`` when there is none."""
    try:
        with open(pyc, "rb") as file:
            data = file.read(16)
    except OSError:
        return None
    return data[8:16] if data[4:8] == _CHECKED_HASH else None


def _write(pyc: Path, data: bytes) -> bool:
    partial = pyc.with_name(f"{pyc.name}.{os.getpid()}")
    try:
        pyc.parent.mkdir(exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, pyc)
    except OSError:
        return False
    return True
