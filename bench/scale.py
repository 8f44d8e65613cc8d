"""Benchmark: what a first review costs as the repository grows, in seconds added to plain
pytest, measured in the same run.

    python bench/scale.py [--files 2000 30000 100000] [--tests 2000] [--repeat 3]
                          [--out docs/performance.md]

For each size a generated repository (``bench/bigrepo.py``: the suite, a package reading a
data file through ``importlib.resources``, and inert data files up to ``--files`` tracked
files; made with ``git fast-import`` and cached in the temporary folder) is cloned, then each
repetition runs, interleaved: plain pytest; the review in a fresh clone (cold: no state folder
at all, as in CI); the review again (warm: the base's answers cached); and on a harmless change
(a README line, every test passing) plain pytest and the review, fresh. Reported: the median
of the paired differences (review minus the plain run just before it) with their spread, and
the cold cost at each size against the cost at the smallest.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from baseline import timed
from bigrepo import cached, clone
from results import record

TITLE = "Cost as the repository grows (`bench/scale.py`)"
PLAIN = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]


def review(base: str) -> list[str]:
    return [*PLAIN, "--bounded-review", f"--bounded-review-base={base}"]


def fresh(repo: Path) -> None:
    """The repository as a fresh clone has it: no state folder at all."""
    shutil.rmtree(repo / ".bounded-review", ignore_errors=True)


def measure(
    files: int, tests: int, work_ms: float, repeat: int, folder: Path
) -> dict[str, list[float]]:
    """Seconds added to plain pytest by each variant, ``repeat`` times, interleaved."""
    bare = cached(files, tests, work_ms)
    changed = clone(bare, folder / f"changed-{files}", "feature")
    harmless = clone(bare, folder / f"harmless-{files}", "harmless")
    for repo in (changed, harmless):
        timed(PLAIN, repo)  # bytecode written once, for every variant alike
    added: dict[str, list[float]] = {"cold": [], "warm": [], "harmless": [], "plain": []}
    for _ in range(repeat):
        plain = timed(PLAIN, changed)
        added["plain"].append(plain)
        fresh(changed)
        added["cold"].append(timed(review("main"), changed) - plain)
        added["warm"].append(timed(review("main"), changed) - timed(PLAIN, changed))
        plain = timed(PLAIN, harmless)
        fresh(harmless)
        added["harmless"].append(timed(review("green"), harmless) - plain)
    for repo in (changed, harmless):
        shutil.rmtree(repo, ignore_errors=True)
    return added


def shown(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}..{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, nargs="+", default=[2000, 30000, 100000])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--work-ms", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as scratch:
        for files in args.files:
            results[files] = measure(files, args.tests, args.work_ms, args.repeat, Path(scratch))
            print(files, {k: shown(v) for k, v in results[files].items()}, flush=True)
    smallest = statistics.median(results[min(args.files)]["cold"])
    rows = []
    for files, added in results.items():
        cold, plain = statistics.median(added["cold"]), statistics.median(added["plain"])
        size = f"{files:,} files"
        rows += [
            (f"{size}: plain pytest (its own seconds)", f"{plain:.2f}", ""),
            (f"{size}: cold, seconds added", shown(added["cold"]), f"{cold / smallest:.2f}x"),
            (f"{size}: warm, seconds added", shown(added["warm"]), ""),
            (f"{size}: harmless change, cold, seconds added", shown(added["harmless"]), ""),
        ]
    intro = (
        f"Seconds the review adds to plain pytest run just before it (median of {args.repeat} "
        f"interleaved repetitions, min..max in brackets); {args.tests} tests of "
        f"{args.work_ms:g} ms in 40 files, 5 failing at the base and 5 broken by the change, "
        "in repositories of as many tracked files as shown (the rest inert data files). Cold "
        "is a fresh clone's first review (no state folder); the ratio is its cost against the "
        f"cost at {min(args.files):,} files. Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs. Target: the cost at 100,000 files within 1.2x of the cost "
        "at 2,000."
    )
    header = ("run", "median seconds", "against the smallest")
    record(args.out, "scale", TITLE, intro, header, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
