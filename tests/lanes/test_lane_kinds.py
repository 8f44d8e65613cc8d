"""Lane kinds are one table (``lanes/kinds.py``): a kind added there alone is dispatched,
retried and triaged like the built-in ones."""

from __future__ import annotations

import dataclasses
import json
import typing
from pathlib import Path

import pytest
from gitrepo import GitRepo

from pytest_boundedreview.change import git
from pytest_boundedreview.change.freeze import freeze
from pytest_boundedreview.core.ceilings import effective_budget
from pytest_boundedreview.core.settings.config import Settings
from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes import kinds
from pytest_boundedreview.lanes.kinds import LaneCall, Once
from pytest_boundedreview.lanes.result import Attempt, read_result
from pytest_boundedreview.review.lanes import LaneRound, LanesOutcome, run_lanes

ANSWER = {
    "schema": "bounded-review/lane-result/v1",
    "verdict": "pass",
    "rationale": "the throwaway kind read {files} from its own copy of the tree",
}


def reviewed(tmp_path: Path, kind: str, retries: int) -> tuple[LanesOutcome, GitRepo]:
    """One round of a lane of ``kind`` on a one-line change of a real repository."""
    repo = GitRepo.init(tmp_path / "repo")
    repo.commit({"app.py": "x = 1\n"}, "base")
    repo.commit({"app.py": "x = 2\n"}, "change")
    lane = dataclasses.replace(
        LaneConfig(name="thrown", lens="correctness", command=["unused"]), kind=kind
    )
    settings = dataclasses.replace(Settings(), lanes=[lane], max_retries=retries)
    handle = git.open_repo(repo.path)
    budget = effective_budget("standard", settings.mode, settings.lowered_ceilings)
    target = freeze(handle, "pr", "HEAD~1")
    with repo.untouched():
        round_ = LaneRound(
            settings, handle, target, "standard", budget, ((), ()), (), lambda _: None
        )
        return run_lanes(round_), repo


def test_a_kind_added_to_the_table_alone_is_dispatched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[LaneCall] = []

    def echo(call: LaneCall) -> Once | Attempt:
        calls.append(call)
        packet = json.loads(call.packet)
        answer = dict(
            ANSWER,
            rationale=ANSWER["rationale"].format(
                files=sorted(p.name for p in call.workdir.iterdir() if not p.name.startswith("."))
            ),
        )
        tries = iter([Attempt(None, "error", "a first try that failed"), None])

        def once() -> Attempt:
            failed = next(tries)
            assert packet["schema"] == "bounded-review/packet/v1"
            return failed or read_result(json.dumps(answer).encode(), model="echo-1")

        return once

    monkeypatch.setitem(kinds.KINDS, "echo", echo)
    outcome, repo = reviewed(tmp_path, "echo", retries=1)
    assert [c.lane.name for c in calls] == ["thrown"]
    assert calls[0].workdir != repo.path  # a copy of the frozen tree, not the live one
    [row] = outcome.rows
    assert (row.name, row.status, row.model, row.attempts) == ("thrown", "pass", "echo-1", 2)
    assert "['app.py']" in (row.rationale or "")
    assert "attempt failed: a first try that failed" in (row.note or "")  # retried once
    assert outcome.problems == []


def test_a_kind_that_cannot_run_answers_with_its_failure_and_is_not_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuses(call: LaneCall) -> Once | Attempt:
        return Attempt(None, "error", "nothing to run this kind with")

    monkeypatch.setitem(kinds.KINDS, "refuses", refuses)
    outcome, _ = reviewed(tmp_path, "refuses", retries=3)
    [row] = outcome.rows
    assert (row.status, row.attempts) == ("unverified", 1)  # not retried 3 more times
    assert "attempt failed: nothing to run this kind with" in (row.note or "")
    assert outcome.problems == ["lane 'thrown' unverified: nothing to run this kind with"]


def test_every_kind_a_configuration_may_name_has_a_runner() -> None:
    """The configuration's kinds (validated in core, below the lanes) and the table agree."""
    allowed = typing.get_args(typing.get_type_hints(LaneConfig)["kind"])
    assert sorted(allowed) == sorted(kinds.KINDS)
