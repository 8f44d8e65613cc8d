"""Benchmark: what the bounded review costs on top of plain pytest, and what the naive
approach (whole suite at base and at head) costs, measured in the same run.

    python bench/baseline.py [--tests 2000] [--work-ms 1] [--repeat 5] [--out docs/performance.md]

A generated repository has ``--tests`` tests in 40 files, each doing ``--work-ms`` of real
work; the base has 5 failing tests; the change under review breaks 5 more. Each variant runs
serially and under ``-n 2`` (pytest-xdist). Three harmless changes with every test passing
follow: one that touches no test (README), one that edits a test file, and one that adds a
``conftest.py`` at the root; the last two make the base list its collection (the file, or the
whole suite), cold and warm. Cold is a fresh clone's first review (no state folder at all);
with failures it is also measured with only the base's answers forgotten (a repository
reviewed before). Reported as ratios to plain pytest run the same
way: the median of the per-repetition ratios of ``--repeat`` interleaved runs, with their
spread (min-max), as absolute times on shared machines are not stable.
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


WORK = """import time


def work(seconds):
    \"\"\"Keep the CPU busy for ``seconds``: a test's own work.\"\"\"
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass
"""


def module(index: int, per_file: int, broken: set[int], work_ms: float) -> str:
    lines = ["import pytest\n"]
    for t in range(per_file):
        number = index * per_file + t
        expected = -1 if number in broken else number * 2
        lines.append(
            f"\ndef test_{t}():\n    work({work_ms / 1000!r})\n"
            f"    assert double({number}) == {expected}\n"
        )
    return "from lib import double\nfrom helpers import work\n" + "".join(lines)


HARMLESS = {
    "clean": {"README.md": "docs\n"},
    "test file": {"test_m00.py": None},  # a comment appended
    "conftest": {"conftest.py": "# shared fixtures go here\n"},
}


def build(
    folder: Path, tests: int, regressions: bool, work_ms: float = 0.0, kind: str = "clean"
) -> Path:
    repo = folder / ("regressions" if regressions else kind.replace(" ", "-"))
    repo.mkdir()
    per_file = tests // FILES
    pre = set(range(3, 3 + PRE_EXISTING * 97, 97)) if regressions else set()
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n")
    (repo / "lib.py").write_text("def double(x):\n    return x * 2\n")
    (repo / "helpers.py").write_text(WORK)
    for i in range(FILES):
        (repo / f"test_m{i:02d}.py").write_text(module(i, per_file, pre, work_ms))
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
        for name, text in HARMLESS[kind].items():
            path = repo / name
            path.write_text(text if text is not None else path.read_text() + "# harmless\n")
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


def forget_base(repo: Path) -> None:
    """The base's answers are not known (a new base commit), in a repository reviewed before
    (its validated configuration stays noted)."""
    for answers in (repo / ".bounded-review" / "cache").glob("base-*.json"):
        answers.unlink()


def fresh_clone(repo: Path) -> None:
    """A cold run, CI's case: the first review in a fresh clone, with no state folder at all."""
    shutil.rmtree(repo / ".bounded-review", ignore_errors=True)


def measure(repo: Path, repeat: int, failing: bool, cold: bool = False) -> dict[str, list[float]]:
    """Seconds of every variant, ``repeat`` times, the variants interleaved (``cold``: also
    in a fresh clone, when nothing fails). With failures, cold runs twice: in a fresh clone,
    and with only the base's answers forgotten."""
    # pytest-randomly (when installed) draws a new seed per run, and a failing test's base
    # answer is cached per seed: the runs keep it out, so that warm means warm.
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    review = [*plain, "--bounded-review", "--bounded-review-base=main"]
    variants = {"plain": plain, "cold": review, "warm": review} if cold else {}
    variants = variants or {"plain": plain, "warm": review}
    if failing:
        variants |= {
            "plain -n 2": [*plain, "-n", "2"],
            "cold -n 2": [*review, "-n", "2"],
            "warm -n 2": [*review, "-n", "2"],
        }
    names = [*variants, "cold", "forgotten", "cold -n 2 forgotten", "naive"]
    samples: dict[str, list[float]] = {name: [] for name in names}
    timed(plain, repo)  # warm the bytecode caches once, for every variant alike
    for _ in range(repeat):
        for name, argv in variants.items():
            if name.startswith("cold"):
                fresh_clone(repo)
            samples[name].append(timed(argv, repo))
            if name == "plain" and failing:
                fresh_clone(repo)
                samples["cold"].append(timed(review, repo))
                forget_base(repo)
                samples["forgotten"].append(timed(review, repo))
            if name == "cold -n 2":
                forget_base(repo)
                samples["cold -n 2 forgotten"].append(timed(argv, repo))
        if failing:
            samples["naive"].append(naive(repo, plain))
    return {name: runs for name, runs in samples.items() if runs}


def ratio(runs: list[float], against: list[float]) -> str:
    """The median of the paired ratios, with their spread."""
    ratios = [a / b for a, b in zip(runs, against, strict=True)]
    return f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000)
    parser.add_argument("--work-ms", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        failing = measure(build(folder, args.tests, True, args.work_ms), args.repeat, True)
        passing = measure(build(folder, args.tests, False, args.work_ms), args.repeat, False)
        touched = {
            kind: measure(
                build(folder, args.tests, False, args.work_ms, kind), args.repeat, False, True
            )
            for kind in ("test file", "conftest")
        }
    serial, parallel = failing["plain"], failing["plain -n 2"]
    rows = [
        ("plain pytest (5 regressions + 5 pre-existing)", serial, serial),
        ("pytest --bounded-review, cold (fresh clone)", failing["cold"], serial),
        ("pytest --bounded-review, base's answers forgotten", failing["forgotten"], serial),
        ("pytest --bounded-review, warm cache", failing["warm"], serial),
        ("naive: whole suite at base + head", failing["naive"], serial),
        ("plain pytest -n 2", parallel, parallel),
        ("pytest --bounded-review -n 2, cold (fresh clone)", failing["cold -n 2"], parallel),
        (
            "pytest --bounded-review -n 2, base's answers forgotten",
            failing["cold -n 2 forgotten"],
            parallel,
        ),
        ("pytest --bounded-review -n 2, warm cache", failing["warm -n 2"], parallel),
        ("all tests passing: plain pytest", passing["plain"], passing["plain"]),
        ("all tests passing: --bounded-review", passing["warm"], passing["plain"]),
    ]
    for kind, runs in touched.items():
        what = "a test file" if kind == "test file" else "a root conftest.py"
        rows += [
            (f"{what} touched: plain pytest", runs["plain"], runs["plain"]),
            (f"{what} touched: --bounded-review, cold", runs["cold"], runs["plain"]),
            (f"{what} touched: --bounded-review, warm", runs["warm"], runs["plain"]),
        ]
    intro = (
        f"{args.tests} tests of {args.work_ms:g} ms of work each in {FILES} files; ratios to "
        f"plain pytest run the same way (serial, or -n 2): median of {args.repeat} interleaved "
        "runs, spread (min-max) in brackets. Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs. Targets: all passing at most 1.03x, "
        "warm at most 1.05x, cold at most 1.2x (serial and -n 2). Cold is CI's case, the "
        "first review in a fresh clone: no state folder at all (for touched test files and "
        "conftest files too); base's answers forgotten: a repository reviewed before, its "
        "state folder kept but not the base's answers."
    )
    table = [
        (name, f"{statistics.median(runs):.2f}", ratio(runs, against))
        for name, runs, against in rows
    ]
    record(args.out, "baseline", TITLE, intro, ("run", "median seconds", "ratio"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
