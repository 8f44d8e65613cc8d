"""Retries are for failures a retry can change: a lane that cannot run until someone acts (no
login, an unknown model, a missing tool) is tried once, and the same failure repeated is shown
once, with a count."""

from __future__ import annotations

from pytest_boundedreview.core.tables import LaneConfig
from pytest_boundedreview.lanes.dispatch import LaneRun
from pytest_boundedreview.lanes.result import Attempt, settled, with_retries
from pytest_boundedreview.review.lanerows import lane_row


def calls_until(attempts: list[Attempt]) -> tuple[list[Attempt], int]:
    made = 0

    def call() -> Attempt:
        nonlocal made
        made += 1
        return attempts[min(made, len(attempts)) - 1]

    return with_retries(call, retries=3), made


def test_a_final_failure_is_not_retried() -> None:
    kept, made = calls_until([settled(Attempt(None, "error", "Not logged in · Please run /login"))])
    assert made == 1
    assert len(kept) == 1


def test_other_failures_are_retried_up_to_the_ceiling() -> None:
    kept, made = calls_until([Attempt(None, "error", "stream disconnected before completion")])
    assert made == 4
    assert not any(a.final for a in kept)


def test_settled_reads_the_words_of_the_failures_that_last() -> None:
    for detail in (
        "claude reported a failure: subtype 'success'; is_error; Not logged in · Please run /login",
        "gemini reported a failure: Please set an Auth method",
        "HTTP 401 Unauthorized",
        "model not found",
        "model 'gpt-9' does not exist",
    ):
        assert settled(Attempt(None, "error", detail)).final, detail
    for detail in ("quota exceeded", "timed out after 3s", "exit 1: connection reset"):
        assert not settled(Attempt(None, "error", detail)).final, detail
    passed = Attempt(None, "error", "Not logged in")
    assert settled(passed) is not passed  # marked anew, the original left as it was
    assert not passed.final


def row(attempts: list[Attempt]) -> str:
    lane = LaneConfig(name="r", lens="correctness", command=["reviewer"])
    return lane_row(LaneRun(lane, attempts, 0.0), None).note or ""


def test_identical_failures_are_shown_once_with_a_count() -> None:
    again = Attempt(None, "error", "exit 1: connection reset")
    note = row([again, again, again])
    assert note == "3 attempts failed: exit 1: connection reset"


def test_a_final_failure_says_it_was_not_retried() -> None:
    note = row([settled(Attempt(None, "error", "Not logged in · Please run /login"))])
    assert note == (
        "attempt failed: Not logged in · Please run /login; "
        "not retried: no retry can change this failure"
    )


def test_different_failures_are_each_shown() -> None:
    note = row([Attempt(None, "error", "a"), Attempt(None, "limit", "b")])
    assert note == "attempt failed: a; attempt failed: b"
