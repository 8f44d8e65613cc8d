"""Where pytest recurses when it collects: its ``testpaths`` and ``norecursedirs``, from a
running session, or read from the project's pytest configuration file the way pytest finds
it (pytest's defaults when there is none), for the commands that run no session."""

from __future__ import annotations

import fnmatch
import functools
import glob
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...models.record import record
from ..configfile import toml

# pytest's own default of ``norecursedirs``; a configured value replaces it.
DEFAULT_NORECURSEDIRS = (
    "*.egg",
    ".*",
    "_darcs",
    "build",
    "CVS",
    "dist",
    "node_modules",
    "venv",
    "{arch}",
)
# The files pytest reads its configuration from, in its order within one folder.
FILES = (
    "pytest.toml",
    ".pytest.toml",
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
)
_INI_FILES = {"pytest.ini": "pytest", ".pytest.ini": "pytest", "tox.ini": "pytest"}


@record(frozen=True)
class Collection:
    """Where a pytest session started in ``rootdir`` collects, and where the rules came from."""

    rootdir: Path
    testpaths: tuple[str, ...] = ()
    norecursedirs: tuple[str, ...] = DEFAULT_NORECURSEDIRS
    source: str = "pytest's defaults"

    def collects(self, path: Path) -> bool:
        """Whether pytest recurses into the folder ``path`` (absolute): it lies in a collection
        root (a ``testpaths`` entry, else the rootdir), and no folder on the way down from
        that root, itself included, matches ``norecursedirs``."""
        for root in self._roots():
            if path != root and not path.is_relative_to(root):
                continue
            current = root
            for part in path.relative_to(root).parts:
                current = current / part
                if any(matches(pattern, current) for pattern in self.norecursedirs):
                    break
            else:
                return True
        return False

    def _roots(self) -> list[Path]:
        root = self.rootdir.resolve()
        roots: list[Path] = []
        for entry in self.testpaths:
            if glob.has_magic(entry):
                roots += [Path(p).resolve() for p in glob.glob(str(root / entry), recursive=True)]
            else:
                roots.append(Path(os.path.normpath(root / entry)))
        return roots or [root]


def matches(pattern: str, path: Path) -> bool:
    """pytest's ``fnmatch_ex``: a pattern without a separator matches the folder's name, one
    with a separator the end of its whole path."""
    if os.sep not in pattern:
        return fnmatch.fnmatch(path.name, pattern)
    if not os.path.isabs(pattern):
        pattern = f"*{os.sep}{pattern}"
    return fnmatch.fnmatch(str(path), pattern)


def from_session(
    rootdir: Path, testpaths: object, norecursedirs: object, source: str
) -> Collection:
    """The rules a running session uses (``config.getini`` values)."""
    return Collection(rootdir, words(testpaths), words(norecursedirs), source)


def from_files(start: Path, stop: Path) -> Collection:
    """The rules of the pytest configuration file pytest would use when started in ``start``:
    the first folder from ``start`` up to ``stop`` holding one (``pytest.toml``,
    ``pytest.ini``, ``pyproject.toml`` with a ``[tool.pytest]`` table, ``tox.ini`` with
    ``[pytest]``, ``setup.cfg`` with ``[tool:pytest]``); pytest's defaults, rooted at
    ``stop``, when there is none or it cannot be read (pytest itself would then refuse to
    start)."""
    found = _found(start, stop)
    if found is None:
        return Collection(stop)
    path, options = found
    return Collection(
        path.parent,
        words(options.get("testpaths", ())),
        words(options.get("norecursedirs", DEFAULT_NORECURSEDIRS)),
        str(path),
    )


def addopts_at(folder: Path) -> tuple[str, ...]:
    """The ``addopts`` of the configuration file pytest uses when started in ``folder`` (its
    rootdir): none when there is none or it cannot be read."""
    found = _found(folder, folder)
    return words(found[1].get("addopts", ())) if found is not None else ()


def _found(start: Path, stop: Path) -> tuple[Path, dict[str, Any]] | None:
    """The configuration file pytest would use from ``start`` (up to ``stop``) and its
    options; ``None`` when there is none or it cannot be read."""
    for folder in [start, *start.parents]:
        for name in FILES:
            path = folder / name
            if not path.is_file():
                continue
            try:
                options = _options(path)
            except (OSError, UnicodeDecodeError, ValueError):
                return None
            if options is not None:
                return path, options
        if folder == stop:
            break
    return None


def _options(path: Path) -> dict[str, Any] | None:
    """The pytest options of one configuration file, ``None`` when it holds none (a
    ``pytest.toml`` or ``pytest.ini`` always counts, as for pytest)."""
    return options_of(path.name, path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=16)
def options_of(name: str, text: str) -> dict[str, Any] | None:
    """The pytest options in ``text``, the content of a configuration file called ``name``;
    ``None`` when it holds none. Raises ``ValueError`` on a file pytest could not read
    either. Parsed once per process for the same file and text (a session reads its
    configuration file to find it, then for its options): callers only read what it
    returns."""
    if name.endswith(".toml"):
        document = toml().loads(text)
        if name != "pyproject.toml":
            table = document.get("pytest", {})
            return table if isinstance(table, dict) else {}
        tool = document.get("tool", {}).get("pytest")
        if not isinstance(tool, dict):
            return None
        ini = tool.get("ini_options")
        native = {k: v for k, v in tool.items() if k != "ini_options"}
        return native or (ini if isinstance(ini, dict) else None)
    import configparser  # an ini-style file: setup.cfg, tox.ini, pytest.ini

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text, name)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from exc
    section = _INI_FILES.get(name, "tool:pytest")
    if parser.has_section(section):
        return dict(parser.items(section))
    return {} if name in ("pytest.ini", ".pytest.ini") else None


def words(value: object) -> tuple[str, ...]:
    """An ``args`` or ``linelist`` option's value: a list as it is, a string split as a
    shell would."""
    if isinstance(value, str):
        return tuple(shlex.split(value))
    if isinstance(value, Sequence):
        return tuple(str(item) for item in value)
    return ()
