"""Benchmark: `bounded-review gate` in a commit hook, on a repository of 2,000 files.

    python bench/gate.py [--files 2000] [--repeat 10] [--out docs/performance.md]

Measured in one run against `git status` (what any hook pays to look at the tree) and against
the naive gate: re-running the review itself (`pytest --bounded-review`). Target: the gate
answers in well under half a second.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import record

TITLE = "Commit gate: `bounded-review gate` (`bench/gate.py`)"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}


def run(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=cwd, env=ENV, check=False, capture_output=True)
    return time.perf_counter() - start


def build(folder: Path, files: int) -> None:
    for n in range(files):
        package = folder / f"pkg{n % 40}"
        package.mkdir(exist_ok=True)
        (package / f"mod{n}.py").write_text(f"VALUE_{n} = {n}\n")
    (folder / "test_smoke.py").write_text("def test_smoke():\n    assert True\n")
    (folder / ".gitignore").write_text(".bounded-review/\n__pycache__/\n")
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=folder, env=ENV, check=True)
    subprocess.run([*git, "add", "-A"], cwd=folder, env=ENV, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=folder, env=ENV, check=True)
    (folder / "pkg0" / "mod0.py").write_text("VALUE_0 = -1\n")
    subprocess.run([*git, "add", "-A"], cwd=folder, env=ENV, check=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    gate = [sys.executable, "-m", "pytest_boundedreview", "gate", "--stage", "pre-commit"]
    review = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--bounded-review"]
    review += ["--bounded-review-target=staged"]
    samples: dict[str, list[float]] = {"status": [], "gate": [], "review": []}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        build(folder, args.files)
        subprocess.run(review, cwd=folder, env=ENV, check=True, capture_output=True)
        assert subprocess.run(gate, cwd=folder, env=ENV, check=False).returncode == 0
        for _ in range(args.repeat):
            samples["status"].append(run(["git", "status", "--porcelain"], folder))
            samples["gate"].append(run(gate, folder))
            samples["review"].append(run(review, folder))
    med = {k: statistics.median(v) for k, v in samples.items()}
    rows = [
        ("`git status --porcelain`", med["status"], med["status"] / med["gate"]),
        ("`bounded-review gate --stage pre-commit`", med["gate"], 1.0),
        (
            "naive: re-run `pytest --bounded-review` in the hook",
            med["review"],
            med["review"] / med["gate"],
        ),
    ]
    intro = (
        f"{args.files} files, median of {args.repeat} interleaved runs, Python "
        f"{sys.version.split()[0]}; target: the gate well under 0.5 s"
    )
    header = ("command", "median seconds", "ratio to the gate")
    table = [(name, f"{secs:.3f}", f"{ratio:.2f}x") for name, secs, ratio in rows]
    record(args.out, "gate", TITLE, intro, header, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
