"""The base re-run is given a compiled module of the working tree only when it is provably
compiled from the base's bytes (its header holds their hash): a pyc checked by its file's time
and size whose file was given back the base's bytes, with the same size and time, is the
change's code, and must not run as the base's (``baseline/checkout/pycache.py``)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import CALC, TESTS, XDIST, ids, review
from test_kept_checkout import ON, checkouts
from test_kept_checkout import user_cache as user_cache  # the fixture

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

TIMESTAMP, CHECKED_HASH = b"\x00\x00\x00\x00", b"\x03\x00\x00\x00"


def compiled(file: Path) -> Path:
    return Path(importlib.util.cache_from_source(str(file)))


def compile_module(file: Path, mode: str) -> None:
    """Compile ``file`` as Python's import (``timestamp``) or ``py_compile`` with
    ``--invalidation-mode checked-hash`` would."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    code = (
        "import py_compile, sys\n"
        "mode = py_compile.PycInvalidationMode[sys.argv[2].upper().replace('-', '_')]\n"
        "py_compile.compile(sys.argv[1], doraise=True, invalidation_mode=mode)\n"
    )
    argv = [sys.executable, "-c", code, str(file), mode]
    subprocess.run(argv, env=env, check=True, capture_output=True)


def stamped(file: Path, seconds_ago: int) -> None:
    stamp = (int(time.time()) - seconds_ago) * 1_000_000_000
    os.utime(file, ns=(stamp, stamp))


@pytest.fixture
def docs_change(project: GitRepo, user_cache: Path) -> GitRepo:
    """``main`` passes test_add (test_legacy fails there); ``feature`` edits only the README;
    the base checkout is kept, so what its re-run was given can be looked at."""
    project.commit({"calc.py": CALC, "test_calc.py": TESTS, "pyproject.toml": ON}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs")
    return project


@pytest.mark.parametrize("extra", XDIST)
def test_a_stale_timestamp_pyc_with_the_bases_size_and_time_is_not_the_bases(
    pytester: pytest.Pytester, docs_change: GitRepo, extra: list[str]
) -> None:
    """calc.py was broken (same size), compiled, then given back the base's bytes and time:
    Python runs the broken pyc at head, and the base must not run it too."""
    calc = docs_change.path / "calc.py"
    broken = CALC.replace("a + b", "a - b")
    assert len(broken) == len(CALC)
    calc.write_text(broken)
    stamped(calc, 100)
    compile_module(calc, "timestamp")
    before = calc.stat().st_mtime_ns
    calc.write_text(CALC)
    os.utime(calc, ns=(before, before))
    assert compiled(calc).read_bytes()[4:8] == TIMESTAMP
    with docs_change.untouched():
        result, report = review(pytester, *extra)
    assert ids(report, "target_related") == ["test_calc.py::test_add"]
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    assert ids(report, "pre_existing") == ["test_calc.py::test_legacy"]
    assert report["gate"]["review_clean"] == "no"
    assert result.ret == 1
    [checkout] = checkouts(docs_change)
    assert compiled(checkout / "calc.py").read_bytes()[16:] != compiled(calc).read_bytes()[16:]


@pytest.mark.parametrize(
    ("mode", "given"),
    [
        pytest.param("checked-hash", True, id="checked-hash"),
        pytest.param("timestamp", False, id="timestamp"),
    ],
)
@pytest.mark.parametrize("extra", XDIST)
def test_a_harmless_change_keeps_the_pycs_whose_bytes_are_proved(
    pytester: pytest.Pytester, docs_change: GitRepo, extra: list[str], mode: str, given: bool
) -> None:
    """Fresh compiled modules of unchanged files: one checked by its source's hash is given
    (its header proves the base's bytes); one checked by time is not, and Python compiles the
    base's own. Either way the change is clean."""
    calc = docs_change.path / "calc.py"
    stamped(calc, 100)
    compile_module(calc, mode)
    with docs_change.untouched():
        result, report = review(pytester, *extra)
    assert ids(report, "pre_existing") == ["test_calc.py::test_legacy"]
    assert ids(report, "target_related") == ids(report, "unknown") == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0
    [checkout] = checkouts(docs_change)
    theirs, ours = compiled(calc).read_bytes(), compiled(checkout / "calc.py").read_bytes()
    assert (ours[4:8] == CHECKED_HASH) is given
    if given:
        assert ours[16:] == theirs[16:]
