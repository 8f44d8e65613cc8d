"""A re-run in a copy of the repository imports the copy's code, and says what it did not.

The base re-run (and a reproduction at the snapshot) runs in a copy of the repository, but the
environment it inherits may point into the live repository: editable installs by ``.pth`` path
entries (setuptools compat and ``package-dir`` folders, hatchling, flit, pdm, uv), by meta path
finders (setuptools, ``editables``), by link trees (setuptools strict), or by symlinks. So the
child starts with a folder of ours first on ``PYTHONPATH`` whose ``sitecustomize`` (then the one
it replaced, if any) loads ``redirect.py`` from the tool's own file and installs it, before
anything but ``.pth`` files has run (see there); :func:`read` reads what the child reports.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from . import redirect
from .redirect import ENV, REPORT, WITHHELD

BOOT = "boot"
MODULE = "_bounded_review_redirect"  # the name redirect.py runs under in a re-run
_STUB = """\
# pytest-boundedreview: this re-run imports the code of the copy it runs in (see redirect.py).
import os, sys

_here = os.path.dirname(os.path.abspath(__file__))
_this = sys.modules["sitecustomize"]
try:
    _module = sys.modules.get({name!r})
    if _module is None:  # the tool's own file, and its bytecode cache
        from importlib.util import module_from_spec, spec_from_file_location

        _spec = spec_from_file_location({name!r}, {path!r})
        _module = sys.modules[_spec.name] = module_from_spec(_spec)
        _spec.loader.exec_module(_module)
    _module.install_from_environment()
finally:
    if _here in sys.path:
        sys.path.remove(_here)
    del sys.modules["sitecustomize"]
    try:
        import sitecustomize  # the one this folder stands in front of, if any
    except ImportError as exc:
        sys.modules["sitecustomize"] = _this  # the import of this module ends with it
        if exc.name != "sitecustomize":
            raise
"""


def prepare(
    folder: Path,
    live: Path,
    copy: Path,
    env: Mapping[str, str],
    withheld: Sequence[str] = (),
) -> dict[str, str]:
    """``env`` for a re-run recording into ``folder`` that runs in ``copy`` of the repository
    at ``live``: the boot folder (made here) first on ``PYTHONPATH``. A re-run started inside
    another keeps that one's redirect too. ``withheld``: the files (relative to ``live``) of
    compiled modules the copy was not given, whose imports in vain the re-run reports."""
    boot = folder / BOOT
    boot.mkdir()
    if withheld:
        (folder / WITHHELD).write_text(json.dumps(list(withheld)), encoding="utf-8")
    stub = _STUB.format(name=MODULE, path=str(Path(redirect.__file__).resolve()))
    (boot / "sitecustomize.py").write_text(stub, encoding="utf-8")
    prepared = dict(env)
    try:
        outer = json.loads(prepared.get(ENV, "[]"))
    except ValueError:
        outer = []
    keys = {"live", "copy", "record"}
    configs = [
        c
        for c in (outer if isinstance(outer, list) else [])
        if isinstance(c, dict) and c.keys() == keys and all(isinstance(v, str) for v in c.values())
    ]
    configs.append({"live": str(live), "copy": str(copy), "record": str(folder)})
    prepared[ENV] = json.dumps(configs)
    rest = prepared.get("PYTHONPATH", "")
    prepared["PYTHONPATH"] = os.pathsep.join(filter(None, [str(boot), rest]))
    return prepared


def copy_of(folder: str) -> tuple[Path, Path] | None:
    """The live repository and the copy of it that the re-run recording into ``folder`` (this
    process) runs in, as :func:`prepare` configured it; ``None`` when it runs in neither."""
    try:
        configs = json.loads(os.environ.get(ENV, "[]"))
    except ValueError:
        return None
    for config in configs if isinstance(configs, list) else ():
        if isinstance(config, dict) and config.get("record") == folder:
            live, copy = config.get("live"), config.get("copy")
            if isinstance(live, str) and isinstance(copy, str):
                return Path(live), Path(copy)
    return None


MAX_BYTES = 4 * 1024 * 1024


def _reports(folder: Path) -> Iterator[object]:
    """The reports of the re-run recording into ``folder`` and of the processes it started,
    each parsed (``None`` for one missing, too large or not JSON)."""
    for report in [folder / REPORT, *sorted(folder.glob("provenance-*.json"))]:
        try:
            text = report.read_bytes()
        except OSError:
            yield None
            continue
        try:
            yield json.loads(text) if len(text) <= MAX_BYTES else None
        except ValueError:
            yield None


def read(folder: Path) -> tuple[str, ...] | None:
    """``"module (file)"`` of each module the re-run recording into ``folder`` (and the
    processes it started) ran from the live repository; ``None`` when the re-run did not
    report (its redirect never started) or a report is not of this shape."""
    found: set[str] = set()
    for data in _reports(folder):
        live = data.get("live") if isinstance(data, dict) else None
        if not isinstance(live, list) or not all(_pair(item) for item in live):
            return None
        found.update(f"{name or '?'} ({file})" for name, file in live)
    return tuple(sorted(found))


def tried(folder: Path) -> tuple[str, ...]:
    """The withheld compiled modules (see :func:`prepare`) the re-run recording into
    ``folder`` tried to import and did not find."""
    found: set[str] = set()
    for data in _reports(folder):
        names = data.get("withheld") if isinstance(data, dict) else None
        if isinstance(names, list):
            found.update(name for name in names if isinstance(name, str))
    return tuple(sorted(found))


def _pair(item: object) -> bool:
    return isinstance(item, list) and len(item) == 2 and all(isinstance(s, str) for s in item)


def report_now() -> None:
    """Have this process's redirect (when it runs under one) write what it ran from the live
    repository so far: an xdist worker's before its controller reads it."""
    module = sys.modules.get(MODULE)
    if module is not None:
        module.report_now()


def ran_live(folder: Path) -> tuple[str, ...] | None:
    """``"module (file)"`` of each module this process and the processes it started (its
    workers, its re-runs) ran from the live repository, when they run in a copy of it under
    the redirect recording into ``folder``; ``None`` when this process runs under none."""
    module = sys.modules.get(MODULE)
    if module is None or str(folder) not in getattr(module, "_installed", ()):
        return None
    module.report_now()
    found: set[str] = set()
    for report in sorted(folder.glob("provenance*.json")):
        try:
            text = report.read_bytes()
            data = json.loads(text) if len(text) <= MAX_BYTES else None
        except (OSError, ValueError):
            data = None
        live = data.get("live") if isinstance(data, dict) else None
        if not isinstance(live, list) or not all(_pair(item) for item in live):
            return (f"? ({report.name}: unreadable)",)
        found.update(f"{name or '?'} ({file})" for name, file in live)
    return tuple(sorted(found))


class ReportAtEnd:
    """On an xdist worker of a session run in a copy: what it ran from the live repository,
    written as its session ends, before its controller reads it (see :func:`ran_live`)."""

    def pytest_sessionfinish(self) -> None:
        report_now()
