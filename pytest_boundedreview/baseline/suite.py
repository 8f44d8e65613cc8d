"""Whether a session ran the whole suite: the paths given on the command line count as the
whole suite when they cover the configured ``testpaths`` (or the rootdir, when none is set);
a node id, or a path inside them, is part of it."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path


def narrowed(
    args: Sequence[str], invocation_dir: Path, rootdir: Path, testpaths: Sequence[str]
) -> str | None:
    """Why the paths ``args`` run only part of the suite, or ``None`` when they cover it."""
    if any("::" in arg for arg in args):
        return f"only the tests named ran: {' '.join(args)}"
    given = [Path(invocation_dir, arg).resolve() for arg in args]
    suite: list[Path] = []
    for entry in testpaths or ["."]:
        found = glob.glob(str(rootdir / entry), recursive=True) if glob.has_magic(entry) else []
        suite += [Path(p).resolve() for p in found] or [(rootdir / entry).resolve()]
    missed = [p for p in suite if not any(p == g or p.is_relative_to(g) for g in given)]
    if not missed:
        return None
    shown = ", ".join(_shown(p, rootdir) for p in missed[:5])
    return f"only the paths given ran ({' '.join(args)}), not all of {shown}"


def _shown(path: Path, rootdir: Path) -> str:
    resolved = rootdir.resolve()
    if not path.is_relative_to(resolved):
        return str(path)
    return path.relative_to(resolved).as_posix() or "."


def suite_files(
    rootdir: Path,
    testpaths: Sequence[str],
    patterns: Sequence[str],
    skipped_dirs: Sequence[str],
    limit: int = 100_000,
) -> list[str]:
    """The test files of the whole suite (``python_files`` under the suite's paths, outside
    ``norecursedirs``), relative to ``rootdir``: what shards together must have run."""
    import fnmatch
    import os

    found: set[str] = set()
    roots = [Path(p) for e in testpaths or ["."] for p in glob.glob(str(rootdir / e))]
    for root in roots or [rootdir]:
        if root.is_file():
            found.add(root.resolve().relative_to(rootdir.resolve()).as_posix())
            continue
        for folder, dirs, files in os.walk(root):
            dirs[:] = [
                d
                for d in dirs
                if not d.startswith(".") and not any(fnmatch.fnmatch(d, p) for p in skipped_dirs)
            ]
            for name in files:
                if any(fnmatch.fnmatch(name, p) for p in patterns):
                    path = (Path(folder) / name).resolve()
                    found.add(path.relative_to(rootdir.resolve()).as_posix())
            if len(found) > limit:
                return sorted(found)
    return sorted(found)
