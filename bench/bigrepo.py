"""Generated repositories of many tracked files for ``bench/scale.py``, made with
``git fast-import`` in seconds and cached between runs in the temporary folder.

Each holds a suite like ``bench/baseline.py``'s (``tests`` tests in 40 files, 5 failing at the
base), a package ``pkg`` whose ``__init__.py`` reads one of its data files, and inert data files
in folders of 500 (``assets/dNNN/fNNNNN.txt``) up to ``files`` tracked files in all. Branches:
``main`` (the base), ``feature`` (5 regressions through ``lib.py``), ``green`` (the base with
its failures fixed) and ``harmless`` (``green`` and a README line). A run clones the cached
repository (``git clone --local``: its objects hard-linked).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from baseline import FILES, PRE_EXISTING, REGRESSIONS, WORK, git, module

VERSION = "2"
PACKAGE = b"""from importlib.resources import files

NAME = (files(__name__) / "name.txt").read_text()
"""
PER_FOLDER = 500


def _blob(out: list[bytes], mark: int, data: bytes) -> None:
    out.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))


def _failing(tests: int) -> tuple[set[int], list[int]]:
    """The tests failing at the base, and those the change breaks, spread over the suite."""
    step = tests // PRE_EXISTING
    return {3 + k * step for k in range(PRE_EXISTING)}, [tests // 2 + k for k in range(REGRESSIONS)]


def _suite(tests: int, work_ms: float, pre: set[int]) -> dict[str, bytes]:
    per_file = tests // FILES
    files = {
        ".gitignore": b"__pycache__/\n.pytest_cache/\n",
        "lib.py": b"def double(x):\n    return x * 2\n",
        "helpers.py": WORK.encode(),
        "pkg/__init__.py": PACKAGE,
        "pkg/name.txt": b"pkg\n",
    }
    for i in range(FILES):
        files[f"test_m{i:02d}.py"] = module(i, per_file, pre, work_ms).encode()
    return files


def stream(files: int, tests: int, work_ms: float) -> bytes:
    """The fast-import stream of the repository (see the module's docstring)."""
    pre, regressions = _failing(tests)
    suite = _suite(tests, work_ms, pre)
    out: list[bytes] = []
    marks: dict[str, int] = {}
    for path, data in suite.items():
        marks[path] = len(marks) + 1
        _blob(out, marks[path], data)
    inert = max(files - len(suite), 0)
    first_inert = len(marks) + 1
    for n in range(inert):
        _blob(out, first_inert + n, b"inert data file %d\n" % n)
    broken = ", ".join(str(n) for n in regressions)
    lib = (
        f"BROKEN = {{{broken}}}\n\n\ndef double(x):\n    return x * 2 + (1 if x in BROKEN else 0)\n"
    )
    changed = {"lib.py": lib.encode(), "README.md": b"docs\n"}
    per_file = tests // FILES
    for i in sorted({n // per_file for n in pre}):
        changed[f"test_m{i:02d}.py"] = module(i, per_file, set(), work_ms).encode()
    for path, data in changed.items():
        marks["changed:" + path] = len(marks) + inert + 1
        _blob(out, marks["changed:" + path], data)
    who = b"bench <bench@example.invalid> 1700000000 +0000"
    out.append(b"commit refs/heads/main\nmark :%d\ncommitter %s\ndata 4\nbase\n" % (10**8, who))
    for path in suite:
        out.append(b"M 100644 :%d %s\n" % (marks[path], path.encode()))
    for n in range(inert):
        path = f"assets/d{n // PER_FOLDER:03d}/f{n:06d}.txt"
        out.append(b"M 100644 :%d %s\n" % (first_inert + n, path.encode()))
    commits = (
        ("feature", 10**8, ["lib.py"]),
        ("green", 10**8, [p for p in changed if p.startswith("test_")]),
        ("harmless", 10**8 + 2, ["README.md"]),
    )
    for mark, (branch, parent, paths) in enumerate(commits, 10**8 + 1):
        out.append(
            b"commit refs/heads/%s\nmark :%d\ncommitter %s\ndata 7\nchange\nfrom :%d\n"
            % (branch.encode(), mark, who, parent)
        )
        out += [b"M 100644 :%d %s\n" % (marks["changed:" + p], p.encode()) for p in paths]
    return b"".join(out)


def cached(files: int, tests: int, work_ms: float) -> Path:
    """The bare repository of these sizes, made once and kept in the temporary folder."""
    key = hashlib.sha256(f"{VERSION} {files} {tests} {work_ms}".encode()).hexdigest()[:12]
    home = Path(tempfile.gettempdir()) / "bounded-review-bench-repos"
    bare = home / f"files{files}-{key}.git"
    if (bare / "done").exists():
        return bare
    home.mkdir(exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=home, prefix="building-"))
    git(building, "init", "-q", "--bare", "--initial-branch=main")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=building,
        input=stream(files, tests, work_ms),
        env=env,
        check=True,
        capture_output=True,
    )
    (building / "done").write_text("")
    try:
        building.rename(bare)
    except OSError:  # another run made it meanwhile
        shutil.rmtree(building, ignore_errors=True)
    return bare


def clone(bare: Path, into: Path, branch: str) -> Path:
    """A clone of ``bare`` at ``branch``, with ``main`` and ``green`` as local branches (the
    bases)."""
    git(into.parent, "clone", "-q", "--local", "--branch", branch, str(bare), str(into))
    for base in ("main", "green"):
        if base != branch:
            git(into, "branch", "-q", base, f"origin/{base}")
    return into
