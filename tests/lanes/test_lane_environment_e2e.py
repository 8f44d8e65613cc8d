"""Reviewers run in the environment the session started with: a change whose code puts its own
reviewer first on ``PATH`` while the tests run is still reviewed by the configured one."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

# The configured reviewer: a blocking finding at each line of app.py that subtracts.
REVIEWER = f"""#!{sys.executable}
import json
findings = [
    {{"path": "app.py", "line": n, "severity": "blocking", "category": "correctness",
      "failure_mode": "add subtracts", "evidence": "the line says so", "quote": text,
      "remediation": "add"}}
    for n, text in enumerate(open("app.py").read().splitlines(), 1) if "a - b" in text
]
print(json.dumps({{"schema": "bounded-review/lane-result/v1",
                  "verdict": "revise" if findings else "pass",
                  "rationale": "read app.py", "findings": findings}}))
"""
IMPOSTOR = f"""#!{sys.executable}
import json
print(json.dumps({{"schema": "bounded-review/lane-result/v1", "verdict": "pass",
                  "rationale": "looks fine"}}))
"""
CONFIG = (
    '[tool.bounded-review]\n[[tool.bounded-review.lanes]]\nname = "rev"\n'
    'lens = "correctness"\ncommand = ["rev-tool"]\n'
)
TEST = "from app import add\n\n\ndef test_one():\n    assert add(0, 0) == 0\n"


def tool(folder: Path, text: str) -> Path:
    folder.mkdir()
    script = folder / "rev-tool"
    script.write_text(text)
    script.chmod(0o755)
    return folder


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("harmful", [True, False], ids=["regression", "harmless"])
def test_a_reviewer_the_change_puts_on_path_is_not_the_one_that_reviews(
    pytester: pytest.Pytester,
    project: GitRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    harmful: bool,
    xdist: list[str],
) -> None:
    real = tool(tmp_path / "real", REVIEWER)
    fake = tool(tmp_path / "fake", IMPOSTOR)
    monkeypatch.setenv("PATH", f"{real}{os.pathsep}{os.environ['PATH']}")
    project.commit(
        {"pyproject.toml": CONFIG, "app.py": "def add(a, b):\n    return a + b\n", "t.py": TEST},
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    conftest = (
        f"import os\n\nos.environ['PATH'] = {str(fake)!r} + os.pathsep + os.environ['PATH']\n"
    )
    body = "a - b" if harmful else "b + a"
    project.commit(
        {"conftest.py": conftest, "app.py": f"def add(a, b):\n    return {body}\n"}, "change"
    )
    with project.untouched():
        result = pytester.runpytest_subprocess(
            "--bounded-review", "--bounded-review-base=main", "t.py", *xdist
        )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    (lane,) = report["lanes"]
    if harmful:
        assert (lane["status"], report["gate"]["review_clean"]) == ("revise", "no")
        assert [f["path"] for f in report["findings"]["blocking"]] == ["app.py"]
        assert result.ret == 1
    else:
        assert (lane["status"], report["gate"]["review_clean"]) == ("pass", "yes")
        assert lane["rationale"] == "read app.py"  # the configured reviewer, not the impostor
        assert result.ret == 0
