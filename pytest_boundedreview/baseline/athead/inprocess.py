"""Re-run failing tests inside the finished session, when that is safe and cheaper than a new
pytest process: the items are at hand (the session's own, or an xdist worker's, see
onworkers.py) and they do not log reports of their own (the ``subtests`` fixture's do, which
would then show twice in the terminal and in other plugins' reports). A ``unittest`` test's
``subTest()`` results come through its item's ``addSubTest``: a re-run here makes their
reports as pytest does and keeps them, unlogged, for its verdict."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

import pytest
from _pytest.runner import runtestprotocol

from ..failures.outcomes import RERUNNING
from .deadline import OutOfTime, limited

if TYPE_CHECKING:  # imported when a re-run is composed: an xdist worker never needs it
    from ..reruns.rerun import RerunResult

Rerunner = Callable[[Sequence[str]], "RerunResult"]


def self_logging(item: pytest.Item) -> bool:
    """Whether ``item`` logs reports of its own, so it is re-run in a new process."""
    return "subtests" in getattr(item, "fixturenames", ())


def passing_here(items: Iterable[pytest.Item], timeout: float = 0) -> set[str]:
    """Run ``items`` once more in this process, unlogged, within ``timeout`` seconds in all
    (0: unlimited; see deadline.py): the node ids of those that pass."""
    passed: set[str] = set()
    end = time.monotonic() + timeout
    try:
        with limited(timeout):
            for item in items:
                if timeout and time.monotonic() > end:
                    break  # out of time: those left did not pass
                if _passes(item):
                    passed.add(item.nodeid)
    except OutOfTime:  # between two tests
        pass
    return passed


def _passes(item: pytest.Item) -> bool:
    # The session has torn every fixture down; nextitem=None tears this run down too.
    # Only pass or fail counts here: no traceback is rendered for a failure again.
    shown = getattr(item.config.option, "tbstyle", "auto")
    item.config.option.tbstyle = "no"
    item.stash[RERUNNING] = True  # nor is a signature taken
    try:
        with _subtests_kept(item) as subtests:
            reports = runtestprotocol(item, nextitem=None, log=False)
    finally:
        item.config.option.tbstyle = shown
        del item.stash[RERUNNING]
    ran = any(r.when == "call" and r.passed for r in reports)
    return ran and not any(r.failed for r in [*reports, *subtests])


@contextlib.contextmanager
def _subtests_kept(item: pytest.Item) -> Iterator[list[pytest.TestReport]]:
    """The reports of a ``unittest`` test's failed or skipped ``subTest()`` blocks while it
    re-runs, made by pytest's own hook as its ``addSubTest`` makes them, but not logged (an
    item whose class takes no subtest results is left as it is: unittest then reports a
    subtest's failure as the test's)."""
    kept: list[pytest.TestReport] = []
    # The errors a unittest item collects for its reports (pytest's TestCaseFunction): one
    # the first run left there (a test, its tearDown and a cleanup all raising) would be
    # taken by this run's first report.
    item.__dict__.pop("_excinfo", None)
    takes_subtests = callable(getattr(type(item), "addSubTest", None))

    def add_sub_test(case: object, test: object, exc_info: object) -> None:
        if exc_info is None:  # a block that passed
            return
        if not isinstance(exc_info, pytest.ExceptionInfo):
            exc_info = pytest.ExceptionInfo.from_exc_info(exc_info)  # type: ignore[arg-type]
        if isinstance(exc_info.value, OutOfTime):  # unittest caught the re-run's deadline
            raise exc_info.value
        call = pytest.CallInfo[None](
            None, exc_info, start=0, stop=0, duration=0, when="call", _ispytest=True
        )
        kept.append(item.ihook.pytest_runtest_makereport(item=item, call=call))

    if takes_subtests:
        item.addSubTest = add_sub_test  # type: ignore[attr-defined]  # the instance's, this run only
    try:
        yield kept
    finally:
        if takes_subtests:
            del item.addSubTest  # type: ignore[attr-defined]
        item.__dict__.pop("_excinfo", None)


def partly(
    answer: Callable[[Sequence[str]], tuple[frozenset[str], frozenset[str]]], rest: Rerunner
) -> Rerunner:
    """A re-runner whose ``answer`` says which node ids it re-ran and which of them passed;
    ``rest`` re-runs the others."""

    def run(nodeids: Sequence[str]) -> RerunResult:
        from ..reruns.rerun import RerunResult, merged

        found, passed = answer(nodeids)
        here = RerunResult(status="ok", found=found, passed=passed)
        elsewhere = [n for n in nodeids if n not in found]
        return merged(here, rest(elsewhere)) if elsewhere else here

    return run


def head_rerunner(items: Sequence[pytest.Item], fallback: Rerunner, timeout: float) -> Rerunner:
    """A re-runner that runs what it can in this process (within ``timeout`` seconds) and
    the rest through ``fallback``."""
    by_id = {item.nodeid: item for item in items}

    def here(nodeids: Sequence[str]) -> tuple[frozenset[str], frozenset[str]]:
        items = [by_id[n] for n in nodeids if n in by_id and not self_logging(by_id[n])]
        return frozenset(item.nodeid for item in items), frozenset(passing_here(items, timeout))

    return partly(here, fallback)
