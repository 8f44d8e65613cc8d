"""The renderers: SARIF valid against the official schema, Markdown and GitHub commands inert
whatever the untrusted text holds, and capped on huge reports; the `report` command."""

from __future__ import annotations

import copy
import dataclasses
import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from reports import EVIL, report

from pytest_boundedreview import cli
from pytest_boundedreview.models.finding import CheckFinding
from pytest_boundedreview.models.plain import dumps
from pytest_boundedreview.models.report import CheckResult, Gate
from pytest_boundedreview.render.formats import render
from pytest_boundedreview.render.github import workflow_commands
from pytest_boundedreview.render.markdown import markdown_report
from pytest_boundedreview.render.sarif import sarif

SCHEMA = Path(__file__).resolve().parents[2] / "shared" / "data" / "sarif-schema-2.1.0.json"


@pytest.fixture(scope="module")
def validator() -> Any:
    if not SCHEMA.exists():
        pytest.skip(f"the official SARIF 2.1.0 schema is not at {SCHEMA} on this machine")
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    return jsonschema.Draft7Validator(schema)


def test_sarif_is_valid_and_keeps_pre_existing_results(validator: Any) -> None:
    log = sarif(report())
    validator.validate(log)
    names = [run["tool"]["driver"]["name"] for run in log["runs"]]
    assert names == [
        "bounded-review tests",
        "bounded-review check ruff",
        "bounded-review scans",
        "bounded-review lane rev",
    ]
    tests = log["runs"][0]["results"]
    assert {r["ruleId"]: r["baselineState"] for r in tests}["pre-existing-failure"] == "unchanged"
    results = [r for run in log["runs"] for r in run["results"]]
    accepted = [r for r in results if r.get("suppressions", [{}])[0].get("status") == "accepted"]
    assert all(
        ("suppressions" in r) == (r["baselineState"] == "unchanged")
        for r in results
        if r not in accepted
    )
    # waived results are kept, with the typed disposition as an accepted external suppression
    assert len(accepted) == 2
    assert {r["suppressions"][0]["kind"] for r in accepted} == {"external"}
    assert all(
        r["suppressions"][0]["justification"].startswith("waived (user) by dev@example.com: ")
        for r in accepted
    )
    lane = log["runs"][3]["results"][0]
    assert lane["partialFingerprints"] == {"boundedReview/finding/v1": "00000000000000000001"}
    assert lane["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "src/m1.py",
        "uriBaseId": "SRCROOT",
    }


