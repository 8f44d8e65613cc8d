"""Benchmark: real projects' suites, from their published sdists, with and without the bounded
review, in the same run: the ratio a user sees, the seconds the review adds, and its gate.

    python bench/project.py [--project iniconfig==2.3.1 ...] [--repeat 3] [--out FILE]

Each sdist (downloaded from the package index) is the base commit; its suite runs as its CI
runs it: ``python -m pytest`` in the project folder with its own configuration and the paths
and options its CI passes (``src`` on ``PYTHONPATH`` for a src layout), its test dependencies
installed beside it. The harmless change appends a comment to the package's ``__init__.py``;
idna also gets a regression that makes labels of 63 characters invalid (18 tests fail, with
long tracebacks), reviewed cold (the base's answers forgotten, in a repository reviewed before)
and warm. referencing keeps its shared test suite in a git submodule, as its repository does;
attrs runs Hypothesis property tests under xdist; pyparsing's suite is what its tox
environment runs. Each review's gate is in its row: a harmless change must be ``yes`` and a
regression ``no``, else the benchmark fails. Ratios to plain pytest: the median of the paired
ratios of ``--repeat`` interleaved runs, spread (min-max) in brackets; the seconds added are
the median of the paired differences.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from baseline import CHILD_ENV, forget_base, git, ratio
from results import record

TITLE = "Real projects' suites (`bench/project.py`)"


@dataclass(frozen=True)
class CI:
    """How a project's CI runs its suite, where that is more than ``python -m pytest``."""

    args: tuple[str, ...] = ()  # the paths and options its CI gives pytest
    deps: tuple[str, ...] = ()  # test dependencies beyond pytest's
    on_path: bool = False  # the project folder on PYTHONPATH (a tox setenv)
    submodule: str = ""  # a folder its repository keeps as a git submodule
    env: dict[str, str] = field(default_factory=dict)


PROJECTS = [
    "iniconfig==2.3.1",
    "pluggy==1.7.0",
    "toolz==1.2.0",
    "idna==3.20",
    "referencing==0.37.0",
    "attrs==26.1.0",
    "pyparsing==3.3.3",
]
RUNS = {
    # noxfile.py: `pytest referencing`; `suite/` is the referencing-suite submodule
    "referencing": CI(("referencing",), ("rpds-py", "attrs"), submodule="suite"),
    # tox.ini: `pytest {posargs:-n auto}`, Hypothesis in its tests dependency group
    "attrs": CI(("-n", "auto"), ("hypothesis", "cloudpickle", "pympler")),
    # tox.ini: `unit: pytest tests examples/tiny/tests {posargs}`, PYTHONPATH={toxinidir}
    "pyparsing": CI(("tests", "examples/tiny/tests"), ("railroad-diagrams", "jinja2"), True),
}
# A regression per project that has one: idna/core.py's label length limit, off by one.
BROKEN = {"idna": ("idna/core.py", "return len(label) <= 63", "return len(label) <= 62")}
PLAIN = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
REVIEW = ["--bounded-review", "--bounded-review-base=main"]


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


def package_init(repo: Path, name: str) -> Path:
    """The project's package ``__init__.py`` (under ``src`` for a src layout): the one named
    after the project, else the first that is not tests, docs or examples."""
    top = repo / "src" if (repo / "src").is_dir() else repo
    named = top / name.replace("-", "_") / "__init__.py"
    if named.is_file():
        return named
    found = sorted(top.glob("*/__init__.py"))
    found = [p for p in found if p.parent.name not in ("tests", "testing", "docs", "examples")]
    return found[0]


def submodule(repo: Path, name: str, folder: Path) -> None:
    """Make ``repo/name`` a git submodule, as the project's repository has it: its files
    committed in a repository of their own, added back by path."""
    origin = folder / f"{repo.name}-{name}-origin"
    shutil.move(repo / name, origin)
    (origin / ".git").unlink(missing_ok=True)  # the sdist's leftover gitdir pointer
    git(origin, "init", "-q", "--initial-branch=main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", name)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(origin), name)


def repository(
    source: Path, folder: Path, name: str, broken: tuple[str, str, str] | None, ci: CI
) -> Path:
    repo = folder / name
    shutil.copytree(source, repo)
    (repo / ".gitignore").write_text(
        "__pycache__/\n.pytest_cache/\n.bounded-review/\n.hypothesis/\n"
    )
    git(repo, "init", "-q", "--initial-branch=main")
    if ci.submodule:
        submodule(repo, ci.submodule, folder)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the sdist")
    git(repo, "checkout", "-q", "-b", "feature")
    if broken is not None:
        path, before, after = broken
        text = (repo / path).read_text()
        assert before in text, f"{path} no longer holds {before!r}"
        (repo / path).write_text(text.replace(before, after))
    else:
        init = package_init(repo, source.name.rsplit("-", 1)[0])
        init.write_text(init.read_text() + "# a comment\n")
    git(repo, "commit", "-q", "-am", "change")
    return repo


