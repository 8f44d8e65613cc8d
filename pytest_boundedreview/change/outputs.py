"""The report's output files (``report``, ``markdown``, ``sarif``) are files of the tool's own,
checked before anything is written: inside the repository's working tree, outside ``.git``, at
no path git tracks (compared case-insensitively: on such a file system ``SRC/App.py`` is
``src/app.py``), and where a file already is, one the tool wrote before (or an empty one).

The working tree's configuration file may be the change's: without these rules a change could
write its own git hook (``sarif = ".git/hooks/pre-commit"``), rewrite the code under review, or
put a file anywhere the user can write. An existing file the tool did not write is refused whether
git tracks it, shows it as untracked or ignores it: it is the user's work, a ``.env`` or part of
the change under review, and the tool cannot tell which. Its own earlier output is recognised by
how every format begins, so a run repeated with the same options writes again.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.errors import ConfigError
from ..core.settings.config import PATH_KEYS, Settings
from . import git
from .trees.indexfile import tracked

# How each output the tool writes begins (render/: JSON, Markdown, SARIF).
_OWN_STARTS = (
    b'{\n  "schema": "bounded-review/report/v1"',
    b"<!-- bounded-review -->",
)
_SARIF_START = b'{\n  "$schema": "https://json.schemastore.org/sarif-2.1.0.json"'
_SARIF_TOOL = b'"informationUri": "https://pypi.org/project/pytest-boundedreview/"'
_HEAD_BYTES = 1024
FIX = (
    "leave the key unset (the JSON report goes to the state folder), or name a new file "
    "inside the repository, such as one in the state folder or a path git ignores"
)


def output_error(key: str, value: str, why: str) -> str:
    """The message of a refused output path: the key and its option, the value, why, the fix."""
    option = f"--bounded-review-{key}"
    return f"{key} ({option}) {value!r} {why}; {FIX}"


def check_outputs(repo: git.Repo, settings: Settings, state: Path) -> None:
    """:class:`ConfigError` (exit 4) naming the key when ``report``, ``markdown`` or ``sarif``
    names a path the tool must not write; ``state`` is the checked state folder, whose files
    are the tool's own. Relative values are taken from the working folder, as they are written."""
    for key in PATH_KEYS:
        value = getattr(settings, key)
        if value is None:
            continue
        why = problem(repo, Path(value), state)
        if why is not None:
            raise ConfigError(output_error(key, value, why))


def problem(repo: git.Repo, path: Path, state: Path) -> str | None:
    """Why the tool must not write ``path``, or ``None``."""
    named = Path(os.path.abspath(path))  # '..' folded as the file system would not: both kept
    try:
        real = named.parent.resolve() / named.name  # the folder the file is renamed into
    except (OSError, RuntimeError) as exc:  # a loop of symbolic links
        return f"cannot be resolved ({exc})"
    root = repo.root.resolve()
    if real == root:
        return "is the repository root"
    if not real.is_relative_to(root):
        where = "" if real == named else f" (through a symbolic link or '..', at {real})"
        return f"is outside the repository's working tree {root}{where}"
    relative = real.relative_to(root)
    for git_folder in {repo.git_dir.resolve(), repo.common_dir.resolve()}:
        if real.is_relative_to(git_folder):
            return "is inside .git, which belongs to git"
    if any(part.casefold() == ".git" for part in relative.parts):
        return "is inside a .git folder, which belongs to git"
    if not real.is_relative_to(state.resolve()):  # the state folder tracks nothing (statedir)
        shown = _tracked_at(repo, relative.as_posix())
        if shown:
            return f"is a file git tracks ({shown}), which the tool never overwrites"
    return _existing(real)


def _tracked_at(repo: git.Repo, relative: str) -> str:
    """The tracked path at ``relative`` or under it, compared case-insensitively; ``""``."""
    known = tracked(repo.index)
    if known is None:  # an index this reader does not walk: git is asked
        spec = f":(icase,literal){relative}"
        proc = git.run(["ls-files", "-z", "--cached", "--", spec], repo.root, check=False)
        if proc.returncode != 0:
            return "git ls-files failed: " + git.decode(proc.stderr).strip()[:200]
        known = frozenset(name for name in git.decode(proc.stdout).split("\0") if name)
    folded = relative.casefold()
    for name in sorted(known):
        low = name.casefold()
        if low == folded or low.startswith(f"{folded}/"):
            return name
    return ""


def _existing(real: Path) -> str | None:
    """Why the file at ``real`` may not be replaced: a folder, a symbolic link, a device or
    pipe, or a file the tool did not write."""
    try:
        info = real.lstat()
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror or exc})"
    if stat.S_ISLNK(info.st_mode):  # written through when it leads to a device: never
        return "is a symbolic link"
    if stat.S_ISDIR(info.st_mode):
        return "is an existing folder"
    if not stat.S_ISREG(info.st_mode):
        return "is an existing device, pipe or socket, not a file the tool wrote"
    try:
        with real.open("rb") as handle:
            head = handle.read(_HEAD_BYTES)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not head or head.startswith(_OWN_STARTS):
        return None
    if head.startswith(_SARIF_START) and _SARIF_TOOL in head:
        return None
    return (
        "is an existing file the tool did not write (your work, an ignored file such as .env, "
        "or part of the change under review)"
    )
