"""Modules a session imported from files git ignores: code that ran in the tests but is not in
the reviewed tree (a C extension built in place, a generated ``_version.py``). Legitimate, and
never reviewed, so the report names them."""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import pluggy

from . import git
from .trees import livetree
from .trees.indexfile import tracked

if TYPE_CHECKING:
    import pytest

WORKER_KEY = "bounded_review_modules"  # what an xdist worker hands its controller
# pytest's own marker, made without importing pytest: the console commands import this module
# for the base checkout's preparation, and pytest's import is most of their start-up.
_pytest_hookimpl = pluggy.HookimplMarker("pytest")


def _installed() -> tuple[str, ...]:
    """Folders of installed code, which may lie inside a repository (a ``.venv`` there)."""
    folders = {sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()}
    return tuple(os.path.join(os.path.realpath(f), "") for f in folders)


def module_files(root: Path) -> list[str]:
    """The files, relative to ``root``, of the modules this process loaded from inside it,
    installed code left out."""
    inside = {os.path.join(str(root), ""), os.path.join(os.path.realpath(root), "")}
    installed = _installed()
    found = set()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not file.startswith(tuple(inside)):
            continue
        real = os.path.realpath(file)
        if real.startswith(installed):
            continue
        for top in inside:
            if real.startswith(top):
                found.add(Path(real[len(top) :]).as_posix())
                break
    return sorted(found)


def ignored(repo: git.Repo, files: Iterable[str]) -> list[str]:
    """Those of ``files`` (relative to the repository's top) that git ignores and does not
    track. Files a small index tracks (most imported modules) are not asked of git."""
    known = tracked(repo.index) or frozenset()
    wanted = sorted(set(files) - known)
    if not wanted:
        return []
    # "./" first: git reads each name as a pathspec, where a leading ":" is magic
    request = "".join(f"./{name}\0" for name in wanted).encode("utf-8", "surrogateescape")
    proc = git.run(["check-ignore", "-z", "--stdin"], repo.root, input=request, check=False)
    if proc.returncode > 1 and len(wanted) > 1:  # a path git refuses (inside a submodule)
        return [name for name in wanted if ignored(repo, [name])]
    named = git.decode(proc.stdout).split("\0")
    return sorted(name.removeprefix("./") for name in named if name)


EXTENSION_SUFFIXES = (".so", ".pyd", ".dylib")


def built_in_place(repo: git.Repo, suffixes: tuple[str, ...] = EXTENSION_SUFFIXES) -> list[str]:
    """The files git ignores in ``repo``'s working tree whose names end in ``suffixes``
    (compiled modules by default), relative to its top: what an in-place build
    (``build_ext --inplace``, ``maturin develop``, ``pybabel compile``) leaves next to the
    sources. Folders git ignores whole (a virtual environment, ``build/``) are not looked
    into: git names them without listing their files, which keeps this cheap."""
    proc = git.run(
        ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
        repo.root,
        check=False,
    )
    if proc.returncode != 0:
        return []
    names = git.decode(proc.stdout).split("\0")
    return sorted(n for n in names if n.endswith(suffixes) and not n.endswith("/"))


def changed_since(repo: git.Repo, commit: str) -> list[str]:
    """The files of ``repo``'s working tree whose content is not ``commit``'s: changed,
    added, deleted (both names of a rename), or untracked and not ignored."""
    diff = git.run(["diff", "--name-only", "--no-renames", "-z", commit, "--"], repo.root)
    untracked = git.run(["ls-files", "-z", "--others", "--exclude-standard"], repo.root)
    names = git.decode(diff.stdout + untracked.stdout).split("\0")
    return sorted({name for name in names if name})


def limitation(names: list[str]) -> str:
    """The report's note on code that ran from files the reviewed tree does not hold."""
    shown = ", ".join(map(livetree.shown, names[:10]))
    shown += f" and {len(names) - 10} more" if len(names) > 10 else ""
    return (
        f"the tests imported code from files git ignores, which the reviewed tree does not "
        f"hold and no reviewer saw: {shown}"
    )


class WorkerModules:
    """On an xdist worker: hands the controller the files of the modules it loaded."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @_pytest_hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if isinstance(output, dict):
            output[WORKER_KEY] = module_files(self.root)
