"""A pytest plugin for re-runs:
``-p pytest_boundedreview.baseline.reruns.recorder --bounded-review-record=DIR``.

It runs only the node ids listed in ``DIR/select.json`` (``{"nodeids": [...], "files":
[...]}``), and every test of the files or folders under ``"whole"``, and writes every outcome
with its failure signature to ``DIR/result.json``; for the paths under ``"listing"`` it also
writes every test a session started in the rootdir collects there, after the selection of
every other plugin (``"listed"``). The folder is the tool's own temporary folder.

With ``--bounded-review-wait`` the child is started before its node ids are known: it starts
pytest, loads the plugins and the conftest files of the paths it was given, lists at once the
tests it collects from the paths in ``DIR/list.json`` (when the starter wrote one), waits for
``select.json`` to appear, then collects the files listed there. It ends when the process that
started it, or its folder, is gone. Once its result is written it ends at once: its starter
reads the result and ends it anyway, so what would follow (other plugins' summaries, pytest's
exit) is not spent.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from ...core.redaction import Redactor
from ..checkout import basefirst, pycache
from ..failures.outcomes import OutcomeCollector, SignatureStamp
from ..failures.signature import checkout_root

SELECT = "select.json"
LIST = "list.json"  # paths a waiting child lists before it waits
RESULT = "result.json"
READY = "ready"  # the result and the reports are written; what follows is the child's exit
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


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """In a copy of the repository, before pytest loads the conftest files of the paths it was
    given: their rewritten modules from the working tree (see pycache.py)."""
    folder = early_config.known_args_namespace.bounded_review_record
    if folder:
        root = early_config.rootpath
        paths = [
            root / str(a).split("::", 1)[0] for a in early_config.known_args_namespace.file_or_dir
        ]
        _give_bytecode(folder, early_config, pycache.conftests(root, paths or [root]))


def _give_bytecode(folder: str, config: pytest.Config, files: Iterable[Path]) -> None:
    """In a copy of the repository with the working tree's pytest configuration: ``files``
    given their rewritten modules from the working tree (see pycache.py)."""
    copy = _giving_copy(folder, config.rootpath, config.inipath)
    if copy is not None:
        pycache.give(*copy, files)


@functools.cache  # asked before the conftests load and again once the files are known
def _giving_copy(folder: str, rootdir: Path, inipath: Path | None) -> tuple[Path, Path] | None:
    """The working tree and the copy this re-run runs in, when the copy may be given the
    working tree's rewritten modules: its pytest configuration is the working tree's."""
    copy = basefirst.copy_of(folder)
    if copy is None or not pycache.same_configuration(*copy, rootdir, inipath):
        return None
    return copy


def _selection(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / SELECT).read_text(encoding="utf-8"))
    return data


def _await_selection(folder: Path) -> dict[str, Any]:
    """Wait for this child's node ids; exit when its starter or its folder is gone."""
    starter = os.getppid()
    while not (folder / SELECT).exists():
        if os.getppid() != starter:
            os._exit(3)  # orphaned: nobody will ever read the result
        if not folder.is_dir():
            os._exit(3)  # removed under it: no selection will ever come, nor a result go
        time.sleep(POLL_SECONDS)
    return _selection(folder)


def _conftests_pending_again(session: pytest.Session) -> None:
    """After a collection whose nodes are thrown away (the listing): pytest 9.1 and later
    give a conftest's fixtures to the folder node that first collects it, and only that
    once, so the next collection's nodes would see none of them. Each conftest under the
    rootdir is made pending again, for the next collection to give to its own nodes (the
    rootdir's conftest and those above it belong to the session, and stay visible)."""
    pending = getattr(getattr(session, "_fixturemanager", None), "_pending_conftests", None)
    if not isinstance(pending, dict):  # older pytest: fixtures are found by node id
        return
    root = session.config.rootpath
    for name, plugin in session.config.pluginmanager.list_name_plugin():
        if name and name.endswith("conftest.py"):
            folder = Path(os.path.abspath(name)).parent
            if folder != root and folder.is_relative_to(root):
                pending[folder] = plugin


def _within(nodeid: str, paths: tuple[str, ...]) -> bool:
    """Whether ``nodeid`` is a test of one of the files or folders ``paths``."""
    file = nodeid.split("::", 1)[0]
    return any(file == p or file.startswith(p.rstrip("/") + "/") for p in paths)


