"""Each test's call as it happened, seen where the test runs (the session's process or an xdist
worker), to be held against what was reported of it.

After collection every test function is wrapped in place (``item.obj``): the wrapper notes that
it was called and whether it returned or raised, and hides itself from tracebacks. A test's
teardown report carries what the wrapper saw of its call (:data:`STAMP`), so the controller
compares it with the outcome it counted (witnessed.py). Whatever runs the test in pytest's
stead, swallows its exception or edits its report leaves the wrapper uncalled, or its raise on
record under a reported pass.

Only what can be wrapped without changing its kind is wrapped: a plain function or method. A
coroutine or async generator function (run by an async plugin), a ``unittest`` case (run by
unittest, not through ``item.obj``), a doctest or any other kind of item, and a test class
whose ``runtest`` an installed plugin defines, are not observed: their teardown says so.
"""

from __future__ import annotations

import functools
import inspect
import sys
import unittest
from collections.abc import Callable, Generator
from pathlib import Path
from types import FunctionType, MethodType

import pytest

from . import suspects

STAMP = "bounded_review_ran"  # on a teardown report: what the test's call did
KEY = "bounded_review_suspects"  # in an xdist worker's output: code that runs or reports tests
# What a call did, as a stamp says it: the first three, or a prefix and the exception's type.
RETURNED = "returned"
NOT_CALLED = "not-called"
UNOBSERVED = "unobserved"
SKIP = "skip"  # raised a skip: pytest reports the test skipped
XFAIL = "xfail:"  # raised under an xfail mark (or pytest.xfail()): may be reported xfailed
RAISED = "raised:"  # raised anything else: the test failed
_CALLING = "calling"
WATCHED = pytest.StashKey[bool]()


def _raised(exc: BaseException) -> str:
    if isinstance(exc, (pytest.skip.Exception, unittest.SkipTest)):
        return SKIP
    if isinstance(exc, pytest.xfail.Exception):
        return XFAIL + type(exc).__name__
    return RAISED + type(exc).__name__


# Code of a coroutine, generator or async generator function: not a plain call.
_NOT_PLAIN = inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE | inspect.CO_GENERATOR
_NOT_PLAIN |= inspect.CO_ASYNC_GENERATOR


def _watchable(item: pytest.Item, cases: tuple[type, ...]) -> bool:
    """Whether ``item``'s test function can be wrapped without changing what runs it
    (``cases``: the item classes unittest runs)."""
    if not isinstance(item, pytest.Function) or isinstance(item, cases):
        return False
    try:
        if not suspects.runs_through_obj(type(item).runtest):  # an installed plugin's own
            return False
    except TypeError:  # a runtest that cannot be a key: no plugin's, so the project's
        pass
    test = item.obj
    kind = type(test)
    function = test.__func__ if kind is MethodType else test if kind is FunctionType else None
    if function is None or function.__code__.co_flags & _NOT_PLAIN:
        return False
    # marked as coroutine functions by hand (inspect.markcoroutinefunction, older asyncio)
    return not (hasattr(function, "_is_coroutine_marker") or hasattr(function, "_is_coroutine"))


def _unittest_cases() -> tuple[type, ...]:
    module = sys.modules.get("_pytest.unittest")  # loaded with pytest unless turned off
    case = getattr(module, "TestCaseFunction", None)
    return (case,) if isinstance(case, type) else ()


