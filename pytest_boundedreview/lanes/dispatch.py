"""Run the selected lanes: scouts first, one after another, then the verdict lanes
concurrently up to the tier's ceiling. The core, not the lanes, enforces the budget."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from ..core.settings.tables import LaneConfig
from ..models.record import record
from .result import Attempt

# Runs one lane (with its retries), given what the scouts answered.
LaneRunner = Callable[[LaneConfig, Sequence[Attempt]], list[Attempt]]


@record(frozen=True)
class LaneRun:
    lane: LaneConfig
    attempts: list[Attempt]
    seconds: float

    @property
    def verified(self) -> bool:
        return bool(self.attempts) and self.attempts[-1].ok


def _timed(
    lane: LaneConfig, run: LaneRunner, scouts: Sequence[Attempt], progress: Callable[[str], None]
) -> LaneRun:
    model = f" (model {lane.model})" if lane.model else ""
    progress(f"lane {lane.name} [{lane.lens}] started{model}")
    started = time.monotonic()
    attempts = run(lane, scouts)
    seconds = time.monotonic() - started
    last = attempts[-1] if attempts else None
    outcome: str
    if last is not None and last.result is not None:
        outcome = last.result.verdict or "scout findings"
    else:
        outcome = f"unverified ({last.detail if last else 'no attempt'})"
    tries = f", {len(attempts)} attempts" if len(attempts) > 1 else ""
    progress(
        f"lane {lane.name} finished: {outcome} in {seconds:.1f}s{tries}{_answered(lane, last)}"
    )
    return LaneRun(lane, attempts, seconds)


def _answered(lane: LaneConfig, last: Attempt | None) -> str:
    """The model that answered, when it is not the one the start line named: a fallback the
    endpoint chose, or a model the tool reported (an agent lane configured without one)."""
    used = last.model if last is not None else None
    if not used or used == lane.model:
        return ""
    return f", model {used}" + (f" in place of {lane.model}" if lane.model else "")


def dispatch(
    lanes: Sequence[LaneConfig],
    run: LaneRunner,
    max_concurrent: int,
    progress: Callable[[str], None],
) -> list[LaneRun]:
    """Every lane's attempts, in the order of ``lanes``."""
    scouts = [lane for lane in lanes if lane.role == "scout"]
    verdicts = [lane for lane in lanes if lane.role != "scout"]
    done: dict[str, LaneRun] = {}
    scout_answers: list[Attempt] = []
    for lane in scouts:
        done[lane.name] = _timed(lane, run, (), progress)
        scout_answers += [a for a in done[lane.name].attempts[-1:] if a.ok]
    with ThreadPoolExecutor(max_workers=max(1, max_concurrent)) as pool:
        futures = {
            lane.name: pool.submit(_timed, lane, run, tuple(scout_answers), progress)
            for lane in verdicts
        }
        for name, future in futures.items():
            done[name] = future.result()
    return [done[lane.name] for lane in lanes]
