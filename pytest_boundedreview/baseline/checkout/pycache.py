"""A re-run in a copy of the repository given the working tree's bytecode (pytest's rewritten
test modules, Python's compiled modules) where the copy's file has the same bytes.

pytest rewrites a test module's assertions and compiles it when it is imported, and keeps the
result in ``__pycache__``. A fresh checkout of the base has no such cache, so its re-run
rewrites every test file it collects, which can cost more than running the failures (idna's
6,400-test module: about 0.6 s). pytest 9.2 and later check a rewritten module by the hash of
its source's bytes and point its code at the file it is loaded for: the working tree's pyc of a
file is the copy's when the copy's file has the same bytes, which the hash in its header says.
Earlier versions check the file's time instead, and nothing is given then.

The same holds for the other modules the re-run imports from the copy (the project's own
code): :func:`give_compiled`, called by ``redirect.py`` as each is found, gives the copy the
working tree's compiled module of a file with the same bytes when that module is checked by
its source's hash (PEP 552: ``py_compile``/``compileall`` with ``--invalidation-mode``, or
``SOURCE_DATE_EPOCH`` set), which Python then loads for the copy's file.

A pyc is given only when its header holds the hash of the copy's bytes: what it was compiled
from is then known. One checked by its source's time and size (what Python's import writes)
says nothing of the bytes: a pyc compiled from the change's bytes, whose file was then given
back the base's with the same size and time, matches it. Proving such a pyc the base's means
compiling the base's bytes and comparing, which costs what giving it saves: it is not given,
and the re-run compiles that module itself.

Writes go to the copy only (never with ``sys.pycache_prefix`` set, which would put them
elsewhere), and a pyc the copy already holds for its bytes is kept.
Loaded on its own by ``redirect.py``, this file imports only the standard library (pytest's
rewriting is asked of pytest, once it is there).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import threading
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
        relative = _relative(file, copy)
        if relative is None:
            continue
        name = file.name[:-3] + tail
        there = get_cache_dir(file) / name
        try:
            digest = importlib.util.source_hash(file.read_bytes())
            if _current(there, file, digest):
                continue  # the copy has it already
            data = (get_cache_dir(live / relative) / name).read_bytes()
        except OSError:
            continue
        if data[:4] != importlib.util.MAGIC_NUMBER or data[4:16] != _CHECKED_HASH + digest:
            continue
        if _inside(there.parent.parent, top) and _write(there, data):
            given.append(file)
    return given


def give_compiled(live: str, copy: str, relative: str) -> bool:
    """Give the copy's module file ``relative`` (a ``.py`` file of ``copy``, a copy of the
    repository at ``live``) the working tree's compiled module of the same file when both
    files have the same bytes and the copy has no current one; whether it was given."""
    if sys.pycache_prefix or not relative.endswith(".py"):
        return False
    mine, theirs = os.path.join(copy, relative), os.path.join(live, relative)
    try:
        there = Path(importlib.util.cache_from_source(mine))
        here = importlib.util.cache_from_source(theirs)
        with open(mine, "rb") as file:
            source = file.read()
        digest = importlib.util.source_hash(source)
        if _current(there, Path(mine), digest):
            return False
        with open(here, "rb") as file:
            data = file.read()
        # Compiled from the copy's bytes, as its header's hash of them says; one checked by
        # time and size is no proof of its bytes (see above).
        same = _by_hash(data) and _matches(data, theirs, digest)
    except (OSError, ValueError, NotImplementedError):
        # A file missing or unreadable, or an interpreter with no bytecode file
        # (cache_from_source raises the last two): nothing to give.
        return False
    if not same or not _inside(there.parent.parent, os.path.realpath(copy)):
        return False
    return _write(there, importlib.util.MAGIC_NUMBER + _CHECKED_HASH + digest + data[16:])


# The files pytest reads its configuration from in a rootdir.
CONFIG_FILES = (
    *("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini"),
    *("pyproject.toml", "tox.ini", "setup.cfg"),
)


def same_configuration(live: Path, copy: Path, rootdir: Path, inipath: Path | None) -> bool:
    """Whether pytest's configuration files in the copy's ``rootdir`` (and the one it read,
    ``inipath``) have the working tree's bytes: a rewritten module depends on the configuration
    too (``enable_assertion_pass_hook``), not only on its source."""
    files = [rootdir / name for name in CONFIG_FILES] + ([inipath] if inipath else [])
    for file in files:
        relative = _relative(file, copy)
        if relative is not None and _read(file) != _read(live / relative):
            return False  # (a file outside the copy is the same file for both)
    return True


def _relative(file: Path, copy: Path) -> Path | None:
    """Where ``file`` lies in ``copy``, their links followed or not; ``None`` outside it."""
    if file.is_relative_to(copy):
        return file.relative_to(copy)
    real, top = file.resolve(), copy.resolve()
    return real.relative_to(top) if real.is_relative_to(top) else None


def _read(file: Path) -> bytes | None:
    try:
        return file.read_bytes()
    except OSError:
        return None


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


def _current(pyc: Path, source: Path, digest: bytes) -> bool:
    """Whether ``pyc`` is current for ``source``, whose bytes hash to ``digest``."""
    try:
        with open(pyc, "rb") as file:
            return _matches(file.read(16), str(source), digest)
    except OSError:
        return False


def _by_hash(pyc: bytes) -> bool:
    """Whether the header of ``pyc`` (its bytes) is checked by its source's hash (PEP 552)."""
    return pyc[4:8] in (b"\x01\x00\x00\x00", _CHECKED_HASH)


def _matches(pyc: bytes, source: str, digest: bytes) -> bool:
    """Whether the header of ``pyc`` (its bytes) is current for ``source``, whose bytes hash
    to ``digest``, as this interpreter checks it: by that hash or by the file's time and size
    (PEP 552)."""
    if pyc[:4] != importlib.util.MAGIC_NUMBER:  # (a torn header matches nothing below)
        return False
    if _by_hash(pyc):
        return pyc[8:16] == digest
    return pyc[4:8] == bytes(4) and pyc[8:16] == _stamp(source)


def _stamp(source: str) -> bytes:
    """The time and size of ``source`` as a pyc checked by them holds them."""
    info = os.stat(source)
    mtime, size = int(info.st_mtime) & 0xFFFFFFFF, info.st_size & 0xFFFFFFFF
    return mtime.to_bytes(4, "little") + size.to_bytes(4, "little")


def _inside(folder: Path, top: str) -> bool:
    """Whether ``folder`` (links followed) lies in ``top``: a link out of the copy is not."""
    return os.path.commonpath([os.path.realpath(folder), top]) == top


def _write(pyc: Path, data: bytes) -> bool:
    partial = pyc.with_name(f"{pyc.name}.{os.getpid()}.{threading.get_ident()}")
    try:
        pyc.parent.mkdir(exist_ok=True)
        partial.write_bytes(data)
        os.replace(partial, pyc)
    except OSError:
        return False
    return True
