"""The note that a configuration was validated: a file in the state folder's ``cache`` named
by the digest of the configuration and of what validation depends on, so a later run with the
same configuration builds its settings without pydantic (see config.py's ``load_settings``)."""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

PREFIX = "config-valid-"


def marker(
    stop: Path | None, state_dir: object, data: Mapping[str, Any], rules: Sequence[str]
) -> Path | None:
    """Where the configuration ``data`` is noted valid: in the ``cache`` of ``state_dir``
    under the repository root ``stop``, named by the digest of ``data`` and of the modules
    ``rules`` that validate it. ``None`` (always validate) for one with values JSON has no
    word for (a TOML date): its text would be ambiguous."""
    if stop is None or not isinstance(state_dir, str):
        return None
    try:
        text = json.dumps(data, sort_keys=True)
    except (TypeError, ValueError):
        return None
    digest = hashlib.sha256(f"{stamp(rules)}\0{text}".encode()).hexdigest()
    return stop / state_dir / "cache" / f"{PREFIX}{digest}"


def stamp(rules: Sequence[str]) -> str:
    """What validation depends on: the package's version, the modules ``rules`` holding the
    rules and the installed pydantic (size and time of each), so an upgrade or an edited
    install validates again."""
    version = getattr(sys.modules[__name__.partition(".")[0]], "__version__", "")
    files = [Path(str(sys.modules[name].__file__)) for name in rules]
    spec = importlib.util.find_spec("pydantic")
    if spec is not None and spec.origin is not None:
        files.append(Path(spec.origin).with_name("version.py"))
    stamps = []
    for file in files:
        with contextlib.suppress(OSError):
            info = file.stat()
            stamps.append(f"{file.name}:{info.st_size}:{info.st_mtime_ns}")
    return f"{version} {' '.join(stamps)}"


def note(marker: Path) -> None:
    """Leave ``marker`` (and no older one) when the state folder is there to hold it: one the
    tool made, with its ``.gitignore`` of ``*``, so nothing is written in a folder of the
    user's."""
    from ..statefile import GITIGNORE, when_made, write_atomic

    try:
        if (marker.parent.parent / ".gitignore").read_text(encoding="utf-8") != GITIGNORE:
            return  # not a state folder the tool made
    except (OSError, UnicodeDecodeError):
        when_made(marker.parent.parent, lambda: note(marker))  # this run makes it
        return
    try:
        marker.parent.mkdir(exist_ok=True)
        for old in marker.parent.glob(f"{PREFIX}*"):
            if old != marker:
                old.unlink(missing_ok=True)
        write_atomic(marker, b"")
    except OSError:
        pass  # an unwritable cache only costs the next run a validation
