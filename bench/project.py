"""Benchmark: real projects' suites, from their published sdists, with and without the bounded
review, in the same run: the ratio a user sees, and the seconds the review adds.

    python bench/project.py [--project iniconfig==2.3.1 ...] [--repeat 3] [--out FILE]

Each sdist (downloaded from the package index) is the base commit; its suite runs as its CI
runs it: ``python -m pytest`` in the project folder with its own configuration (``src`` on
``PYTHONPATH`` for a src layout). The harmless change appends a comment to the package's
``__init__.py``; idna also gets a regression that makes labels of 63 characters invalid (18
tests fail, with long tracebacks), reviewed cold (the base's answers forgotten, in a repository
reviewed before) and warm. Ratios to plain pytest: the median of the paired ratios of
``--repeat`` interleaved runs, spread (min-max) in brackets; the seconds added are the median
of the paired differences.
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
import time
from pathlib import Path

from baseline import CHILD_ENV, forget_base, git, ratio
from results import record

TITLE = "Real projects' suites (`bench/project.py`)"
PROJECTS = ["iniconfig==2.3.1", "pluggy==1.7.0", "toolz==1.2.0", "idna==3.20"]
# A regression per project that has one: idna/core.py's label length limit, off by one.
BROKEN = {"idna": ("idna/core.py", "return len(label) <= 63", "return len(label) <= 62")}
PLAIN = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
REVIEW = [*PLAIN, "--bounded-review", "--bounded-review-base=main"]


def fetch(spec: str, folder: Path) -> Path:
    """The project's sdist, unpacked under ``folder``."""
    folder.mkdir(parents=True)
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


def package_init(repo: Path) -> Path:
    """The project's package ``__init__.py`` (under ``src`` for a src layout)."""
    top = repo / "src" if (repo / "src").is_dir() else repo
    found = sorted(top.glob("*/__init__.py"))
    found = [p for p in found if p.parent.name not in ("tests", "testing", "docs")]
    return found[0]


def repository(source: Path, folder: Path, name: str, broken: tuple[str, str, str] | None) -> Path:
    repo = folder / name
    shutil.copytree(source, repo)
    (repo / ".gitignore").write_text("__pycache__/\n.pytest_cache/\n.bounded-review/\n")
    git(repo, "init", "-q", "--initial-branch=main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the sdist")
    git(repo, "checkout", "-q", "-b", "feature")
    if broken is not None:
        path, before, after = broken
        text = (repo / path).read_text()
        assert before in text, f"{path} no longer holds {before!r}"
        (repo / path).write_text(text.replace(before, after))
    else:
        init = package_init(repo)
        init.write_text(init.read_text() + "# a comment\n")
    git(repo, "commit", "-q", "-am", "change")
    return repo


def environment(repo: Path) -> dict[str, str]:
    env = dict(CHILD_ENV)
    if (repo / "src").is_dir():
        env["PYTHONPATH"] = str(repo / "src")
    return env


def timed(argv: list[str], repo: Path) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=repo, env=environment(repo), check=False, capture_output=True)
    return time.perf_counter() - start


def added(runs: list[float], against: list[float]) -> str:
    """The median of the paired differences, in seconds, with their spread."""
    deltas = [a - b for a, b in zip(runs, against, strict=True)]
    return f"{statistics.median(deltas):.2f} ({min(deltas):.2f}-{max(deltas):.2f})"


def measure(spec: str, folder: Path, repeat: int) -> list[tuple[str, str, str]]:
    name = spec.split("==")[0]
    source = fetch(spec, folder / f"{name}-sdist")
    clean = repository(source, folder, f"{name}-clean", None)
    broken = BROKEN.get(name)
    bad = repository(source, folder, f"{name}-broken", broken) if broken else None
    runs: dict[str, list[float]] = {k: [] for k in ("plain", "review", "bplain", "cold", "warm")}
    for repo in (clean, bad):  # warm the bytecode caches and the state folder once
        if repo is not None:
            timed(PLAIN, repo)
            timed(REVIEW, repo)
    for _ in range(repeat):
        runs["plain"].append(timed(PLAIN, clean))
        runs["review"].append(timed(REVIEW, clean))
        if bad is not None:
            runs["bplain"].append(timed(PLAIN, bad))
            forget_base(bad)
            runs["cold"].append(timed(REVIEW, bad))
            runs["warm"].append(timed(REVIEW, bad))
    plain = [(f"{spec}, a comment: plain pytest", runs["plain"], runs["plain"])]
    reviewed = [(f"{spec}, a comment: --bounded-review", runs["review"], runs["plain"])]
    if bad is not None:
        plain += [(f"{spec}, a regression: plain pytest", runs["bplain"], runs["bplain"])]
        reviewed += [
            (f"{spec}, a regression: --bounded-review, cold", runs["cold"], runs["bplain"]),
            (f"{spec}, a regression: --bounded-review, warm", runs["warm"], runs["bplain"]),
        ]
    rows = [*plain, *reviewed]
    table = [(what, f"{statistics.median(r):.2f}", ratio(r, a)) for what, r, a in rows]
    table += [(f"{what}: seconds added", added(r, a), "") for what, r, a in reviewed]
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--project", action="append", help="name==version (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    projects = args.project or PROJECTS
    with tempfile.TemporaryDirectory() as scratch:
        table = [row for spec in projects for row in measure(spec, Path(scratch), args.repeat)]
    intro = (
        f"{', '.join(projects)} from their sdists, each suite run as its CI runs it; median of "
        f"{args.repeat} interleaved runs, spread (min-max) in brackets; Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs. Targets: a harmless change adds at "
        "most 0.05 s; with failures, warm at most 0.08 s, cold at most one base pytest start "
        "and the failing tests."
    )
    record(args.out, "project", TITLE, intro, ("run", "median seconds", "ratio"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
