"""A reviewer's blocker must be checkable, end to end: real git repositories, real pytest
sessions, a command lane whose script prints the answer, and an ``openai`` lane against a
stand-in endpoint on 127.0.0.1. An unquoted, unreproduced blocker on a harmless change is
advisory with its reason (the gate says ``yes``); a quoted blocker on a real bug still says
``no``; a ``pass`` carrying a blocker is refused, retried, and leaves the lane unverified."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gitrepo import GitRepo
from modelendpoint import Reply, Script, serve
from modelendpoint import answer as completion

from pytest_boundedreview.triage.steps import UNCHECKED

pytestmark = pytest.mark.slow  # whole review sessions

APP = "def add(a, b):\n    return a + b\n"
HARMLESS = APP + "\n\ndef twice(x):\n    return add(x, x)\n"  # 6 lines
BROKEN = APP + "\n\ndef twice(x):\n    return add(x, x) + 1\n"
TESTS = "import app\n\n\ndef test_add():\n    assert app.add(1, 2) == 3\n"
LANE = """
import json, sys
print(json.dumps(json.loads(open(sys.argv[1]).read())))
"""


def blocker(**extra: Any) -> dict[str, Any]:
    return {
        "path": "app.py",
        "line": 6,
        "severity": "blocking",
        "category": "correctness",
        "failure_mode": "None",
        "evidence": "twice may be wrong",
        "remediation": "check it",
        **extra,
    }


def answer(verdict: str | None, *findings: dict[str, Any], rationale: str = "r") -> str:
    return json.dumps(
        {
            "schema": "bounded-review/lane-result/v1",
            "verdict": verdict,
            "rationale": rationale,
            "findings": list(findings),
        }
    )


def commit_change(project: GitRepo, lanes: str, head: str) -> None:
    config = (
        '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
        "[tool.bounded-review]\nmax_retries = 1\n" + lanes
    )
    project.commit({"pyproject.toml": config, "app.py": APP, "tests/test_app.py": TESTS}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": head}, "change")


def review(pytester: pytest.Pytester, project: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    with project.untouched():
        result = pytester.runpytest_subprocess(
            "--bounded-review", "--bounded-review-base=main", "-p", "no:randomly", *args
        )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return int(result.ret), report


def command_lane(tmp_path: Path, text: str) -> str:
    script, reply = tmp_path / "lane.py", tmp_path / "answer.json"
    script.write_text(LANE)
    reply.write_text(text)
    command = json.dumps([sys.executable, str(script), str(reply)])
    return f'[[tool.bounded-review.lanes]]\nname = "c"\nlens = "correctness"\ncommand = {command}\n'


@pytest.fixture
def endpoint() -> Iterator[tuple[Script, str]]:
    """An OpenAI-compatible stand-in listing one model, ``small``; each test sets its replies
    (the last one again when they run out)."""
    script = Script(models=[{"id": "small", "object": "model"}])
    with serve(script) as url:
        yield script, url


def replies(*contents: str) -> list[Reply]:
    return [completion(content) for content in contents]


def openai_lane(url: str) -> str:
    return (
        '[[tool.bounded-review.lanes]]\nname = "o"\nlens = "correctness"\nkind = "openai"\n'
        f'base_url = "{url}"\nmodel = "small"\ntimeout = 30\n'
    )


@pytest.mark.parametrize("workers", [["-p", "no:xdist"], ["-n", "2"]], ids=["serial", "xdist"])
def test_an_unquoted_blocker_on_a_harmless_change_is_advisory_with_its_reason(
    pytester: pytest.Pytester,
    project: GitRepo,
    endpoint: tuple[Script, str],
    workers: list[str],
) -> None:
    """The small model's answer: a blocking finding with no quote and no reproduction."""
    state, url = endpoint
    state.completions = replies(answer("revise", blocker()))
    commit_change(project, openai_lane(url), HARMLESS)
    status, report = review(pytester, project, *workers)
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    findings = report["findings"]
    assert findings["blocking"] == []
    (kept,) = findings["advisory"]
    assert (kept["verification"], kept["note"]) == ("evidence", UNCHECKED)
    (row,) = report["lanes"]
    assert row["status"] == "revise"


@pytest.mark.parametrize("quote", ["a", "(", "x", "return"])
def test_a_quote_too_short_to_check_the_claim_leaves_the_blocker_advisory(
    pytester: pytest.Pytester, project: GitRepo, endpoint: tuple[Script, str], quote: str
) -> None:
    """One character or one word of ``    return add(x, x)`` is found on many lines: it shows
    nothing of the claim, so the blocker is the model's word alone."""
    state, url = endpoint
    state.completions = replies(answer("revise", blocker(quote=quote)))
    commit_change(project, openai_lane(url), HARMLESS)
    status, report = review(pytester, project, "-p", "no:xdist")
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    (kept,) = report["findings"]["advisory"]
    assert kept["verification"] == "evidence"
    assert "the quote is too short to check the claim" in kept["note"]
    assert UNCHECKED in kept["note"]


def test_a_quoted_blocker_on_a_real_bug_still_blocks(
    pytester: pytest.Pytester, project: GitRepo, endpoint: tuple[Script, str]
) -> None:
    state, url = endpoint
    found = blocker(quote="return add(x, x) + 1", failure_mode="twice(1) is 3, not 2")
    state.completions = replies(answer("revise", found))
    commit_change(project, openai_lane(url), BROKEN)
    status, report = review(pytester, project)
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    (kept,) = report["findings"]["blocking"]
    assert (kept["verification"], kept["note"]) == ("quoted", None)


