"""Re-run chosen node ids in a pytest subprocess and read back their outcomes.

Used at head (is a failure flaky?) and in a base checkout (did it fail before the change?).
The child runs with the recorder plugin, which keeps only the chosen ids and writes outcomes to
a temporary folder of ours; its cache goes there too, so the checkout is not written to.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from . import git, recorder, subproc

# Options of the original session worth replaying (they change what is collected or how).
_REPLAY_FLAGS = {
    "--doctest-modules",
    "--doctest-continue-on-failure",
    "--runxfail",
    "--strict-markers",
    "--strict-config",
}
_REPLAY_VALUES = {"-p", "-o", "--override-ini", "--import-mode", "--doctest-glob", "-W"}
_REPLAY_VALUES |= {"--pythonwarnings", "--confcutdir"}


@dataclass(frozen=True)
class RerunResult:
    """Outcomes of one re-run. ``status`` is ``ok`` unless the run itself broke."""

    status: Literal["ok", "timeout", "error"]
    detail: str = ""
    found: frozenset[str] = frozenset()
    failed: Mapping[str, str] = field(default_factory=dict)
    passed: frozenset[str] = frozenset()


def replayable(args: Sequence[str]) -> list[str]:
    """The options of ``args`` that a re-run must repeat; paths and others are dropped."""
    kept: list[str] = []
    items = iter(args)
    for arg in items:
        name = arg.split("=", 1)[0]
        if name in _REPLAY_FLAGS:
            kept.append(arg)
        elif name in _REPLAY_VALUES:
            if "=" in arg:
                kept.append(arg)
            else:
                kept += [arg, next(items, "")]
        elif arg.startswith("-p") and len(arg) > 2:
            kept.append(arg)
    # Never load the bounded review itself in the child.
    return [a for a in kept if "boundedreview" not in a and "bounded_review" not in a]


def child_env(
    extra_path: Iterable[Path] = (), mapping: tuple[Path, Path] | None = None
) -> dict[str, str]:
    """The session's environment without ``GIT_*``; ``extra_path`` goes first on PYTHONPATH
    and entries inside ``mapping[0]`` are moved to the same place inside ``mapping[1]``."""
    env = git.without_git_variables(os.environ)
    entries = [str(p) for p in extra_path]
    for entry in filter(None, env.get("PYTHONPATH", "").split(os.pathsep)):
        if mapping is not None:
            with contextlib.suppress(ValueError):
                entry = str(mapping[1] / Path(entry).resolve().relative_to(mapping[0].resolve()))
        entries.append(entry)
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(entries)
    return env


def rerun(
    nodeids: Iterable[str],
    *,
    rootdir: Path,
    args: Sequence[str],
    env: Mapping[str, str],
    timeout: float,
) -> RerunResult:
    """Run ``nodeids`` (relative to ``rootdir``) once; files missing there are skipped."""
    wanted = sorted(set(nodeids))
    files = sorted({nodeid.split("::", 1)[0] for nodeid in wanted})
    files = [f for f in files if (rootdir / f).exists()]
    if not files:
        return RerunResult(status="ok")
    folder = Path(tempfile.mkdtemp(prefix="bounded-review-rerun-"))
    try:
        (folder / recorder.SELECT).write_text(json.dumps(wanted), encoding="utf-8")
        argv = [sys.executable, "-m", "pytest", "-p", "pytest_boundedreview.recorder"]
        argv += [f"--bounded-review-record={folder}", f"--rootdir={rootdir}", "-q"]
        argv += ["-o", f"cache_dir={folder / 'cache'}", "--continue-on-collection-errors"]
        if importlib.util.find_spec("xdist") is not None:
            argv += ["-n", "0"]
        argv += [*args, "--", *files]
        outcome = subproc.run(argv, cwd=rootdir, env=env, timeout=timeout)
        if outcome.timed_out:
            return RerunResult(status="timeout", detail=f"re-run timed out after {timeout:g}s")
        result_file = folder / recorder.RESULT
        if outcome.returncode not in (0, 1, 5) or not result_file.exists():
            tail = (outcome.stderr or outcome.stdout).decode("utf-8", "replace").strip()
            tail = outcome.start_error or "\n".join(tail.splitlines()[-5:])
            return RerunResult(status="error", detail=f"exit {outcome.returncode}: {tail}")
        data = json.loads(result_file.read_text(encoding="utf-8"))
        return RerunResult(
            status="ok",
            found=frozenset(data["found"]),
            failed={k: " | ".join(v) for k, v in data["failed"].items()},
            passed=frozenset(data["passed"]),
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def merged(first: RerunResult, second: RerunResult) -> RerunResult:
    """Two partial re-runs of disjoint node ids as one."""
    if first.status != "ok":
        return first
    if second.status != "ok":
        return second
    return RerunResult(
        status="ok",
        found=first.found | second.found,
        failed={**first.failed, **second.failed},
        passed=first.passed | second.passed,
    )
