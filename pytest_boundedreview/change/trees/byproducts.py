"""What running the tests leaves in a working tree that is no part of any tree reviewed.

A session imports the project's modules, and Python (and pytest, for the test modules it
rewrites) keeps their bytecode in ``__pycache__`` next to them. In a project that does not ignore
those folders the files are untracked, and the snapshot of the working tree (``git add --all``
through a temporary index, see ``freeze.py``) would carry them: the tree a review froze before
its tests ran would differ from the tree left after them, and the reviewed files would name
bytecode. Every snapshot of the working tree (the review's, the agent hook's, ``run``'s check
of the report) leaves them out here, by one rule. A path is a byproduct when all of:

- git does not track it (the user's index does not hold it): a tracked file is the change's,
  whatever it holds;
- it lies directly in a folder named ``__pycache__`` and is named ``<module>.<tag>...pyc``
  (a dot before ``.pyc``), as Python and pytest name the bytecode of a source next to the
  folder: a file a name can import without a source (``helper.pyc`` anywhere, which
  ``import __pycache__.helper`` finds too) is code no source shows, and stays;
- it is a regular file whose header does not say "run without checking the source" (an
  unchecked hash-based pyc, PEP 552) nor carry flags Python refuses: Python loads any other
  only when it is current for the source beside it, so what runs is that source, which the
  tree holds.

Bytecode is trusted at head as Python trusts it: a header is proof against staleness, not
against a file written by hand to match its source's time and size. That trust is not new here:
the same rule has always kept such a file from being a difference between a staged or committed
snapshot and the working tree, and the base re-run is given bytecode only where its header holds
the hash of the base's bytes (``baseline/checkout/pycache.py``).

pytest's cache folder and the state folder need no rule: each holds a ``.gitignore`` of ``*``
(pytest's own, and the one the tool writes), so git's rules keep them out of every tree.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path, PurePosixPath

from .. import git
from .indexfile import tracked

# Every .pyc in a __pycache__ folder, at any depth: the candidates, checked one by one below.
_PATHSPEC = ":(top,glob)**/__pycache__/*.pyc"
# PEP 552 flags: by the source's time and size, or by its hash with "check_source" set.
_CHECKED = (bytes(4), b"\x03\x00\x00\x00")
_NOT_CHECKED = bytes(4) + b"\xff" * 4  # what a file that is not plainly bytecode reads as


def bytecode(root: Path, path: str) -> bool:
    """Whether ``path`` (relative to ``root``, the top of the work tree) is bytecode Python
    writes for a source and checks against it before use (see the module's docstring; whether
    git tracks it is the caller's question)."""
    parts = PurePosixPath(path)
    if parts.parent.name != "__pycache__" or parts.suffix != ".pyc":
        return False
    if "." not in parts.name.removesuffix(".pyc"):
        return False  # importable by its name, without a source
    header = _header(root / path)
    if header is None:
        return True  # gone, so nothing can import it
    # Too short to be read is compiled again from the source; flags Python does not know are
    # refused, and kept like anything else that is not plainly checked.
    return len(header) < 8 or header[4:8] in _CHECKED


def _header(file: Path) -> bytes | None:
    """The first 8 bytes of ``file`` when it is a regular file (a symbolic link, a folder or a
    pipe is no bytecode Python wrote, and is never waited on); ``None`` when it is gone."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except FileNotFoundError:
        return None
    except OSError:
        return _NOT_CHECKED  # a link, or unreadable
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return _NOT_CHECKED
        return os.read(fd, 8)
    finally:
        os.close(fd)


def leave_out(
    repo: git.Repo, env: Mapping[str, str], pinned: Sequence[str], added: bytes, source: Path
) -> None:
    """Remove from the temporary index ``env`` names the byproducts ``git add --all
    --verbose`` just added (its output, ``added``) that the index ``source`` does not track.
    Nothing is asked of git unless that output names a ``__pycache__`` folder."""
    if b"__pycache__/" not in added:
        return  # the common case: the project ignores bytecode, or none was written
    listed = git.run([*pinned, "ls-files", "-z", "--", _PATHSPEC], repo.root, env=env).stdout
    known = _tracked(repo, source, pinned)
    drop = [
        name
        for name in listed.split(b"\0")
        if name and git.decode(name) not in known and bytecode(repo.root, git.decode(name))
    ]
    if drop:
        request = b"".join(name + b"\0" for name in drop)
        remove = [*pinned, "update-index", "--force-remove", "-z", "--stdin"]
        git.run(remove, repo.root, env=env, input=request)


def _tracked(repo: git.Repo, source: Path, pinned: Sequence[str]) -> frozenset[str]:
    """The bytecode paths the index ``source`` holds: read from its bytes, else asked of git."""
    known = tracked(source)
    if known is not None:
        return known
    env = {"GIT_INDEX_FILE": str(source)}
    listed = git.run([*pinned, "ls-files", "-z", "--", _PATHSPEC], repo.root, env=env).stdout
    return frozenset(git.decode(name) for name in listed.split(b"\0") if name)
