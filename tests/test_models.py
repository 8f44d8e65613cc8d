from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from pytest_boundedreview.core.validation import describe_all
from pytest_boundedreview.models import (
    SCHEMA_NAMES,
    Finding,
    LaneResult,
    LoopState,
    Packet,
    Report,
    json_schema,
)
from pytest_boundedreview.models.plain import jsonable, validate_data

FINDING: dict[str, Any] = {
    "path": "app.py",
    "line": 3,
    "severity": "blocking",
    "category": "correctness",
    "failure_mode": "off by one",
    "evidence": "loop stops early",
    "remediation": "use <=",
}


def report_document() -> dict[str, Any]:
    return {
        "schema": "bounded-review/report/v1",
        "tool_version": "0.1.0",
        "generated_at": "2026-11-30T00:00:00Z",
        "target": {
            "kind": "pr",
            "base": "main",
            "head": "abc",
            "revision": "tree:1",
            "files": ["app.py"],
            "empty": False,
        },
        "authorization": "review-only",
        "risk": {"tier": "standard", "reasons": []},
        "budget": {"max_lanes": 2, "max_concurrent": 2, "max_repair_loops": 0},
        "loop": {"loop_id": None, "round": 0, "repair_loops_used": 0, "status": "not-started"},
        "tests": {"passed": 1, "failed": 0},
        "gate": {"review_clean": "yes", "reasons": []},
        "statuses": {"local_verification": "passed", "review_clean": "yes", "committed": "yes"},
        "next_action": "none",
    }


def test_every_schema_is_a_json_schema_with_a_title() -> None:
    for name in SCHEMA_NAMES:
        schema = json_schema(name)
        assert schema["$schema"].startswith("https://json-schema.org/")
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False


def test_report_round_trips_with_its_schema_id() -> None:
    report = validate_data(Report, report_document())
    dumped = jsonable(report)
    assert dumped["schema"] == "bounded-review/report/v1"
    assert dumped["statuses"]["merged"] == "not-checked"
    assert validate_data(Report, dumped) == report


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"line": 0}, "line: Input should be greater than or equal to 1"),
        ({"line": 2.0}, "line: Input should be a valid integer"),
        ({"line": True}, "line: Input should be a valid integer"),
        ({"line": "3"}, "line: Input should be a valid integer"),
        ({"severity": "critical"}, "severity: invalid value; allowed values: 'blocking' or"),
        ({"end_line": 1}, "end_line 1 is before line 3"),
        ({"reproduce": {"pytest": "t.py::x", "command": ["x"]}}, "exactly one of"),
        ({"confidence": 1.5}, "confidence: Input should be less than or equal to 1"),
        ({"surprise": 1}, "surprise: unknown key"),
    ],
)
def test_finding_errors_are_precise(change: dict[str, Any], expected: str) -> None:
    with pytest.raises(ValidationError) as info:
        Finding.model_validate({**FINDING, **change})
    assert any(expected in line for line in describe_all(info.value)), describe_all(info.value)


def test_missing_required_finding_keys() -> None:
    with pytest.raises(ValidationError) as info:
        Finding.model_validate({"path": "a.py", "line": 1})
    lines = describe_all(info.value)
    for key in ("severity", "category", "failure_mode", "evidence", "remediation"):
        assert f"{key}: required key is missing" in lines


def test_lane_result_keeps_findings_raw_for_triage() -> None:
    result = LaneResult.model_validate(
        {
            "schema": "bounded-review/lane-result/v1",
            "verdict": "revise",
            "rationale": "r",
            "findings": [{"path": "/etc/passwd"}],
        }
    )
    assert result.findings == [{"path": "/etc/passwd"}]
    with pytest.raises(ValidationError, match="schema"):
        LaneResult.model_validate({"schema": "bounded-review/lane-result/v2"})
    with pytest.raises(ValidationError, match="needs a `reason`"):
        LaneResult.model_validate(
            {
                "schema": "bounded-review/lane-result/v1",
                "reconciliation": [{"fingerprint": "f", "decision": "dismissed"}],
            }
        )


def test_packet_is_read_only_and_carries_the_finding_schema() -> None:
    packet = Packet.model_validate(
        {
            "schema": "bounded-review/packet/v1",
            "lane": {"name": "l", "lens": "correctness", "role": "verdict"},
            "target": {"kind": "pr", "base": "main", "revision": "tree:1"},
            "scope": [{"path": "a.py", "status": "modified", "added_lines": [1]}],
            "diff": "",
        }
    )
    assert packet.read_only is True
    assert set(packet.finding_schema["required"]) >= {"path", "line", "severity"}
    with pytest.raises(ValidationError):
        Packet.model_validate({**packet.model_dump(), "read_only": False})


def test_loop_state_rejects_bad_ids_and_newer_schema() -> None:
    state = {
        "schema": "bounded-review/loop-state/v1",
        "loop_id": "pr-main-feature",
        "target_kind": "pr",
        "base": "main",
        "branch": "feature",
        "status": "open",
        "created_at": "t",
        "updated_at": "t",
        "max_repair_loops": 2,
        "repair_loops_used": 0,
    }
    assert LoopState.model_validate(state).loop_id == "pr-main-feature"
    with pytest.raises(ValidationError, match="loop_id"):
        LoopState.model_validate({**state, "loop_id": "../escape"})
    with pytest.raises(ValidationError, match="schema"):
        LoopState.model_validate({**state, "schema": "bounded-review/loop-state/v2"})


@pytest.mark.parametrize(
    "result",
    [
        {"verdict": "pass"},
        {"verdict": "revise", "rationale": "  "},
    ],
)
def test_a_bare_verdict_is_rejected(result: dict[str, Any]) -> None:
    with pytest.raises(ValidationError, match="bare verdict"):
        LaneResult.model_validate({"schema": "bounded-review/lane-result/v1", **result})


