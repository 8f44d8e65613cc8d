"""Run pytest in this process and note when each phase of the session begins and ends, for
``bench/breakdown.py``: ``python bench/phases.py MARKS.json [pytest arguments]``.

The marks (seconds since this script started) bracket what the review adds: the engine's
imports, the rest of ``pytest_configure``, collection and the tests, ``pytest_sessionfinish``
(the classification, the review phase and the report) and ``pytest_unconfigure``. A plain
run (no ``--bounded-review``) gets the same marks, so each part compares with its own.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Generator
from pathlib import Path

START = time.perf_counter()
marks: dict[str, float] = {}


def mark(name: str) -> None:
    marks[name] = time.perf_counter() - START


import pytest  # noqa: E402  (after the clock starts: pytest's import is part of the run)

mark("pytest imported")


class Marks:
    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        mark("configure")
        if config.getoption("bounded_review", False):
            import pytest_boundedreview.baseline.failures.outcomes
            import pytest_boundedreview.session  # noqa: F401

            mark("engine imported")

    @pytest.hookimpl(trylast=True)
    def pytest_sessionstart(self) -> None:
        mark("session start")

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self) -> Generator[None]:
        mark("sessionfinish")
        try:
            return (yield)
        finally:
            mark("sessionfinish end")

    @pytest.hookimpl(tryfirst=True)
    def pytest_unconfigure(self) -> None:
        mark("unconfigure")


def main() -> int:
    out, args = Path(sys.argv[1]), sys.argv[2:]
    code = pytest.main(args, plugins=[Marks()])
    mark("main returned")
    out.write_text(json.dumps(marks))
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
