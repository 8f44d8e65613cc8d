"""Per-test outcomes with failure signatures, gathered from pytest's reports.

:class:`SignatureStamp` runs where tests run (the controller or an xdist worker) and stamps each
failing report with its signature; the stamp travels with the report to the controller.
:class:`OutcomeCollector` runs on the controller only and keeps, per node id, every failing
phase and subtest. Neither writes anything.

Both scrub what they take from a failure with a redactor of the environment the process had
when they were made (before any test changed it): the same secrets at head, on a worker and in
a re-run at the base, so a signature compares the same on both sides.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Generator
from dataclasses import field
from pathlib import Path

import pytest

from ...core.redaction import Redact
from ...models.record import record
from . import signature

STAMP = "bounded_review_signature"
# Set on a test while it re-runs in the session's own process (inprocess.py): only whether it
# passes counts there and its reports are never logged, so they take no signature.
RERUNNING = pytest.StashKey[bool]()
# A session whose tests ran to the end, failing or not: what the review classifies.
COMPLETED = (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)


@record
class NodeOutcome:
    """Everything that failed in one test (or one collected file), by phase and subtest."""

    nodeid: str
    failures: set[str] = field(default_factory=set)

    @property
    def signature(self) -> str:
        return " | ".join(sorted(self.failures))


class SignatureStamp:
    """Stamps failing test reports with their signature, where the exception is still alive."""

    def __init__(self, root: Path, redact: Redact) -> None:
        self.root = root
        self.redact = redact

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if report.outcome == "failed" and not item.stash.get(RERUNNING, False):
            if call.excinfo is not None:
                test = getattr(item, "obj", None) if isinstance(item, pytest.Function) else None
                stamp = signature.from_excinfo(call.excinfo, self.root, test, redact=self.redact)
            else:  # e.g. a strict xfail that passed
                longrepr = str(report.longrepr)
                stamp = "Failed: " + signature.normalise_message(longrepr, self.root, self.redact)
            setattr(report, STAMP, stamp)
        return report


def _plain(value: object) -> str:
    """A subtest argument as text. pytest stores ``repr(value)``, and once more on each
    (de)serialisation, so an xdist worker's report holds ``repr(repr(value))``: unwrap string
    literals until the value is not one, so both spell it the same."""
    text = str(value)
    while len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        try:
            inner = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            break
        if not isinstance(inner, str):
            break
        text = inner
    return text


def _label(report: pytest.TestReport | pytest.CollectReport, redact: Redact) -> str:
    """Which part of a test failed: the phase (unless the call) and the subtest, if any (its
    message and arguments scrubbed by ``redact``)."""
    parts = []
    when = getattr(report, "when", "collect")
    if when != "call":
        parts.append(when)
    context = getattr(report, "context", None)  # subtest reports carry their context
    if context is not None:
        kwargs = ", ".join(f"{k}={_plain(v)}" for k, v in sorted(context.kwargs.items()))
        said = f"{context.msg or ''}{' ' if context.msg and kwargs else ''}{kwargs}"
        parts.append(f"[{redact(said)}]")
    return (" ".join(parts) + ": ") if parts else ""


class OutcomeCollector:
    """Keeps every test's outcome; registered on the controller only. Only a failing test gets
    an object of its own; every other test is a string in a set. A passing test's three reports
    take the shortest path: this runs for every report of every test."""

    def __init__(self, root: Path, redact: Redact) -> None:
        self.root = root
        self.redact = redact
        self.seen: set[str] = set()  # every node id a report named
        self.passed_calls: set[str] = set()  # tests whose call phase passed (outside subtests)
        self.failing: dict[str, NodeOutcome] = {}
        self.skipped_modules: set[str] = set()  # files skipped whole at collection
        self.skipped: set[str] = set()  # tests skipped or xfailed, at set-up or in their call
        self.collected: set[str] = set()  # the tests the session was to run, after selection
        # tests that ran: their call reported, whatever its outcome, or a phase failed (a test
        # skipped before its call did not run)
        self.ran: set[str] = set()
        self.finished: set[str] = set()  # tests whose teardown reported: they ran to the end
        # told of every report that did not pass (a test's or a file's collection), first
        self.on_unpassed: Callable[[pytest.TestReport | pytest.CollectReport], None] | None = None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected.update(item.nodeid for item in session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: object, ids: list[str]) -> None:
        """Under xdist the controller collects nothing: each worker names what it collected
        (after its own selection)."""
        self.collected.update(ids)

    def _fail(self, nodeid: str, failure: str) -> None:
        node = self.failing.get(nodeid)
        if node is None:
            node = self.failing[nodeid] = NodeOutcome(nodeid)
        node.failures.add(failure)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        self.seen.add(nodeid)
        when = report.when
        if report.outcome == "passed":
            if when == "call":
                self.ran.add(nodeid)
                if getattr(report, "context", None) is None:  # not a subtest's report
                    self.passed_calls.add(nodeid)
            elif when == "teardown":
                self.finished.add(nodeid)
            return
        if self.on_unpassed is not None:
            self.on_unpassed(report)
        if when == "call" or report.failed:
            self.ran.add(nodeid)
        if when == "teardown":
            self.finished.add(nodeid)
        elif report.skipped:
            self.skipped.add(nodeid)
        if report.failed:
            stamp = getattr(report, STAMP, None) or signature.normalise_message(
                str(report.longrepr), self.root, self.redact
            )
            self._fail(nodeid, _label(report, self.redact) + stamp)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.outcome != "passed" and self.on_unpassed is not None:
            self.on_unpassed(report)
        if report.skipped and report.nodeid and "::" not in report.nodeid:
            self.skipped_modules.add(report.nodeid)  # a file skipped whole at collection
        if report.failed:
            self.seen.add(report.nodeid)
            longrepr = str(report.longrepr)
            stamp = signature.from_text(longrepr, report.nodeid, self.root, self.redact)
            self._fail(report.nodeid, _label(report, self.redact) + stamp)

    @property
    def failed(self) -> list[NodeOutcome]:
        return list(self.failing.values())

    @property
    def unreported(self) -> list[str]:
        """Tests collected to run that never reported their end: no teardown, and no failure
        either (xdist reports a test whose worker crashed as failed, without a teardown)."""
        return sorted(self.collected.difference(self.finished, self.failing))

    @property
    def passed(self) -> set[str]:
        """The tests that passed: their call passed and no phase or subtest failed."""
        return self.passed_calls.difference(self.failing)
