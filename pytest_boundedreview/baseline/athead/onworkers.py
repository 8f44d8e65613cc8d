"""The flaky check's first re-run at head on the xdist workers that ran the failures.

Under xdist the controller holds no tests to run again, but the worker that ran a failing test
has it at hand. When the session asks (``pytest_configure_node`` puts a cap in each worker's
input), a worker marks each failing report of a test it can re-run in its own process (see
inprocess.py), re-runs those tests once as its session ends, and hands the controller which
of them passed. The controller starts a pytest child only for failures no worker re-runs: a
test that logs reports of its own, a file that failed to collect, a test whose worker died.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence

import pytest

from ..failures.outcomes import COMPLETED
from .inprocess import Rerunner, partly, passing_here, self_logging

ASKED = "bounded_review_head_reruns"  # in a worker's input: how many, and in how long
ANSWER = "bounded_review_head_reran"  # in its output: what it re-ran, and what passed
MARK = "bounded_review_rerun_on_worker"  # on a failing report: its worker re-runs the test


def rerun_on_worker(report: pytest.TestReport | pytest.CollectReport) -> bool:
    """Whether the worker that sent ``report`` re-runs its test."""
    return getattr(report, MARK, False) is True


def asked(workerinput: Mapping[str, object]) -> WorkerReruns | None:
    """What the controller asked of this worker, if it asked for re-runs at head."""
    asking = workerinput.get(ASKED)
    if not isinstance(asking, dict):
        return None
    cap, timeout = asking.get("cap"), asking.get("timeout")
    if not isinstance(cap, int) or cap <= 0 or not isinstance(timeout, (int, float)):
        return None
    return WorkerReruns(cap, float(timeout))


class WorkerReruns:
    """On an xdist worker the session asked: re-runs the worker's failures as it ends."""

    def __init__(self, cap: int, timeout: float) -> None:
        self.cap = cap  # more failures than this are not classified: nothing re-runs
        self.timeout = timeout  # for all of them, as a re-run in a child has
        self._items: dict[str, pytest.Item] = {}
        self._failing: dict[str, pytest.Item] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self._items = {item.nodeid: item for item in session.items}

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.failed and self._items.get(item.nodeid) is item and not self_logging(item):
            self._failing[item.nodeid] = item
            setattr(report, MARK, True)
        return report

    @pytest.hookimpl(tryfirst=True)  # before the worker hands its output over
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        output = getattr(session.config, "workeroutput", None)
        failing = list(self._failing.values())
        if not isinstance(output, dict) or not failing or len(failing) > self.cap:
            return
        if exitstatus not in COMPLETED or session.shouldfail or session.shouldstop:
            return  # the session was stopped (-x, --maxfail): the review will not classify
        passed = passing_here(failing, self.timeout)
        output[ANSWER] = {"ran": [item.nodeid for item in failing], "passed": sorted(passed)}


class WorkerAnswers:
    """On the controller: asks the workers to re-run their failures, and keeps their answers
    for the flaky check's first re-run at head."""

    def __init__(self, cap: int, timeout: float) -> None:
        self.cap = cap  # 0: the session re-runs nothing at head
        self.timeout = timeout
        self._ran: set[str] = set()
        self._failed: set[str] = set()  # failed again on some worker (under --dist each)
        self._passed: set[str] = set()
        self._used = False

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: object) -> None:
        workerinput = getattr(node, "workerinput", None)
        if self.cap > 0 and isinstance(workerinput, dict):
            workerinput[ASKED] = {"cap": self.cap, "timeout": self.timeout}

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        output = getattr(node, "workeroutput", None)
        answer = output.get(ANSWER) if isinstance(output, dict) else None
        if not isinstance(answer, dict):
            return
        ran, passed = set(answer.get("ran", ())), set(answer.get("passed", ()))
        self._ran |= ran
        self._passed |= passed
        self._failed |= ran - passed

    def _answer(self, nodeids: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
        """The workers' re-runs answer the first re-run at head only."""
        if self._used:
            return frozenset(), frozenset()
        self._used = True
        found = frozenset(n for n in nodeids if n in self._ran)
        return found, found.intersection(self._passed).difference(self._failed)

    def rerunner(self, rest: Rerunner) -> Rerunner:
        """A re-runner answering from the workers' re-runs first, the rest through ``rest``."""
        return partly(self._answer, rest)