def _watched(
    test: Callable[..., object], nodeid: str, seen: dict[str, str]
) -> Callable[..., object]:
    """``test`` wrapped: each call noted in ``seen[nodeid]``, a raise kept over a later
    return within one run. The wrapper has the test's globals: pytest evaluates a string
    condition (``skipif("name is None")``) in ``item.obj.__globals__``."""
    raised, calling, returned = _raised, _CALLING, RETURNED  # cells, not this module's globals

    def watched(*args: object, **kwargs: object) -> object:
        __tracebackhide__ = True
        if seen.get(nodeid, returned) in (returned, calling):  # a raise in this run stays
            seen[nodeid] = calling
        try:
            result = test(*args, **kwargs)
        except BaseException as exc:
            seen[nodeid] = raised(exc)
            raise
        if seen.get(nodeid) == calling:
            seen[nodeid] = returned
        return result

    namespace = getattr(test, "__globals__", None)
    if isinstance(namespace, dict):
        code, closure = watched.__code__, watched.__closure__
        watched = FunctionType(code, namespace, watched.__name__, None, closure)
    # update_wrapper copies the function's attributes (Hypothesis's, marks) and sets
    # __wrapped__, which pytest follows for the test's location and traceback.
    return functools.update_wrapper(watched, test)


class Witness:
    """Where tests run: wraps their functions and stamps each teardown report."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: dict[str, str] = {}  # node id -> what its call did in this run
        self._calls: dict[str, pytest.TestReport] = {}  # the call report logged here
        self._odd: set[type] = set()  # classes of tests whose report here did not match
        # the code behind each mismatch, read when it was seen: a fixture's monkeypatch is
        # undone by the end of the test, a hook may be unregistered by the end of the session
        self._found: set[suspects.Suspect] = set()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        seen, cases = self._seen, _unittest_cases()
        for item in session.items:
            if _watchable(item, cases):
                assert isinstance(item, pytest.Function)
                try:
                    item.obj = _watched(item.obj, item.nodeid, seen)
                except AttributeError:  # a test class whose obj cannot be set: not observed
                    continue
                item.stash[WATCHED] = True

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        when = call.when
        if when == "setup":
            self._seen.pop(item.nodeid, None)  # this run's call starts uncalled
        elif when == "call" and item.stash.get(WATCHED, False):
            seen = self._seen.get(item.nodeid, NOT_CALLED)
            # a report made while the call is still running is a subtest's, not the test's:
            # the test's own is checked here once its call is over, and again at teardown
            if seen != _CALLING:
                self._check(item, report, seen)
        elif when == "teardown":
            setattr(report, STAMP, self._stamp(item))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and getattr(report, "context", None) is None:
            self._calls[report.nodeid] = report  # read at teardown, as the last hook left it

    def _stamp(self, item: pytest.Item) -> str:
        nodeid = item.nodeid
        logged = self._calls.pop(nodeid, None)
        if not item.stash.get(WATCHED, False):
            return UNOBSERVED
        seen = self._seen.pop(nodeid, NOT_CALLED)
        if seen == _CALLING:  # the call never came back: it was left by a jump
            seen = NOT_CALLED
        if seen.startswith(RAISED) and item.get_closest_marker("xfail") is not None:
            seen = XFAIL + seen.removeprefix(RAISED)
        if logged is not None:
            self._check(item, logged, seen)
        return seen

    def _check(self, item: pytest.Item, report: pytest.TestReport, seen: str) -> None:
        """Names the code in reach of ``item`` now if ``report`` differs from its call
        (``seen``); the controller decides what the difference means."""
        if seen == _CALLING:
            seen = NOT_CALLED
        if seen.startswith(RAISED) and item.get_closest_marker("xfail") is not None:
            seen = XFAIL
        if (report.passed and seen != RETURNED) or (report.skipped and seen.startswith(RAISED)):
            self._odd.add(type(item))
            config = item.config
            self._found.update(
                suspects.found(config.pluginmanager, [type(item)], self.root, [item])
            )

    @pytest.hookimpl(tryfirst=True)  # before an xdist worker hands its output over
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        output = getattr(session.config, "workeroutput", None)
        if isinstance(output, dict) and self._odd:
            found = self.suspects(session.config)
            output[KEY] = [list(s) for s in found]

    def suspects(self, config: pytest.Config) -> list[suspects.Suspect]:
        """The project's code in this process that runs or reports tests: as it was when a
        report differed from its call, and as it is now."""
        now = suspects.found(config.pluginmanager, self._odd, self.root)
        return sorted({*self._found, *now})
