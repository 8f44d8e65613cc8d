"""Who deselected which tests. pytest's ``pytest_deselected`` names the tests, not who left
them out, so the recorder asks the caller's frame: pytest's ``-k`` and ``-m`` (``_pytest.mark``),
``--deselect`` (``_pytest.main``), ``--lf``/``--sw`` (``_pytest.cacheprovider`` and
``_pytest.stepwise``), a conftest of the project, or another plugin. It runs where tests are
collected: the controller, or each xdist worker, which hands its record to the controller."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

WORKER_KEY = "bounded_review_deselected"  # what an xdist worker hands its controller
# Who left out the tests that were collected and then dropped from the session's items
# without pytest_deselected: a collection hook, which one cannot be told.
DROPPED = "a collection hook that dropped them without pytest_deselected"
_PYTEST_SOURCES = {
    ("_pytest.mark", "deselect_by_keyword"): "-k",
    ("_pytest.mark", "deselect_by_mark"): "-m",
    ("_pytest.main", "pytest_collection_modifyitems"): "--deselect",
}
_RERUN_PLUGINS = {"_pytest.cacheprovider": "--lf/--nf", "_pytest.stepwise": "--stepwise"}
# Frames of the whole baseline are passed over (this module's hook, the re-run recorder's
# deselection), not only this sub-package's.
_BASELINE = __name__.rsplit(".", 2)[0]


def caller(root: Path) -> str:
    """Who called ``pytest_deselected``: ``-k``, ``-m``, ``--deselect``, ``--lf/--nf``,
    ``--stepwise``, ``conftest <path>`` or ``local plugin <path>`` (code of the checkout
    ``root``, the path relative to it) or ``plugin <module>``."""
    frame = inspect.currentframe()
    while frame is not None:
        module = str(frame.f_globals.get("__name__", ""))
        if not module.startswith(("pluggy", _BASELINE)):
            break
        frame = frame.f_back
    if frame is None:
        return "plugin ?"
    module, function = str(frame.f_globals.get("__name__", "")), frame.f_code.co_name
    if (module, function) in _PYTEST_SOURCES:
        return _PYTEST_SOURCES[module, function]
    if module in _RERUN_PLUGINS:
        return _RERUN_PLUGINS[module]
    file = Path(frame.f_code.co_filename).resolve()
    if file.is_relative_to(root.resolve()) and not _installed(file):
        kind = "conftest" if file.name == "conftest.py" else "local plugin"
        return f"{kind} {file.relative_to(root.resolve()).as_posix()}"
    return f"plugin {module}"


def _installed(file: Path) -> bool:
    """Whether ``file`` is installed code (a virtualenv inside the repository)."""
    return "site-packages" in file.parts or "dist-packages" in file.parts


class Deselections:
    """The deselected tests of a session by who deselected them (see :func:`caller`)."""

    def __init__(self, root: Path) -> None:
        self.root = root  # the checkout
        self.by: dict[str, list[str]] = {}
        self.reported = False  # an xdist worker handed its record over
        self._collected: list[str] = []  # every test collected, before any selection

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.by.setdefault(caller(self.root), []).extend(item.nodeid for item in items)

    def pytest_itemcollected(self, item: pytest.Item) -> None:
        self._collected.append(item.nodeid)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        """Tests collected that are neither in the session's items nor deselected were
        dropped silently: count them as deselected."""
        kept = {item.nodeid for item in session.items} | set(self.ids)
        dropped = [nodeid for nodeid in dict.fromkeys(self._collected) if nodeid not in kept]
        if dropped:
            self.by.setdefault(DROPPED, []).extend(dropped)
        self._collected = []

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if isinstance(output, dict):  # on an xdist worker: hand the record over
            output[WORKER_KEY] = self.by

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        """An xdist worker ended: every worker collects the same tests, so its record joins
        the others' without counting a test twice."""
        output = getattr(node, "workeroutput", None)
        got = output.get(WORKER_KEY) if isinstance(output, dict) else None
        if isinstance(got, dict):
            self.reported = True
            for who, ids in got.items():
                known = self.by.setdefault(str(who), [])
                seen = set(known)
                known += [i for i in ids if i not in seen]

    @property
    def ids(self) -> list[str]:
        return sorted({i for ids in self.by.values() for i in ids})
