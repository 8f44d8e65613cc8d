"""Hostile lane output, from a real reviewer process: each answer is refused with a clear reason
(the lane is unverified, never trusted) or triaged safely, and nothing else is lost."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.command import run_once
from pytest_boundedreview.lanes.result import OUTPUT_CAP

VALID = {
    "schema": "bounded-review/lane-result/v1",
    "verdict": "pass",
    "rationale": "read it",
    "findings": [],
}
# Each case: a Python expression producing the bytes the reviewer writes to stdout.
CASES = {
    "100 MB body": "b'[' + b' ' * (100 * 1024 * 1024) + b']'",
    "100,000-deep nesting": "b'[' * 100_000 + b']' * 100_000",
    "a 10^6-digit integer": "b'{\"n\": ' + b'7' * 1_000_000 + b'}'",
    "a 4,301-digit integer": 'b\'{"schema": "bounded-review/lane-result/v1", "n": \''
    "+ b'7' * 4301 + b'}'",
    "1e400": 'b\'{"schema": "bounded-review/lane-result/v1", "confidence": 1e400}\'',
    "NaN": 'b\'{"schema": "bounded-review/lane-result/v1", "x": NaN}\'',
    "-Infinity": "b'{\"x\": -Infinity}'",
    "10^6 findings": "json.dumps(dict(VALID, findings=[FINDING] * 1_000_000)).encode()",
    "bad UTF-8": 'b\'{"schema": "\\xff\\xfe"}\'',
    "a lone surrogate": 'b\'{"rationale": "\\\\ud800"}\'',
    "a byte order mark": "b'\\xef\\xbb\\xbf' + json.dumps(VALID).encode()",
    "duplicate keys": 'b\'{"verdict": "revise", "verdict": "pass"}\'',
    "an unknown field": "json.dumps(dict(VALID, secret_override=True)).encode()",
    "a wrong schema id": "json.dumps(dict(VALID, schema='bounded-review/lane-result/v9')).encode()",
    "two documents": "json.dumps(VALID).encode() * 2",
    "nothing at all": "b''",
    "a bare verdict": "json.dumps(dict(VALID, rationale=None)).encode()",
    "a JSON list": "b'[]'",
}
EXPECTED = {
    "100 MB body": ("limit", "over the cap"),
    "100,000-deep nesting": ("error", "nesting deeper than"),
    "a 10^6-digit integer": ("error", "unreadable number"),
    "a 4,301-digit integer": ("error", "unreadable number"),
    "1e400": ("error", "out of range"),
    "NaN": ("error", "NaN is not a JSON number"),
    "-Infinity": ("error", "-Infinity is not a JSON number"),
    "10^6 findings": ("limit", "over the cap"),
    "bad UTF-8": ("error", "not valid UTF-8"),
    "a lone surrogate": ("error", "lone surrogate"),
    "a byte order mark": ("error", "byte order mark"),
    "duplicate keys": ("error", "duplicate key 'verdict'"),
    "an unknown field": ("error", "secret_override"),
    "a wrong schema id": ("error", "schema"),
    "two documents": ("error", "invalid JSON"),
    "nothing at all": ("error", "invalid JSON"),
    "a bare verdict": ("error", "not a lane result"),
    "a JSON list": ("error", "not a lane result"),
}
FINDING = {
    "path": "app.py",
    "line": 1,
    "severity": "blocking",
    "category": "correctness",
    "failure_mode": "f",
    "evidence": "e",
    "remediation": "r",
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_hostile_answers_are_refused_with_a_reason(case: str, tmp_path: Path) -> None:
    script = tmp_path / "reviewer.py"
    script.write_text(
        "import json, sys\n"
        f"VALID = {VALID!r}\nFINDING = {FINDING!r}\n"
        "sys.stdin.buffer.read()\n"
        f"sys.stdout.buffer.write({CASES[case]})\n"
    )
    lane = LaneConfig(name="rev", lens="correctness", command=[sys.executable, str(script)])
    attempt = run_once(lane, b"{}", tmp_path)
    kind, text = EXPECTED[case]
    assert attempt.result is None, case
    assert attempt.failure == kind, attempt.detail
    assert text in attempt.detail
    assert len(attempt.detail) < 2000  # a reason, not the document echoed back
    assert OUTPUT_CAP == 1024 * 1024


def test_the_valid_answer_is_accepted(tmp_path: Path) -> None:
    """The control: the same harness accepts a well-formed answer."""
    script = tmp_path / "reviewer.py"
    script.write_text(f"import json, sys\nsys.stdin.read()\nprint(json.dumps({VALID!r}))\n")
    lane = LaneConfig(name="rev", lens="correctness", command=[sys.executable, str(script)])
    attempt = run_once(lane, b"{}", tmp_path)
    assert attempt.result is not None
    assert attempt.result.verdict == "pass"
    assert json.loads(json.dumps(VALID))["schema"] == attempt.result.schema_
