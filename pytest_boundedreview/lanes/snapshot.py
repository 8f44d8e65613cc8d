"""Where lanes work: a throwaway copy of the reviewed snapshot, and a check that the live tree
did not change while they ran.

The copy is written with ``git checkout-index`` from a temporary index of the snapshot tree
(``git archive`` would drop ``export-ignore`` files). The live-tree fingerprint covers the
index bytes, HEAD, the checked-out branch, every ref, ``.git/config``, ``.git/hooks`` and the
content of every path ``git status`` lists but the untracked bytecode the tests' imports write
(``change/trees/byproducts.py``), which is no part of any tree.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

from ..change import git
from ..change.trees.byproducts import bytecode
from ..core import tempdirs


@contextlib.contextmanager
def snapshot_copy(repo: git.Repo, tree: str) -> Iterator[Path]:
    """A fresh folder holding the files of ``tree``, removed on any exit."""
    folder = tempdirs.make("snapshot")
    try:
        env = {"GIT_INDEX_FILE": str(folder / ".index")}
        git.run(["read-tree", tree], repo.root, env=env)
        files = folder / "tree"
        git.run(["checkout-index", "--all", "--force", f"--prefix={files}/"], repo.root, env=env)
        files.mkdir(exist_ok=True)  # an empty tree checks nothing out
        yield files
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _digest(path: Path) -> str:
    try:
        if path.is_symlink():
            return "link:" + str(path.readlink())
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "missing"
    except OSError as exc:
        return f"unreadable:{exc.errno}"


def live_fingerprint(repo: git.Repo) -> dict[str, str]:
    """What a lane must not change in the live repository: index, HEAD, changed paths."""
    out = git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all"], repo.root).stdout
    entries = git.decode(out).split("\0")
    paths = []
    i = 0
    while i < len(entries) and entries[i]:
        code, path = entries[i][:2], entries[i][3:]
        if code != "??" or not bytecode(repo.root, path):  # the tests' bytecode: no change
            paths.append(path)
        i += 2 if code[0] in "RC" else 1  # renames carry the old path as the next entry
    index = repo.index
    head = git.run(["rev-parse", "--verify", "--quiet", "HEAD"], repo.root, check=False)
    branch = git.run(["symbolic-ref", "--quiet", "HEAD"], repo.root, check=False)
    refs = git.run(["for-each-ref", "--format=%(refname) %(objectname)"], repo.root).stdout
    common = Path(git.text(["rev-parse", "--path-format=absolute", "--git-common-dir"], repo.root))
    watched = [common / "hooks", common / "info"]
    hooks = sorted(p for folder in watched if folder.is_dir() for p in folder.glob("*"))
    fingerprint = {
        "(index)": _digest(index),
        "(HEAD)": git.decode(head.stdout).strip() or "unborn",
        "(branch)": git.decode(branch.stdout).strip() or "detached",
        "(refs)": hashlib.sha256(refs).hexdigest(),
        "(.git/config)": _digest(common / "config"),
    }
    fingerprint["(.git/config.worktree)"] = _digest(common / "config.worktree")
    fingerprint.update({f"(.git/{p.parent.name}/{p.name})": _digest(p) for p in hooks})
    fingerprint.update({path: _digest(repo.root / path) for path in paths})
    return fingerprint


def mutated(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """The paths (and ``(index)``/``(HEAD)``) whose state differs between two fingerprints."""
    return sorted(key for key in before.keys() | after.keys() if before.get(key) != after.get(key))
