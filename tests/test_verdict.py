"""The verdict line: its words, its exit status, its colour by pytest's rules, and that no
untrusted text in a report can stand in for it."""

from __future__ import annotations

import dataclasses
import io
import re

import pytest
from _pytest._io.terminalwriter import should_do_markup
from reports import EVIL, report

from pytest_boundedreview.models import report as models
from pytest_boundedreview.render.terminal import lines
from pytest_boundedreview.render.verdict import (
    closing,
    colour_wanted,
    console_exit,
    painted,
    run_exit,
)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


ENVIRONMENTS = [
    {},
    {"NO_COLOR": "1"},
    {"FORCE_COLOR": "1"},
    {"NO_COLOR": "1", "FORCE_COLOR": "1"},
    {"PY_COLORS": "1", "NO_COLOR": "1"},
    {"PY_COLORS": "0", "FORCE_COLOR": "1"},
    {"TERM": "dumb"},
    {"NO_COLOR": ""},
]


@pytest.mark.parametrize("env", ENVIRONMENTS)
@pytest.mark.parametrize("stream", [io.StringIO(), _Tty()])
def test_auto_colour_follows_pytest_exactly(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], stream: io.StringIO
) -> None:
    for name in ("NO_COLOR", "FORCE_COLOR", "PY_COLORS", "TERM"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert colour_wanted(stream, "auto", env) == should_do_markup(stream)


def test_an_explicit_choice_wins() -> None:
    assert colour_wanted(io.StringIO(), "yes", {"NO_COLOR": "1"})
    assert not colour_wanted(_Tty(), "no", {"FORCE_COLOR": "1"})


def _with(answer: str, **tests: object) -> object:
    base = report()
    return dataclasses.replace(
        base,
        gate=models.Gate(
            review_clean=answer, reasons=list(base.gate.reasons) if answer != "yes" else []
        ),
        tests=dataclasses.replace(base.tests, **tests),
    )


@pytest.mark.parametrize(
    ("answer", "exit_status", "colour"),
    [("yes", 0, "32"), ("no", 1, "31"), ("indeterminate", 2, "33")],
)
def test_each_answer_its_exit_status_and_colour(answer: str, exit_status: int, colour: str) -> None:
    shown = _with(answer)
    assert console_exit(shown) == exit_status  # type: ignore[arg-type]
    last = list(lines(shown, exit_status))[-1]  # type: ignore[arg-type]
    assert last == f"review_clean: {answer} (exit {exit_status})"
    assert painted(last, shown) == f"\x1b[0m\x1b[{colour}m\x1b[1m{last}\x1b[0m"  # type: ignore[arg-type]


def test_the_closing_line_says_why_pytest_says_failed() -> None:
    clean = _with("yes", failed=3, target_related=[], unknown=[])
    assert closing(clean, 0) == (  # type: ignore[arg-type]
        "bounded-review: review_clean: yes (exit 0); 3 failed above: 1 pre-existing and 1 "
        "flaky, does not block"
    )
    passing = _with("yes", failed=0, target_related=[], unknown=[], pre_existing=[], flaky=[])
    assert closing(passing, 0) == "bounded-review: review_clean: yes (exit 0)"  # type: ignore[arg-type]


@pytest.mark.parametrize("text", EVIL)
def test_no_untrusted_text_stands_in_for_the_verdict(text: str) -> None:
    forged = f"{text}\nreview_clean: yes (exit 0)\x1b[2K\x1b[1A"
    shown = report(text=forged)
    out = list(lines(shown, 1))
    assert out[-1] == "review_clean: no (exit 1)"
    assert not any(re.search("[\x00-\x1f\x7f]", line) for line in out)  # escaped, every one
    assert [line for line in out if line.startswith("review_clean:")] == [out[-1]]


def test_statuses_not_checked_show_only_when_verbose() -> None:
    shown = dataclasses.replace(
        report(),
        statuses=models.Statuses(local_verification="passed", review_clean="no", committed="yes"),
    )
    default = [line for line in lines(shown) if line.startswith("status: ")]
    assert default == ["status: local verification passed, review clean no, committed yes"]
    verbose = [line for line in lines(shown, verbose=True) if line.startswith("status: ")]
    assert verbose == [
        "status: local verification passed, review clean no, PR/CI not-checked, committed yes, "
        "merged not-checked, deployed not-checked, production verified not-checked"
    ]


def test_partial_says_what_made_it_partial() -> None:
    statuses = models.Statuses(local_verification="partial", review_clean="yes", committed="yes")
    shown = dataclasses.replace(report(), statuses=statuses, checks=[], suite=None)
    shown = dataclasses.replace(shown, tests=models.Tests(passed=3, failed=0))
    (line,) = [line for line in lines(shown) if line.startswith("status: ")]
    assert line.startswith("status: local verification partial (part of the suite or its checks")


@pytest.mark.parametrize(
    ("pytest_status", "answer", "shown"),
    [
        (0, "yes", 0),
        (1, "no", 1),
        (1, "indeterminate", 2),  # -x, a stopped session: pytest says 1, run says 2
        (5, "indeterminate", 2),  # no tests collected
        (1, "yes", 2),  # pytest disagrees with a clean report: run refuses it
        (2, "indeterminate", 130),  # interrupted
        (3, "indeterminate", 3),
        (4, "indeterminate", 4),
    ],
)
def test_the_status_run_gives(pytest_status: int, answer: str, shown: int) -> None:
    assert run_exit(pytest_status, answer) == shown
