"""The project's own pytest configuration, against which a session's suite is judged: the file
pytest uses at the checkout — the repository root's when it collects the session's rootdir
(a session started in ``tests/`` beside its own ``pytest.ini`` is still part of the root's
suite), else the session's own — read as the base has it when the change touches it (a change
cannot define its own suite), else as it is on disk."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path
from typing import Any

from ...change import git
from ...core.pytestconfig.pytestini import FILES, from_files, options_of
from .wholeness import Project


def project_of(
    repo: git.Repo,
    rootpath: Path,
    inipath: Path | None,
    base_commit: str | None,
    changed: Collection[str],
) -> Project:
    """The project configuration of a session whose rootdir is ``rootpath`` and configuration
    file ``inipath``, for a change against ``base_commit`` touching the files ``changed``."""
    top = from_files(repo.root, repo.root)
    if top.source != "pytest's defaults" and top.collects(rootpath.resolve()):
        file: Path | None = Path(top.source)
    else:
        file = inipath
    if file is None:
        return Project(rootpath, {}, None)
    name = file.resolve().relative_to(repo.root.resolve()).as_posix()
    on_disk = _options(file.name, file.read_text(encoding="utf-8", errors="replace"))
    if not base_commit or name not in changed:
        return Project(file.parent, on_disk or {}, file)
    options = _options(file.name, repo.show(base_commit, name))
    if options is None:  # the change adds it: the base's is the file pytest read there
        options = _shadowed(repo, base_commit, name)
    return Project(file.parent, options or {}, file, ran=on_disk or {})


def _shadowed(repo: git.Repo, base_commit: str, name: str) -> dict[str, Any] | None:
    """The options of the configuration file pytest finds at ``base_commit`` from the folder
    of ``name`` up to the repository root (a file the change adds there may shadow it);
    ``None`` (pytest's defaults) when there is none."""
    folder = Path(name).parent
    for parent in [folder, *folder.parents]:
        for candidate in FILES:
            where = (parent / candidate).as_posix()
            options = _options(candidate, repo.show(base_commit, where))
            if options is not None:
                return options
    return None


def _options(name: str, text: str | None) -> dict[str, Any] | None:
    try:
        return options_of(name, text) if text is not None else None
    except ValueError:
        return None
