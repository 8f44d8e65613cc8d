"""Options given at invocation that weaken what the project's configuration says a test's
outcome is (a warning it makes an error, its strict xfail, a plugin it loads) make the run
partial and are named, like a deselection, on the command line or in ``PYTEST_ADDOPTS``,
serial and under xdist; the same options where the project sets nothing they undo, options
that tighten, and options that only change what is shown stay clean."""

from __future__ import annotations

import pytest
from gitrepo import GitRepo
from test_partial_runs import assert_whole, review

from pytest_boundedreview.core.pytestconfig.outcomes import (
    OUTCOME_FLAGS,
    OUTCOME_OPTIONS,
    weakening,
)

WARNS = (
    "import warnings\n\n\ndef old():\n    warnings.warn('old', DeprecationWarning)\n    return 1\n"
)
TEST_WARNS = "import app\n\n\ndef test_old():\n    assert app.old() == 1\n"
# strict xfail: the change makes the known bug's test pass, which the project makes a failure
XFAIL = (
    "import pytest\nimport app\n\n\n@pytest.mark.xfail(reason='known')\n"
    "def test_known():\n    assert app.double(2) == 4\n"
)
# a plugin the project's conftest loads (pytest_plugins): no test may print DEBUG
GUARD = (
    "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _quiet(capsys):\n    yield\n"
    "    assert 'DEBUG' not in capsys.readouterr().out\n"
)
TEST_LOUD = "import app\n\n\ndef test_loud():\n    assert app.loud() == 1\n"

# (project configuration, files at the base, the change: what each rule holds against)
SCENARIOS = {
    "warnings": (
        'filterwarnings = ["error"]\n',
        {"app.py": "def old():\n    return 1\n", "tests/test_a.py": TEST_WARNS},
        {"app.py": WARNS},
    ),
    "xfail": (
        "xfail_strict = true\n",
        {"app.py": "def double(x):\n    return x * 3\n", "tests/test_a.py": XFAIL},
        {"app.py": "def double(x):\n    return x * 2\n"},
    ),
    "plugin": (
        "",
        {
            "app.py": "def loud():\n    return 1\n",
            "guard.py": GUARD,
            "conftest.py": 'pytest_plugins = ["guard"]\n',
            "tests/test_a.py": TEST_LOUD,
        },
        {"app.py": "def loud():\n    print('DEBUG')\n    return 1\n"},
    ),
}


