"""On the controller: what each test's call did (witness.py, from its teardown report) against
the outcome the session counted (outcomes.py), and the code that can explain a difference.

A test counted as passed whose call raised, skipped itself, was never called or left no record
of its call, and a test counted as skipped whose call raised with no xfail mark, was reported
otherwise than it ran. Only the outcome the session counts decides: it is what the review
classifies and what sets the exit status.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from pathlib import Path

import pytest

from . import suspects, witness
from .witness import NOT_CALLED, RAISED, RETURNED, SKIP, UNOBSERVED, XFAIL

MISSING = "missing"  # a teardown report that no witness stamped


def told(seen: str) -> str:
    """What a call did, in words."""
    if seen == NOT_CALLED:
        return "the test function was never called"
    if seen == SKIP:
        return "the test skipped itself"
    if seen.startswith(XFAIL):
        return f"it raised {seen.removeprefix(XFAIL)} under an xfail mark"
    if seen.startswith(RAISED):
        return f"it raised {seen.removeprefix(RAISED)}"
    return "pytest's own hook left no record of its run"


class Witnessed:
    """Keeps each test's call where it did not return; asks for the code behind a
    difference."""

    def __init__(self, local: witness.Witness, root: Path) -> None:
        self.local = local  # where tests run in this process too (no xdist)
        self.root = root
        self._ran: dict[str, str] = {}  # node id -> what its call did, if not a return
        self._remote: set[suspects.Suspect] = set()  # named by xdist workers

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when != "teardown":
            return
        seen = getattr(report, witness.STAMP, MISSING)
        if seen in (RETURNED, UNOBSERVED):
            if self._ran:
                self._ran.pop(report.nodeid, None)  # a later run of the test (a re-run plugin)
            return
        self._ran[report.nodeid] = seen if isinstance(seen, str) else MISSING

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: object, error: object) -> None:
        output = getattr(node, "workeroutput", None)
        named = output.get(witness.KEY) if isinstance(output, dict) else None
        for entry in named if isinstance(named, list) else ():
            if isinstance(entry, list) and len(entry) == 3:
                file, line, what = entry
                if isinstance(file, str) and isinstance(line, int) and isinstance(what, str):
                    self._remote.add((file, line, what))

    def diverged(
        self, passed: Container[str], skipped: Container[str], failing: Container[str]
    ) -> dict[str, str]:
        """Tests reported otherwise than their call went: node id -> how."""
        found = {}
        for nodeid, seen in sorted(self._ran.items()):
            if nodeid in failing:
                continue
            if nodeid in passed:
                found[nodeid] = f"reported passed, but {told(seen)}"
            elif nodeid in skipped and seen.startswith(RAISED):
                found[nodeid] = f"reported skipped, but {told(seen)} with no xfail mark"
        return found

    def suspects(self, config: pytest.Config) -> list[suspects.Suspect]:
        """The project's code that runs or reports tests, here and on the workers."""
        here: Iterable[suspects.Suspect] = self.local.suspects(config)
        return sorted({*here, *self._remote})
