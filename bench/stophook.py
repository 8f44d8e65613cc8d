"""Benchmark: the agent's stop hook, `bounded-review hook stop`, on a repository of 10,000 files.

    python bench/stophook.py [--files 10000] [--repeat 10] [--out docs/performance.md]

Measured in one run, interleaved, against `git status --porcelain` (what any hook pays to look
at the tree) and against the naive hook: re-running the review itself in the hook. Three paths:
a turn that changed nothing (the tree the turn started with), an edit with no review of it (the
hook blocks with the command to run) and a clean review of exactly this tree (the report read
strictly). Target: every path within 1 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results import record

TITLE = "Agent stop hook: `bounded-review hook stop` (`bench/stophook.py`)"
ENV = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
ENV["PYTEST_ADDOPTS"] = "-p no:randomly"
HOOK = [sys.executable, "-m", "pytest_boundedreview", "hook"]
REVIEW = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--bounded-review"]
CLEAN = "VALUE_0 = 0  # reviewed\n"
EDITED = "VALUE_0 = -1\n"


def run(argv: list[str], cwd: Path, data: bytes = b"") -> tuple[float, bytes]:
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=ENV, input=data, check=False, capture_output=True)
    return time.perf_counter() - start, done.stdout


def build(folder: Path, files: int) -> None:
    for n in range(files):
        package = folder / f"pkg{n % 100}"
        package.mkdir(exist_ok=True)
        (package / f"mod{n}.py").write_text(f"VALUE_{n} = {n}\n")
    (folder / "test_smoke.py").write_text("def test_smoke():\n    assert True\n")
    (folder / ".gitignore").write_text(".bounded-review/\n__pycache__/\n")
    config = '[tool.bounded-review]\nmode = "review-and-fix"\nbase = "main"\n'
    config += '[tool.pytest.ini_options]\ntestpaths = ["test_smoke.py"]\n'
    (folder / "pyproject.toml").write_text(config)
    git = ["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=folder, env=ENV, check=True)
    subprocess.run([*git, "add", "-A"], cwd=folder, env=ENV, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=folder, env=ENV, check=True)
    subprocess.run([*git, "checkout", "-q", "-b", "feature"], cwd=folder, env=ENV, check=True)


def stop_event(folder: Path, session: str) -> bytes:
    event = {"session_id": session, "cwd": str(folder), "hook_event_name": "Stop"}
    return json.dumps(event | {"stop_hook_active": False, "transcript_path": None}).encode()


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}x ({min(values):.2f}-{max(values):.2f})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    stop = [*HOOK, "stop", "--agent", "claude"]
    names = ("status", "unchanged", "unreviewed", "clean", "review")
    samples: dict[str, list[float]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        build(folder, args.files)
        module = folder / "pkg0" / "mod0.py"
        module.write_text(CLEAN)
        subprocess.run(REVIEW, cwd=folder, env=ENV, check=True, capture_output=True)
        for n in range(args.repeat):
            samples["status"].append(run(["git", "status", "--porcelain"], folder)[0])
            module.write_text(CLEAN)
            took, out = run(stop, folder, stop_event(folder, f"clean{n}"))
            assert out == b"", out  # a clean review of this tree: allowed silently
            samples["clean"].append(took)
            module.write_text(EDITED)
            run([*HOOK, "start", "--agent", "claude"], folder, stop_event(folder, f"turn{n}"))
            took, out = run(stop, folder, stop_event(folder, f"turn{n}"))
            assert out == b"", out  # the turn changed nothing
            samples["unchanged"].append(took)
            took, out = run(stop, folder, stop_event(folder, f"edit{n}"))
            assert b'"decision": "block"' in out, out
            samples["unreviewed"].append(took)
            module.write_text(CLEAN)
            samples["review"].append(run(REVIEW, folder)[0])
    status = samples["status"]
    labels = {
        "status": "`git status --porcelain`",
        "unchanged": "hook, a turn that changed nothing",
        "unreviewed": "hook, an edit with no review of it (blocks)",
        "clean": "hook, a clean review of this tree (allows)",
        "review": "naive: re-run `pytest --bounded-review` in the hook",
    }
    table = []
    for name in names:
        ratios = [value / base for value, base in zip(samples[name], status, strict=True)]
        table.append((labels[name], f"{statistics.median(samples[name]):.3f}", spread(ratios)))
    intro = (
        f"{args.files} files, medians of {args.repeat} interleaved runs with the spread of "
        f"the per-run ratios, Python {sys.version.split()[0]}; target: every hook path within 1 s"
    )
    header = ("command", "median seconds", "ratio to `git status`")
    record(args.out, "stophook", TITLE, intro, header, table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
