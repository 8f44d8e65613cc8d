"""A wait on a re-run child notices its folders vanishing and says what it waits for (the
sessions end to end: test_vanished_children.py)."""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from pathlib import Path

import pytest

from pytest_boundedreview.baseline.atbase import baserun
from pytest_boundedreview.baseline.reruns import waits
from pytest_boundedreview.baseline.reruns.rerun import Ask, PendingRerun, start_rerun, start_waiting
from pytest_boundedreview.baseline.reruns.runspec import BaselineRun
from pytest_boundedreview.change import git


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(None, 5.0), ("0.25", 0.25), ("2", 2.0), ("0", 5.0), ("-1", 5.0), ("soon", 5.0)],
)
def test_the_interval(monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv(waits.INTERVAL_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(waits.INTERVAL_VARIABLE, value)
    assert waits.interval() == seconds


def test_a_vanished_folder_ends_the_wait_and_says_which(tmp_path: Path) -> None:
    kept, gone = tmp_path / "kept", tmp_path / "gone"
    kept.mkdir()
    gone.mkdir()
    watch = waits.Watch("the re-run", [("its folder", kept), ("the checkout", gone)])
    assert not watch.look()
    gone.rmdir()
    assert watch.gone()
    assert watch.vanished == f"the checkout {gone} vanished during the run"


def test_a_wait_says_what_for_only_to_a_listener(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(waits.INTERVAL_VARIABLE, "0.000001")
    said: list[str] = []
    quiet = waits.Watch("the base re-run of 1 test(s) at abc", [("its folder", tmp_path)])
    assert not quiet.look()  # no listener: nothing to say it to
    with waits.told(said.append):
        watch = waits.Watch("the base re-run of 1 test(s) at abc", [("its folder", tmp_path)])
        while not said:
            assert not watch.look()
    assert said[0].startswith("waiting for the base re-run of 1 test(s) at abc (")
    assert said[0].endswith(" s)")


@pytest.mark.parametrize(
    ("ask", "described"),
    [
        (Ask.of(["a.py::t", "b.py::u"]), "the base re-run of 2 test(s) at abc"),
        (Ask(listing=("tests",)), "the base re-run of the collection of 1 path(s) at abc"),
        (
            Ask(frozenset({"a.py::t"}), whole=("b.py",)),
            "the base re-run of 1 test(s) and 1 file(s) run whole at abc",
        ),
    ],
)
def test_what_a_wait_calls_a_rerun(ask: Ask, described: str) -> None:
    assert ask.described("base re-run", " at abc") == described


SLOW = "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"


def test_a_rerun_whose_checkout_vanishes_answers_at_once(tmp_path: Path) -> None:
    """A child running a long test in a copy: the copy removed, the wait ends (not at its
    timeout, nor with the copy's test filed as missing)."""
    live, copy = tmp_path / "live", tmp_path / "copy"
    for folder in (live, copy):
        folder.mkdir()
        (folder / "test_slow.py").write_text(SLOW)
    pending = start_rerun(
        Ask.of(["test_slow.py::test_slow"]),
        rootdir=copy,
        args=["-p", "no:cacheprovider", "-p", "no:randomly"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
        timeout=600,
        copy_of=(live, copy),
    )
    shutil.rmtree(copy)
    ran = pending.result()
    assert ran.status == "vanished"
    assert ran.detail == f"the checkout {copy} vanished during the run"


def test_a_base_rerun_that_loses_its_folders_twice_is_unavailable_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkouts: list[Path] = []

    def checkout(run: BaselineRun, stack: contextlib.ExitStack) -> Path:
        checkouts.append(tmp_path / f"checkout-{len(checkouts)}")
        return checkouts[-1]

    def start_in(where: Path, ask: Ask, run: BaselineRun) -> tuple[PendingRerun, Path]:
        return PendingRerun.vanished("the checkout", where), where

    monkeypatch.setattr(baserun, "enter_checkout", checkout)
    monkeypatch.setattr(baserun, "start_in", start_in)
    repo = git.Repo(tmp_path, tmp_path / ".git", False, tmp_path / ".git", tmp_path / "index")
    run = BaselineRun(repo, tmp_path, "a" * 40, [], 1, 50, 900, tmp_path / "state")
    with (
        baserun.started_at_base(run, Ask.of(["t.py::x"])) as answer,
        pytest.raises(baserun.BaseUnavailable) as raised,
    ):
        answer()
    assert len(checkouts) == 2, "once more in a new checkout, then no more"
    why = f"the base re-run lost its folders twice: the checkout {checkouts[1]} vanished"
    assert str(raised.value).startswith(why)


STAMP = """\
import os
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_collection(session):
    open(os.environ["STAMP"], "w").close()
    return (yield)
"""


@pytest.mark.slow
def test_a_waiting_child_whose_folder_vanishes_ends_on_its_own(tmp_path: Path) -> None:
    """Its folder removed while it waits for its node ids: the child exits (before, it waited
    on for a selection that could never come, as long as its starter lived)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "conftest.py").write_text(STAMP)
    (root / "test_x.py").write_text("def test_x():\n    pass\n")
    stamp = tmp_path / "stamp"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path), "STAMP": str(stamp)}
    waiting = start_waiting(rootdir=root, args=["-p", "no:randomly"], env=env, timeout=600)
    assert waiting is not None
    child = waiting._child
    try:
        deadline = time.monotonic() + 120
        while not stamp.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        shutil.rmtree(waiting._folder)
        while child.running() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not child.running()
    finally:
        waiting.cancel()
