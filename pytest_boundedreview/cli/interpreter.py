"""Which Python runs the tests of ``bounded-review run``: the project's, wherever the command
itself was installed (pre-commit's own environment, pipx, ``uv tool``, the project's venv).

In order: ``BOUNDED_REVIEW_PYTHON``; this interpreter when it lives inside the repository (the
project's own environment: ``.venv``, ``.tox/...``); the repository's ``.venv`` or ``venv``;
an activated virtual environment (``VIRTUAL_ENV``) other than this interpreter's; this
interpreter. pre-commit sets ``VIRTUAL_ENV`` to its own environment while its hooks run, which
is why a repository's ``.venv`` comes before it.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from ..core.errors import UsageError

VARIABLE = "BOUNDED_REVIEW_PYTHON"
HANDED = "BOUNDED_REVIEW_HANDED_TO"  # set for the interpreter a run was handed to: it stays
_FOLDERS = (".venv", "venv")
# Whether an interpreter can run the command: this package importable there (pytest is its
# dependency).
_PROBE = "import importlib.util as u, sys; sys.exit(u.find_spec('pytest_boundedreview') is None)"


def _in(folder: Path) -> Path | None:
    for name in ("bin/python", "Scripts/python.exe"):
        if (folder / name).is_file():
            return folder / name
    return None


def chosen(root: Path, environ: Mapping[str, str]) -> tuple[str, str]:
    """The interpreter for the tests of the repository at ``root``, and why it was chosen."""
    named = environ.get(VARIABLE)
    if named:
        return named, f"{VARIABLE} names it"
    here = Path(sys.prefix).resolve()
    if here.is_relative_to(root.resolve()):
        return sys.executable, "this command runs in it"
    for name in _FOLDERS:
        found = _in(root / name)
        if found is not None:
            return str(found), f"the repository's {name}"
    active = environ.get("VIRTUAL_ENV")
    if active and Path(active).resolve() != here:
        found = _in(Path(active))
        if found is not None:
            return str(found), "the activated virtual environment (VIRTUAL_ENV)"
    return sys.executable, "this command runs in it"


def handed_to(root: Path, environ: Mapping[str, str]) -> str | None:
    """The interpreter to hand the whole command to (see :func:`chosen`), or ``None`` when
    this one runs it; a :class:`UsageError` naming it and the fix when it cannot."""
    if environ.get(HANDED):
        return None
    python, why = chosen(root, environ)
    if python == sys.executable:
        return None
    try:
        probe = subprocess.run([python, "-c", _PROBE], capture_output=True, check=False)
        usable = probe.returncode == 0
    except OSError:
        usable = False
    if not usable:
        raise UsageError(
            f"the tests' interpreter {python} ({why}) cannot load pytest-boundedreview: "
            f"install it there, or set {VARIABLE} to the interpreter your tests run with"
        )
    print(f"bounded-review run: testing with {python} ({why})", file=sys.stderr)
    return python
