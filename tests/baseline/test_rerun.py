from __future__ import annotations

from pathlib import Path

import pytest

from pytest_boundedreview.baseline.reruns.childenv import child_env, moved
from pytest_boundedreview.baseline.reruns.replay import replayable
from pytest_boundedreview.baseline.reruns.rerun import RerunResult, merged, rerun


@pytest.mark.parametrize(
    ("args", "positional", "expected"),
    [
        (["--runslow", "--env", "prod", "tests/"], ["tests/"], ["--runslow", "--env", "prod"]),
        (["-k", "slow", "-m", "db", "-kfoo", "-n", "2", "-n4"], [], []),
        (["-xvs", "--maxfail=3", "-x", "--lf"], [], ["-vs"]),
        (
            ["--doctest-modules", "-p", "myplugin", "-o", "a=b", "-W", "error"],
            [],
            ["--doctest-modules", "-p", "myplugin", "-o", "a=b", "-W", "error"],
        ),
        (["-p", "no:boundedreview", "-pxdist"], [], ["-pxdist"]),
        (["--bounded-review", "--bounded-review-base", "main", "--bounded-review-full"], [], []),
        (
            ["--bounded-review-base=main", "--import-mode=importlib"],
            [],
            ["--import-mode=importlib"],
        ),
        (["--cov", "src", "tests"], ["tests"], []),
        (["--cov", "tests"], ["tests"], []),
        (["--junitxml", "out.xml", "--basetemp=/tmp/x", "a.py::t"], ["a.py::t"], []),
    ],
)
def test_replayable(args: list[str], positional: list[str], expected: list[str]) -> None:
    assert replayable(args, positional) == expected


def test_config_files_are_made_absolute_and_moved_to_the_checkout(tmp_path: Path) -> None:
    args = replayable(["-c", "ci/pytest.ini", "--config-file=other.ini", "-v"], [], tmp_path)
    assert args == [
        f"--config-file={tmp_path}/ci/pytest.ini",
        f"--config-file={tmp_path}/other.ini",
        "-v",
    ]
    base = Path("/elsewhere/checkout")
    assert moved([*args, "/outside/x", "-o", "a=b"], tmp_path, base) == [
        "--config-file=/elsewhere/checkout/ci/pytest.ini",
        "--config-file=/elsewhere/checkout/other.ini",
        "-v",
        "/outside/x",
        "-o",
        "a=b",
    ]


def test_merged_results() -> None:
    one = RerunResult(status="ok", found=frozenset({"a"}), passed=frozenset({"a"}))
    two = RerunResult(status="ok", found=frozenset({"b"}), failed={"b": "sig"})
    both = merged(one, two)
    assert (both.found, both.passed, dict(both.failed)) == ({"a", "b"}, {"a"}, {"b": "sig"})
    broken = RerunResult(status="timeout", detail="slow")
    assert merged(one, broken) is broken
    tainted = RerunResult(status="ok", live=("m (/live/m.py)",))
    assert merged(one, tainted).live == merged(tainted, two).live == ("m (/live/m.py)",)


@pytest.mark.parametrize("plugins", [[], ["-p", "xdist.plugin"]])
def test_a_rerun_without_plugin_autoload_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, plugins: list[str]
) -> None:
    """With plugin autoload off, pytest-xdist is loaded only when named: a re-run passes
    ``-n 0`` (to override the session's ``-n``) only to a child that knows it."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    (tmp_path / "test_it.py").write_text("def test_it():\n    pass\n")
    ran = rerun(
        ["test_it.py::test_it"], rootdir=tmp_path, args=plugins, env=child_env(), timeout=60
    )
    assert (ran.status, ran.detail) == ("ok", "")
    assert ran.passed == {"test_it.py::test_it"}


@pytest.mark.parametrize(
    ("script", "made"), [("mkdir -p tree", True), ("mkdir -p tree; exit 1", False)]
)
def test_a_waiting_child_is_handed_work_only_once_its_folder_is_made(
    tmp_path: Path, script: str, made: bool
) -> None:
    """The command that makes the rootdir runs first, in the child's own process: a rootdir
    it did not finish making (it failed, or outlived its time) is never used."""
    from pytest_boundedreview.baseline.reruns.childenv import child_env
    from pytest_boundedreview.baseline.reruns.rerun import Ask, start_waiting

    rootdir = tmp_path / "tree"
    waiting = start_waiting(
        rootdir=rootdir,
        args=["-p", "no:cacheprovider"],
        env=child_env(),
        timeout=60,
        first=["sh", "-c", f"cd {tmp_path} && {script}"],
    )
    assert waiting is not None
    try:
        (rootdir.parent).mkdir(exist_ok=True)
        if made:
            rootdir.mkdir(exist_ok=True)
            (rootdir / "test_x.py").write_text("def test_x():\n    assert 0\n")
        pending = waiting.hand(Ask.of(["test_x.py::test_x"]))
        assert waiting.made is made
        if not made:
            assert pending is None
        else:
            assert pending is not None
            result = pending.result()
            assert (result.status, sorted(result.failed)) == ("ok", ["test_x.py::test_x"])
    finally:
        waiting.cancel()


def rerun_a_and_b(folder: Path) -> RerunResult:
    """``test_x.py``'s ``test_a`` and ``test_b``, re-run in a child in ``folder``."""
    ids = ["test_x.py::test_a", "test_x.py::test_b"]
    return rerun(ids, rootdir=folder, args=["-p", "no:cacheprovider"], env=child_env(), timeout=60)


def test_a_rerun_stopped_by_pytest_exit_is_no_answer(tmp_path: Path) -> None:
    """A re-run whose session was stopped (``pytest.exit`` in a test) wrote a result of the
    tests it reached; it is a broken run, not an answer that the others were skipped."""
    (tmp_path / "test_x.py").write_text(
        "import pytest\n\n\ndef test_a():\n    pytest.exit('stop here')\n\n\n"
        "def test_b():\n    pass\n"
    )
    result = rerun_a_and_b(tmp_path)
    assert result.status == "error"
    assert "stop here" in result.detail


def test_a_rerun_ends_once_its_result_is_written(tmp_path: Path) -> None:
    """Its starter reads the result and ends it anyway: what other plugins would do after it
    (here a conftest's last sessionfinish, which writes a file) is not spent; what pytest
    said of the tests is the answer."""
    after = tmp_path / "after"
    (tmp_path / "conftest.py").write_text(
        "import pathlib, pytest\n\n\n@pytest.hookimpl(trylast=True)\n"
        f"def pytest_sessionfinish():\n    pathlib.Path({str(after)!r}).touch()\n"
    )
    (tmp_path / "test_x.py").write_text(
        "def test_a():\n    assert 0\n\n\ndef test_b():\n    pass\n"
    )
    result = rerun_a_and_b(tmp_path)
    assert (result.status, sorted(result.failed), result.passed) == (
        "ok",
        ["test_x.py::test_a"],
        {"test_x.py::test_b"},
    )
    assert not after.exists()