def dependencies(ci: CI, folder: Path) -> Path | None:
    """The project's test dependencies, installed into a folder of their own."""
    if not ci.deps:
        return None
    target = folder / "deps"
    options = ["-q", "--disable-pip-version-check", "--target", str(target)]
    subprocess.run(
        [sys.executable, "-m", "pip", "install", *options, *ci.deps],
        check=True,
        capture_output=True,
    )
    return target


def environment(repo: Path, ci: CI, deps: Path | None) -> dict[str, str]:
    env = {**CHILD_ENV, **ci.env}
    path = [str(repo / "src")] if (repo / "src").is_dir() else []
    path += [str(repo)] if ci.on_path else []
    path += [str(deps)] if deps is not None else []
    if path:
        env["PYTHONPATH"] = os.pathsep.join(path)
    return env


@dataclass
class Runner:
    """Runs one project's suite, plain or reviewed, and keeps each review's gate."""

    ci: CI
    deps: Path | None
    gates: dict[str, list[str]] = field(default_factory=dict)

    def timed(self, repo: Path, review: bool = False, kind: str = "") -> float:
        argv = [*PLAIN, *self.ci.args, *(REVIEW if review else ())]
        env = environment(repo, self.ci, self.deps)
        start = time.perf_counter()
        subprocess.run(argv, cwd=repo, env=env, check=False, capture_output=True)
        took = time.perf_counter() - start
        if review:
            report = repo / ".bounded-review" / "report.json"
            gate = json.loads(report.read_text())["gate"]["review_clean"]
            self.gates.setdefault(kind, []).append(gate)
        return took


def added(runs: list[float], against: list[float]) -> str:
    """The median of the paired differences, in seconds, with their spread."""
    deltas = [a - b for a, b in zip(runs, against, strict=True)]
    return f"{statistics.median(deltas):.2f} ({min(deltas):.2f}-{max(deltas):.2f})"


def gates(seen: list[str], wanted: str) -> str:
    """The gates of a row's reviews, as the row names them; a gate not ``wanted`` is an error."""
    wrong = sorted({g for g in seen if g != wanted})
    if wrong:
        raise SystemExit(f"a review's gate was {', '.join(wrong)} where {wanted} was expected")
    return f"gate {wanted}" + (f" x{len(seen)}" if len(seen) > 1 else "")


def measure(spec: str, folder: Path, repeat: int) -> list[tuple[str, str, str]]:
    name = spec.split("==")[0]
    ci = RUNS.get(name, CI())
    source = fetch(spec, folder / f"{name}-sdist")
    clean = repository(source, folder, f"{name}-clean", None, ci)
    broken = BROKEN.get(name)
    bad = repository(source, folder, f"{name}-broken", broken, ci) if broken else None
    run = Runner(ci, dependencies(ci, folder / f"{name}-deps"))
    runs: dict[str, list[float]] = {k: [] for k in ("plain", "review", "bplain", "cold", "warm")}
    for repo in (clean, bad):  # warm the bytecode caches and the state folder once
        if repo is not None:
            run.timed(repo)
            run.timed(repo, review=True, kind="review" if repo is clean else "warm")
    for _ in range(repeat):
        runs["plain"].append(run.timed(clean))
        runs["review"].append(run.timed(clean, review=True, kind="review"))
        if bad is not None:
            runs["bplain"].append(run.timed(bad))
            forget_base(bad)
            runs["cold"].append(run.timed(bad, review=True, kind="cold"))
            runs["warm"].append(run.timed(bad, review=True, kind="warm"))
    harmless = gates(run.gates["review"], "yes")
    plain = [(f"{spec}, a comment: plain pytest", runs["plain"], runs["plain"])]
    reviewed = [
        (f"{spec}, a comment: --bounded-review ({harmless})", runs["review"], runs["plain"])
    ]
    if bad is not None:
        plain += [(f"{spec}, a regression: plain pytest", runs["bplain"], runs["bplain"])]
        cold, warm = gates(run.gates["cold"], "no"), gates(run.gates["warm"], "no")
        reviewed += [
            (
                f"{spec}, a regression: --bounded-review, cold ({cold})",
                runs["cold"],
                runs["bplain"],
            ),
            (
                f"{spec}, a regression: --bounded-review, warm ({warm})",
                runs["warm"],
                runs["bplain"],
            ),
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
        f"{args.repeat} interleaved runs, spread (min-max) in brackets; each review's gate in "
        f"its row; Python "
        f"{sys.version.split()[0]}, {os.cpu_count()} CPUs. Targets: a harmless change adds at "
        "most 0.05 s; with failures, warm at most 0.08 s, cold at most one base pytest start "
        "and the failing tests."
    )
    record(args.out, "project", TITLE, intro, ("run", "median seconds", "ratio"), table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