def test_a_broken_sarif_log_fails_validation(validator: Any) -> None:
    import jsonschema

    log = sarif(report())
    broken = copy.deepcopy(log)
    broken["runs"][0]["results"][0]["level"] = "catastrophic"
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)
    del broken["version"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(broken)


@pytest.mark.parametrize("text", EVIL)
def test_untrusted_text_is_inert_everywhere(text: str) -> None:
    rich = report(2, text)
    for fmt in ("text", "markdown", "github"):
        out = render(rich, fmt)
        body = out.replace("\n", "")
        assert not any(ord(c) < 32 or 0x7F <= ord(c) <= 0x9F for c in body), (fmt, out)
        hidden = [
            c for c in out if unicodedata.category(c) in ("Cf", "Zl", "Zp", "Cc") and c != "\n"
        ]
        assert hidden in ([], ["\u2060"] * out.count("\u2060")), (fmt, hidden)
        assert "\u2060" not in out or fmt == "markdown"  # the word joiner that breaks mentions
    markdown = render(rich, "markdown")
    assert "@org" not in markdown
    assert "@evil" not in markdown
    assert "<img" not in markdown
    assert "![](" not in markdown
    assert "](javascript" not in markdown
    commands = render(rich, "github").splitlines()
    inside = False
    for line in commands:
        if line.startswith("::stop-commands::"):
            token = line.removeprefix("::stop-commands::")
            inside = True
            continue
        if inside:
            if line == f"::{token}::":
                inside = False
            else:
                assert not line.startswith("::"), line
            continue
        assert line.startswith(("::error ", "::warning ", "::notice ")), line
        assert "\r" not in line


@pytest.mark.slow
def test_huge_reports_stay_within_limits(validator: Any) -> None:
    huge = report(25_000)  # 50,000 findings
    markdown = markdown_report(huge)
    assert len(markdown.encode()) < 1024 * 1024
    assert "more line(s) omitted" in markdown
    commands = workflow_commands(huge, token="t")
    errors = [c for c in commands if c.startswith("::error")]
    warnings = [c for c in commands if c.startswith("::warning")]
    assert (len(errors), len(warnings)) == (10, 10)
    assert any(
        c.startswith("::notice title=bounded review::") and "more finding(s)" in c for c in commands
    )
    log = sarif(huge)
    assert sum(len(run["results"]) for run in log["runs"][2:]) >= 50_000
    # Validating 50,000 results takes minutes; every result comes from the same few shapes, so
    # one of each shape (keys, level, baseline state) per run is validated with the whole log.
    for run in log["runs"]:
        shapes: dict[Any, Any] = {}
        for result in run["results"]:
            shape = (tuple(sorted(result)), result["level"], result["baselineState"])
            shapes.setdefault(shape, result)
        run["results"] = list(shapes.values())
    validator.validate(log)


def test_the_terminal_summary_shows_the_exact_state() -> None:
    text = render(report(), "text").splitlines()
    assert (
        "authorization review-and-fix; risk strict (off by one); "
        "budget 3 lane(s), 2 at once, 3 repair loop(s)"
    ) in text
    assert "loop pr-main-f: open, round 2, repair loops used 1/3, flags: stuck" in text
    assert "loop pr-main-f: open, round 2, repair loops used 1/3, flags: stuck" in text
    assert "tests: 5 passed, 3 failed; target-related 1, pre-existing 1, flaky 1, unknown 1" in text
    assert "checks: 0 pass, 1 fail, 0 not-run" in text
    assert (
        "findings: 3 blocking, 3 advisory, 1 rejected, 2 waived; blockers fixed since the last "
        "round: 1" in text
    )
    assert "status: local verification failed, review clean no, committed yes" in text
    assert text[-2] == "next action: off by one"
    assert text[-1] == "review_clean: no"


def test_code_spans_and_odd_lines() -> None:
    from pytest_boundedreview.render.escape import markdown_code

    assert markdown_code("src/my_mod-1.py:3") == "`src/my_mod-1.py:3`"
    assert markdown_code("a`b") == "``a`b``"
    assert markdown_code("`x") == "`` `x ``"
    odd = dataclasses.replace(
        report(0),
        **{
            "checks": [
                CheckResult(
                    name="t",
                    required=True,
                    status="fail",
                    target_related=[
                        CheckFinding(rule="r", path="a.py", line=-1, message="m", fingerprint="f")
                    ],
                )
            ]
        },
    )
    region = sarif(odd)["runs"][1]["results"][0]["locations"][0]["physicalLocation"]
    assert "region" not in region


def test_the_report_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "report.json"
    assert cli.main(["report", "--report", str(path)]) == 2
    assert "no report at" in capsys.readouterr().err
    path.write_text(dumps(report()))
    for fmt in ("text", "json", "markdown", "sarif", "github"):
        assert cli.main(["report", "--report", str(path), "--format", fmt]) == 1
        out = capsys.readouterr().out
        assert out.strip()
    clean = dataclasses.replace(report(0), gate=Gate(review_clean="yes"))
    path.write_text(dumps(clean))
    assert cli.main(["report", "--report", str(path)]) == 0


def test_workflow_command_text_encodes_cr_lf_and_percent_as_documented() -> None:
    from pytest_boundedreview.render.escape import workflow_data, workflow_property

    assert workflow_data("a\rb\nc%d\x1b[31m") == "a%0Db%0Ac%25d\\x1b[31m"
    assert workflow_property("x:y,z\r") == "x%3Ay%2Cz%0D"


@pytest.mark.parametrize("text", [*EVIL, "  ::error::indented", "a ##[error]b", ":\n:x"])
def test_an_agent_hooks_lines_are_inert(text: str) -> None:
    from pytest_boundedreview.render.escape import lines

    out = lines(f"first line\n{text}\nlast: {text}")
    assert out.startswith("first line\n")
    assert not any(ord(c) < 32 and c not in "\n\t" for c in out), out
    assert not any(0x7F <= ord(c) <= 0x9F or unicodedata.category(c) == "Cf" for c in out), out
    assert not any(line.lstrip().startswith(":") for line in out.splitlines()), out
    assert "##[" not in out
    assert lines(out) == out  # escaping twice changes nothing
