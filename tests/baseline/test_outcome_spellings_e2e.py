"""Every spelling pytest accepts of an option that weakens the project's outcome configuration
or reconfigures its collection (bundled short flags, ``-X=VALUE``) makes the run partial; and
so does a change that weakens the outcome configuration in the project's own configuration
file, while a change that tightens it or edits it harmlessly stays clean. Serial and under
xdist; the working tree, index and stash are left as they were."""

from __future__ import annotations

from typing import Any

import pytest
from gitrepo import CHILD_OPTIONS, GitRepo
from test_outcome_options_e2e import SCENARIOS, setup
from test_partial_runs import assert_whole, review

WORKERS = pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])

SPELLINGS = [
    ("warnings", ["-qW", "ignore::DeprecationWarning"], "-W ignore::DeprecationWarning"),
    ("warnings", ["-vW", "ignore"], "-W ignore"),
    ("warnings", ["-qo", "filterwarnings=ignore"], "-o filterwarnings=ignore"),
    ("warnings", ["-o=filterwarnings=ignore"], "-o filterwarnings=ignore"),
    ("xfail", ["-qso", "xfail_strict=false"], "-o xfail_strict=false"),
]


def _partial(code: int, report: dict[str, Any], reason: str) -> None:
    assert code == 1
    assert report["gate"]["review_clean"] == "indeterminate", report["gate"]
    assert report["statuses"]["local_verification"] == "partial"
    assert reason in " ".join(report["gate"]["reasons"]), report["gate"]["reasons"]


@pytest.mark.slow
@WORKERS
@pytest.mark.parametrize("where", ["command line", "PYTEST_ADDOPTS"])
@pytest.mark.parametrize(
    ("scenario", "options", "named"), SPELLINGS, ids=[" ".join(s[1]) for s in SPELLINGS]
)
def test_every_spelling_of_a_weakening_option_is_a_partial_run(
    pytester: pytest.Pytester,
    project: GitRepo,
    scenario: str,
    options: list[str],
    named: str,
    where: str,
    workers: list[str],
) -> None:
    setup(project, scenario)
    with project.untouched():
        if where == "command line":
            code, report = review(pytester, *workers, *options)
        else:
            addopts = " ".join([*options, CHILD_OPTIONS])
            code, report = review(pytester, *workers, env={"PYTEST_ADDOPTS": addopts})
    assert report["tests"]["failed"] == 0  # pytest read the option as given
    _partial(code, report, f"the project's outcome configuration was weakened ({where}: {named}")


@pytest.mark.slow
@WORKERS
@pytest.mark.parametrize(
    "options", [["-o=python_files=test_other.py"], ["-vo", "python_files=test_other.py"]]
)
def test_every_spelling_of_a_collection_override_is_a_partial_run(
    pytester: pytest.Pytester, project: GitRepo, options: list[str], workers: list[str]
) -> None:
    project.commit(
        {
            "pyproject.toml": "[tool.bounded-review]\n",
            "app.py": "def add(a, b):\n    return a + b\n",
            "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
            "test_other.py": "def test_other():\n    assert True\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": "def add(a, b):\n    return a - b\n"}, "change")
    code, report = review(pytester, *workers, *options)
    assert report["tests"]["failed"] == 0  # the failing test file was not collected
    why = (
        "the configuration was changed at invocation (command line: -o python_files=test_other.py)"
    )
    _partial(code, report, why)


# (scenario, the project's configuration as the change leaves it, what is named)
WEAKENED = [
    (
        "warnings",
        'filterwarnings = ["error", "ignore::DeprecationWarning"]\n',
        "pyproject.toml: filterwarnings 'error, ignore::DeprecationWarning'",
    ),
    ("warnings", "filterwarnings = []\n", "pyproject.toml: filterwarnings"),
    (
        "warnings",
        'filterwarnings = ["error"]\naddopts = "-W ignore::DeprecationWarning"\n',
        "pyproject.toml addopts: -W ignore::DeprecationWarning",
    ),
    (
        "warnings",
        'filterwarnings = ["error"]\naddopts = "-qpno:warnings -p no:warnings"\n',
        "pyproject.toml addopts: -p no:warnings",
    ),
    ("xfail", "xfail_strict = false\n", "pyproject.toml: xfail_strict false"),
    ("xfail", "", "pyproject.toml: xfail_strict"),
    ("plugin", 'addopts = "-p no:guard"\n', "pyproject.toml addopts: -p no:guard"),
]


def _reconfigure(project: GitRepo, scenario: str, ini: str, keep_app: bool = False) -> None:
    """The project of ``scenario``, and a change that sets its configuration to ``ini`` and
    (unless ``keep_app``) breaks the rule the base's configuration holds against it."""
    setup(project, scenario, harmless=True)
    change = {"pyproject.toml": f"[tool.bounded-review]\n[tool.pytest.ini_options]\n{ini}"}
    if not keep_app:
        change.update(SCENARIOS[scenario][2])
    project.commit(change, "change")


@pytest.mark.slow
@WORKERS
@pytest.mark.parametrize(("scenario", "ini", "named"), WEAKENED, ids=[w[2] for w in WEAKENED])
def test_a_change_that_weakens_its_outcome_configuration_is_a_partial_run(
    pytester: pytest.Pytester,
    project: GitRepo,
    scenario: str,
    ini: str,
    named: str,
    workers: list[str],
) -> None:
    _reconfigure(project, scenario, ini)
    with project.untouched():
        code, report = review(pytester, *workers)
    assert report["tests"]["failed"] == 0  # the change's configuration let the change pass
    _partial(code, report, f"the change weakens the project's outcome configuration ({named}")


@pytest.mark.slow
@WORKERS
@pytest.mark.parametrize("shadow", [".pytest.ini", "pytest.ini"])
def test_a_configuration_file_the_change_adds_over_the_base_s_is_judged_against_it(
    pytester: pytest.Pytester, project: GitRepo, shadow: str, workers: list[str]
) -> None:
    """A file pytest prefers, added beside the base's ``pyproject.toml``, is compared with
    the file the base's pytest read, not with pytest's defaults."""
    setup(project, "warnings", harmless=True)
    project.commit({shadow: "[pytest]\n", **SCENARIOS["warnings"][2]}, "change")
    with project.untouched():
        code, report = review(pytester, *workers)
    assert report["tests"]["failed"] == 0
    _partial(code, report, "the change weakens the project's outcome configuration")


HARMLESS = [
    # tighter: another error, strict xfail where the base had none, a marker registered
    ("warnings", 'filterwarnings = ["error", "error::UserWarning"]\n'),
    ("warnings", 'filterwarnings = ["error"]\naddopts = "-W error::UserWarning"\n'),
    ("warnings", '# warnings are errors\nfilterwarnings = ["error"]\nmarkers = ["slow: slow"]\n'),
    ("warnings", 'filterwarnings = ["error"]\nxfail_strict = true\nstrict_markers = true\n'),
    ("plugin", 'addopts = "-p no:cacheprovider"\n'),
]


@pytest.mark.slow
@WORKERS
@pytest.mark.parametrize(("scenario", "ini"), HARMLESS)
def test_a_change_that_tightens_or_edits_its_configuration_harmlessly_stays_clean(
    pytester: pytest.Pytester, project: GitRepo, scenario: str, ini: str, workers: list[str]
) -> None:
    _reconfigure(project, scenario, ini, keep_app=True)
    code, report = review(pytester, *workers)
    assert_whole(code, report)
