"""The snapshot a target kind names right now, to tell whether a report is of it."""

from __future__ import annotations

from collections.abc import Mapping

from . import git
from .freeze import hook_index, tree_via_temp_index


def live_tree(repo: git.Repo, kind: str, env: Mapping[str, str]) -> str:
    """The tree a review of ``kind`` would freeze now: the index a commit is about to record
    (``staged``), the working tree with untracked files (``local-diff``), or ``HEAD``'s
    (``pr``). Written through a temporary index: the user's is never touched."""
    if kind == "staged":
        return tree_via_temp_index(repo, add_all=False, source=hook_index(repo, env))
    if kind == "local-diff":
        return tree_via_temp_index(repo, add_all=True)
    return repo.tree_of("HEAD")