LANE_RESULT = {"schema": "bounded-review/lane-result/v1"}
# Each answer, and whether it is a lane result: by the model, and by its JSON schema alike.
VERDICTS: list[tuple[dict[str, Any], bool]] = [
    ({"verdict": "revise", "rationale": "app.py:3 stops one short"}, False),  # no finding
    ({"verdict": "revise", "rationale": "r", "findings": []}, False),
    ({"verdict": "revise", "findings": [FINDING]}, True),
    ({"verdict": "revise", "rationale": "r", "findings": [FINDING]}, True),
    ({"verdict": "pass", "rationale": "checked the loop bounds"}, True),
    ({"verdict": "pass", "rationale": " "}, False),  # bare
    ({"rationale": "a scout's notes"}, True),
    ({}, True),  # a scout that found nothing
    ({"verdict": "pass", "rationale": "r", "findings": [FINDING]}, False),  # blocks and passes
    ({"verdict": "pass", "findings": [{**FINDING, "severity": "advisory"}]}, True),
]


@pytest.mark.parametrize(("answer", "valid"), VERDICTS)
def test_a_revise_needs_a_finding(answer: dict[str, Any], valid: bool) -> None:
    document = {**LANE_RESULT, **answer}
    if valid:
        assert LaneResult.model_validate(document).verdict == answer.get("verdict")
    else:
        with pytest.raises(
            ValidationError, match=r"bare verdict|without a finding|contradicts itself"
        ):
            LaneResult.model_validate(document)


@pytest.mark.parametrize(("answer", "valid"), VERDICTS)
def test_the_lane_result_schema_says_what_the_model_enforces(
    answer: dict[str, Any], valid: bool
) -> None:
    import jsonschema

    validator = jsonschema.Draft202012Validator(json_schema("lane-result"))
    assert validator.is_valid({**LANE_RESULT, **answer}) is valid


def test_the_agents_schema_leaves_the_verdict_rules_to_the_model() -> None:
    """Strict structured outputs take no conditionals: the rule is in the description, and
    the model refuses what breaks it."""
    from pytest_boundedreview.lanes.schema import lane_result_schema

    schema = lane_result_schema()
    assert "allOf" not in schema
    assert "at least one finding" in schema["properties"]["verdict"]["description"]


# What strict structured outputs take (OpenAI's supported subset, which llama.cpp's grammar
# conversion also reads): no conditionals, no ``$ref``, no ``pattern`` or ``format``.
STRICT_KEYWORDS = {
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "enum",
    "const", "description", "minLength", "minimum", "maximum", "minItems",
}  # fmt: skip


def _keywords(schema: Any) -> set[str]:
    if isinstance(schema, list):
        return set().union(*map(_keywords, schema)) if schema else set()
    if not isinstance(schema, dict):
        return set()
    found = set(schema) - {"properties"}
    for key, value in schema.items():
        if key == "properties":
            found |= set().union(*map(_keywords, value.values()))
        elif key in ("items", "anyOf"):
            found |= _keywords(value)
    return found


def _full_answer() -> dict[str, Any]:
    finding = {
        **FINDING,
        "end_line": None,
        "quote": "for i in range(n - 1):",
        "reproduce": {"pytest": "tests/test_app.py::test_sum"},
        "confidence": 0.9,
    }
    return {
        **LANE_RESULT,
        "verdict": "revise",
        "rationale": "r",
        "findings": [finding],
        "reconciliation": [{"fingerprint": "f", "decision": "dismissed", "reason": "why"}],
        "assurances": None,
    }


def test_the_strict_schema_stays_within_what_strict_structured_outputs_take() -> None:
    from pytest_boundedreview.lanes.schema import lane_result_schema

    schema = lane_result_schema()
    assert _keywords(schema) <= STRICT_KEYWORDS
    objects = [schema, schema["properties"]["findings"]["items"]]
    for shape in objects:
        assert shape["additionalProperties"] is False
        assert set(shape["required"]) == set(shape["properties"])


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("rationale",), None),
        (("rationale",), ""),
        (("findings", 0, "path"), ""),
        (("findings", 0, "failure_mode"), ""),
        (("findings", 0, "evidence"), ""),
        (("findings", 0, "remediation"), ""),
        (("findings", 0, "quote"), ""),
        (("findings", 0, "reproduce"), {"pytest": ""}),
        (("findings", 0, "reproduce"), {"command": []}),
        (("reconciliation", 0, "fingerprint"), ""),
        (("reconciliation", 0, "reason"), ""),
    ],
)
def test_the_strict_schema_refuses_at_decode_time_what_validation_refuses(
    where: tuple[str | int, ...], value: object
) -> None:
    """A constrained decoder given the strict schema cannot write an empty required string or
    a null rationale: each is refused by the schema, as the models and triage refuse it."""
    import jsonschema

    from pytest_boundedreview.lanes.schema import lane_result_schema
    from pytest_boundedreview.triage.validate import checked

    validator = jsonschema.Draft202012Validator(lane_result_schema())
    answer = _full_answer()
    assert validator.is_valid(answer)
    assert LaneResult.model_validate(answer).findings[0]["quote"]
    assert checked(answer["findings"][0])[0] is not None
    target: Any = answer
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value
    assert not validator.is_valid(answer)


@pytest.mark.parametrize("value", ["0.5", True])
def test_confidence_is_a_number(value: object) -> None:
    with pytest.raises(ValidationError, match="confidence"):
        Finding.model_validate({**FINDING, "confidence": value})
