"""The session's re-runs, on the controller, as a pytest plugin: the base re-run started at the
first question the base cache does not know (early.py), the re-run at head started at the
first failure only a pytest child can re-run (earlyhead.py), the xdist workers asked for their
re-runs at head (onworkers.py), and the classification begun as soon as every report is in
(classify.py), so that the base re-run runs while the other plugins end the session.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..change import git
from ..change.freeze import Target
from ..core.settings.config import Settings
from .athead.onworkers import WorkerAnswers, rerun_on_worker
from .classification import Classification, Questions
from .failures.outcomes import COMPLETED, OutcomeCollector
from .suite.wholeness import Project

if TYPE_CHECKING:
    from .asking import Asking
    from .atbase.early import EarlyBase
    from .athead.earlyhead import EarlyHead
    from .classify import Begun
    from .reruns.runspec import BaselineRun


class SessionReruns:
    """What one session re-runs at head and at the base, and when."""

    def __init__(
        self,
        config: pytest.Config,
        settings: Settings,
        repo: git.Repo,
        target: Target,
        collector: OutcomeCollector,
        project: Callable[[], Project],
        state: Path,
        progress: Callable[[str], None],
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.config, self.settings, self.repo, self.target = config, settings, repo, target
        self.collector = collector
        collector.on_unpassed = self._reported  # told of each report that did not pass
        # a session that reviews a change and runs tests: only one asks anything of the base
        self._asks = not (target.empty or config.option.collectonly)
        self._project, self._state, self._progress = project, state, progress
        # the xdist workers' re-runs at head, in the time a re-run in a child would have
        self.workers = WorkerAnswers(self._head_reruns_cap(), settings.base_timeout)
        self._items: list[pytest.Item] = []  # the session's tests, once it has finished
        self._collected: dict[str, pytest.Item] = {}  # the session's tests, by node id
        # The environment the session started with, before conftest files, the project's
        # modules (the change's among them) and the tests could set variables: the same for
        # every re-run, at the base and at head (see _base_run).
        self._environ = dict(os.environ if environ is None else environ)
        self._early: EarlyBase | None = None  # the base re-run started at the first cache miss
        self._head: EarlyHead | None = None  # a re-run at head in a new process, started early
        self._begun: Begun | BaseException | None = None  # the classification, under way
        self._at_base = contextlib.ExitStack()  # the base re-run it started, until it ends

    def _head_reruns_cap(self) -> int:
        """How many failures may be re-run at head (0: none is)."""
        if not self._asks or self.settings.reruns == 0:
            return 0
        return self.settings.max_base_reruns

    @functools.cached_property
    def asking(self) -> Asking:
        """What the session asks the base besides its failures (see asking.py)."""
        from .asking import Asking

        return Asking(self.config, self.settings, self.repo, self.target, self._project())

    @functools.cached_property
    def questions(self) -> Questions:
        """What the session asks the base besides its failures, once every report is in."""
        return self.asking.questions(self.collector)

    def replayable(self) -> list[str]:
        """The session's options that a re-run of some of its tests repeats, with its random
        seed (pytest-randomly's, when it ran)."""
        from .reruns.replay import replayable
        from .reruns.seeds import with_seed

        params = self.config.invocation_params
        replayed = replayable(params.args, self.config.args, params.dir)
        return with_seed(replayed, self.config.getoption("randomly_seed", None))

    @functools.cached_property
    def _base(self) -> BaselineRun:
        """The session's base run, made once: what it works out (how the base is made
        ready) is worked out once, for each of its copies."""
        from .reruns.runspec import BaselineRun

        config = self.config
        rootdir, args = Path(config.rootpath), self.replayable()
        run = BaselineRun.configured(
            self.repo, rootdir, self.target.base_commit, args, self.settings, self._state
        )
        given = config.invocation_params.dir
        paths = [Path(given, str(arg).split("::", 1)[0]).absolute() for arg in config.args]
        return dataclasses.replace(run, paths=paths)

    def _base_run(self) -> BaselineRun:
        """How to re-run tests at the base as this session ran them, in the environment it
        started with. Not the process's now: the change's conftest files and modules, imported
        by then, may have set variables that make the base behave as the change does; a fresh
        process at head is the session's own start again, and imports them itself."""
        return dataclasses.replace(self._base, environ=self._environ)

    def baseline_run(self) -> BaselineRun:
        """How to re-run tests as this session ran them, at head and at the base."""
        run = self._base_run()
        started_early = self._early.hand if self._early is not None else None
        if not self.collector.failed:  # nothing re-runs at head: its machinery stays out
            return dataclasses.replace(run, started_early=started_early)
        from .athead.inprocess import head_rerunner
        from .reruns.childenv import child_env
        from .reruns.rerun import rerun

        env = child_env(environ=run.environ)  # the session's: its PYTHONHASHSEED, if set
        in_a_new_process = partial(
            rerun, rootdir=run.rootdir, args=run.args, env=env, timeout=run.timeout
        )
        fresh = in_a_new_process
        if self._head is not None:  # the early child first, then the usual way
            fresh = partial(self._head.rerun, usual=in_a_new_process)
        return dataclasses.replace(
            run,
            rerun_at_head=head_rerunner(self._items, self.workers.rerunner(fresh), run.timeout),
            started_early=started_early,
        )

    @functools.cached_property
    def _known_at_base(self) -> set[str]:
        """The keys the base cache answers for this session's run."""
        return self._base_run().known()

    def _need(self, key: str) -> None:
        """The session needs the base's answer for ``key`` (a failed or skipped test, or a
        path, see classify.Questions): the base re-run may start now."""
        if not self._asks:
            return
        if self._early is None:
            if key in self._known_at_base:
                return  # the cache answers: the base re-run machinery is not even imported
            from .atbase.early import EarlyBase

            self._early = EarlyBase(self._base_run, self.asking.listing, self._known_at_base)
        self._early.needs(key)

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._collected = {item.nodeid: item for item in session.items}

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self) -> None:
        for key in self.asking.listing_keys():  # the base lists its collection while tests run
            self._need(key)

    def _reported(self, report: pytest.TestReport | pytest.CollectReport) -> None:
        """A test or a file's collection failed, or was skipped (the collector tells, before
        it notes the report): the base may be asked (and the re-run at head in a child
        start)."""
        key = report.nodeid if report.failed else self.asking.key_of_skipped(report)
        if key is not None:
            self._need(key)
        if report.failed and self._head_in_a_child(report):
            if self._head is None:
                from .athead.earlyhead import EarlyHead

                self._head = EarlyHead(self._base_run)
            self._head.needs()

    def _head_in_a_child(self, report: pytest.TestReport | pytest.CollectReport) -> bool:
        """Whether the flaky check re-runs ``report``'s test at head in a new pytest process:
        a collection error, a test that logs reports of its own (the ``subtests`` fixture;
        see inprocess.py), or under xdist one its worker does not re-run (see onworkers.py)."""
        if self.workers.cap == 0:
            return False
        if self.config.pluginmanager.has_plugin("dsession"):
            return not rerun_on_worker(report)
        from .athead.inprocess import self_logging

        item = self._collected.get(report.nodeid)
        return item is None or self_logging(item)

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        """Every report is in: the base re-run is handed its node ids now, and runs while the
        other plugins end the session (under xdist: while the workers shut down)."""
        self._items = session.items
        if exitstatus not in COMPLETED or not self._asks:
            return
        try:
            if self.collector.failed or self.questions:
                self._begun = self._begin()
        except BaseException as exc:  # raised where the review meets it (classification)
            self._begun = exc

    def _begin(self) -> Begun:
        from .classify import begin
        from .reruns.waits import told

        failed, run = self.collector.failed, self.baseline_run()
        with told(self._progress):  # a wait for the early child says what it waits for
            return begin(failed, run, self._progress, self._at_base, self.questions)

    def classification(self) -> Classification:
        """The session's failures re-run at head and at the base, and classified; its other
        questions answered at the base."""
        if not (self.collector.failed or self.questions):
            return Classification()
        from .classify import conclude
        from .reruns.waits import told

        begun, self._begun = self._begun, None
        try:
            if isinstance(begun, BaseException):
                raise begun
            with told(self._progress):  # each wait on a child says what it waits for
                concluded = conclude(begun or self._begin(), self._progress)
            return concluded.scrubbed(self.collector.redact)
        finally:  # its answers are in; the checks' base runs need its kept checkout free,
            # while without them the child stays for the lanes' reproductions at the base
            self._at_base.close()
            settings = self.settings
            if self._early is not None and settings.reuse_base_checkout and settings.checks:
                self._early.close()

    def close(self) -> None:
        """End what the session started early; safe to call more than once."""
        self._at_base.close()
        if self._early is not None:
            self._early.close()
        if self._head is not None:
            self._head.close()
