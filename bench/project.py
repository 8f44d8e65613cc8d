"""Benchmark: a real project's suite, from its published sdist, with and without the bounded
review, in the same run: the ratio a user sees.

    python bench/project.py [--project idna==3.20] [--repeat 2] [--out docs/performance.md]

The sdist (downloaded from the package index) is the base commit. Two changes are reviewed:
a comment (every test passes) and a regression that makes labels of 63 characters invalid
(18 tests fail, with long tracebacks). Ratios to plain pytest: the median of the paired
ratios of ``--repeat`` interleaved runs, spread (min-max) in brackets.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from baseline import git, ratio, timed
from results import record

TITLE = "A real project's suite (`bench/project.py`)"
# The regression: idna/core.py's label length limit, off by one.
BROKEN = ("idna/core.py", "return len(label) <= 63", "return len(label) <= 62")


def fetch(spec: str, folder: Path) -> Path:
    """The project's sdist, unpacked under ``folder``."""
    options = ["-q", "--no-deps", "--no-binary", ":all:", "-d", str(folder)]
    subprocess.run(
        [sys.executable, "-m", "pip", "download", *options, spec],
        check=True,
        capture_output=True,
    )
    archive = next(folder.glob("*.tar.gz"))
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="data")
    return next(p for p in folder.iterdir() if p.is_dir())


def repository(source: Path, folder: Path, name: str, broken: bool) -> Path:
    repo = folder / name
    shutil.copytree(source, repo)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.bounded-review/\n")
    git(repo, "init", "-q", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the sdist")
    git(repo, "checkout", "-q", "-b", "feature")
    path, before, after = BROKEN
    text = (repo / path).read_text()
    if broken:
        assert before in text, f"{path} no longer holds {before!r}"
        (repo / path).write_text(text.replace(before, after))
    else:
        (repo / path).write_text(text + "# a comment\n")
    git(repo, "commit", "-q", "-am", "change")
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", default="idna==3.20")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    plain = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    review = [*plain, "--bounded-review", "--bounded-review-base=main"]
    samples: dict[str, list[float]] = {k: [] for k in ("plain", "review", "bplain", "cold", "warm")}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = fetch(args.project, folder / "sdist")
        clean = repository(source, folder, "clean", broken=False)
        broken = repository(source, folder, "broken", broken=True)
        for repo in (clean, broken):  # warm the bytecode caches once, for every variant alike
            timed(plain, repo)
        for _ in range(args.repeat):
            samples["plain"].append(timed(plain, clean))
            samples["review"].append(timed(review, clean))
            samples["bplain"].append(timed(plain, broken))
            shutil.rmtree(broken / ".bounded-review", ignore_errors=True)
            samples["cold"].append(timed(review, broken))
            samples["warm"].append(timed(review, broken))
    rows = [
        ("a comment, all pass: plain pytest", "plain", "plain"),
        ("a comment, all pass: --bounded-review", "review", "plain"),
        ("a regression, 18 failures: plain pytest", "bplain", "bplain"),
        ("a regression: --bounded-review, cold cache", "cold", "bplain"),
        ("a regression: --bounded-review, warm cache", "warm", "bplain"),
    ]
    intro = (
        f"{args.project} from its sdist, its `tests` folder (about 6,400 tests), median of "
        f"{args.repeat} interleaved runs, spread (min-max) in brackets; Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs."
    )
    table = [
        (what, f"{statistics.median(samples[key]):.2f}", ratio(samples[key], samples[against]))
        for what, key, against in rows
    ]
    record(args.out, "project", TITLE, intro, ("run", "median seconds", "ratio"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
