"""Retries are for failures a retry can change: a lane that cannot run until someone acts (no
login, an unknown model, a missing tool) is tried once, and the same failure repeated is shown
once, with a count."""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_boundedreview.core.settings.tables import LaneConfig
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


def test_a_command_lane_that_says_it_cannot_run_is_final(tmp_path: Path) -> None:
    """A reviewer program is a lane kind like the others: its last words on stderr ("HTTP
    401", a prompt over the context) make the failure final; other exits are retried."""
    from pytest_boundedreview.lanes import command

    for said, final in (
        ("error: HTTP 401 Unauthorized", True),
        ("error: This model's maximum context length is 1024 tokens", True),
        ("error: connection reset by peer", False),
    ):
        script = f"import sys; print({said!r}, file=sys.stderr); sys.exit(1)"
        lane = LaneConfig(name="r", lens="correctness", command=[sys.executable, "-c", script])
        attempt = command.run_once(lane, b"{}", tmp_path)
        assert (attempt.ok, attempt.final) == (False, final), attempt.detail


def test_a_plugin_lane_that_says_it_cannot_run_is_final(tmp_path: Path) -> None:
    from pytest_boundedreview.lanes import plugin

    class Refused:
        name, lens = "p", "correctness"

        def review(self, packet: object, workdir: Path) -> object:
            raise PermissionError("403 Forbidden: this key may not use the model")

    config = LaneConfig(name="p", lens="correctness", kind="plugin")
    attempt = plugin.run_once(config, Refused(), b"{}", tmp_path)
    assert attempt.final
    assert "Forbidden" in attempt.detail
