"""The base re-run (and a re-run at head in a new process) is given the environment the session
started with: a variable the change's conftest, test module or package code sets as it is
imported never reaches the base, which would then behave as the change does."""

from __future__ import annotations

import pytest
from gitrepo import GitRepo
from test_baseline_e2e import XDIST, ids, review

pytestmark = pytest.mark.slow  # every test here runs whole review sessions

# limit() is 5, unless APP_MODE says lenient: then the base answers as the broken change does.
APP = (
    "import os\n\n\ndef limit():\n    return 10 if os.environ.get('APP_MODE') == 'lenient' else 5\n"
)
BROKEN = APP.replace("else 5", "else 10")
TEST = "from app import limit\n\n\ndef test_limit():\n    assert limit() == 5\n"
LENIENT = "import os\n\nos.environ['APP_MODE'] = 'lenient'\n"

# Where the change sets the variable, each imported before the tests run.
SETTERS = {
    "conftest": {"app.py": BROKEN, "conftest.py": LENIENT},
    "test-module": {
        "app.py": BROKEN,
        "test_setup.py": LENIENT + "\n\ndef test_setup():\n    pass\n",
    },
    "package-code": {"app.py": LENIENT + APP},
}


@pytest.fixture
def limited(project: GitRepo) -> GitRepo:
    """``main`` passes test_limit; ``feature`` branches off it."""
    project.commit({"app.py": APP, "test_app.py": TEST}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    return project


@pytest.mark.parametrize(
    ("setter", "extra"),
    [
        pytest.param("conftest", [], id="conftest-serial"),
        pytest.param("conftest", ["-n", "2"], id="conftest-xdist"),
        # Under xdist only the workers import test modules and package code.
        pytest.param("test-module", [], id="test-module-serial"),
        pytest.param("package-code", [], id="package-code-serial"),
    ],
)
def test_a_variable_the_change_sets_on_import_does_not_reach_the_base(
    pytester: pytest.Pytester, limited: GitRepo, setter: str, extra: list[str]
) -> None:
    limited.commit(SETTERS[setter], "break limit, and say lenient")
    with limited.untouched():
        result, report = review(pytester, *extra)
    assert ids(report, "target_related") == ["test_app.py::test_limit"]
    assert report["tests"]["target_related"][0]["reason"] == "passes at base"
    assert ids(report, "pre_existing") == []
    assert report["gate"]["review_clean"] == "no"
    assert result.ret == 1


# The change's conftest says lenient only to a process that did not start the session, and its
# limit() is wrong on the first call of a process only: the session fails, the re-run in its own
# process passes (a warm state), and a fresh process given what the session's conftest left
# would pass too and make the failure flaky. (Under xdist the workers inherit what the
# controller's conftest left, and nothing fails: there is nothing to hide.)
SECOND_TIME = (
    "import os\n\n"
    "os.environ['APP_MODE'] = 'lenient' if os.environ.get('APP_SEEN') else 'strict'\n"
    "os.environ['APP_SEEN'] = '1'\n"
)
WARMS_UP = (
    "import os\n\nCALLS = []\n\n\n"
    "def limit():\n"
    "    CALLS.append(1)\n"
    "    return 5 if os.environ['APP_MODE'] == 'lenient' or len(CALLS) > 1 else 10\n"
)


def test_a_fresh_process_at_head_starts_as_the_session_did(
    pytester: pytest.Pytester, limited: GitRepo
) -> None:
    limited.commit({"conftest.py": SECOND_TIME, "app.py": WARMS_UP}, "warm up")
    with limited.untouched():
        result, report = review(pytester)
    assert ids(report, "flaky") == []
    assert ids(report, "target_related") == ["test_app.py::test_limit"]
    assert report["gate"]["review_clean"] == "no"
    assert result.ret == 1


@pytest.mark.parametrize("extra", XDIST)
def test_a_variable_the_base_sets_itself_still_makes_its_failure_pre_existing(
    pytester: pytest.Pytester, project: GitRepo, extra: list[str]
) -> None:
    """The base's own conftest sets the variable, and the change keeps it: its re-run loads
    that conftest and sets it again."""
    project.commit({"app.py": APP, "test_app.py": TEST, "conftest.py": LENIENT}, "base")
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"README.md": "docs\n"}, "docs")
    with project.untouched():
        result, report = review(pytester, *extra)
    assert ids(report, "pre_existing") == ["test_app.py::test_limit"]
    assert ids(report, "target_related") == []
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


def test_a_variable_the_session_started_with_reaches_the_base(
    pytester: pytest.Pytester, limited: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The user's own environment is the base's too."""
    limited.commit({"README.md": "docs\n"}, "docs")
    monkeypatch.setenv("APP_MODE", "lenient")
    with limited.untouched():
        result, report = review(pytester)
    assert ids(report, "pre_existing") == ["test_app.py::test_limit"]
    assert report["gate"]["review_clean"] == "yes"
    assert result.ret == 0


CHECK = (
    "import sys\n\nfrom app import limit\n\n"
    "if limit() != 5:\n    print(f'limit is {limit()}')\n    sys.exit(1)\n"
)
CHECKED = '[[tool.bounded-review.checks]]\nname = "limit"\ncommand = ["python", "check.py"]\n'


def test_a_check_command_at_the_base_gets_the_environment_the_session_started_with(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    """The check finds the change's broken limit at head; given what the change's conftest
    set, the base would find it too, and the finding would be pre-existing."""
    project.commit(
        {
            "app.py": APP,
            "check.py": CHECK,
            "test_ok.py": "def test_ok():\n    pass\n",
            "pyproject.toml": CHECKED,
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    project.commit({"app.py": BROKEN, "conftest.py": LENIENT}, "break limit, and say lenient")
    with project.untouched():
        result, report = review(pytester)
    [check] = report["checks"]
    assert check["status"] == "fail"
    assert [f["rule"] for f in check["target_related"]] == ["limit:exit"]
    assert check["pre_existing"] == []
    assert report["gate"]["review_clean"] == "no"
    assert result.ret == 1
