"""The suite as files: what ``pytest`` with no arguments collects in the checkout under the
project's own configuration, and which of those files a session's paths and ignores left out.
Files, not folders, are compared: ``pytest tests`` is the whole suite when every test file lies
under ``tests``, and ``--ignore benchmark.py`` leaves nothing out when that file holds no test."""

from __future__ import annotations

import fnmatch
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DOCTEST_GLOB = "test*.txt"  # pytest's default --doctest-glob


@dataclass(frozen=True)
class Collected:
    """What the configuration collects: ``testpaths`` (relative to the rootdir; none means
    the rootdir), ``python_files`` patterns, ``norecursedirs``, and doctests."""

    testpaths: Sequence[str]
    patterns: Sequence[str]
    skipped_dirs: Sequence[str]
    doctest_modules: bool = False
    doctest_globs: Sequence[str] = ()


@dataclass(frozen=True)
class Ignores:
    """``--ignore`` paths and ``--ignore-glob`` patterns, absolute, as pytest applies them to
    each folder and file it would enter."""

    paths: frozenset[Path] = frozenset()
    globs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.paths or self.globs)

    def hit(self, file: Path, top: Path) -> bool:
        """Whether pytest, recursing from ``top``, never reaches ``file``."""
        for path in [file, *file.parents]:
            if path in self.paths or any(fnmatch.fnmatch(str(path), g) for g in self.globs):
                return True
            if path == top:
                break
        return False


def _tracked(rootdir: Path, paths: Sequence[str]) -> list[str]:
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--", *(paths or ["."])],
        cwd=rootdir,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        return []
    return [n for n in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if n]


def _has_doctest(file: Path) -> bool:
    try:
        return b">>>" in file.read_bytes()
    except OSError:
        return False


def suite_files(rootdir: Path, collected: Collected, ignores: Ignores = Ignores()) -> list[str]:
    """The suite's test files, relative to ``rootdir``: files git tracks under the suite's
    paths whose names match ``python_files`` (and, with doctests on, Python files holding a
    ``>>>`` example and files matching ``--doctest-glob``), outside ``norecursedirs``, minus
    what the configuration's own ignores leave out."""
    found = []
    globs = [*collected.doctest_globs] or [DOCTEST_GLOB]
    for name in _tracked(rootdir, collected.testpaths):
        parts = name.split("/")
        if any(fnmatch.fnmatch(d, p) for d in parts[:-1] for p in collected.skipped_dirs):
            continue
        base = parts[-1]
        test = any(fnmatch.fnmatch(base, p) for p in collected.patterns)
        test = test or (any(fnmatch.fnmatch(base, g) for g in globs) and base.endswith(".txt"))
        if not test and collected.doctest_modules and base.endswith(".py"):
            test = base not in ("setup.py", "__main__.py") and _has_doctest(rootdir / name)
        if test and not (ignores and ignores.hit(rootdir / name, rootdir)):
            found.append(name)
    return sorted(found)


def left_out(
    suite: Sequence[str], rootdir: Path, given: Sequence[Path], ignores: Ignores
) -> list[str]:
    """The files of ``suite`` that the paths ``given`` (absolute) do not reach, or that
    ``ignores`` given for this run keep pytest from."""
    missed = []
    for name in suite:
        file = rootdir / name
        tops = [g for g in given if file == g or file.is_relative_to(g)]
        if not tops or all(ignores.hit(file, top) for top in tops):
            missed.append(name)
    return missed
