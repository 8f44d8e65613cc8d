"""Golden files: each renderer's output for one report with every field set, compared byte for
byte with ``tests/golden/``. After an intended change of output, regenerate them with
``UPDATE_GOLDEN=1 pytest tests/test_golden.py`` and review the diff."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from reports import report

from pytest_boundedreview.render.formats import render
from pytest_boundedreview.render.github import workflow_commands
from pytest_boundedreview.render.sarif import sarif

GOLDEN = Path(__file__).parent / "golden"
TEXT = "off by one: `x` | @team <b>\x1b[31m"  # untrusted text, escaped per format
SAMPLE = report(3, TEXT, shard=True)


def _rendered(fmt: str) -> str:
    if fmt == "github":  # a fixed stop-commands token; each run draws a random one
        return "\n".join(workflow_commands(SAMPLE, token="golden-token")) + "\n"
    if fmt == "sarif":
        return json.dumps(sarif(SAMPLE), indent=2) + "\n"
    return render(SAMPLE, fmt)


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("text", "report.txt"),
        ("json", "report.json"),
        ("markdown", "report.md"),
        ("sarif", "report.sarif"),
        ("github", "report.github"),
        ("codeclimate", "report.codeclimate.json"),
        ("rdjson", "report.rdjson"),
    ],
)
def test_renderer_matches_its_golden_file(fmt: str, name: str) -> None:
    out = _rendered(fmt)
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(out, encoding="utf-8")
    assert out == path.read_text(encoding="utf-8")


def test_the_golden_report_sets_every_field() -> None:
    import dataclasses

    from pytest_boundedreview.models.report import Report

    dumped = json.loads((GOLDEN / "report.json").read_text())
    assert set(dumped) == {f.name for f in dataclasses.fields(Report)}
    assert all(value not in (None, [], {}, "") for value in dumped.values())
    for section in ("tests", "findings"):
        assert all(dumped[section].values()), section
    assert "\x1b" not in _rendered("text") + _rendered("markdown") + _rendered("github")


def test_the_golden_report_validates_against_the_report_model() -> None:
    """The report is written without pydantic; pydantic reads it back, to the same bytes."""
    from pytest_boundedreview.models.plain import dumps, validate
    from pytest_boundedreview.models.report import Report

    text = (GOLDEN / "report.json").read_text(encoding="utf-8")
    assert dumps(validate(Report, text), indent=2) + "\n" == text


def test_the_validate_command_accepts_the_golden_report(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Read as the JSON it is: a waiver's expiry date is its ISO text there."""
    from pytest_boundedreview import cli

    assert cli.main(["validate", str(GOLDEN / "report.json")]) == 0
    assert capsys.readouterr().out.endswith(": valid\n")
