"""Dispatch with real reviewer processes: scouts first, verdict lanes concurrently within
the ceiling (shown by overlapping run intervals, not by timing thresholds)."""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.command import run_with_retries
from pytest_boundedreview.lanes.dispatch import LaneRunner, dispatch
from pytest_boundedreview.lanes.result import Attempt

REVIEWER = """
import json, sys, time
from pathlib import Path
log = Path(sys.argv[1])
with log.open("a") as fh:
    fh.write(f"start {sys.argv[2]} {time.monotonic()}\\n")
time.sleep(float(sys.argv[3]))
with log.open("a") as fh:
    fh.write(f"end {sys.argv[2]} {time.monotonic()}\\n")
print(json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass", "rationale": "ok"}
                 if sys.argv[4] == "verdict" else
                 {"schema": "bounded-review/lane-result/v1", "findings": []}))
"""


def lanes(tmp_path: Path, spec: list[tuple[str, str]]) -> tuple[list[LaneConfig], Path]:
    script = tmp_path / "reviewer.py"
    script.write_text(REVIEWER)
    log = tmp_path / "log"
    made = [
        LaneConfig(
            name=name,
            lens=f"lens-{name}",
            role=role,  # type: ignore[arg-type]
            command=[sys.executable, str(script), str(log), name, "0.5", role],
        )
        for name, role in spec
    ]
    return made, log


def intervals(log: Path) -> dict[str, tuple[float, float]]:
    starts, ends = {}, {}
    for line in log.read_text().splitlines():
        kind, name, at = line.split()
        (starts if kind == "start" else ends)[name] = float(at)
    return {name: (starts[name], ends[name]) for name in starts}


def runner(tmp_path: Path, seen: dict[str, int]) -> LaneRunner:
    lock = threading.Lock()

    def run(lane: LaneConfig, scouts: Sequence[Attempt]) -> list[Attempt]:
        with lock:
            seen[lane.name] = len(scouts)
        return run_with_retries(lane, b"{}", tmp_path, retries=0)

    return run


def test_scouts_first_then_verdicts_concurrently(tmp_path: Path) -> None:
    made, log = lanes(tmp_path, [("a", "verdict"), ("s", "scout"), ("b", "verdict")])
    seen: dict[str, int] = {}
    messages: list[str] = []
    runs = dispatch(made, runner(tmp_path, seen), max_concurrent=2, progress=messages.append)
    assert [r.lane.name for r in runs] == ["a", "s", "b"]
    assert all(r.verified for r in runs)
    spans = intervals(log)
    assert spans["s"][1] <= min(spans["a"][0], spans["b"][0])  # the scout finished first
    assert spans["a"][0] < spans["b"][1]  # a and b overlap
    assert spans["b"][0] < spans["a"][1]
    assert seen == {"s": 0, "a": 1, "b": 1}  # verdict lanes got the scout's answer
    assert any(m.startswith("lane a [lens-a] started") for m in messages)
    assert any(m.startswith("lane b finished: pass in ") for m in messages)


@pytest.mark.slow
def test_the_ceiling_limits_concurrency(tmp_path: Path) -> None:
    made, log = lanes(tmp_path, [("a", "verdict"), ("b", "verdict"), ("c", "verdict")])
    dispatch(made, runner(tmp_path, {}), max_concurrent=1, progress=lambda _: None)
    ordered = sorted(intervals(log).values())
    assert len(ordered) == 3
    assert all(first[1] <= second[0] for first, second in itertools.pairwise(ordered))


def test_progress_names_the_model_that_answered_when_it_is_not_the_configured_one() -> None:
    """A fallback (or a model an agent reported where none was configured) is named in the
    lane's finished line; the configured model answering adds nothing to it."""
    made = [
        LaneConfig(name="fell", lens="x", command=["x"], model="big"),
        LaneConfig(name="same", lens="x", command=["x"], model="big"),
        LaneConfig(name="agent", lens="x", command=["x"]),
    ]
    used = {"fell": "small", "same": "big", "agent": "reported-1"}

    def run(lane: LaneConfig, scouts: Sequence[Attempt]) -> list[Attempt]:
        return [Attempt(None, "error", "refused", model=used[lane.name])]

    messages: list[str] = []
    dispatch(made, run, max_concurrent=1, progress=messages.append)
    ends = {m.split()[1]: m for m in messages if " finished: " in m}
    assert ends["fell"].endswith("s, model small in place of big"), ends
    assert "model" not in ends["same"].split(" in ")[-1], ends
    assert ends["agent"].endswith("s, model reported-1"), ends