class Recorder:
    def __init__(self, folder: Path, root: Path, waiting: bool, redactor: Redactor) -> None:
        self.folder = folder
        self.waiting = waiting
        self.wanted: set[str] = set()
        self.whole: tuple[str, ...] = ()
        self.listing: list[str] = []
        self.found: set[str] = set()
        self.listed: list[str] = []
        self._only: list[Path] | None = None  # while listing: the paths the listing keeps
        self.collector = OutcomeCollector(root, redactor)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session: pytest.Session) -> None:
        if self.waiting and (self.folder / LIST).exists():  # list while the starter runs
            self._list(session, json.loads((self.folder / LIST).read_text(encoding="utf-8")))
        selection = _await_selection(self.folder) if self.waiting else _selection(self.folder)
        self.wanted = set(selection["nodeids"])
        self.whole = tuple(selection.get("whole", ()))
        self._list(session, list(selection.get("listing", ())))
        session.config.args = selection["files"]
        root = session.config.rootpath
        files = [root / f for f in selection["files"] if f.endswith(".py")]
        _give_bytecode(str(self.folder), session.config, [*files, *pycache.conftests(root, files)])

    def _list(self, session: pytest.Session, paths: list[str]) -> None:
        """List the tests collected from ``paths`` (relative to the rootdir, the working
        folder) as a session started in the rootdir collects them: its ignores, its
        ``norecursedirs`` and its ``python_files`` apply, as they do not to a path given."""
        only = [Path(p).resolve() for p in paths if Path(p).exists()]
        if not only:
            return
        self._only = only
        try:
            session.perform_collect(["."])
        finally:
            self._only = None
            _conftests_pending_again(session)

    @pytest.hookimpl(tryfirst=True)
    def pytest_ignore_collect(self, collection_path: Path) -> bool | None:
        """While listing: leave out what lies neither within nor on the way to a path
        listed; the project's own rules decide the rest."""
        if self._only is None:
            return None
        path = collection_path.resolve()
        keep = any(path.is_relative_to(o) or o.is_relative_to(path) for o in self._only)
        return None if keep else True

    @pytest.hookimpl(trylast=True)  # after every other plugin's selection
    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        if self._only is not None:
            self.listed += [item.nodeid for item in items]
            items[:] = []  # this collection only lists: the selection collects again
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            wanted = item.nodeid in self.wanted or _within(item.nodeid, self.whole)
            (keep if wanted else drop).append(item)
        self.found = {item.nodeid for item in keep}
        if drop:
            config.hook.pytest_deselected(items=drop)
        items[:] = keep

    def pytest_sessionfinish(self, exitstatus: int) -> None:
        result = {
            "found": sorted(self.found),
            "failed": {n.nodeid: sorted(n.failures) for n in self.collector.failed},
            "passed": sorted(self.collector.passed),
            "listed": sorted(self.listed),
        }
        redirect = sys.modules.get(basefirst.MODULE)  # running in a copy: say what ran live
        if redirect is not None:
            redirect.report_now()
        (self.folder / RESULT).write_text(json.dumps(result), encoding="utf-8")
        if exitstatus in _ENDED:  # all is written: the starter reads it, and ends this
            (self.folder / READY).touch()
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(int(exitstatus))


# A session that ran to its end (tests failed or not, or none collected); one interrupted,
# stopped by pytest.exit or broken says so by its exit status, which its starter waits for.
_ENDED = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.NO_TESTS_COLLECTED)


def pytest_configure(config: pytest.Config) -> None:
    folder = config.getoption("bounded_review_record")
    if not folder:
        return
    root = checkout_root(config.rootpath)
    # The session's environment, as the re-run was given it: the same secrets are scrubbed
    # here as in the session, so its signatures compare with the session's.
    redactor = Redactor(os.environ)
    config.pluginmanager.register(SignatureStamp(root, redactor), "bounded-review-stamp")
    if not hasattr(config, "workerinput"):  # workers stamp; the controller records
        waiting = config.getoption("bounded_review_wait")
        recorder = Recorder(Path(folder), root, waiting, redactor)
        config.pluginmanager.register(recorder.collector, "bounded-review-collector")
        config.pluginmanager.register(recorder, "bounded-review-recorder")
