"""Give a base checkout what the working tree's run had and git's checkout does not: folders
copied whole (the Hypothesis example database) and submodules checked out at the base's
commits (see ``basecontent.py``).

Run as ``python -I -S fillin.py CHECKOUT SPEC`` by the base re-run's child once the checkout
is made, it imports the standard library only. A submodule is written from a git folder the
repository already has, through an index file of its own (``read-tree --reset -u``): that
folder's own index, HEAD and worktree list are never touched, and nothing is fetched. Any
failure ends the child with the reason (the base run then answers nothing).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile


def _inside(path: str, top: str) -> bool:
    return os.path.commonpath([os.path.realpath(path), top]) == top


def copy_tree(source: str, checkout: str, place: str) -> None:
    """Copy the files under ``source`` to ``place`` (relative) in ``checkout``, leaving any
    the checkout already has; nothing is written through a link leading out of it."""
    top = os.path.realpath(checkout)
    if os.path.isabs(place) or ".." in place.split("/"):
        return
    for folder, _, files in os.walk(source):
        there = os.path.join(checkout, place, os.path.relpath(folder, source))
        os.makedirs(there, exist_ok=True)
        if not _inside(there, top):
            return
        for name in files:
            target = os.path.join(there, name)
            if not os.path.lexists(target):
                shutil.copyfile(os.path.join(folder, name), target)


def check_out(checkout: str, path: str, commit: str, git_dir: str) -> None:
    """Write ``commit`` of the repository in ``git_dir`` at ``path`` (relative) in
    ``checkout``, replacing what is there."""
    top = os.path.realpath(checkout)
    there = os.path.join(checkout, path)
    if os.path.isabs(path) or ".." in path.split("/") or os.path.islink(there):
        raise SystemExit(f"submodule {path}: not a folder of the checkout")
    if not _inside(os.path.dirname(there), top):
        raise SystemExit(f"submodule {path}: its folder leads out of the checkout")
    shutil.rmtree(there, ignore_errors=True)  # a kept checkout's earlier content
    os.makedirs(there, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({k: v for k, v in os.environ.items() if k.startswith("GIT_CONFIG")})
    with tempfile.TemporaryDirectory() as scratch:
        env["GIT_INDEX_FILE"] = os.path.join(scratch, "index")
        argv = ["git", "-c", "core.hooksPath=/dev/null", f"--git-dir={git_dir}"]
        argv += [f"--work-tree={there}", "read-tree", "--reset", "-u", commit]
        proc = subprocess.run(argv, env=env, capture_output=True, check=False)
    if proc.returncode != 0:
        error = proc.stderr.decode("utf-8", "replace").strip()
        raise SystemExit(f"submodule {path} at {commit[:12]} could not be checked out: {error}")


def fill(checkout: str, spec: dict[str, list[list[str]]]) -> None:
    """Do what ``spec`` (see ``basecontent.Held.spec``) says in ``checkout``."""
    for path, commit, git_dir in spec.get("submodules", []):
        check_out(checkout, path, commit, git_dir)
    for source, place in spec.get("trees", []):
        copy_tree(source, checkout, place)


if __name__ == "__main__":
    with open(sys.argv[2], encoding="utf-8") as file:
        fill(sys.argv[1], json.load(file))