def setup(
    project: GitRepo,
    scenario: str,
    configured: bool = True,
    harmless: bool = False,
    config: str = "",
) -> None:
    """The project of ``scenario`` (its rule ``configured`` or not) and a change that breaks
    the rule (or, ``harmless``, only adds a comment)."""
    ini, files, change = SCENARIOS[scenario]
    pyproject = f"[tool.bounded-review]\n{config}[tool.pytest.ini_options]\n"
    pyproject += ini if configured else ""
    if scenario == "plugin" and not configured:
        files = {k: v for k, v in files.items() if k not in ("guard.py", "conftest.py")}
    if harmless:
        change = {"app.py": files["app.py"] + "# harmless\n"}
    project.commit({"pyproject.toml": pyproject, **files}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit(change, "change")


ATTACKS = [
    ("warnings", ["-W", "ignore::DeprecationWarning"], "-W ignore::DeprecationWarning"),
    ("warnings", ["-Wignore"], "-W ignore"),
    ("warnings", ["--pythonwarnings=ignore"], "--pythonwarnings ignore"),
    ("warnings", ["-p", "no:warnings"], "-p no:warnings"),
    ("warnings", ["-o", "filterwarnings=ignore"], "-o filterwarnings=ignore"),
    ("warnings", ["--override-ini=filterwarnings="], "--override-ini filterwarnings="),
    ("xfail", ["-o", "xfail_strict=false"], "-o xfail_strict=false"),
    ("xfail", ["--runxfail"], "--runxfail"),
    ("xfail", ["-p", "no:skipping"], "-p no:skipping"),
    ("plugin", ["-p", "no:guard"], "-p no:guard"),
]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_without_an_option_each_scenario_s_change_fails_the_project_s_rule(
    pytester: pytest.Pytester, project: GitRepo, scenario: str, workers: list[str]
) -> None:
    """What each weakening option below is given for: once per scenario, not per option."""
    setup(project, scenario)
    code, report = review(pytester, *workers)
    assert code == 1
    assert report["tests"]["failed"] == 1
    assert report["gate"]["review_clean"] != "yes", report["gate"]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize("where", ["command line", "PYTEST_ADDOPTS"])
@pytest.mark.parametrize(("scenario", "options", "named"), ATTACKS, ids=[a[2] for a in ATTACKS])
def test_an_option_that_weakens_the_outcome_configuration_is_a_partial_run(
    pytester: pytest.Pytester,
    project: GitRepo,
    scenario: str,
    options: list[str],
    named: str,
    where: str,
    workers: list[str],
) -> None:
    setup(project, scenario)  # without the option, the change fails the project's own rule
    if where == "command line":
        code, report = review(pytester, *workers, *options)
    else:
        addopts = " ".join([*options, "-p no:randomly -p no:hypothesispytest -p no:anyio"])
        code, report = review(pytester, *workers, env={"PYTEST_ADDOPTS": addopts})
    assert report["tests"]["failed"] == 0  # the option did what it was given for
    assert code == 1
    assert report["gate"]["review_clean"] == "indeterminate"
    assert report["statuses"]["local_verification"] == "partial"
    reasons = " ".join(report["gate"]["reasons"])
    assert f"the project's outcome configuration was weakened ({where}: {named}" in reasons


HARMLESS = [
    # the same options, where the project sets nothing they undo
    ("warnings", False, ["-W", "ignore::DeprecationWarning", "-p", "no:warnings"]),
    ("warnings", False, ["-o", "filterwarnings=ignore"]),
    ("xfail", False, ["-o", "xfail_strict=false", "--runxfail"]),
    ("plugin", False, ["-p", "no:guard"]),
    # options that tighten, plugins the project does not load, display only
    ("warnings", True, ["-W", "error", "-W", "error::UserWarning"]),
    ("warnings", True, ["-p", "no:cacheprovider", "-p", "no:randomly"]),
    ("warnings", True, ["--disable-warnings", "-q", "-rA", "--strict-markers"]),
    ("warnings", True, ["-o", "filterwarnings=error", "-o", "xfail_strict=true"]),
]


@pytest.mark.slow
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
@pytest.mark.parametrize(("scenario", "configured", "options"), HARMLESS)
def test_options_that_weaken_nothing_the_project_sets_stay_clean(
    pytester: pytest.Pytester,
    project: GitRepo,
    scenario: str,
    configured: bool,
    options: list[str],
    workers: list[str],
) -> None:
    setup(project, scenario, configured, harmless=configured)
    code, report = review(pytester, *workers, *options)
    assert_whole(code, report)


def test_allow_partial_accepts_a_weakening_option_and_says_so(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, "warnings", config="allow_partial = true\n")
    code, report = review(pytester, "-W", "ignore")
    assert (code, report["gate"]["review_clean"]) == (0, "yes"), report["gate"]
    assert any("(command line: -W ignore: " in line for line in report["limitations"])


@pytest.mark.parametrize(
    ("tokens", "project", "weakens"),
    [
        (["-W", "ignore"], {"filterwarnings": "error\nignore::UserWarning"}, True),
        (["-W", "ignore"], {"addopts": "-W error"}, True),
        (["-W", "ignore"], {"filterwarnings": ["ignore::UserWarning"]}, False),
        (["-W", "error::UserWarning"], {"filterwarnings": ["error"]}, False),
        (["-p", "no:unraisableexception"], {"filterwarnings": ["error"]}, True),
        (["-p", "no:threadexception"], {}, False),
        (["-p", "no:timeout"], {"required_plugins": "pytest-timeout>=2"}, True),
        (["-p", "no:pytest_timeout"], {"addopts": ["-p", "timeout"]}, True),
        (["-p", "no:guard"], {"pytest_plugins": ["tests.guard"]}, True),
        (["-pno:cacheprovider"], {"addopts": "-p cacheprovider"}, True),
        (["-p", "xdist"], {"filterwarnings": ["error"]}, False),
        (["-o", "strict_markers=false"], {"strict": "true"}, True),
        (["-o", "strict_config=false"], {"strict_config": True}, True),
        (["-o", "strict_config=true"], {"strict_config": True}, False),
        (["-o", "strict_xfail=0"], {"strict": True}, True),
        (["-o", "filterwarnings=error\nignore::X"], {"filterwarnings": ["error"]}, True),
        (["-o", "filterwarnings=error\nerror::X"], {"filterwarnings": ["error"]}, False),
        (["-o", "filterwarnings=error"], {"filterwarnings": ["ignore::X", "error"]}, False),
        (
            ["-o", "filterwarnings=error\nignore::X"],
            {"filterwarnings": ["ignore::X", "error"]},
            True,
        ),
        (["-o", "usefixtures="], {"usefixtures": "guard"}, True),
        (["-o", "empty_parameter_set_mark=skip"], {"empty_parameter_set_mark": "xfail"}, True),
        (["-o", "pythonpath=other"], {"pythonpath": "src"}, True),
        (["-o", "max_warnings=100"], {"max_warnings": "0"}, True),
        (["--max-warnings=100"], {"max_warnings": 3}, True),
        (["--max-warnings=1"], {"max_warnings": 3}, False),
        (["--continue-on-collection-errors"], {}, True),
        (["--disable-plugin-autoload"], {}, True),
        (["--runxfail"], {"xfail_strict": "false"}, False),
        (
            ["--disable-warnings", "-q", "-r", "fE", "--tb=short"],
            {"filterwarnings": "error"},
            False,
        ),
    ],
)
def test_the_rules_of_the_table(
    tokens: list[str], project: dict[str, object], weakens: bool
) -> None:
    assert bool(weakening(tokens, "command line", project)) is weakens


def test_every_rule_has_its_option_spelled_as_pytest_spells_it() -> None:
    assert all(o.startswith("-") for o in (*OUTCOME_OPTIONS, *OUTCOME_FLAGS))
