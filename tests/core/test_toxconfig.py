"""The pytest commands of a tox configuration, read without running tox, in its three formats
(``tox.ini`` and ``setup.cfg``, ``tox.toml``, ``[tool.tox]`` of ``pyproject.toml`` with its
``legacy_tox_ini``), and the paths pytest reads among their arguments."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.suite.toxsuite import pytest_paths
from pytest_boundedreview.core.pytestconfig.argv import BUILTIN
from pytest_boundedreview.core.pytestconfig.toxconfig import commands


def read(**files: str) -> dict[str, tuple[str, ...] | str]:
    file, found = commands({k.replace("_", ".", 1): v for k, v in files.items()}.get)
    return {"file": file, **{f"{c.where} {c.text}": c.unresolved or c.args for c in found}}


def test_tox_ini_posargs_with_and_without_a_default_and_every_spelling_of_pytest() -> None:
    ini = """[tox]
envlist = py3, cov
[testenv]
commands =
    pytest {posargs:tests examples/tiny/tests}
    python -m pytest -q {posargs} tests
    - py.test {toxinidir}/tests
    ruff check .
[testenv:cov]
changedir = sub
commands = coverage run --branch -m pytest \\
    tests
    python3.12 -m mypy src
"""
    found = read(tox_ini=ini)
    assert found == {
        "file": "tox.ini",
        "tox.ini [testenv] pytest {posargs:tests examples/tiny/tests}": (
            "tests",
            "examples/tiny/tests",
        ),
        "tox.ini [testenv] python -m pytest -q {posargs} tests": ("-q", "tests"),
        "tox.ini [testenv] - py.test {toxinidir}/tests": ("./tests",),
        "tox.ini [testenv:cov] coverage run --branch -m pytest  tests": ("tests",),
    }


def test_an_environment_outside_env_list_is_not_the_suite() -> None:
    ini = "[tox]\nenv_list = py{311,312}\n[testenv:py311]\ncommands = pytest a\n"
    ini += "[testenv:benchmark]\ncommands = pytest bench.py\n"
    assert read(tox_ini=ini) == {"file": "tox.ini", "tox.ini [testenv:py311] pytest a": ("a",)}


def test_substitutions_tox_alone_resolves_are_named() -> None:
    ini = "[testenv]\ncommands =\n    pytest {env:SUITE}\n    {[base]commands}\n"
    found = read(tox_ini=ini)
    assert found["tox.ini [testenv] pytest {env:SUITE}"] == (
        "{env:SUITE} cannot be resolved without running tox"
    )
    assert "cannot be resolved" in str(found["tox.ini [testenv] {[base]commands}"])


def test_tox_toml_with_its_posargs_table_and_env_list() -> None:
    toml = """env_list = ["py", "other"]
[env_run_base]
commands = [["pytest", { replace = "posargs", default = ["tests", "more"], extend = true }]]
[env.other]
change_dir = "{tox_root}/sub"
commands = [["python", "-m", "pytest", "{tox_root}/t"], ["mypy", "src"]]
[env.bench]
commands = [["pytest", "bench.py"]]
"""
    assert read(tox_toml=toml) == {
        "file": "tox.toml",
        "tox.toml [env_run_base] pytest {posargs}": ("tests", "more"),
        "tox.toml [env.other] python -m pytest {tox_root}/t": ("./t",),
    }


def test_pyproject_native_and_legacy() -> None:
    native = "[tool.tox.env_run_base]\ncommands = [['pytest', 'tests']]\n"
    assert read(pyproject_toml=native) == {
        "file": "pyproject.toml",
        "pyproject.toml [tool.tox.env_run_base] pytest tests": ("tests",),
    }
    legacy = "[tool.tox]\nlegacy_tox_ini = '''\n[testenv]\ncommands = pytest t\n'''\n"
    assert read(pyproject_toml=legacy) == {
        "file": "pyproject.toml",
        "pyproject.toml legacy_tox_ini [testenv] pytest t": ("t",),
    }


def test_tox_s_order_decides_which_file_counts() -> None:
    """tox.ini first; a setup.cfg without ``[tox:tox]`` and a pyproject.toml without
    ``[tool.tox]`` hold none."""
    toml = "[env_run_base]\ncommands = [['pytest', 'x']]\n"
    found = read(setup_cfg="[metadata]\nname = p\n", pyproject_toml="[tool.black]\n", tox_toml=toml)
    assert found["file"] == "tox.toml"
    assert read(tox_ini="[testenv]\ncommands = pytest y\n", tox_toml=toml)["file"] == "tox.ini"
    cfg = "[tox:tox]\nenvlist = py\n[testenv]\ncommands = pytest z\n"
    assert read(setup_cfg=cfg)["file"] == "setup.cfg"
    assert read(pyproject_toml="[tool.black]\n") == {"file": ""}


TABLE = {**BUILTIN, "--maxfail": None, "--cov": "?", "--tb": None, "--strict-markers": 0}


@pytest.mark.parametrize(
    ("args", "paths"),
    [
        (["-q", "tests"], ["tests"]),
        (["--maxfail", "2", "tests", "more"], ["tests", "more"]),
        (["--maxfail=2", "-x", "tests"], ["tests"]),
        (["-rA", "-m", "not slow", "tests"], ["tests"]),
        (["-qm", "not slow", "tests"], ["tests"]),
        (["--cov", "src", "tests"], ["tests"]),  # --cov takes src
        (["--cov", "--strict-markers", "tests"], ["tests"]),
        (["--", "-odd"], ["-odd"]),
        (["--unknown", "tests"], None),  # its value cannot be told from a path
        (["-Z", "tests"], None),
    ],
)
def test_the_paths_among_pytest_s_arguments(args: list[str], paths: list[str] | None) -> None:
    assert pytest_paths(args, TABLE) == paths


def test_a_factor_line_counts_only_for_the_default_environments_that_have_its_factors() -> None:
    """pyparsing's layout: ``unit:`` lines of ``[testenv]`` run in every ``-unit`` environment
    of ``envlist``, ``doctest:`` ones are not pytest, a ``slow:`` line no default environment
    has is not the suite, and a negated factor (``!pypy``) is honoured."""
    ini = """[tox]
envlist = py39-unit, py{310,311}-{unit,doctest}, mypy-check
[testenv]
commands =
    unit: pytest tests examples/tiny/tests {posargs}
    doctest: sphinx-build -b doctest docs out
    slow: pytest tests/test_slow.py
    unit-!pypy: pytest extra
[testenv:mypy-check]
commands = mypy pkg
"""
    assert read(tox_ini=ini) == {
        "file": "tox.ini",
        "tox.ini [testenv] pytest tests examples/tiny/tests {posargs}": (
            "tests",
            "examples/tiny/tests",
        ),
        "tox.ini [testenv] pytest extra": ("extra",),
    }
