"""Hostile configuration: every key with a wrong type, unknown keys (top level and in each
table), a ceiling raise, a huge file, bad UTF-8, TOML syntax errors. Each is a ConfigError
naming the file, the key and the fix; none is ever applied in part."""

from __future__ import annotations

import dataclasses
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from pytest_boundedreview.core.configfile import MAX_CONFIG_BYTES
from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import Settings, load_settings
from pytest_boundedreview.core.settings.tables import (
    CheckConfig,
    LaneConfig,
    LoopConfig,
    PlanConfig,
    RoutingConfig,
    ScanConfig,
    SelectionConfig,
)


def _toml(value: Any) -> str:
    """``value`` as a TOML value of the wrong kind for most keys."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{}"


def _wrong(annotation: str) -> Any:
    """A value whose TOML type is wrong for a field annotated ``annotation``."""
    if annotation.startswith(("bool",)):
        return "yes"
    if annotation.startswith(("int", "float", "Seconds")) or "int |" in annotation:
        return "ten"
    if annotation.startswith("list"):
        return "not-a-list"
    if annotation.startswith(("str", "Literal")) or "str |" in annotation:
        return 5
    return 7  # a table expected


def _annotation(model: type[Any], key: str) -> str:
    """The type of ``model``'s field ``key`` as text: ``int``, ``list[str]``, ``str | None``."""
    text = str(typing.get_type_hints(model)[key]).replace("typing.", "")
    text = text.replace("<class '", "").replace("'>", "")
    optional = re.fullmatch(r"Optional\[(.*)\]", text)
    return f"{optional[1]} | None" if optional else text


def _keys(model: type[Any]) -> list[str]:
    return sorted(f.name for f in dataclasses.fields(model))


def _load(tmp_path: Path, body: str) -> Settings:
    (tmp_path / "pyproject.toml").write_text("[tool.bounded-review]\n" + body, encoding="utf-8")
    settings, _ = load_settings(tmp_path, tmp_path)
    return settings


@pytest.mark.parametrize("key", _keys(Settings))
def test_every_key_with_a_wrong_type_is_named(tmp_path: Path, key: str) -> None:
    annotation = _annotation(Settings, key)
    value = _wrong(annotation)
    body = f"{key} = {_toml(value)}\n"
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, body)
    message = str(caught.value)
    assert str(tmp_path / "pyproject.toml") in message
    assert key in message


# Each table, with the smallest valid entry its wrong-typed key is added to.
TABLES: dict[str, tuple[type[Any], str, dict[str, str]]] = {
    "lanes": (
        LaneConfig,
        "[[tool.bounded-review.lanes]]",
        {"name": "'a'", "lens": "'x'", "command": "['r']"},
    ),
    "checks": (CheckConfig, "[[tool.bounded-review.checks]]", {"name": "'c'", "command": "['c']"}),
    "loop": (LoopConfig, "[tool.bounded-review.loop]", {}),
    "plan": (PlanConfig, "[tool.bounded-review.plan]", {}),
    "scans": (ScanConfig, "[tool.bounded-review.scans]", {}),
    "selection": (SelectionConfig, "[tool.bounded-review.selection]", {}),
    "routing": (RoutingConfig, "[tool.bounded-review.routing]", {}),
}


@pytest.mark.parametrize(
    ("table", "key"),
    [(table, key) for table, (model, _, _) in TABLES.items() for key in _keys(model)],
)
def test_every_key_of_every_table_with_a_wrong_type_is_named(
    tmp_path: Path, table: str, key: str
) -> None:
    model, header, required = TABLES[table]
    annotation = _annotation(model, key)
    entry = {**required, key: _toml(_wrong(annotation))}
    body = "\n" + header + "\n" + "".join(f"{k} = {v}\n" for k, v in entry.items())
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, body)
    assert key in str(caught.value)
    assert table in str(caught.value)


@pytest.mark.parametrize(
    ("body", "named", "hint"),
    [
        ("rsik = 'strict'\n", "rsik", "did you mean 'risk'"),
        ("[tool.bounded-review.loop]\nsystemic = 0.5\n", "systemic", "systemic_share"),
        ("[tool.bounded-review.plan]\nobjectives = ['goal']\n", "objectives", "'objective'"),
        ("[tool.bounded-review.scans]\nsecret = 'off'\n", "secret", "'secrets'"),
        (
            "[[tool.bounded-review.lanes]]\nname='a'\nlens='correctness'\ncomand=['x']\n",
            "comand",
            "'command'",
        ),
    ],
)
def test_unknown_keys_are_errors_with_a_suggestion(
    tmp_path: Path, body: str, named: str, hint: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, body)
    assert named in str(caught.value)
    assert hint in str(caught.value)


@pytest.mark.parametrize(
    "body",
    ["max_lanes = 4\n", "max_repair_loops = 9\n", "max_retries = 99\n", "max_concurrent = 3\n"],
)
def test_a_ceiling_can_be_lowered_never_raised(tmp_path: Path, body: str) -> None:
    with pytest.raises(ConfigError, match="never raised"):
        _load(tmp_path, body)
    lowered = body.split("=")[0] + "= 1\n"
    assert getattr(_load(tmp_path, lowered), body.split()[0]) == 1


def test_a_huge_file_is_refused_before_parsing(tmp_path: Path) -> None:
    padding = "# " + "x" * 100 + "\n"
    body = padding * (MAX_CONFIG_BYTES // len(padding) + 2)
    with pytest.raises(ConfigError, match="over the limit"):
        _load(tmp_path, body)


def test_bad_utf8_is_named(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.bounded-review]\nbase = '\xff'\n")
    with pytest.raises(ConfigError, match="not valid UTF-8 at byte"):
        load_settings(tmp_path, tmp_path)


@pytest.mark.parametrize(
    ("body", "line", "column"),
    [
        ("risk = 'strict\n", 3, 1),  # the unterminated string runs to the end
        ("mode = review-only\n", 2, 8),
        ("[tool.bounded-review.loop\n", 2, 26),
        ("risk = 'a'\nrisk = 'b'\n", 3, 11),
    ],
)
def test_toml_syntax_errors_show_line_and_column(
    tmp_path: Path, body: str, line: int, column: int
) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(tmp_path, body)
    message = str(caught.value)
    assert "TOML syntax error" in message
    assert f"line {line}" in message
    assert f"column {column}" in message


def test_a_table_that_is_not_a_table(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool]\nbounded-review = "on"\n')
    with pytest.raises(ConfigError, match="must be a table"):
        load_settings(tmp_path, tmp_path)
