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
    rootdir: Path, testpaths: Sequence[str], patterns: Sequence[str], skipped_dirs: Sequence[str]
) -> list[str]:
    """The suite's test files, relative to ``rootdir``: files git tracks under the suite's
    paths whose names match ``python_files``, outside ``norecursedirs``. What shards together
    must have collected."""
    import fnmatch
    import subprocess

    proc = subprocess.run(
        ["git", "ls-files", "-z", "--", *(testpaths or ["."])],
        cwd=rootdir,
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        return []
    found = []
    for name in proc.stdout.decode("utf-8", "surrogateescape").split("\0"):
        parts = name.split("/")
        if not name or not any(fnmatch.fnmatch(parts[-1], p) for p in patterns):
            continue
        if any(fnmatch.fnmatch(d, p) for d in parts[:-1] for p in skipped_dirs):
            continue
        found.append(name)
    return sorted(found)
