"""Benchmark: triage of 10,000 lane findings over a 50,000-line change.

    python bench/triage.py [--findings 10000] [--lines 50000] [--out bench/RESULTS-triage.md]

A generated repository whose change adds ``--lines`` lines in 100 files; two lanes raise
findings over them (half with quotes, a tenth malformed, a fifth duplicated in other words).
Reported: seconds for the full triage (snapshot reading included), and the ratio of 10x the
findings to 1x — about 10 when triage is linear, about 100 when quadratic.
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import record

from pytest_boundedreview.change import git
from pytest_boundedreview.change.trees.treefiles import TreeFiles
from pytest_boundedreview.triage.steps import Raised, triage

FILES = 100

TITLE = "Triage: 10,000 findings over a 50,000-line change (`bench/triage.py`)"


def build(folder: Path, lines: int) -> tuple[git.Repo, str, set[str]]:
    per_file = lines // FILES
    for i in range(FILES):
        body = "".join(f"value_{i}_{n} = compute({n})\n" for n in range(per_file))
        (folder / f"mod_{i:03d}.py").write_text(body)
    env = ["-c", "user.name=b", "-c", "user.email=b@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    subprocess.run(["git", *env, "add", "-A"], cwd=folder, check=True)
    subprocess.run(["git", *env, "commit", "-qm", "change"], cwd=folder, check=True)
    repo = git.open_repo(folder)
    return repo, repo.tree_of("HEAD"), {f"mod_{i:03d}.py" for i in range(FILES)}


def findings(count: int, per_file: int, seed: int = 7) -> list[Raised]:
    rng = random.Random(seed)
    out = []
    for n in range(count):
        i, line = rng.randrange(FILES), rng.randrange(1, per_file + 1)
        raw: dict[str, object] = {
            "path": f"mod_{i:03d}.py",
            "line": line,
            "severity": rng.choice(["blocking", "advisory"]),
            "category": rng.choice(["correctness", "security", "style"]),
            "failure_mode": f"defect {n % 2000} found",
            "evidence": "evidence " * rng.randrange(1, 5),
            "remediation": "fix",
        }
        if n % 2:
            raw["quote"] = f"value_{i}_{line - 1} = compute({line - 1})"
        if n % 10 == 0:
            raw["line"] = 0
        out.append(Raised(rng.choice(["a", "b"]), "verdict", raw))
    return out


def timed(repo: git.Repo, tree: str, scope: set[str], raised: list[Raised], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        triage(raised, TreeFiles(repo, tree), scope)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--findings", type=int, default=10_000)
    parser.add_argument("--lines", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo, tree, scope = build(Path(scratch), args.lines)
        per_file = args.lines // FILES
        small = timed(repo, tree, scope, findings(args.findings // 10, per_file), args.repeat)
        full = timed(repo, tree, scope, findings(args.findings, per_file), args.repeat)
    rows = [
        (f"{args.findings // 10:,} findings", small, 1.0),
        (f"{args.findings:,} findings", full, full / small),
    ]
    intro = (
        f"{args.lines:,} changed lines in {FILES} files, median of {args.repeat} runs, "
        f"Python {sys.version.split()[0]}; 10x the findings should cost about 10x (linear), "
        "not 100x (quadratic)"
    )
    header = ("triage over a 50,000-line change", "median seconds", "ratio")
    table = [(name, f"{secs:.3f}", f"{ratio:.1f}x") for name, secs, ratio in rows]
    record(args.out, "triage", TITLE, intro, header, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
