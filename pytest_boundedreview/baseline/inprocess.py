"""Re-run failing tests inside the finished session, when that is safe and cheaper than a new
pytest process: the items are at hand (no xdist) and they do not log reports of their own
(subtests do, which would then show twice in the terminal and in other plugins' reports)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from _pytest.runner import runtestprotocol

from .rerun import RerunResult, merged


def self_logging(item: pytest.Item) -> bool:
    """Whether ``item`` logs reports of its own, so it is re-run in a new process."""
    if "subtests" in getattr(item, "fixturenames", ()):
        return True
    return type(item).__name__ == "TestCaseFunction"  # unittest: subTest() logs its own reports


def head_rerunner(
    items: Sequence[pytest.Item], fallback: Callable[[Sequence[str]], RerunResult]
) -> Callable[[Sequence[str]], RerunResult]:
    """A re-runner that runs what it can in this process and the rest through ``fallback``."""
    by_id = {item.nodeid: item for item in items}

    def run(nodeids: Sequence[str]) -> RerunResult:
        here = [by_id[n] for n in nodeids if n in by_id and not self_logging(by_id[n])]
        local_ids = {item.nodeid for item in here}
        elsewhere = [n for n in nodeids if n not in local_ids]
        passed = set()
        for item in here:
            # The session has torn every fixture down; nextitem=None tears this run down too.
            # Only pass or fail counts here: no traceback is rendered for a failure again.
            shown = getattr(item.config.option, "tbstyle", "auto")
            item.config.option.tbstyle = "no"
            try:
                reports = runtestprotocol(item, nextitem=None, log=False)
            finally:
                item.config.option.tbstyle = shown
            if not any(r.failed for r in reports) and any(
                r.when == "call" and r.passed for r in reports
            ):
                passed.add(item.nodeid)
        local = RerunResult(status="ok", found=frozenset(local_ids), passed=frozenset(passed))
        return merged(local, fallback(elsewhere)) if elsewhere else local

    return run
