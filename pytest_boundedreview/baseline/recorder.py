"""A pytest plugin for re-runs:
``-p pytest_boundedreview.baseline.recorder --bounded-review-record=DIR``.

It runs only the node ids listed in ``DIR/select.json`` and writes every outcome with its
failure signature to ``DIR/result.json``. The folder is the tool's own temporary folder.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from .outcomes import OutcomeCollector, SignatureStamp
from .signature import checkout_root

SELECT = "select.json"
RESULT = "result.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--bounded-review-record", default=None, help=argparse.SUPPRESS)
    # The re-run points the cache at its own folder with `-o cache_dir=`; with the cache
    # plugin disabled (-p no:cacheprovider) that key would be unknown, and a project with
    # --strict-config or filterwarnings = error would fail on it. Registered here as the
    # cache plugin registers it, the key is always known and means the same.
    parser.addini("cache_dir", "cache directory path.", default=".pytest_cache")


class Recorder:
    def __init__(self, folder: Path, root: Path) -> None:
        self.folder = folder
        self.wanted = set(json.loads((folder / SELECT).read_text(encoding="utf-8")))
        self.found: set[str] = set()
        self.collector = OutcomeCollector(root)

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (keep if item.nodeid in self.wanted else drop).append(item)
        self.found = {item.nodeid for item in keep}
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_sessionfinish(self) -> None:
        result = {
            "found": sorted(self.found),
            "failed": {n.nodeid: sorted(n.failures) for n in self.collector.failed},
            "passed": sorted(self.collector.passed),
        }
        (self.folder / RESULT).write_text(json.dumps(result), encoding="utf-8")


def pytest_configure(config: pytest.Config) -> None:
    folder = config.getoption("bounded_review_record")
    if not folder:
        return
    root = checkout_root(config.rootpath)
    config.pluginmanager.register(SignatureStamp(root), "bounded-review-stamp")
    if not hasattr(config, "workerinput"):  # workers stamp; the controller records
        recorder = Recorder(Path(folder), root)
        config.pluginmanager.register(recorder.collector, "bounded-review-collector")
        config.pluginmanager.register(recorder, "bounded-review-recorder")
