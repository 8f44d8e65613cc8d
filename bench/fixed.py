"""Benchmark: the fixed cost of ``--bounded-review`` in milliseconds (a 1-test repository with
a 1-line change) and its cost per test (10,000 trivial passing tests), against plain pytest in
the same run.

    python bench/fixed.py [--repeat 15] [--tests 10000] [--out docs/performance.md]

The fixed cost is measured twice: on this checkout's install, with bytecode written as on a
developer machine, and on a wheel install run with ``PYTHONDONTWRITEBYTECODE=1`` (a CI
container): there pytest cannot cache what it assertion-rewrites, so every module it rewrites
is parsed and compiled again on every run. Deltas are paired (each review run against the
plain run just before it); medians with the spread (min-max) of the repetitions.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from baseline import CHILD_ENV, git
from results import record

TITLE = "Fixed cost and cost per test (`bench/fixed.py`)"
HERE = Path(__file__).resolve().parent


def repository(folder: Path, tests: int) -> Path:
    """A repository of ``tests`` trivial passing tests; the change adds a comment."""
    repo = folder / f"tests{tests}"
    repo.mkdir()
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.bounded-review/\n")
    per_file = max(tests // 100, 1)
    for index in range(0, tests, per_file):
        body = "".join(f"def test_{t}():\n    pass\n\n\n" for t in range(per_file))
        (repo / f"test_m{index // per_file:03d}.py").write_text(body)
    git(repo, "init", "-q", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    with (repo / "test_m000.py").open("a") as handle:
        handle.write("# a one-line change\n")
    git(repo, "commit", "-q", "-am", "change")
    return repo


def wheel_python(folder: Path) -> Path:
    """A Python with this project installed from its wheel (compiled as pip installs it) and
    everything else from the running environment."""
    wheels = folder / "wheels"
    pip = [sys.executable, "-m", "pip"]
    subprocess.run(
        [
            *pip,
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(HERE.parent),
        ],
        check=True,
        capture_output=True,
    )
    venv = folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(
        subprocess.run(
            [python, "-c", code], check=True, capture_output=True, text=True
        ).stdout.strip()
    )
    (site / "environment.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = next(wheels.glob("*.whl"))
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), wheel],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [python, "-m", "compileall", "-q", str(site / "pytest_boundedreview")],
        check=True,
        capture_output=True,
        env=CHILD_ENV,
    )
    return python


def paired(repo: Path, python: Path, env: dict[str, str], repeat: int) -> list[float]:
    """Seconds ``--bounded-review`` adds to each plain run just before it."""
    # pytest-randomly (when installed) draws a new seed per run, and the base's answers are
    # cached per seed (its listing of the changed test file too): the runs keep it out.
    plain = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    review = [*plain, "--bounded-review", "--bounded-review-base=main"]

    def timed(argv: list[str]) -> float:
        start = time.perf_counter()
        subprocess.run(argv, cwd=repo, env=env, check=False, capture_output=True)
        return time.perf_counter() - start

    timed(plain)
    timed(review)  # warm the caches once, for both alike
    deltas = []
    for _ in range(repeat):
        deltas.append(timed(review) - timed(plain))
    return deltas


def spread(values: list[float], scale: float, digits: int) -> str:
    return f"{min(values) * scale:.{digits}f}-{max(values) * scale:.{digits}f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--tests", type=int, default=10000)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    no_bytecode = {**CHILD_ENV, "PYTHONDONTWRITEBYTECODE": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        one, many = repository(folder, 1), repository(folder, args.tests)
        wheel = wheel_python(folder)
        developer = paired(one, Path(sys.executable), CHILD_ENV, args.repeat)
        container = paired(one, wheel, no_bytecode, args.repeat)
        per_test = paired(many, Path(sys.executable), CHILD_ENV, max(args.repeat // 3, 1))
    fixed = statistics.median(developer)
    per = [(d - fixed) / args.tests for d in per_test]
    rows = [
        (
            "fixed cost: 1 test, 1-line change",
            f"{fixed * 1000:.0f} ({spread(developer, 1000, 0)})",
            "1.00x",
        ),
        (
            "fixed cost, wheel install, PYTHONDONTWRITEBYTECODE=1",
            f"{statistics.median(container) * 1000:.0f} ({spread(container, 1000, 0)})",
            f"{statistics.median(container) / fixed:.2f}x",
        ),
        (
            f"cost per 1,000 tests, from {args.tests:,} trivial ones (ms, i.e. µs per test)",
            f"{statistics.median(per) * 1e6:.1f} ({spread(per, 1e6, 1)})",
            "",
        ),
    ]
    intro = (
        f"Milliseconds `--bounded-review` adds to plain pytest, median of {args.repeat} paired "
        f"runs (spread min-max in brackets); the cost per test is what {args.tests:,} passing "
        f"tests add beyond the fixed cost, over {max(args.repeat // 3, 1)} runs. Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs; targets: fixed cost at most 80 ms, "
        "5 µs per test."
    )
    table = [(what, value, ratio) for what, value, ratio in rows]
    record(args.out, "fixed", TITLE, intro, ("what", "median ms", "ratio"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
