"""Benchmark: where the time the review adds to plain pytest goes, part by part.

    python bench/breakdown.py [--tests 2000] [--repeat 7] [--out docs/performance.md]

Each run goes through ``bench/phases.py``, which notes when each phase of the pytest session
begins and ends; a plain run gets the same marks, and each part of a review run is compared
with the same part of the plain run just before it (medians of the paired differences, in
milliseconds). Three cases: one test and a one-line change (the fixed cost), and a suite of
``--tests`` tests with 5 regressions and 5 pre-existing failures, warm (the base's answers
cached) and cold (a fresh clone's first review: no state folder at all).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from baseline import CHILD_ENV, build, fresh_clone
from fixed import repository
from results import record

TITLE = "Where the added time goes (`bench/breakdown.py`)"
HERE = Path(__file__).resolve().parent
# (part, the marks it lies between, what it holds, its floor and why)
PARTS = [
    (
        "engine imports",
        ("configure", "engine imported"),
        "about 80 modules; their 50-odd dataclasses are made by `models/record.py` (about "
        "0.2 ms each; the standard dataclass compiles each class's methods, about 0.8 ms); the "
        "base re-run machinery is not imported while the base cache answers",
        "about 25 ms: the report model and the settings must exist to write a report",
    ),
    (
        "configuration and freeze",
        ("configure", "session start"),
        "the repository and HEAD (one process), the settings (validated once, then built "
        "from the noted digest; the state folder approved from the index's bytes), the "
        "snapshot of the tree (its flags read from the index's bytes, `add`, `write-tree` in a "
        "temporary index), the base and the diff (raw and patch in one process), the base's "
        "configuration and the waivers files (one batch): 6 git processes, and the plugin "
        "objects registered",
        "about 15 ms: 5 git processes (snapshot, base, diff) at 2-3 ms each",
    ),
    (
        "collection and tests",
        ("session start", "sessionfinish"),
        "each report's outcome and signature, the skip and collection questions (the cache's "
        "name needs the base's preparation: one git process); cold: the early base child's "
        "checkout and start, competing for the 2 cores",
        "a few ms per 1,000 tests; cold: the child's checkout and pytest start run beside "
        "the tests, not after them",
    ),
    (
        "session finish",
        ("sessionfinish", "sessionfinish end"),
        "the failures re-run at head in this process and handed to the base child (cold: "
        "it collects their files, runs them and writes its result), the scans, the risk "
        "tier, whether any lane could run (the installed plugins, from a note), the report "
        "built and written",
        "warm: the failing tests run once more; cold: the same at the base, in a pytest "
        "child that is already started",
    ),
    (
        "summary and exit",
        ("sessionfinish end", "exit"),
        "the terminal summary, pytest's own unconfigure, the interpreter's exit with the "
        "engine loaded (its modules and records freed: about 4 ms of the interpreter's "
        "final collections, which take about 15 ms with plain pytest)",
        "about 5 ms: the summary lines, and the engine's modules and objects freed at exit "
        "(1 ms of it their teardown; the rest the final collections walking them)",
    ),
]


def run(argv: list[str], repo: Path, review: bool) -> dict[str, float]:
    """The marks of one run (``exit``: when the process had ended, as seen from here)."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    flags = ["--bounded-review", "--bounded-review-base=main"] if review else []
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, str(HERE / "phases.py"), str(out), *argv, *flags],
        cwd=repo,
        env=CHILD_ENV,
        check=False,
        capture_output=True,
    )
    ended = time.perf_counter() - start
    marks: dict[str, float] = json.loads(out.read_text())
    out.unlink()
    marks.setdefault("engine imported", marks["configure"])
    marks["exit"] = ended
    return marks


def part(marks: dict[str, float], between: tuple[str, str]) -> float:
    start, end = between
    return marks[end] - marks[start]


def measure(repo: Path, repeat: int, cold: bool) -> dict[str, list[float]]:
    """The milliseconds each part (and the whole) of a review adds to the plain run just
    before it, ``repeat`` times."""
    argv = ["-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    added: dict[str, list[float]] = {name: [] for name, *_ in PARTS}
    added["total"] = []
    run(argv, repo, review=False)  # bytecode caches and the state folder, once
    run(argv, repo, review=True)
    for _ in range(repeat):
        plain = run(argv, repo, review=False)
        if cold:
            fresh_clone(repo)
        review = run(argv, repo, review=True)
        for name, between, *_ in PARTS:
            if name == "configuration and freeze":  # its imports are counted apart
                imports = ("configure", "engine imported")
                own = part(review, between) - part(review, imports)
                added[name].append(1000 * (own - part(plain, between)))
            else:
                added[name].append(1000 * (part(review, between) - part(plain, between)))
        added["total"].append(1000 * (review["exit"] - plain["exit"]))
    return added


def shown(values: list[float]) -> str:
    return f"{statistics.median(values):+.0f} ({min(values):+.0f}..{max(values):+.0f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        fixed = measure(repository(folder, 1), args.repeat, cold=False)
        suite = build(folder, args.tests, True, 1.0)
        warm = measure(suite, args.repeat, cold=False)
        cold = measure(suite, args.repeat, cold=True)
    rows = [
        (name, shown(fixed[name]), f"warm {shown(warm[name])}; cold {shown(cold[name])}")
        for name, *_ in PARTS
    ]
    rows.append(
        (
            "total",
            shown(fixed["total"]),
            f"warm {shown(warm['total'])}; cold {shown(cold['total'])}",
        )
    )
    intro = (
        f"Milliseconds each part of the session adds to the same part of plain pytest, median "
        f"of {args.repeat} paired runs (min..max in brackets); 1 test with a one-line change, "
        f"and {args.tests} tests of 1 ms with 10 failures, warm and cold (a fresh clone's "
        "first review: the settings validated and noted, the state folder made). Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs. What each part holds and its floor:"
        "\n\n"
        + "\n".join(f"- **{name}**: {holds}. Floor: {floor}." for name, _, holds, floor in PARTS)
    )
    header = ("part", "median ms, 1 test", f"median ms, {args.tests} tests")
    record(args.out, "breakdown", TITLE, intro, header, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
