"""``bounded-review gate``: is there a clean report for exactly this snapshot? The cheap check
for commit and push hooks — no test runs, no pydantic, two or three git calls."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path

from ..core.errors import EXIT_CLEAN, EXIT_INDETERMINATE, EXIT_NOT_CLEAN
from ..target import git
from ..target.freeze import hook_index, tree_via_temp_index

STAGES = ("auto", "pre-commit", "pre-push", "manual")


PUSH_SIGNS = ("PRE_COMMIT_TO_REF", "PRE_COMMIT_REMOTE_NAME", "PRE_COMMIT_REMOTE_URL")


def stage_of(requested: str, env: Mapping[str, str]) -> str:
    """``auto``: pre-push when pre-commit says a push is running (it names the remote even
    for a first push, where it sets no refs), else pre-commit."""
    if requested != "auto":
        return requested
    return "pre-push" if any(env.get(name) for name in PUSH_SIGNS) else "pre-commit"


def snapshot(repo: git.Repo, stage: str, env: Mapping[str, str]) -> str:
    """The tree a commit (the staged index) or a push would record: the pushed commit's tree
    when pre-commit names it (``PRE_COMMIT_TO_REF``), else ``HEAD^{tree}``."""
    if stage == "pre-push":
        return repo.tree_of(env.get("PRE_COMMIT_TO_REF") or "HEAD")
    return tree_via_temp_index(repo, add_all=False, source=hook_index(repo, env))


def check(
    repo: git.Repo, report: Path, stage: str, env: Mapping[str, str] | None = None
) -> tuple[int, str]:
    """The exit status and one line saying why."""
    env = os.environ if env is None else env
    stage = stage_of(stage, env)
    revision = f"tree:{snapshot(repo, stage, env)}"
    try:
        document = json.loads(report.read_bytes())
    except (OSError, ValueError):
        why = f"no readable report at {report}: run pytest --bounded-review first"
        return EXIT_INDETERMINATE, why
    if not isinstance(document, dict) or document.get("schema") != "bounded-review/report/v1":
        return EXIT_INDETERMINATE, f"{report} is not a bounded-review report"
    target, gate = document.get("target") or {}, document.get("gate") or {}
    reviewed = target.get("revision") if isinstance(target, dict) else None
    if reviewed != revision:
        why = (
            f"the last report reviewed {reviewed}, not this {stage} snapshot {revision}: "
            "run pytest --bounded-review again"
        )
        return EXIT_INDETERMINATE, why
    verdict = gate.get("review_clean") if isinstance(gate, dict) else None
    if verdict == "yes":
        return EXIT_CLEAN, f"a clean review exists for {revision}"
    if verdict == "no":
        return (
            EXIT_NOT_CLEAN,
            f"the review of {revision} is not clean: {document.get('next_action')}",
        )
    return (
        EXIT_INDETERMINATE,
        f"the review of {revision} is indeterminate: {document.get('next_action')}",
    )
