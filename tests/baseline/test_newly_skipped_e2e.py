"""Newly skipped by outcome, not by pattern: a test skipped or xfailed in the session that passes
at the base is a finding with the ``skip_added`` severity, however the skip was made. A test
skipped at the base too is no finding, and ``skip_added = "off"`` asks the base nothing."""

from __future__ import annotations

from typing import Any

import pytest
from gitrepo import GitRepo
from test_partial_runs import review

BASE_TESTS = (
    "import app\n\n\ndef test_ok():\n    assert app.value() == 1\n\n\ndef test_other():\n    pass\n"
)


def setup(
    project: GitRepo, skip_added: str = "blocking", files: dict[str, str] | None = None
) -> None:
    config = f'[tool.bounded-review.scans]\nskip_added = "{skip_added}"\n'
    project.commit(
        {
            "pyproject.toml": config,
            "app.py": "ENABLED = True\n\n\ndef value():\n    return 1\n",
            "tests/test_a.py": BASE_TESTS,
            **(files or {}),
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")


def skipped_findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    found = [*report["findings"]["blocking"], *report["findings"]["advisory"]]
    return [f for f in found if f["note"] == "scan: skip_added (by outcome)"]


BROKEN_APP = {"app.py": "ENABLED = True\n\n\ndef value():\n    return 2\n"}


@pytest.mark.slow
@pytest.mark.parametrize(
    "test_file",
    [
        pytest.param(
            "import pytest\n\nimport app\n\n\ndef test_ok():\n"
            "    pytest.importorskip('a_module_nobody_has')\n    assert app.value() == 1\n\n\n"
            "def test_other():\n    pass\n",
            id="importorskip",
        ),
        pytest.param(
            "import pytest as pt\n\nimport app\n\n\n@pt.mark.skip\ndef test_ok():\n"
            "    assert app.value() == 1\n\n\ndef test_other():\n    pass\n",
            id="aliased marker",
        ),
        pytest.param(
            "import unittest\n\nimport app\n\n\ndef test_ok():\n"
            "    if app.value() != 1:\n        raise unittest.SkipTest('later')\n\n\n"
            "def test_other():\n    pass\n",
            id="unittest.SkipTest",
        ),
        pytest.param(
            "import pytest\n\nimport app\n\n\n@pytest.mark.xfail(reason='known')\n"
            "def test_ok():\n    assert app.value() == 1\n\n\ndef test_other():\n    pass\n",
            id="xfail",
        ),
    ],
)
def test_a_change_that_skips_the_test_it_breaks_is_a_finding(
    pytester: pytest.Pytester, project: GitRepo, test_file: str
) -> None:
    setup(project)
    project.commit({**BROKEN_APP, "tests/test_a.py": test_file}, "break value, skip its test")
    code, report = review(pytester)
    found = skipped_findings(report)
    assert [f["failure_mode"] for f in found] == [
        "test tests/test_a.py::test_ok is skipped after the change"
    ]
    assert found[0]["severity"] == "blocking"
    assert found[0]["path"] == "tests/test_a.py"
    assert "passed" in found[0]["evidence"]
    assert report["gate"]["review_clean"] == "no"
    assert code == 1


@pytest.mark.slow
def test_a_skip_marker_added_from_a_conftest_is_a_finding(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    conftest = (
        "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
        "    for item in items:\n"
        "        if item.name == 'test_ok':\n"
        "            item.add_marker(pytest.mark.skip(reason='flaky'))\n"
    )
    project.commit({**BROKEN_APP, "tests/conftest.py": conftest}, "skip from a conftest")
    code, report = review(pytester)
    found = skipped_findings(report)
    assert [f["line"] for f in found] == [4]  # at the test's definition
    assert report["gate"]["review_clean"] == "no"
    assert code == 1


@pytest.mark.slow
def test_a_file_skipped_whole_names_each_test_that_passes_at_base(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, files={"tests/test_b.py": "def test_b():\n    pass\n"})
    skipped = "import pytest\n\npytest.skip('later', allow_module_level=True)\n\n" + BASE_TESTS
    project.commit({**BROKEN_APP, "tests/test_a.py": skipped}, "skip the whole file")
    code, report = review(pytester)
    modes = sorted(f["failure_mode"] for f in skipped_findings(report))
    assert modes == [
        "test tests/test_a.py::test_ok is skipped after the change",
        "test tests/test_a.py::test_other is skipped after the change",
    ]
    assert code == 1


@pytest.mark.slow
def test_a_source_change_that_turns_a_skip_condition_on_is_a_finding(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    conditional = (
        "import pytest\n\nimport app\n\n\n"
        "@pytest.mark.skipif(not app.ENABLED, reason='off')\n"
        "def test_ok():\n    assert app.value() == 1\n"
    )
    setup(project, files={"tests/test_a.py": conditional})
    project.commit({"app.py": "ENABLED = False\n\n\ndef value():\n    return 2\n"}, "turn off")
    code, report = review(pytester)
    assert [f["line"] for f in skipped_findings(report)] == [6]
    assert code == 1


@pytest.mark.slow
def test_a_test_skipped_at_the_base_too_is_no_finding(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    always = (
        "import pytest\n\n\n@pytest.mark.skip(reason='windows only')\ndef test_win():\n    pass\n"
    )
    setup(project, files={"tests/test_win.py": always})
    project.commit({"app.py": "ENABLED = True\n\n\ndef value():\n    return 1  # same\n"}, "same")
    code, report = review(pytester)
    assert skipped_findings(report) == []
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert code == 0
    again = review(pytester)  # the base's answer is cached
    assert "asking base" in report["stdout"]
    assert "asking base" not in again[1]["stdout"]
    assert again[1]["gate"] == report["gate"]


@pytest.mark.slow
def test_a_new_skipped_test_is_no_finding(pytester: pytest.Pytester, project: GitRepo) -> None:
    setup(project)
    new = BASE_TESTS + "\n\n@__import__('pytest').mark.skip\ndef test_new():\n    pass\n"
    project.commit({"tests/test_a.py": new}, "a new test, skipped for now")
    code, report = review(pytester)
    assert skipped_findings(report) == []
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert code == 0


def test_skip_added_off_asks_the_base_nothing(pytester: pytest.Pytester, project: GitRepo) -> None:
    always = (
        "import pytest\n\n\n@pytest.mark.skip(reason='windows only')\ndef test_win():\n    pass\n"
    )
    setup(project, skip_added="off", files={"tests/test_win.py": always})
    project.commit({"app.py": "ENABLED = True\n\n\ndef value():\n    return 1  # same\n"}, "same")
    code, report = review(pytester)
    assert "asking base" not in report["stdout"]
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert code == 0


@pytest.mark.slow
def test_newly_skipped_is_advisory_by_default(pytester: pytest.Pytester, project: GitRepo) -> None:
    project.commit(
        {
            "app.py": "ENABLED = True\n\n\ndef value():\n    return 1\n",
            "tests/test_a.py": BASE_TESTS,
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    skipping = BASE_TESTS.replace("def test_ok", "@__import__('pytest').mark.skip\ndef test_ok")
    project.commit({"tests/test_a.py": skipping}, "skip")
    code, report = review(pytester)
    assert [f["severity"] for f in skipped_findings(report)] == ["advisory"]
    assert code == 0


@pytest.mark.slow
def test_a_renamed_file_skipped_whole_is_asked_where_the_base_has_it(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project, files={"tests/test_b.py": "def test_b():\n    pass\n"})
    project.git("mv", "tests/test_a.py", "tests/test_c.py")
    skipped = "import pytest\n\npytest.importorskip('a_module_nobody_has')\n\n" + BASE_TESTS
    project.commit({**BROKEN_APP, "tests/test_c.py": skipped}, "rename, skip the whole file")
    code, report = review(pytester)
    found = skipped_findings(report)
    assert sorted(f["failure_mode"] for f in found) == [
        "test tests/test_a.py::test_ok is skipped after the change",
        "test tests/test_a.py::test_other is skipped after the change",
    ]
    assert {f["path"] for f in found} == {"tests/test_c.py"}  # where it is now
    assert code == 1


@pytest.mark.slow
def test_many_new_skipped_tests_do_not_crowd_out_an_old_one(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    setup(project)
    crowd = (
        "import pytest\n\n\n@pytest.mark.parametrize('i', range(60))\n"
        "def test_crowd(i):\n    pytest.skip('later')\n"
    )
    skipping = BASE_TESTS.replace("def test_ok", "@__import__('pytest').mark.skip\ndef test_ok")
    project.commit(
        {**BROKEN_APP, "tests/test_a.py": skipping, "tests/test_crowd.py": crowd}, "crowd"
    )
    code, report = review(pytester)
    assert [f["failure_mode"] for f in skipped_findings(report)] == [
        "test tests/test_a.py::test_ok is skipped after the change"
    ]
    assert code == 1
