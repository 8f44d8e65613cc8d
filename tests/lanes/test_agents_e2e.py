"""A real pytest session reviewed by two agent lanes (stand-ins of claude and codex) and a
gemini scout: the scout's finding reaches both verdict lanes, every finding goes through
triage into the report, and each lane row carries its tool, version and usage."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest
import warmstart
from fakeagents import VERSIONS, calls, install
from gitrepo import GitRepo
from test_lanes_e2e import commit_change

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

CONFIG = """\
[tool.bounded-review]
risk = "strict"
mode = "review-and-fix"
max_retries = 0
[tool.bounded-review.selection]
small_lines = 0
[[tool.bounded-review.lanes]]
name = "facts"
lens = "facts"
role = "scout"
kind = "gemini"
[[tool.bounded-review.lanes]]
name = "surgical"
lens = "correctness"
kind = "claude"
model = "sonnet"
max_budget_usd = 2.0
[[tool.bounded-review.lanes]]
name = "deep"
lens = "security"
kind = "codex"
"""


def finding(severity: str, category: str, **extra: object) -> dict[str, object]:
    return {
        "path": "app.py",
        "line": 1,
        "severity": severity,
        "category": category,
        "failure_mode": "x is set to 2, callers expect 1",
        "evidence": "the changed line",
        "quote": "x = 2",
        "remediation": "set x back to 1",
        **extra,
    }


def test_two_agent_lanes_and_a_scout_review_a_session(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    schema = "bounded-review/lane-result/v1"
    install(
        bin_dir,
        "gemini",
        answer={"schema": schema, "rationale": "facts", "findings": [finding("advisory", "style")]},
    )
    blocking = {
        "schema": schema,
        "verdict": "revise",
        "rationale": "the change breaks callers",
        "findings": [finding("blocking", "correctness")],
    }
    install(bin_dir, "claude", answer=blocking, reconcile=True)
    install(bin_dir, "codex", reconcile=True)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    commit_change(project, CONFIG)
    before = project.git("status", "--porcelain")

    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())

    rows = {row["name"]: row for row in report["lanes"]}
    assert [rows[n]["status"] for n in ("facts", "surgical", "deep")] == ["scout", "revise", "pass"]
    for name, kind in (("facts", "gemini"), ("surgical", "claude"), ("deep", "codex")):
        assert rows[name]["tool"] == kind
        assert rows[name]["tool_version"] == VERSIONS[kind]
        assert "not verified against a live list" in rows[name]["note"]
    assert rows["surgical"]["model"] == "claude-sonnet-4-5"
    assert rows["surgical"]["usage"] == {
        "input_tokens": 1003,
        "output_tokens": 50,
        "cost_usd": 0.0123,
        "turns": 2,
    }
    assert report["usage"]["input_tokens"] == 1003 + 24763 + 900
    assert report["usage"]["cost_usd"] == 0.0123
    # Both verdict lanes were handed the scout's finding (and answered it).
    for kind in ("claude", "codex"):
        (call,) = calls(bin_dir, kind)
        packet = json.loads(re.search(r"```json\n(.*?)\n```", call["stdin"], re.S).group(1))
        (handed,) = packet["scout_findings"]
        assert (handed["path"], handed["category"]) == ("app.py", "style")
    argv = calls(bin_dir, "claude")[0]["argv"]
    assert argv[argv.index("--max-budget-usd") + 1] == "2"
    (blocker,) = report["findings"]["blocking"]
    assert (blocker["path"], blocker["line"], blocker["verification"]) == ("app.py", 1, "quoted")
    assert blocker["lanes"] == ["facts", "surgical"]  # the scout's note on the line merged in
    assert report["gate"]["review_clean"] == "no"
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*lane surgical [[]correctness[]]: revise, model claude-sonnet-4-5, "
            "2.1.332 (Claude Code), 2 turn(s)*"
        ]
    )
    assert project.git("status", "--porcelain") == before

    # The dry run reads the loop this session recorded: the same snapshot is reused, and on a
    # repair the lane that passed is retained while the one that blocked runs again.
    def dry_run() -> list[str]:
        out = warmstart.run(
            [sys.executable, "-m", "pytest_boundedreview", "lanes", "--base", "main"],
            cwd=project.path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.splitlines()

    unchanged = "the snapshot is unchanged since round 1: its results are reused"
    assert f"lane deep [security, verdict, codex]: would not run - {unchanged}" in dry_run()
    project.commit({"app.py": "x = 3\n"}, "repair")
    lines = dry_run()
    assert "lane surgical [correctness, verdict, claude]: would run" in lines
    retained = "would be retained - passed in round 1 of the loop"
    assert f"lane deep [security, verdict, codex]: {retained}" in lines
    assert len(calls(bin_dir, "claude")) == 1  # the dry runs dispatched nothing


NOT_LOGGED_IN = """\
[tool.bounded-review]
risk = "strict"
max_retries = 2
[tool.bounded-review.selection]
small_lines = 0
[[tool.bounded-review.lanes]]
name = "surgical"
lens = "correctness"
kind = "claude"
"""


def test_a_lane_that_is_not_logged_in_is_tried_once_and_said_once(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    install(bin_dir, "claude", "not_logged_in")
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    commit_change(project, NOT_LOGGED_IN)
    result = pytester.runpytest_subprocess("--bounded-review", "--bounded-review-base=main")
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    (row,) = report["lanes"]
    assert len(calls(bin_dir, "claude")) == 1  # max_retries = 2, and no retry was made
    assert row["attempts"] == 1
    assert row["status"] == "unverified"
    assert row["note"].count("Not logged in") == 1
    assert "not retried: no retry can change this failure" in row["note"]
    assert report["gate"]["review_clean"] != "yes"  # fails closed, as before
    (shown,) = [line for line in result.stdout.lines if line.startswith("lane surgical [")]
    assert shown.count("Not logged in") == 1  # the row says it once, not once per attempt
    assert result.ret == 1
