"""Property-based fuzzing of the parsers that read untrusted input: the lane-result reader, the
config loader, the gnu and SARIF check parsers and the diff-to-scope mapper. Each either returns
or raises its documented error type, never anything else. The example counts are bounded for CI;
`fuzz/atheris_harness.py` runs the same targets unbounded, by hand."""

from __future__ import annotations

import dataclasses
import difflib
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from pytest_boundedreview.change.scope import parse_scope
from pytest_boundedreview.checks.parse import CheckOutputError, parse_gnu, parse_sarif
from pytest_boundedreview.core.errors import ConfigError, DiffParseError
from pytest_boundedreview.core.settings.config import Settings, load_settings
from pytest_boundedreview.core.validation import describe_all
from pytest_boundedreview.lanes.result import read_result
from pytest_boundedreview.models.plain import validate_data

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ROOT = Path("/repo")


def _outcome(error: type[Exception], call: Callable[[], object]) -> object:
    """What ``call`` returns, or the ``error`` it raised; any other exception propagates."""
    try:
        return call()
    except error as exc:
        return exc


def _explained(result: object, error: type[Exception]) -> bool:
    """A result, or an error that says something."""
    return not isinstance(result, error) or bool(str(result))


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=40),
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=12), inner, max_size=5)
    ),
    max_leaves=30,
)
LANE_KEYS = ["schema", "verdict", "rationale", "findings", "reconciliation", "assurances"]
FINDING_KEYS = [
    "path",
    "line",
    "end_line",
    "severity",
    "category",
    "failure_mode",
    "evidence",
    "quote",
    "reproduce",
    "remediation",
    "confidence",
]
lane_like = st.fixed_dictionaries(
    {},
    optional={
        "schema": st.sampled_from(["bounded-review/lane-result/v1", "x", ""]) | json_values,
        "verdict": st.sampled_from(["pass", "revise", "maybe"]) | json_values,
        "rationale": st.text(max_size=30) | json_values,
        "findings": st.lists(
            st.dictionaries(st.sampled_from(FINDING_KEYS), json_values, max_size=11), max_size=4
        )
        | json_values,
        "assurances": json_values,
        "reconciliation": json_values,
    },
)


def _mutations(document: bytes) -> st.SearchStrategy[bytes]:
    return st.one_of(
        st.just(document),
        st.builds(lambda cut: document[:cut], st.integers(0, len(document))),
        st.builds(
            lambda at, junk: document[:at] + junk + document[at:],
            st.integers(0, len(document)),
            st.binary(max_size=8),
        ),
    )


@pytest.mark.slow
@FUZZ
@given(
    st.one_of(
        st.binary(max_size=300), lane_like.map(lambda d: json.dumps(d).encode()).flatmap(_mutations)
    )
)
def test_the_lane_result_reader_never_raises(data: bytes) -> None:
    attempt = read_result(data)
    assert (attempt.result is None) == (attempt.failure is not None)
    assert attempt.result is not None or attempt.detail


config_tables = st.dictionaries(
    st.sampled_from(sorted(f.name for f in dataclasses.fields(Settings))) | st.text(max_size=10),
    json_values,
    max_size=6,
)


@pytest.mark.slow
@FUZZ
@given(config_tables)
def test_the_config_loader_raises_only_config_errors(table: dict[str, Any]) -> None:
    validated = _outcome(ValidationError, lambda: validate_data(Settings, table))
    if isinstance(validated, ValidationError):
        assert describe_all(validated)  # every error can be explained
    # And through the loader, from a real file: only ConfigError.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "pyproject.toml"
        path.write_text(_toml_table(table), encoding="utf-8")
        loaded = _outcome(ConfigError, lambda: load_settings(Path(folder), Path(folder)))
        assert _explained(loaded, ConfigError)


def _toml_table(table: dict[str, Any]) -> str:
    lines = ["[tool.bounded-review]"]
    for key, value in table.items():
        lines.append(f"{json.dumps(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


@pytest.mark.slow
@FUZZ
@given(st.text(max_size=400))
def test_the_config_loader_survives_any_text(text: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "pyproject.toml").write_text(
            "[tool.bounded-review]\n" + text, encoding="utf-8", errors="surrogatepass"
        )
        loaded = _outcome(ConfigError, lambda: load_settings(Path(folder), Path(folder)))
        assert _explained(loaded, ConfigError)


gnu_lines = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.builds(
            lambda p, n, m: f"{p}:{n}: {m}",
            st.text(max_size=20),
            st.integers(min_value=0, max_value=10**6).map(str)
            | st.text("0123456789", max_size=5000),
            st.text(max_size=30),
        ),
    ),
    max_size=10,
)


@pytest.mark.slow
@FUZZ
@given(gnu_lines)
def test_the_gnu_parser_never_raises(lines: list[str]) -> None:
    for finding in parse_gnu("\n".join(lines), ROOT):
        assert isinstance(finding.line, int)


sarif_like = st.fixed_dictionaries(
    {
        "runs": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "results": st.lists(
                        st.dictionaries(
                            st.sampled_from(["ruleId", "message", "locations", "rule", "level"]),
                            json_values,
                            max_size=5,
                        ),
                        max_size=4,
                    )
                    | json_values
                },
            ),
            max_size=3,
        )
        | json_values
    }
)


@pytest.mark.slow
@FUZZ
@given(
    st.one_of(
        st.binary(max_size=200),
        sarif_like.map(lambda d: json.dumps(d).encode()).flatmap(_mutations),
        st.integers(1, 5000).map(lambda depth: b'{"runs": ' + b"[" * depth + b"]" * depth + b"}"),
    )
)
def test_the_sarif_parser_raises_only_check_output_errors(data: bytes) -> None:
    findings = _outcome(CheckOutputError, lambda: parse_sarif(data, ROOT))
    assert _explained(findings, CheckOutputError)
    for finding in findings if isinstance(findings, list) else []:
        assert finding.line is None or isinstance(finding.line, int)


texts = st.lists(st.sampled_from(["a", "b", "c", "", "a b", "\t", "x\r"]), max_size=12)


@FUZZ
@given(texts, texts)
def test_the_scope_mapper_numbers_every_added_line(old: list[str], new: list[str]) -> None:
    """A real unified diff of two versions: the added lines the mapper reports are exactly the
    new file's lines that the diff adds."""
    before = [line + "\n" for line in old]
    after = [line + "\n" for line in new]
    body = "".join(difflib.unified_diff(before, after, "a/f.txt", "b/f.txt", n=1))
    if not body:
        return
    patch = "diff --git a/f.txt b/f.txt\nindex 1111111..2222222 100644\n" + body
    change = parse_scope(":100644 100644 1111111 2222222 M\0f.txt\0", patch).files["f.txt"]
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    expected = {
        j + 1
        for tag, _, _, j1, j2 in matcher.get_opcodes()
        if tag in ("replace", "insert")
        for j in range(j1, j2)
    }
    assert change.added == expected


@FUZZ
@given(st.text(max_size=300), st.text(max_size=300))
def test_the_scope_mapper_raises_only_diff_errors(raw: str, patch: str) -> None:
    assert _explained(_outcome(DiffParseError, lambda: parse_scope(raw, patch)), DiffParseError)
