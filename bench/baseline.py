"""Benchmark: what the bounded review costs on top of plain pytest, and what the naive
approach (whole suite at base and at head) costs, measured in the same run.

    python bench/baseline.py [--tests 2000] [--repeat 3] [--out bench/RESULTS.md]

A generated repository has ``--tests`` tests in 40 files; the base has 5 failing tests; the
change under review breaks 5 more. Reported as ratios to plain pytest (medians of
``--repeat`` interleaved runs): absolute times on shared machines are not stable.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import record

FILES = 40
PRE_EXISTING = 5
REGRESSIONS = 5

TITLE = "Deterministic baseline: overhead on top of plain pytest (`bench/baseline.py`)"


def git(repo: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *args,
        ],
        cwd=repo,
        env=env,
        check=True,
        capture_output=True,
    )


def module(index: int, per_file: int, broken: set[int]) -> str:
    lines = ["import pytest\n"]
    for t in range(per_file):
        number = index * per_file + t
        expected = -1 if number in broken else number * 2
        lines.append(f"\ndef test_{t}():\n    assert double({number}) == {expected}\n")
    return "from lib import double\n" + "".join(lines)


def build(folder: Path, tests: int, regressions: bool) -> Path:
    repo = folder / ("regressions" if regressions else "clean")
    repo.mkdir()
    per_file = tests // FILES
    pre = set(range(3, 3 + PRE_EXISTING * 97, 97)) if regressions else set()
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    (repo / "lib.py").write_text("def double(x):\n    return x * 2\n")
    for i in range(FILES):
        (repo / f"test_m{i:02d}.py").write_text(module(i, per_file, pre))
    git(repo, "init", "-q", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    if regressions:  # break 5 more tests through the code they call
        broken = ", ".join(str(n) for n in range(1000, 1000 + REGRESSIONS))
        (repo / "lib.py").write_text(
            f"BROKEN = {{{broken}}}\n\n\ndef double(x):\n"
            "    return x * 2 + (1 if x in BROKEN else 0)\n"
        )
    else:
        (repo / "README.md").write_text("docs\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return repo


# Children write bytecode as on a developer machine (some sandboxes turn it off globally,
# which makes every pytest start re-compile and re-rewrite every module).
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=CHILD_ENV, check=False, capture_output=True)
    return time.perf_counter() - start


def naive(repo: Path, plain: list[str]) -> float:
    """Whole suite at head, then a checkout of the base and the whole suite there."""
    start = time.perf_counter()
    subprocess.run(plain, cwd=repo, env=CHILD_ENV, check=False, capture_output=True)
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "base"
        git(repo, "worktree", "add", "-q", "--detach", str(base), "main")
        try:
            subprocess.run(plain, cwd=base, env=CHILD_ENV, check=False, capture_output=True)
        finally:
            git(repo, "worktree", "remove", "--force", str(base))
    return time.perf_counter() - start


def measure(repo: Path, repeat: int, with_naive: bool) -> dict[str, float]:
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    review = [*plain, "--bounded-review", "--bounded-review-base=main"]
    samples: dict[str, list[float]] = {"plain": [], "cold": [], "warm": [], "naive": []}
    timed(plain, repo)  # warm the bytecode caches once, for every variant alike
    for _ in range(repeat):
        samples["plain"].append(timed(plain, repo))
        shutil.rmtree(repo / ".bounded-review", ignore_errors=True)
        samples["cold"].append(timed(review, repo))
        samples["warm"].append(timed(review, repo))
        if with_naive:
            samples["naive"].append(naive(repo, plain))
    return {k: statistics.median(v) for k, v in samples.items() if v}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        failing = measure(build(Path(scratch), args.tests, True), args.repeat, True)
        passing = measure(build(Path(scratch), args.tests, False), args.repeat, False)
    base = failing["plain"]
    rows = [
        ("plain pytest (5 regressions + 5 pre-existing)", failing["plain"], 1.0),
        ("pytest --bounded-review, cold cache", failing["cold"], failing["cold"] / base),
        ("pytest --bounded-review, warm cache", failing["warm"], failing["warm"] / base),
        ("naive: whole suite at base + head", failing["naive"], failing["naive"] / base),
        ("all tests passing: plain pytest", passing["plain"], 1.0),
        (
            "all tests passing: --bounded-review",
            passing["warm"],
            passing["warm"] / passing["plain"],
        ),
    ]
    intro = (
        f"{args.tests} tests in {FILES} files, median of {args.repeat} interleaved runs, "
        f"Python {sys.version.split()[0]}, {os.cpu_count()} CPUs"
    )
    table = [(name, f"{secs:.2f}", f"{ratio:.2f}x") for name, secs, ratio in rows]
    record(args.out, "baseline", TITLE, intro, ("run", "median seconds", "ratio"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
