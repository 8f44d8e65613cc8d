"""What a re-run's pytest child is given beyond its node ids: its environment, the session's
options moved into the checkout it runs in, and whether it knows xdist's ``-n``."""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import os
import shlex
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ...change import git
from ...core.pytestconfig.pytestini import addopts_at


def moved(args: Sequence[str], old_root: Path, new_root: Path) -> list[str]:
    """``args`` with absolute paths inside ``old_root`` moved to ``new_root`` (the base
    checkout), including ``--option=/path`` forms."""

    def move(text: str) -> str:
        prefix, _, value = text.rpartition("=") if text.startswith("-") else ("", "", text)
        path = Path(value)
        if path.is_absolute() and path.is_relative_to(old_root):
            value = str(new_root / path.relative_to(old_root))
        return f"{prefix}={value}" if prefix else value

    return [move(arg) for arg in args]


def child_env(
    extra_path: Iterable[Path] = (),
    mapping: tuple[Path, Path] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The session's environment (``environ``, else the process's) without ``GIT_*``;
    ``extra_path`` goes first on PYTHONPATH and entries inside ``mapping[0]`` are moved to the
    same place inside ``mapping[1]``."""
    env = git.without_git_variables(os.environ if environ is None else environ)
    entries = [str(p) for p in extra_path]
    for entry in filter(None, env.get("PYTHONPATH", "").split(os.pathsep)):
        if mapping is not None:
            with contextlib.suppress(ValueError):
                entry = str(mapping[1] / Path(entry).resolve().relative_to(mapping[0].resolve()))
        entries.append(entry)
    if entries:
        env["PYTHONPATH"] = os.pathsep.join(entries)
    return env


def disabled(plugin: str, args: Sequence[str], env: Mapping[str, str]) -> bool:
    """Whether the session's options (or ``PYTEST_ADDOPTS``) turn ``plugin`` off."""
    tokens = [*args, *shlex.split(env.get("PYTEST_ADDOPTS", ""))]
    off = f"no:{plugin}"
    return any(
        t == f"-p{off}" or (t == "-p" and i + 1 < len(tokens) and tokens[i + 1] == off)
        for i, t in enumerate(tokens)
    )


def has_terminal(args: Sequence[str], env: Mapping[str, str], rootdir: Path) -> bool:
    """Whether a child given ``args`` and ``env`` in ``rootdir`` knows the terminal plugin's
    options (``-q``, ``--tb``): not with ``-p no:terminal``, which a re-run repeats."""
    return not disabled("terminal", [*addopts_at(rootdir), *args], env)


def loads_xdist(args: Sequence[str], env: Mapping[str, str], rootdir: Path) -> bool:
    """Whether a child given ``args`` and ``env`` in ``rootdir`` has pytest-xdist (and so
    knows ``-n``): installed, not turned off (by the options, ``PYTEST_ADDOPTS`` or the
    configuration file's ``addopts``), and loaded, by plugin autoload or else by name."""
    if importlib.util.find_spec("xdist") is None:
        return False
    if disabled("xdist", [*addopts_at(rootdir), *args], env):
        return False
    if not env.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD"):
        return True
    tokens = [*args, *shlex.split(env.get("PYTEST_ADDOPTS", ""))]
    named = [t[2:] for t in tokens if t.startswith("-p") and len(t) > 2]
    named += [after for t, after in itertools.pairwise(tokens) if t == "-p"]
    named += env.get("PYTEST_PLUGINS", "").split(",")
    return any(name.strip().startswith("xdist") for name in named)


def configured_in(rootdir: Path, copy_of: tuple[Path, Path] | None) -> Path:
    """Where the child's configuration file can be read now: its rootdir, or, when that is a
    copy still to be made, the same folder of the live repository."""
    if rootdir.exists() or copy_of is None:
        return rootdir
    live, copy = copy_of
    try:
        return live / rootdir.relative_to(copy)
    except ValueError:
        return rootdir
