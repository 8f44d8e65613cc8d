"""Benchmark: re-running failures whose tracebacks are expensive to render (deep recursion,
large locals), against plain pytest running the same tests once, in the same run.

    python bench/tracebacks.py [--failures 10] [--depth 150] [--repeat 5] \
        [--out docs/performance.md]

Every failing test fails the same way at the base, so the bounded review re-runs each one at
head (the flaky check) and at the base (cold cache) or at head only (warm cache). The re-runs
take the failure's signature from the exception and render no traceback, so they should cost
about the tests' own time. Ratios of medians of interleaved runs, with the spread (min-max).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from baseline import git, timed
from results import record

TITLE = "Expensive tracebacks: re-runs render none (`bench/tracebacks.py`)"

TEST = """
def deep(n, payload):
    table = {{i: "x" * 50 for i in range(300)}}  # large locals in every frame
    if n == 0:
        assert payload == -1, table
    return deep(n - 1, payload)


def test_{i}():
    deep({depth}, {i})
"""


def build(folder: Path, failures: int, depth: int) -> Path:
    repo = folder / "tracebacks"
    repo.mkdir()
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.bounded-review/\n")
    for i in range(failures):
        (repo / f"test_t{i:02d}.py").write_text(TEST.format(i=i, depth=depth))
    git(repo, "init", "-q", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "README.md").write_text("docs\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change")
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", type=int, default=10)
    parser.add_argument("--depth", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    samples: dict[str, list[float]] = {"plain": [], "cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as scratch:
        repo = build(Path(scratch), args.failures, args.depth)
        plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
        review = [*plain, "--bounded-review", "--bounded-review-base=main"]
        timed(plain, repo)  # bytecode caches warm for every variant alike
        for _ in range(args.repeat):  # interleaved: each round runs every variant once
            samples["plain"].append(timed(plain, repo))
            shutil.rmtree(repo / ".bounded-review", ignore_errors=True)
            samples["cold"].append(timed(review, repo))
            samples["warm"].append(timed(review, repo))
    base = statistics.median(samples["plain"])

    def row(what: str, key: str) -> tuple[str, str, str]:
        runs = samples[key]
        median = statistics.median(runs)
        spread = f"{min(runs) / base:.2f}-{max(runs) / base:.2f}"
        return what, f"{median:.2f} s", f"{median / base:.2f}x ({spread})"

    rows = [
        row(f"plain pytest ({args.failures} failing tests, each run once)", "plain"),
        row("pytest --bounded-review, cold cache (head and base re-runs)", "cold"),
        row("pytest --bounded-review, warm cache (head re-runs)", "warm"),
    ]
    intro = (
        f"{args.failures} tests fail {args.depth} frames deep with 300-entry locals in every "
        f"frame; each failed at the base too. Medians of {args.repeat} interleaved runs; the "
        "ratio is to plain pytest, spread in brackets (min-max over the runs)."
    )
    record(args.out, "tracebacks", TITLE, intro, ("what", "median", "ratio"), rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
