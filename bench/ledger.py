"""Benchmark: the loop ledger's cost per recorded operation and per load.

    python bench/ledger.py [--operations 200] [--out docs/performance.md]

One operation = kernel lock, load and validate, apply, temp write + fsync, atomic replace,
folder fsync, read back and validate. Loading = reading and validating a loop of 4 rounds x
3 lanes x 200 findings. Compared, in the same run, with the naive write (``write_text`` with
no lock, no fsync, no read-back) to show what the guarantees cost.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from results import record

from pytest_boundedreview.loop.ledger import Ledger, new_state
from pytest_boundedreview.models.finding import ReportFinding
from pytest_boundedreview.models.loop import LoopState, RoundState
from pytest_boundedreview.models.report import Findings, Gate, LaneReport

TITLE = "Loop ledger: one recorded operation, one load (`bench/ledger.py`)"
LOOP = "pr-main-feature"


def fresh() -> LoopState:
    return new_state(
        LOOP,
        target_kind="pr",
        base="main",
        branch="feature",
        status="open",
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
        max_repair_loops=3,
        repair_loops_used=0,
    )


def bump(current: LoopState | None) -> tuple[LoopState, dict[str, Any]]:
    state = current or fresh()
    return state.model_copy(update={"repair_loops_used": 0}), {"ok": True}


def big_state() -> LoopState:
    rounds = []
    for number in range(1, 5):
        findings = [
            ReportFinding(
                path=f"pkg/mod_{n % 50}.py",
                line=n + 1,
                severity="blocking" if n % 3 == 0 else "advisory",
                category="correctness",
                failure_mode=f"defect {n}",
                evidence="the evidence " * 5,
                remediation="fix it",
                fingerprint=f"{number:02d}{n:018d}",
                lanes=[f"lane{n % 3}"],
                verification="quoted",
            )
            for n in range(600)  # 3 lanes x 200 findings
        ]
        rows = [
            LaneReport(
                name=f"lane{i}", lens=f"lens{i}", role="verdict", status="revise", attempts=1
            )
            for i in range(3)
        ]
        found = Findings(
            blocking=[f for f in findings if f.severity == "blocking"],
            advisory=[f for f in findings if f.severity == "advisory"],
        )
        rounds.append(
            RoundState(
                number=number,
                revision=f"tree:{number:040d}",
                status="complete",
                rows=rows,
                findings=found,
                gate=Gate(review_clean="no", reasons=["blockers"]),
            )
        )
    return fresh().model_copy(update={"rounds": rounds})


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--operations", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        book = Ledger(folder, LOOP)
        guarded, naive = [], []
        plain = folder / "naive.json"
        for n in range(args.operations):
            start = time.perf_counter()
            book.mutate(f"op{n}", {"n": n}, bump)
            guarded.append(time.perf_counter() - start)
            state = book.read()
            assert state is not None
            start = time.perf_counter()
            plain.write_text(state.model_dump_json())
            naive.append(time.perf_counter() - start)
        loaded = Ledger(folder, "big")
        large = big_state().model_copy(update={"loop_id": "big"})
        loaded.mutate("seed", {}, lambda _: (large, {}))
        loads = []
        for _ in range(20):
            start = time.perf_counter()
            loaded.read()
            loads.append(time.perf_counter() - start)
    op, raw, load = (statistics.median(v) * 1000 for v in (guarded, naive, loads))
    rows = [
        ("one recorded operation (lock, fsyncs, replace, read-back)", op, op / raw),
        ("naive write of the same state (no lock, no fsync)", raw, 1.0),
        ("load a loop of 4 rounds x 3 lanes x 200 findings", load, None),
    ]
    intro = (
        f"median of {args.operations} operations and 20 loads, Python {sys.version.split()[0]}; "
        "targets: an operation under 10 ms, a load under 50 ms"
    )
    table = [
        (name, f"{ms:.2f}", "" if ratio is None else f"{ratio:.1f}x") for name, ms, ratio in rows
    ]
    record(args.out, "ledger", TITLE, intro, ("what", "median ms", "ratio to naive"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
