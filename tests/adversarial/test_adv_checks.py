"""Hostile check output, from a real check process: paths the tool must not open (a NUL byte,
`/dev/zero`, a file outside the repository, a FIFO) and a SARIF log larger than the stdout cap
of other formats. Findings are kept; nothing outside the tree is read; nothing hangs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from pytest_boundedreview.checks.run import OUTPUT_CAP, run_once
from pytest_boundedreview.core.settings.tables import CheckConfig


def _check(tmp_path: Path, output: bytes, fmt: str = "gnu") -> CheckConfig:
    script = tmp_path / "tool.py"
    (tmp_path / "out.bin").write_bytes(output)
    script.write_text(
        "import sys\n"
        f"sys.stdout.buffer.write(open({str(tmp_path / 'out.bin')!r}, 'rb').read())\n"
        "sys.exit(1)\n"
    )
    return CheckConfig(name="tool", command=[sys.executable, str(script)], format=fmt)


@pytest.mark.parametrize(
    "cited",
    ["app\x00.py", "/dev/zero", "../secret.txt", "fifo", "link_out"],
)
def test_paths_a_check_names_are_never_opened_outside_the_tree(tmp_path: Path, cited: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("do not read\n")
    (root / "app.py").write_text("x = 1\n")
    os.mkfifo(root / "fifo")  # opening it for reading would block forever
    os.symlink(tmp_path / "secret.txt", root / "link_out")
    ran = run_once(_check(tmp_path, f"{cited}:1: error: boom [E1]\n".encode()), root)
    assert ran.findings is not None, ran.problem
    (finding,) = ran.findings
    assert finding.rule == "E1"
    assert finding.line == 1
    assert "do not read" not in json.dumps(finding.model_dump())


@pytest.mark.slow
def test_a_sarif_log_larger_than_the_text_cap_is_read(tmp_path: Path) -> None:
    result = {
        "ruleId": "R1",
        "message": {"text": "x" * 200},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": "app.py"},
                    "region": {"startLine": 1},
                }
            }
        ],
    }
    count = OUTPUT_CAP // 300 + 1000
    log = {"version": "2.1.0", "runs": [{"results": [result] * count}]}
    data = json.dumps(log).encode()
    assert len(data) > OUTPUT_CAP
    root = tmp_path / "repo"
    root.mkdir()
    (root / "app.py").write_text("x = 1\n")
    ran = run_once(_check(tmp_path, data, "sarif"), root)
    assert ran.findings is not None, ran.problem
    assert len(ran.findings) == count
