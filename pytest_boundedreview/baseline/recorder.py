"""A pytest plugin for re-runs:
``-p pytest_boundedreview.baseline.recorder --bounded-review-record=DIR``.

It runs only the node ids listed in ``DIR/select.json`` (``{"nodeids": [...], "files":
[...]}``), and every test of the files under ``"whole"``, and writes every outcome with its
failure signature to ``DIR/result.json``; with ``"listing": true`` it also writes every test
the session collected, after the selection of every other plugin (``"listed"``). The folder is
the tool's own temporary folder.

With ``--bounded-review-wait`` the child is started before its node ids are known: it starts
pytest, loads the plugins and the conftest files of the paths it was given, lists at once the
tests it collects from the paths in ``DIR/list.json`` (when the starter wrote one), waits for
``select.json`` to appear, then collects the files listed there. It ends when the process that
started it is gone.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from .outcomes import OutcomeCollector, SignatureStamp
from .signature import checkout_root

SELECT = "select.json"
LIST = "list.json"  # paths a waiting child lists before it waits
RESULT = "result.json"
POLL_SECONDS = 0.005


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bounded-review-record", default=None, help=argparse.SUPPRESS)
    parser.addoption(
        "--bounded-review-wait", action="store_true", default=False, help=argparse.SUPPRESS
    )
    # The re-run points the cache at its own folder with `-o cache_dir=`; with the cache
    # plugin disabled (-p no:cacheprovider) that key would be unknown, and a project with
    # --strict-config or filterwarnings = error would fail on it. Registered here as the
    # cache plugin registers it, the key is always known and means the same.
    parser.addini("cache_dir", "cache directory path.", default=".pytest_cache")


def _selection(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / SELECT).read_text(encoding="utf-8"))
    return data


def _await_selection(folder: Path) -> dict[str, Any]:
    """Wait for this child's node ids; exit when its starter is gone."""
    starter = os.getppid()
    while not (folder / SELECT).exists():
        if os.getppid() != starter:
            os._exit(3)  # orphaned: nobody will ever read the result
        time.sleep(POLL_SECONDS)
    return _selection(folder)


class Recorder:
    def __init__(self, folder: Path, root: Path, waiting: bool) -> None:
        self.folder = folder
        self.waiting = waiting
        self.wanted: set[str] = set()
        self.whole: tuple[str, ...] = ()
        self.listing = False
        if not waiting:
            self._choose(_selection(folder))
        self.found: set[str] = set()
        self.listed: list[str] = []
        self._listing_only = False  # the collection that lists before the wait
        self.collector = OutcomeCollector(root)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        if self.waiting:
            if (self.folder / LIST).exists():  # list while the starter's session runs
                self.listing = self._listing_only = True
                listed = json.loads((self.folder / LIST).read_text(encoding="utf-8"))
                paths = [path for path in listed if Path(path).exists()]  # (cwd: the rootdir)
                try:
                    session.perform_collect(paths)
                finally:
                    self._listing_only = False
            selection = _await_selection(self.folder)
            self._choose(selection)
            session.config.args = selection["files"]

    def _choose(self, selection: dict[str, Any]) -> None:
        self.wanted = set(selection["nodeids"])
        self.whole = tuple(f"{path}::" for path in selection.get("whole", ()))
        self.listing = bool(selection.get("listing"))

    @pytest.hookimpl(trylast=True)  # after every other plugin's selection
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self.listing:
            self.listed += [item.nodeid for item in items]
        if self._listing_only:
            items[:] = []  # this collection only lists: the selection collects again
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            wanted = item.nodeid in self.wanted or item.nodeid.startswith(self.whole)
            (keep if wanted else drop).append(item)
        self.found = {item.nodeid for item in keep}
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_sessionfinish(self) -> None:
        result = {
            "found": sorted(self.found),
            "failed": {n.nodeid: sorted(n.failures) for n in self.collector.failed},
            "passed": sorted(self.collector.passed),
            "listed": sorted(self.listed),
        }
        (self.folder / RESULT).write_text(json.dumps(result), encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    folder = config.getoption("bounded_review_record")
    if not folder:
        return
    root = checkout_root(config.rootpath)
    config.pluginmanager.register(SignatureStamp(root), "bounded-review-stamp")
    if not hasattr(config, "workerinput"):  # workers stamp; the controller records
        recorder = Recorder(Path(folder), root, config.getoption("bounded_review_wait"))
        config.pluginmanager.register(recorder.collector, "bounded-review-collector")
        config.pluginmanager.register(recorder, "bounded-review-recorder")