def test_a_reproduced_blocker_without_a_quote_still_blocks(
    pytester: pytest.Pytester, project: GitRepo, endpoint: tuple[Script, str]
) -> None:
    state, url = endpoint
    check = "import app, sys; sys.exit(getattr(app, 'twice', lambda x: 2)(1) != 2)"
    state.completions = replies(
        answer("revise", blocker(reproduce={"command": [sys.executable, "-c", check]}))
    )
    commit_change(project, openai_lane(url), BROKEN)
    status, report = review(pytester, project)
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    (kept,) = report["findings"]["blocking"]
    assert kept["verification"] == "reproduced"


def test_a_command_lanes_unquoted_blocker_still_blocks(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    """A command lane gets the packet alone, not the contract: its program (perhaps a
    deterministic tool) decides what it reports, and its blocker blocks as before."""
    commit_change(project, command_lane(tmp_path, answer("revise", blocker())), HARMLESS)
    status, report = review(pytester, project)
    assert (status, report["gate"]["review_clean"]) == (1, "no")
    (kept,) = report["findings"]["blocking"]
    assert kept["verification"] == "evidence"


def test_a_pass_carrying_a_blocker_is_retried_then_unverified(
    pytester: pytest.Pytester, project: GitRepo, tmp_path: Path
) -> None:
    """Quoted and real: what makes it wrong is the answer, which says both pass and block."""
    found = blocker(quote="return add(x, x) + 1")
    commit_change(project, command_lane(tmp_path, answer("pass", found)), BROKEN)
    status, report = review(pytester, project)
    assert report["gate"]["review_clean"] == "indeterminate"
    assert status != 0
    (row,) = report["lanes"]
    assert row["status"] == "unverified"
    assert row["attempts"] == 2  # the first answer and max_retries = 1 more
    assert "contradicts itself" in row["note"]
    assert report["findings"]["blocking"] == []


@pytest.mark.parametrize(
    "reply",
    [
        answer("pass", rationale="twice adds its argument to itself"),
        answer("pass", blocker(severity="advisory", quote="return add(x, x)")),
    ],
    ids=["pass", "pass-with-advisory"],
)
def test_harmless_control_comes_out_clean(
    pytester: pytest.Pytester, project: GitRepo, endpoint: tuple[Script, str], reply: str
) -> None:
    state, url = endpoint
    state.completions = replies(reply)
    commit_change(project, openai_lane(url), HARMLESS)
    status, report = review(pytester, project)
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    assert [row["status"] for row in report["lanes"]] == ["pass"]


@pytest.mark.parametrize(
    ("end_line", "quote", "kept"),
    [
        (7, "return add(x, x) + 1", True),  # one past the last line, quote found: clamped
        (8, "return add(x, x) + 1", False),  # two past
        (7, "return nothing", False),  # one past, quote not found
    ],
    ids=["one-past", "two-past", "not-found"],
)
def test_an_end_line_one_past_the_end_is_clamped_when_the_quote_is_found(
    pytester: pytest.Pytester,
    project: GitRepo,
    tmp_path: Path,
    end_line: int,
    quote: str,
    kept: bool,
) -> None:
    found = blocker(end_line=end_line, quote=quote)
    commit_change(project, command_lane(tmp_path, answer("revise", found)), BROKEN)
    status, report = review(pytester, project)
    findings = report["findings"]
    if kept:
        assert (status, report["gate"]["review_clean"]) == (1, "no")
        (blocking,) = findings["blocking"]
        assert (blocking["line"], blocking["end_line"]) == (6, 6)
        assert blocking["note"] == "end_line 7 is past the end: clamped to 6"
    else:
        assert (status, report["gate"]["review_clean"]) == (0, "yes")
        (rejected,) = findings["rejected"]
        assert f"line {end_line} is outside the file (6 lines)" in rejected["reason"]


def test_an_openai_lane_unquoted_blocker_is_advisory_and_its_prompt_fits_it(
    pytester: pytest.Pytester, project: GitRepo, endpoint: tuple[Script, str]
) -> None:
    """The trial's answer: ``pass`` is now refused with a blocker, so the second answer is a
    ``revise`` whose blocker cites no quote: advisory, and the gate says ``yes``."""
    state, url = endpoint
    state.completions = replies(answer("pass", blocker()), answer("revise", blocker()))
    commit_change(project, openai_lane(url), HARMLESS)
    status, report = review(pytester, project)
    assert (status, report["gate"]["review_clean"]) == (0, "yes")
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("revise", 2)
    assert "contradicts itself" in row["note"]
    (kept,) = report["findings"]["advisory"]
    assert kept["note"] == UNCHECKED
    system = state.posts()[0]["messages"][0]["content"]
    assert "You have the packet and nothing else" in system
    assert "in your working directory" not in system
    schema = state.posts()[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["rationale"] == {
        "type": "string",
        "minLength": 1,
        "description": schema["properties"]["rationale"]["description"],
    }


def test_an_openai_lane_that_keeps_passing_with_a_blocker_is_unverified(
    pytester: pytest.Pytester, project: GitRepo, endpoint: tuple[Script, str]
) -> None:
    state, url = endpoint
    state.completions = replies(answer("pass", blocker(quote="return add(x, x) + 1")))
    commit_change(project, openai_lane(url), BROKEN)
    status, report = review(pytester, project)
    assert report["gate"]["review_clean"] == "indeterminate"
    assert status != 0
    (row,) = report["lanes"]
    assert (row["status"], row["attempts"]) == ("unverified", 2)
    assert len(state.posts()) == 2
