"""Triage end to end: a real pytest session, two real reviewer scripts producing every kind of
finding triage must handle, real reproductions at head and at the base, and the report checked
key by key."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

BASE_APP = "".join(
    [
        "VALUE = 1\n",
        "\n",
        "\n",
        "def compute(x):\n",
        "    total = x + VALUE\n",
        "    return total\n",
        "\n",
        "\n",
        "def describe():\n",
        "    return 'value'\n",
    ]
)
HEAD_APP = BASE_APP.replace("VALUE = 1", "VALUE = 2").replace("'value'", "'value!'")
REPRO = """
import app


def test_passes():
    assert app.compute(0) >= 0


def test_head_only():
    assert app.VALUE == 1


def test_both():
    assert app.compute(1) == 0
"""
LANE = """
import json, sys
lane = sys.argv[1]
python = sys.executable
def f(**kw):
    base = {"path": "app.py", "line": 1, "severity": "blocking", "category": "correctness",
            "failure_mode": "fm", "evidence": "ev", "remediation": "fix it"}
    base.update(kw)
    return base
if lane == "a":
    findings = [
        f(path="../etc/passwd", failure_mode="escape"),
        f(line=0, failure_mode="line zero"),
        f(line=5, quote="password = load_secret()", failure_mode="invented"),
        f(line=8, quote="return 'value!'", failure_mode="quoted two lines off"),
        f(line=9, category="style", failure_mode="name is vague"),
        f(path="lib.py", line=1, failure_mode="helper is odd"),
        f(line=4, end_line=5, failure_mode="Total overflows for large X", evidence="short"),
        f(line=1, reproduce={"pytest": "repro/test_repro.py::test_passes"}, failure_mode="r1"),
        f(line=1, reproduce={"pytest": "repro/test_repro.py::test_head_only"}, failure_mode="r2"),
        f(line=4, category="regression", failure_mode="r3",
          reproduce={"pytest": "repro/test_repro.py::test_both"}),
    ]
else:
    check = "import app, sys; sys.exit(app.VALUE != 1)"
    findings = [
        f(line=5, failure_mode="total overflows for large x.", evidence="much longer evidence"),
        f(line=10, category="security", failure_mode="cmd",
          reproduce={"command": [python, "-c", check]}),
    ]
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "revise",
                  "rationale": "see findings", "findings": findings}))
"""


def lanes(tmp_path: Path) -> str:
    script = tmp_path / "lane.py"
    script.write_text(LANE)
    out = ""
    for name, lens in (("a", "correctness"), ("b", "security")):
        command = json.dumps([sys.executable, str(script), name])
        out += f'[[tool.bounded-review.lanes]]\nname = "{name}"\nlens = "{lens}"\n'
        out += f"command = {command}\n"
    return out


def test_two_reviewers_every_rule_key_by_key(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    config = (
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        '[tool.bounded-review]\nrisk = "strict"\n'
        + lanes(tmp_path)
        + "[tool.bounded-review.selection]\nsmall_lines = 0\n"
    )
    project.commit(
        {
            "pyproject.toml": config,
            "app.py": BASE_APP,
            "lib.py": "def helper():\n    return 1\n",
            "tests/test_app.py": "import app\n\n\ndef test_app():\n    assert app.describe()\n",
            "repro/test_repro.py": REPRO,
            "conftest.py": "",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": HEAD_APP}, "change")
    with project.untouched():
        result = pytester.runpytest_subprocess(
            "--bounded-review",
            "--bounded-review-base=main",
            f"--bounded-review-sarif={pytester.path / '.bounded-review' / 'review.sarif'}",
            f"--bounded-review-markdown={pytester.path / '.bounded-review' / 'review.md'}",
        )
    report: dict[str, Any] = json.loads(
        (pytester.path / ".bounded-review" / "report.json").read_text()
    )
    assert [row["status"] for row in report["lanes"]] == ["revise", "revise"]
    findings = report["findings"]

    def brief(items: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
        return {(f["failure_mode"], f["line"], f["verification"], tuple(f["lanes"])) for f in items}

    assert brief(findings["blocking"]) == {
        ("quoted two lines off", 10, "quoted", ("a",)),
        ("total overflows for large x.", 5, "evidence", ("a", "b")),
        ("r2", 1, "reproduced", ("a",)),
        ("cmd", 10, "reproduced", ("b",)),
    }
    assert brief(findings["advisory"]) == {
        ("name is vague", 9, "evidence", ("a",)),
        ("helper is odd", 1, "evidence", ("a",)),
        ("r3", 4, "reproduced", ("a",)),
    }
    notes = {f["failure_mode"]: f["note"] for f in findings["blocking"] + findings["advisory"]}
    assert notes["quoted two lines off"] == "quote found at line 10, not at line 8 as cited"
    assert notes["name is vague"] == "category 'style' is advisory-only: demoted"
    assert notes["helper is odd"] == "out-of-scope"
    assert notes["r3"].startswith("pre-existing, not a blocker of this target")
    assert notes["r2"] == "reproduced: fails at head, passes at base"
    assert notes["cmd"] == "reproduced: fails at head (exit 1), succeeds at base"
    rejected = {f["failure_mode"]: f["reason"] for f in findings["rejected"]}
    assert rejected == {
        "escape": "path leaves the repository (`..`)",
        "line zero": "line must be a positive integer (got 0)",
        "invented": "quote not found at location",
        "r1": "did not reproduce: the test passes at head",
    }
    assert all(len(f["fingerprint"]) == 20 for f in findings["blocking"] + findings["advisory"])
    gate = report["gate"]
    assert gate["review_clean"] == "no"
    assert len(gate["reasons"]) == 4
    assert all(reason.startswith("blocking finding: app.py:") for reason in gate["reasons"])
    assert report["next_action"].startswith("fix 4 verified blocker(s): app.py:")
    assert report["next_action"].endswith("; then re-run pytest --bounded-review")
    assert report["tests"]["target_related"] == []
    assert result.ret == 1
    log = json.loads((pytester.path / ".bounded-review" / "review.sarif").read_text())
    lane_a = next(
        run for run in log["runs"] if run["tool"]["driver"]["name"] == "bounded-review lane a"
    )
    sarif_fps = {r["partialFingerprints"]["boundedReview/finding/v1"] for r in lane_a["results"]}
    report_fps = {
        f["fingerprint"] for f in findings["blocking"] + findings["advisory"] if "a" in f["lanes"]
    }
    assert sarif_fps == report_fps
    summary = (pytester.path / ".bounded-review" / "review.md").read_text()
    assert summary.startswith("<!-- bounded-review -->\n## bounded review: ❌ not clean")
    assert "### Blocking findings (4)" in summary
