"""Freeze a plan file as a review target: its bytes' digest is the revision; lanes get a copy
of the repository at HEAD with the plan in it, and the plan as one added file (its scope)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..change import git
from ..change.freeze import Target, diff_of, tree_with
from ..change.scope import parse_scope
from ..core.errors import UsageError
from ..core.readfile import read_bounded

MAX_PLAN_BYTES = 4 * 1024 * 1024


def read_plan(path: Path) -> bytes:
    data = read_bounded(path, MAX_PLAN_BYTES, "the plan")
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"the plan {path} is not UTF-8 text (byte {exc.start})") from None
    return data


OUTSIDE = ".bounded-review-plan"


def place(repo: git.Repo, path: Path) -> str:
    """The plan's path in the snapshot: where it is in the repository; a plan kept elsewhere
    goes under ``.bounded-review-plan/<digest of its location>/`` so it can neither replace a
    file of the repository nor share a loop with another plan of the same name."""
    absolute = path.absolute().resolve()
    root = repo.root.resolve()
    if absolute.is_relative_to(root):
        inside = absolute.relative_to(root).as_posix()
        if inside.split("/", 1)[0] == ".git":
            raise UsageError(f"the plan {path} is inside .git/")
        return inside
    digest = hashlib.sha256(str(absolute).encode("utf-8", "surrogateescape")).hexdigest()
    return f"{OUTSIDE}/{digest[:12]}/{absolute.name}"


def freeze_plan(repo: git.Repo, path: Path) -> tuple[Target, str]:
    """The plan at ``path`` as a target, and its text."""
    data = read_plan(path)
    where = place(repo, path)
    head = repo.head()
    blob = git.run(["hash-object", "-w", "--stdin"], repo.root, input=data).stdout.decode().strip()
    without = tree_with(repo, head, where, None, kind="plan")
    tree = tree_with(repo, head, where, blob, kind="plan")
    raw, patch = diff_of(repo, without, tree)
    target = Target(
        kind="plan",
        base="HEAD",
        base_commit=head,
        head=head,
        tree=tree,
        diff=patch,
        scope=parse_scope(raw, patch),
        identity="sha256:" + hashlib.sha256(data).hexdigest(),
        reason=f"plan as asked: reviewing the plan {where}",
    )
    return target, data.decode("utf-8")
