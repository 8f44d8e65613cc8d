"""Finding and reading the ``[tool.bounded-review]`` table of a ``pyproject.toml``: the
nearest one, another revision's text, with a clear error for a file too large or not TOML."""

from __future__ import annotations

import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from .errors import ConfigError

TABLE = "tool.bounded-review"
MAX_CONFIG_BYTES = 4 * 1024 * 1024


def toml() -> ModuleType:
    """The TOML parser, imported when a file is there to parse (a project without a
    ``pyproject.toml`` never needs it)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 only
        import tomli as tomllib
    return tomllib


def read_toml(path: Path) -> dict[str, Any]:
    """The TOML file ``path`` as a table; :class:`ConfigError` naming the file when it cannot
    be read, is over :data:`MAX_CONFIG_BYTES`, is not UTF-8 or not TOML (with where)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: {len(data)} bytes is over the limit of {MAX_CONFIG_BYTES}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid UTF-8 at byte {exc.start}") from exc
    tomllib = toml()
    try:
        table: dict[str, Any] = tomllib.loads(text)
        return table
    except tomllib.TOMLDecodeError as exc:
        where = str(exc)
        if "(at line" not in where:  # "at end of document": say where that is
            lines = text.split("\n")
            where = f"{where} (at line {len(lines)}, column {len(lines[-1]) + 1})"
        raise ConfigError(f"{path}: TOML syntax error: {where}") from exc


def table_in(text: str) -> dict[str, Any] | None:
    """The ``[tool.bounded-review]`` table of a ``pyproject.toml``'s ``text`` (another
    revision's); ``None`` when it has none or is not TOML."""
    tomllib = toml()
    try:
        table = tomllib.loads(text).get("tool", {}).get("bounded-review")
    except (tomllib.TOMLDecodeError, AttributeError):
        return None
    return table if isinstance(table, dict) else None


def find_config(start: Path, stop: Path | None = None) -> tuple[Path | None, dict[str, Any]]:
    """The nearest ``pyproject.toml`` with a ``[tool.bounded-review]`` table, from ``start``
    upward (not above ``stop``), and that table; ``(None, {})`` when there is none."""
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            table = read_toml(candidate).get("tool", {}).get("bounded-review")
            if table is not None:
                if not isinstance(table, dict):
                    raise ConfigError(f"{candidate}: [{TABLE}] must be a table")
                return candidate, table
        if stop is not None and folder == stop:
            break
    return None, {}
