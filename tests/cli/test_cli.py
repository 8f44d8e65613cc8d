from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_models import FINDING, report_document

from pytest_boundedreview.cli import commands as cli
from pytest_boundedreview.models import SCHEMA_NAMES, json_schema


@pytest.mark.parametrize("name", sorted(SCHEMA_NAMES))
def test_schema_prints_each_json_schema(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["schema", name]) == 0
    assert json.loads(capsys.readouterr().out) == json_schema(name)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "the following arguments are required: COMMAND"),
        (["schema", "bogus"], "invalid choice: 'bogus'"),
        (["frobnicate"], "invalid choice: 'frobnicate'"),
        (["validate"], "the following arguments are required: FILE"),
    ],
)
def test_usage_errors_exit_4_without_a_traceback(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 4
    err = capsys.readouterr().err
    assert message in err
    assert "usage: bounded-review" in err
    assert "Traceback" not in err


def test_help_reads_well(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for word in ("schema", "validate", "demo", "exit statuses: 0 clean"):
        assert word in out


def write_json(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_validate_good_and_bad_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write_json(tmp_path / "good.json", report_document())
    assert cli.main(["validate", str(good)]) == 0
    assert capsys.readouterr().out == f"{good}: valid\n"

    broken = report_document()
    broken["tests"]["passed"] = "many"
    broken["gate"]["review_clean"] = "maybe"
    bad = write_json(tmp_path / "bad.json", broken)
    assert cli.main(["validate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{good}: valid" in out
    assert f"{bad}: invalid" in out
    assert "  tests.passed: Input should be a valid integer (got 'many')" in out
    assert "  gate.review_clean: invalid value; allowed values: 'yes', 'no' or" in out


def test_validate_needs_a_known_schema(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    finding = write_json(tmp_path / "finding.json", FINDING)
    assert cli.main(["validate", str(finding)]) == 1
    assert "schema: unknown or missing None" in capsys.readouterr().out
    assert cli.main(["validate", "--schema", "finding", str(finding)]) == 0
    odd = write_json(tmp_path / "odd.json", {"schema": "bounded-review/other/v9"})
    assert cli.main(["validate", str(odd)]) == 1
    assert "unknown or missing 'bounded-review/other/v9'" in capsys.readouterr().out


def test_validate_rejects_unsafe_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "dup.json"
    path.write_bytes(b'{"schema": "bounded-review/report/v1", "schema": "x"}')
    assert cli.main(["validate", str(path)]) == 1
    assert "duplicate key 'schema'" in capsys.readouterr().out


def test_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["validate", str(tmp_path / "nope.json")]) == 4
    err = capsys.readouterr().err
    assert "nope.json: cannot read: No such file or directory" in err
    assert "Traceback" not in err


def test_interrupt_and_internal_error_statuses(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(_: object) -> int:
        raise KeyboardInterrupt

    def broken(_: object) -> int:
        raise RuntimeError("boom")

    monkeypatch.setitem(cli.COMMANDS, "demo", interrupted)
    assert cli.main(["demo"]) == 130
    monkeypatch.setitem(cli.COMMANDS, "demo", broken)
    assert cli.main(["demo"]) == 3
    assert "internal error" in capsys.readouterr().err


@pytest.mark.slow
def test_module_and_console_script_entry_points() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest_boundedreview", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("bounded-review 0.")
    script = Path(sys.executable).parent / "bounded-review"
    proc = subprocess.run(
        [str(script), "schema", "finding"], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["title"] == "Finding"


def test_validate_checks_each_finding_of_a_lane_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = {
        "schema": "bounded-review/lane-result/v1",
        "verdict": "revise",
        "rationale": "r",
        "findings": [FINDING, {"path": "a.py", "line": 0}],
    }
    path = write_json(tmp_path / "lane.json", document)
    assert cli.main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "  findings[1].line: Input should be greater than or equal to 1 (got 0)" in out
    assert "  findings[1].severity: required key is missing" in out
    assert "findings[0]" not in out


@pytest.mark.parametrize(
    "command",
    ["run", "gate", "report", "merge", "status", "reset", "validate", "schema", "demo", "loop"],
)
def test_every_command_explains_itself(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: bounded-review " + command)
    # A description or a list of sub-commands follows the usage, not options alone.
    body = out.split("\n\n")[1]
    assert not body.startswith(("options:", "positional arguments:")) or command == "loop", body
    assert command in cli.main.__globals__["COMMANDS"]


def test_the_command_line_is_built_without_importing_pytest() -> None:
    """Every command builds the whole parser; the hooks' commands (``gate``, ``hook stop``)
    run on every commit and every agent turn, and pytest's import would be most of their
    start-up. Only the commands that run tests import it."""
    probe = (
        "import sys\n"
        "from pytest_boundedreview.cli.parser import parser\n"
        "parser()\n"
        "print(sorted(m for m in sys.modules if m == 'pytest' or m.startswith('_pytest')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]", done.stdout
