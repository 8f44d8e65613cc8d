"""The formats of code review platforms: GitLab Code Quality (``--format codeclimate``) and
reviewdog's rdjson (``--format rdjson``), checked against their documented fields and for the
escaping of untrusted text. The golden files are in ``test_golden.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from reports import report

from pytest_boundedreview.render.codeclimate import codeclimate
from pytest_boundedreview.render.rdjson import rdjson

GOLDEN = Path(__file__).parent / "golden"
HOSTILE = "x\u202e`y` <img src=x> @team [l](http://e) \x1b[31m\nnext"

# GitLab's Code Quality report: a JSON array of issues with these fields (GitLab documents
# description, check_name, fingerprint, severity, location.path and location.lines.begin as
# required; "type" comes from the Code Climate issue format it follows).
CODE_QUALITY = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "type": {"const": "issue"},
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "lines": {
                        "type": "object",
                        "required": ["begin"],
                        "properties": {"begin": {"type": "integer", "minimum": 1}},
                    },
                },
            },
        },
    },
}

# reviewdog's DiagnosticResult (proto/rdf/reviewdog.proto), as protobuf's JSON mapping writes
# it: enums by name, messages as objects; nothing outside the message's fields.
_POSITION = {
    "type": "object",
    "properties": {"line": {"type": "integer"}, "column": {"type": "integer"}},
    "additionalProperties": False,
}
_RANGE = {
    "type": "object",
    "required": ["start"],
    "properties": {"start": _POSITION, "end": _POSITION},
    "additionalProperties": False,
}
_SEVERITY = {"enum": ["UNKNOWN_SEVERITY", "ERROR", "WARNING", "INFO"]}
_SOURCE = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}, "url": {"type": "string"}},
    "additionalProperties": False,
}
RDJSON = {
    "type": "object",
    "properties": {
        "source": _SOURCE,
        "severity": _SEVERITY,
        "diagnostics": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["message", "location"],
                "properties": {
                    "message": {"type": "string"},
                    "location": {
                        "type": "object",
                        "required": ["path"],
                        "properties": {"path": {"type": "string"}, "range": _RANGE},
                        "additionalProperties": False,
                    },
                    "severity": _SEVERITY,
                    "source": _SOURCE,
                    "code": {
                        "type": "object",
                        "required": ["value"],
                        "properties": {"value": {"type": "string"}, "url": {"type": "string"}},
                        "additionalProperties": False,
                    },
                    "suggestions": {"type": "array"},
                    "original_output": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize(
    ("name", "schema"), [("report.codeclimate.json", CODE_QUALITY), ("report.rdjson", RDJSON)]
)
def test_the_golden_files_hold_to_the_documented_fields(name: str, schema: Any) -> None:
    document = json.loads((GOLDEN / name).read_text(encoding="utf-8"))
    jsonschema.validate(document, schema)
    assert document  # not vacuous: an empty array or object would pass the schema too


def test_every_issue_is_placed_and_fingerprinted_once() -> None:
    sample = report(3)
    issues = codeclimate(sample)
    fingerprints = [issue["fingerprint"] for issue in issues]
    assert len(set(fingerprints)) == len(fingerprints)
    blocking = len(sample.findings.blocking) + len(sample.tests.target_related)
    assert sum(issue["severity"] == "critical" for issue in issues) >= blocking
    # The same report gives the same fingerprints: GitLab compares them between pipelines.
    assert [issue["fingerprint"] for issue in codeclimate(report(3))] == fingerprints


def test_untrusted_text_is_inert_on_each_platform() -> None:
    sample = report(1, HOSTILE)
    for issue in codeclimate(sample):  # plain text: nothing hidden, no line breaks
        assert "\u202e" not in issue["description"]
        assert "\x1b" not in issue["description"]
        assert "\n" not in issue["description"]
    messages = [d["message"] for d in rdjson(sample)["diagnostics"]]
    assert any("img" in message for message in messages)
    for message in messages:  # Markdown review comments: no HTML, links, mentions
        assert "<img" not in message
        assert "](" not in message
        assert "@team" not in message
        assert "\u202e" not in message
        assert "\n" not in message


def test_the_report_command_prints_both(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_boundedreview import cli
    from pytest_boundedreview.models.plain import dumps

    path = tmp_path / "report.json"
    path.write_text(dumps(report(2), indent=2))
    assert cli.main(["report", "--report", str(path), "--format", "codeclimate"]) == 1
    jsonschema.validate(json.loads(capsys.readouterr().out), CODE_QUALITY)
    assert cli.main(["report", "--report", str(path), "--format", "rdjson"]) == 1
    jsonschema.validate(json.loads(capsys.readouterr().out), RDJSON)


def test_a_tools_rule_id_cannot_become_markup() -> None:
    """reviewdog writes the code into the comment as ``<code>``: a check's rule id (tool
    output) keeps only identifier characters."""
    import dataclasses

    from pytest_boundedreview.models.finding import CheckFinding

    sample = report(1)
    hostile = CheckFinding(
        rule="x> @octocat [pwn](https://evil.example) <img src=x>",
        path="src/a.py",
        line=3,
        message="m",
        fingerprint="h1",
    )
    check = dataclasses.replace(sample.checks[0], target_related=[hostile])
    sample = dataclasses.replace(sample, checks=[check])
    codes = [d["code"]["value"] for d in rdjson(sample)["diagnostics"]]
    names = [i["check_name"] for i in codeclimate(sample)]
    for text in codes + names:
        assert not set(text) & set("<>@[]() ")


def test_the_same_finding_at_two_places_gets_two_fingerprints() -> None:
    """Scans fingerprint a finding by its text, not its line: two identical lines are two
    issues to GitLab, so each needs its own fingerprint."""
    import dataclasses

    sample = report(1)
    first = sample.findings.blocking[0]
    twin = first.model_copy(update={"line": first.line + 5})
    findings = dataclasses.replace(sample.findings, blocking=[first, twin])
    issues = codeclimate(dataclasses.replace(sample, findings=findings))
    fingerprints = [issue["fingerprint"] for issue in issues]
    assert len(set(fingerprints)) == len(fingerprints)
