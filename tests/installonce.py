"""A folder made once per key and shared by every run and every xdist worker: the first process
to take the key's file lock makes it in a temporary folder of its own and renames it into place,
marked complete; the others wait on the lock and find it there."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def made_once(root: Path, key: str, make: Callable[[Path], str]) -> Path:
    """``root/key``, made by ``make(temp)`` unless a complete one is there. ``make`` fills the
    new folder ``temp`` and returns what the completion marker records; whatever it raises
    leaves nothing behind."""
    final = root / key
    with _locked(root / f"{key}.lock"):
        if not (final / "installed").exists():
            temp = root / f"{key}.tmp-{os.getpid()}"
            shutil.rmtree(temp, ignore_errors=True)
            temp.mkdir(parents=True)
            try:
                marker = make(temp)
            except BaseException:
                shutil.rmtree(temp, ignore_errors=True)
                raise
            (temp / "installed").write_text(marker)
            shutil.rmtree(final, ignore_errors=True)
            temp.rename(final)
    return final
