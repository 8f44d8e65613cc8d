"""The suite a project's tox configuration runs is its suite, where no ``testpaths`` is set: a
run whose paths are exactly those of one pytest command of tox (``tox.ini``, ``tox.toml``,
``[tool.tox]`` in ``pyproject.toml``, its ``legacy_tox_ini`` too) is whole although a stray
``examples/test_*.py`` lies outside them, and ``suite.defined_by`` names the command; fewer paths,
a command of another file, or a tox file the change edits to match stay partial."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

TEST = "def test_one():\n    pass\n"
TOX_INI = "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands = {command}\n"
TOX_TOML = '[env_run_base]\ncommands = [{command}]\n\n[env.lint]\ncommands = [["ruff", "check"]]\n'
NATIVE = "[tool.tox.env_run_base]\ncommands = [{command}]\n"
LEGACY = "[tool.tox]\nlegacy_tox_ini = '''\n[testenv]\ncommands = {command}\n'''\n"
PATHS = ["tests", "examples/tiny/tests"]
INI_POSARGS = "pytest {posargs:tests examples/tiny/tests}"
TOML_POSARGS = '["pytest", { replace = "posargs", default = ["tests", "examples/tiny/tests"] }]'
FORMATS = {
    "tox.ini": ("tox.ini", TOX_INI, INI_POSARGS),
    "tox.ini python -m": (
        "tox.ini",
        TOX_INI,
        "python -m pytest -q {posargs} tests examples/tiny/tests",
    ),
    "tox.toml": ("tox.toml", TOX_TOML, TOML_POSARGS),
    "[tool.tox]": (
        "pyproject.toml",
        NATIVE,
        '["python", "-m", "pytest", "{tox_root}/tests", "{tox_root}/examples/tiny/tests"]',
    ),
    "legacy_tox_ini": ("pyproject.toml", LEGACY, "py.test --maxfail=2 tests examples/tiny/tests"),
}


def setup(project: GitRepo, name: str, text: str, ini: str = "") -> None:
    """A project without ``testpaths`` whose tox runs ``tests`` and ``examples/tiny/tests``,
    a stray ``examples/test_stray.py`` beside them, and a harmless change under review."""
    files = {
        "tests/test_a.py": TEST,
        "examples/tiny/tests/test_tiny.py": TEST,
        "examples/test_stray.py": TEST,
        "app.py": "x = 1\n",
    }
    config = "[tool.bounded-review]\nno_lanes = true\n" + ini
    if name == "pyproject.toml":
        files["pyproject.toml"] = text + "\n" + config
    else:
        files[name] = text
        files["pyproject.toml"] = config
    project.commit(files, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "x = 2  # harmless\n"}, "change")


def review(pytester: pytest.Pytester, project: GitRepo, *args: str) -> tuple[int, dict[str, Any]]:
    with project.untouched():
        result = pytester.runpytest_subprocess(
            "-p", "no:randomly", "--bounded-review", "--bounded-review-base=main", *args
        )
    report = json.loads((pytester.path / ".bounded-review" / "report.json").read_text())
    return int(result.ret), report


def partial(code: int, report: dict[str, Any]) -> None:
    assert report["statuses"]["local_verification"] == "partial"
    assert report["gate"]["review_clean"] == "indeterminate"
    assert "examples/test_stray.py" in report["suite"]["left_out"]
    assert code == 1


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]])
@pytest.mark.parametrize("form", list(FORMATS))
def test_a_run_of_exactly_tox_s_paths_is_whole(
    pytester: pytest.Pytester, project: GitRepo, form: str, xdist: list[str]
) -> None:
    """Before: partial, ``examples/test_stray.py`` left out of "the rootdir, no testpaths"."""
    name, template, command = FORMATS[form]
    setup(project, name, template.replace("{command}", command))
    code, report = review(pytester, project, *PATHS, *xdist)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert report["statuses"]["local_verification"] == "passed"
    assert report["suite"]["left_out_total"] == 0
    (defined,) = report["suite"]["defined_by"]
    assert defined.startswith("tox: ")
    assert f"({name}" in defined
    assert code == 0


@pytest.mark.parametrize("form", ["tox.ini", "tox.toml"])
def test_fewer_paths_than_tox_s_stay_partial(
    pytester: pytest.Pytester, project: GitRepo, form: str
) -> None:
    name, template, command = FORMATS[form]
    setup(project, name, template.replace("{command}", command))
    code, report = review(pytester, project, "tests")
    partial(code, report)
    assert report["suite"]["defined_by"] == ["the rootdir, no testpaths (pyproject.toml)"]


def test_a_command_of_another_tool_or_environment_does_not_make_a_run_whole(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """Only a pytest command counts, only one the run's paths match exactly, and only in an
    environment ``tox`` runs by default: a lint environment naming ``tests`` and a ``fast``
    environment outside ``envlist`` running one file do not define the suite."""
    ini = TOX_INI.replace("{command}", INI_POSARGS) + "[testenv:lint]\ncommands = ruff tests\n"
    ini += "[testenv:fast]\ncommands = pytest tests/test_a.py\n"
    setup(project, "tox.ini", ini)
    for args in (["tests"], ["tests/test_a.py"]):
        code, report = review(pytester, project, *args)
        partial(code, report)


def test_a_tox_file_the_change_edits_to_match_the_run_does_not_define_the_suite(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The tox file is read as the base has it: the change cannot narrow its own suite."""
    setup(project, "tox.ini", TOX_INI.replace("{command}", INI_POSARGS))
    project.commit({"tox.ini": TOX_INI.replace("{command}", "pytest tests")}, "narrow tox")
    code, report = review(pytester, project, "tests")
    partial(code, report)


