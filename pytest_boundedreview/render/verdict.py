"""The verdict line: the gate's answer with the exit status it causes, its colour, and the one
line that closes a session's output after pytest's own counts."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from ..core.errors import (
    EXIT_CLEAN,
    EXIT_INDETERMINATE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_NOT_CLEAN,
    EXIT_USAGE,
)
from ..models.report import Report

# pytest's TerminalWriter markup names, one per answer, and their codes for the console.
COLOURS = {"yes": "green", "no": "red", "indeterminate": "yellow"}
_SGR = {"green": "32", "red": "31", "yellow": "33", "bold": "1"}
CHOICES = ("auto", "yes", "no")
RESET = "\x1b[0m"


def verdict(report: Report, exit_status: int | None) -> str:
    """``review_clean: <answer>``, and the exit status it causes when one is given (no
    untrusted text: the answer is one of three words, the status a number)."""
    status = "" if exit_status is None else f" (exit {int(exit_status)})"
    return f"review_clean: {report.gate.review_clean}{status}"


def answer_exit(answer: str) -> int:
    """The exit status the console's commands give a gate's answer: 0 yes, 1 no, 2 otherwise."""
    return {"yes": EXIT_CLEAN, "no": EXIT_NOT_CLEAN}.get(answer, EXIT_INDETERMINATE)


def console_exit(report: Report) -> int:
    """The exit status the console's commands give a report (:func:`answer_exit`)."""
    return answer_exit(report.gate.review_clean)


# pytest's own exit statuses that end a session before any report can be trusted
_PYTEST_INTERRUPTED = 2
ENDED_EARLY = (_PYTEST_INTERRUPTED, EXIT_INTERNAL, EXIT_USAGE)


def run_exit(pytest_status: int, answer: str) -> int:
    """The exit status ``bounded-review run`` gives when the pytest it started exited
    ``pytest_status`` with a report whose gate says ``answer``: the verdict line of a session
    ``run`` started names this one, the status the user's shell sees."""
    if pytest_status == _PYTEST_INTERRUPTED:
        return EXIT_INTERRUPTED
    if pytest_status in ENDED_EARLY:
        return pytest_status
    if answer == "yes" and pytest_status != EXIT_CLEAN:  # pytest disagrees: not clean
        return EXIT_INDETERMINATE
    return answer_exit(answer)


def closing(report: Report, exit_status: int, block_shown: bool = True) -> str:
    """The one line that ends a session's output, after pytest's own count of failures: the
    verdict, why pytest's count says "failed" where the gate lets the session pass, and where
    the gate's reasons are: the review block above, or the report when pytest showed no block
    (an internal error, ``--no-summary``)."""
    line = "bounded-review: " + verdict(report, exit_status)
    tests, answer = report.tests, report.gate.review_clean
    if answer == "yes" and tests.failed:
        kinds = [(len(tests.pre_existing), "pre-existing"), (len(tests.flaky), "flaky")]
        why = " and ".join(f"{n} {kind}" for n, kind in kinds if n)
        return line + f"; {tests.failed} failed above: {why or 'none new'}, does not block"
    reasons = len(report.gate.reasons)
    if answer != "yes" and reasons:
        where = "in the review above" if block_shown else "not shown: `bounded-review report`"
        return line + f"; {reasons} reason(s) {where}"
    return line


def colour_wanted(
    stream: TextIO, choice: str = "auto", environ: Mapping[str, str] | None = None
) -> bool:
    """Whether to colour what goes to ``stream``, by pytest's own rules: ``--color=yes|no``
    first, then ``PY_COLORS``, ``NO_COLOR``, ``FORCE_COLOR``, a terminal that is not dumb."""
    if choice != "auto":
        return choice == "yes"
    env = os.environ if environ is None else environ
    if env.get("PY_COLORS") in ("0", "1"):
        return env["PY_COLORS"] == "1"
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and env.get("TERM") != "dumb"


def markup(report: Report) -> dict[str, bool]:
    """The report's answer as pytest's TerminalWriter markup: bold, in its colour."""
    return {COLOURS[report.gate.review_clean]: True, "bold": True}


def painted(line: str, report: Report) -> str:
    """``line`` (text already escaped, or none untrusted) as pytest would mark it up in the
    colour of the report's answer: the codes go around it, never inside. It starts with a reset:
    what pytest printed raw before it (a test's message, its captured output) may have left a
    background or concealed text on that would hide it."""
    codes = "".join(f"\x1b[{_SGR[name]}m" for name, on in markup(report).items() if on)
    return f"{RESET}{codes}{line}{RESET}"
