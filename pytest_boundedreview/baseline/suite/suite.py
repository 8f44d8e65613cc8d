"""The suite as files: what ``pytest`` with no arguments collects in the checkout under the
project's own configuration, and which of those files a session's paths and ignores left out.
Files, not folders, are compared: ``pytest tests`` is the whole suite when every test file lies
under ``tests``, and ``--ignore benchmark.py`` leaves nothing out when that file holds no test."""

from __future__ import annotations

import ast
import fnmatch
import functools
import glob
import os
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.pytestconfig.pytestini import matches
from ...models.record import record

if TYPE_CHECKING:
    import doctest

DOCTEST_GLOB = "test*.txt"  # pytest's default --doctest-glob
PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's default python_files


@functools.cache
def _parser() -> doctest.DocTestParser:
    import doctest  # only when doctests are collected

    return doctest.DocTestParser()


@record(frozen=True)
class Collected:
    """What the configuration collects: ``testpaths`` (relative to the rootdir; none means
    the rootdir), ``python_files`` patterns, ``norecursedirs``, and doctests."""

    testpaths: Sequence[str]
    patterns: Sequence[str]
    skipped_dirs: Sequence[str]
    doctest_modules: bool = False
    doctest_globs: Sequence[str] = ()


@record(frozen=True)
class Ignores:
    """``--ignore`` paths and ``--ignore-glob`` patterns, absolute, as pytest applies them to
    each folder and file it would enter below a path it was given (never to that path)."""

    paths: frozenset[Path] = frozenset()
    globs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.paths or self.globs)

    def hit(self, file: Path, top: Path) -> bool:
        """Whether pytest, recursing from the path ``top`` it was given, never reaches
        ``file``."""
        for path in [file, *file.parents]:
            if path == top:
                break
            if path in self.paths or any(fnmatch.fnmatch(str(path), g) for g in self.globs):
                return True
        return False


NO_IGNORES = Ignores()


def _roots(rootdir: Path, testpaths: Sequence[str]) -> list[str]:
    """The suite's folders relative to ``rootdir``, globs expanded as pytest expands them."""
    found: list[str] = []
    for entry in testpaths or ["."]:
        if glob.has_magic(entry):
            hits = sorted(glob.glob(str(rootdir / entry), recursive=True))
            found += [os.path.relpath(hit, rootdir) for hit in hits]
        else:
            found.append(entry)
    return found


def _tracked(rootdir: Path, testpaths: Sequence[str]) -> Iterator[str]:
    """Files git tracks under the suite's folders, and the files inside tracked links to
    folders and submodules (pytest walks into both)."""
    roots = _roots(rootdir, testpaths)
    if not roots:
        return
    proc = subprocess.run(
        ["git", "ls-files", "-z", "--", *(f":(literal){r}" for r in roots)],
        cwd=rootdir,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        return
    for name in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        if not name:
            continue
        if (rootdir / name).is_dir():  # a link to a folder, or a submodule
            for folder, dirs, files in os.walk(rootdir / name, followlinks=True):
                dirs[:] = [d for d in dirs if d != ".git"]
                yield from (os.path.relpath(Path(folder, f), rootdir) for f in files)
        else:
            yield name


def _has_examples(file: Path, python: bool) -> bool:
    """Whether ``file`` holds a doctest example: in a docstring of a Python module, anywhere
    in a text file."""
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if ">>>" not in text:
        return False
    if not python:
        return bool(_parser().get_examples(text))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, _DOCUMENTED))]
    docs = [ast.get_docstring(n, clean=False) for n in nodes]
    return any(_parser().get_examples(d) for d in docs if d)


_DOCUMENTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def suite_files(rootdir: Path, collected: Collected, ignores: Ignores = NO_IGNORES) -> list[str]:
    """The suite's test files, relative to ``rootdir``: files under the suite's folders whose
    names match ``python_files`` (and, with doctests on, Python files with a doctest example,
    and ``--doctest-glob`` files holding one), outside ``norecursedirs``, minus what the
    configuration's own ignores leave out."""
    found = []
    globs = [*collected.doctest_globs] or [DOCTEST_GLOB]
    patterns = [*collected.patterns] or [*PYTHON_FILES]
    for name in _tracked(rootdir, collected.testpaths):
        parts = name.split("/")
        if any(fnmatch.fnmatch(d, p) for d in parts[:-1] for p in collected.skipped_dirs):
            continue
        file = rootdir / name
        if any(matches(p, file) for p in patterns):
            test = True
        elif any(matches(g, file) for g in globs):
            test = _has_examples(file, python=False)
        else:
            python = name.endswith(".py") and parts[-1] not in ("setup.py", "__main__.py")
            test = collected.doctest_modules and python and _has_examples(file, python=True)
        if test and not (ignores and ignores.hit(file, rootdir)):
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