def test_a_substitution_tox_alone_resolves_is_named(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "tox.ini", TOX_INI.replace("{command}", "pytest {env:SUITE} tests"))
    code, report = review(pytester, project, "tests")
    partial(code, report)
    reason = report["gate"]["reasons"][0]
    assert "{env:SUITE} cannot be resolved without running tox" in reason
    assert "tox.ini [testenv]" in reason


def test_testpaths_still_define_the_suite(pytester: pytest.Pytester, project: GitRepo) -> None:
    """Where ``testpaths`` is set it is the suite, whatever tox runs."""
    ini = '[tool.pytest.ini_options]\ntestpaths = ["tests", "examples"]\n'
    setup(project, "tox.ini", TOX_INI.replace("{command}", INI_POSARGS), ini)
    code, report = review(pytester, project, *PATHS)
    partial(code, report)
    assert report["suite"]["defined_by"] == ["testpaths: tests examples (pyproject.toml)"]


SPLIT = {
    "two commands": "[tox]\nenvlist = py3\n\n[testenv]\ncommands =\n    pytest tests\n"
    "    pytest examples/tiny/tests\n",
    "two environments": "[tox]\nenvlist = unit, tiny\n\n[testenv:unit]\ncommands = pytest tests\n\n"
    "[testenv:tiny]\ncommands = pytest examples/tiny/tests\n",
    "factors": "[tox]\nenvlist = py3-unit, py3-tiny\n\n[testenv]\ncommands =\n"
    "    unit: pytest tests\n    tiny: pytest examples/tiny/tests\n"
    "    slow: pytest tests/test_a.py\n",
}


@pytest.mark.parametrize("layout", list(SPLIT))
def test_one_command_of_several_is_not_the_suite_all_of_them_together_are(
    pytester: pytest.Pytester, project: GitRepo, layout: str
) -> None:
    """tox's suite is every path its default environments' pytest commands give, together:
    a run of one command's paths leaves the other's out (partial), a run of them all is whole,
    and a factor line of an environment tox does not run by default (``slow:``) adds nothing."""
    setup(project, "tox.ini", SPLIT[layout])
    code, report = review(pytester, project, "tests")
    assert report["statuses"]["local_verification"] == "partial"
    assert "examples/tiny/tests/test_tiny.py" in report["suite"]["left_out"]
    assert code == 1
    code, report = review(pytester, project, *PATHS)
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert report["suite"]["defined_by"][0].startswith("tox: pytest ")
    assert code == 0


def test_a_tox_file_git_does_not_see_defines_nothing(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The tox file is read from the base commit: one the base lacks, here ignored by the
    repository's exclude file so the tree looks clean, does not make a narrow run whole."""
    setup(project, "tox.ini", TOX_INI.replace("{command}", INI_POSARGS))
    project.git("rm", "--quiet", "tox.ini")
    project.git("commit", "--quiet", "--amend", "--no-edit")
    project.git("checkout", "--quiet", "main")
    project.git("rm", "--quiet", "tox.ini")
    project.git("commit", "--quiet", "-m", "no tox")
    project.git("checkout", "--quiet", "feature")
    project.git("rebase", "--quiet", "main")
    project.write("tox.ini", TOX_INI.replace("{command}", "pytest tests"))
    (project.path / ".git" / "info" / "exclude").write_text("tox.ini\n")
    assert project.git("status", "--porcelain").strip() == ""
    code, report = review(pytester, project, "tests")
    partial(code, report)
    assert report["suite"]["defined_by"] == ["the rootdir, no testpaths (pyproject.toml)"]
