"""Base re-run results cached under the state folder.

The key is the base commit, the Python version, the installed distributions and the replayed
options: with all of those equal, a test's outcome at the base is already known. A cache file
that cannot be read or parsed is ignored (and later replaced), never trusted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from .statefile import write_atomic

FOLDER = "cache"


def environment_digest() -> str:
    """A digest of the interpreter and every installed distribution with its version.

    The ``*.dist-info``/``*.egg-info`` folder names on ``sys.path`` carry name and version;
    listing them is much cheaper than parsing every distribution's metadata.
    """
    names: set[str] = set()
    for entry in sys.path:
        with contextlib.suppress(OSError), os.scandir(entry or ".") as listing:
            names.update(
                item.name
                for item in listing
                if item.name.endswith((".dist-info", ".egg-info", ".pth"))
            )
    text = "\n".join([sys.version, sys.executable, *sorted(names)])
    return hashlib.sha256(text.encode()).hexdigest()


def cache_path(state: Path, base_commit: str, args: Sequence[str]) -> Path:
    key = json.dumps([base_commit, environment_digest(), list(args)])
    return state / FOLDER / f"base-{hashlib.sha256(key.encode()).hexdigest()[:32]}.json"


def load(path: Path) -> dict[str, dict[str, str]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {
        k: v
        for k, v in data.items()
        if isinstance(v, dict) and all(isinstance(x, str) for x in v.values())
    }


def store(path: Path, known: Mapping[str, Mapping[str, str]]) -> None:
    write_atomic(path, json.dumps(dict(sorted(known.items())), indent=1).encode())
