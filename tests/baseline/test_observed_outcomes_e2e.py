"""A test's outcome is observed, not taken from its report: a change whose code turns a failing
test into a pass — by whatever hook name, by running the test in pytest's stead, by catching
its exception or by editing its report — is a blocking finding at the file holding that code,
serially and on xdist workers. The project's own long-standing hooks, pytest's xfail and skip,
unittest cases, Hypothesis and async tests under a plugin are no finding."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from gitrepo import CHILD_OPTIONS as CHILD
from gitrepo import GitRepo
from test_partial_runs import review

APP = "def value():\n    return 1\n"
BROKEN_APP = "def value():\n    return 2\n"
TESTS = (
    "import app\n\n\ndef test_ok():\n    assert app.value() == 1\n\n\ndef test_other():\n    pass\n"
)
RULE = "scan: outcome_observed"
XDIST = [pytest.param((), id="serial"), pytest.param(("-n", "2"), id="xdist")]


def setup(project: GitRepo, files: dict[str, str] | None = None, config: str = "") -> None:
    project.commit(
        {"pyproject.toml": config, "app.py": APP, "tests/test_a.py": TESTS, **(files or {})},
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")


def observed(report: dict[str, Any]) -> list[dict[str, Any]]:
    found = [*report["findings"]["blocking"], *report["findings"]["advisory"]]
    return [f for f in found if f["note"] == RULE]


def reviewed(
    pytester: pytest.Pytester, project: GitRepo, *args: str, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any]]:
    with project.untouched():
        return review(pytester, *args, env=env)


MAKEREPORT_ALIASED = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef _f(item, call):\n"
    "    report = yield\n    if report.failed:\n"
    "        report.outcome = 'passed'\n        report.longrepr = None\n    return report\n\n\n"
    "pytest_runtest_makereport = _f\n"
)
PYFUNC_SWALLOWS = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_pyfunc_call(pyfuncitem):\n"
    "    args = {a: pyfuncitem.funcargs[a] for a in pyfuncitem._fixtureinfo.argnames}\n"
    "    try:\n        pyfuncitem.obj(**args)\n    except Exception:\n        pass\n"
    "    return True\n"
)
PYFUNC_NEVER_CALLS = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_pyfunc_call(pyfuncitem):\n"
    "    return True\n"
)
PYFUNC_CALLS_THE_ORIGINAL = (
    "import inspect\n\nimport pytest\n\n\n@pytest.hookimpl(tryfirst=True)\n"
    "def pytest_pyfunc_call(pyfuncitem):\n"
    "    try:\n        inspect.unwrap(pyfuncitem.obj)()\n    except Exception:\n        pass\n"
    "    return True\n"
)
LOGREPORT_TRYFIRST = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_logreport(report):\n"
    "    if report.failed:\n        report.outcome = 'passed'\n        report.longrepr = None\n"
)
RUNTEST_REPLACED = "import pytest\n\npytest.Function.runtest = lambda self: None\n"
CALL_WRAPPER_ALIASED = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef _quiet(item):\n"
    "    try:\n        return (yield)\n    except Exception:\n        return None\n\n\n"
    "pytest_runtest_call = _quiet\n"
)
PROTOCOL_ALIASED = (
    "import pytest\nfrom _pytest.reports import TestReport\n\n\n"
    "@pytest.hookimpl(tryfirst=True)\ndef _run(item, nextitem):\n"
    "    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)\n"
    "    for when in ('setup', 'call', 'teardown'):\n"
    "        report = TestReport(item.nodeid, item.location, {}, 'passed', None, when)\n"
    "        item.ihook.pytest_runtest_logreport(report=report)\n"
    "    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)\n"
    "    return True\n\n\npytest_runtest_protocol = _run\n"
)
REPORT_CLASS_PATCHED = (
    "from _pytest.reports import TestReport\n\n_made = TestReport.from_item_and_call.__func__\n\n\n"
    "def _passing(cls, item, call):\n    report = _made(cls, item, call)\n"
    "    if report.failed:\n        report.outcome = 'passed'\n        report.longrepr = None\n"
    "    return report\n\n\nTestReport.from_item_and_call = classmethod(_passing)\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize(
    ("path", "code", "line"),
    [
        # (a decorated function's code starts at its first decorator)
        pytest.param("tests/conftest.py", MAKEREPORT_ALIASED, 4, id="aliased makereport"),
        pytest.param("tests/conftest.py", PYFUNC_SWALLOWS, 4, id="pyfunc_call swallows"),
        pytest.param("tests/conftest.py", PYFUNC_NEVER_CALLS, 4, id="pyfunc_call never calls"),
        pytest.param("tests/conftest.py", PYFUNC_CALLS_THE_ORIGINAL, 6, id="calls the original"),
        pytest.param("tests/conftest.py", LOGREPORT_TRYFIRST, 4, id="tryfirst logreport"),
        pytest.param("tests/conftest.py", RUNTEST_REPLACED, 3, id="Function.runtest replaced"),
        pytest.param("tests/conftest.py", CALL_WRAPPER_ALIASED, 4, id="aliased runtest_call"),
        pytest.param("conftest.py", PROTOCOL_ALIASED, 5, id="aliased runtest_protocol"),
        pytest.param("tests/conftest.py", REPORT_CLASS_PATCHED, 6, id="TestReport patched"),
    ],
)
def test_a_change_that_reports_a_failing_test_as_passed_is_a_blocking_finding(
    pytester: pytest.Pytester,
    project: GitRepo,
    path: str,
    code: str,
    line: int,
    xdist: tuple[str, ...],
) -> None:
    setup(project)
    project.commit({"app.py": BROKEN_APP, path: code}, "break value, pass its test anyway")
    status, report = reviewed(pytester, project, *xdist)
    found = observed(report)
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [(path, line, "blocking")]
    assert "tests/test_a.py::test_ok (reported passed, but " in found[0]["evidence"]
    assert report["gate"]["review_clean"] == "no"
    assert status == 1


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize(
    ("path", "files", "line"),
    [
        pytest.param(
            "tests/test_b.py",
            {
                "app.py": BROKEN_APP,
                "tests/test_b.py": "import _pytest.python\n\n\ndef test_b():\n    pass\n\n\n"
                "_pytest.python.Function.runtest = lambda self: None\n",
            },
            8,
            id="a test module",
        ),
        pytest.param(
            "app.py",
            {
                "app.py": "import pytest\n\n\n" + BROKEN_APP + "\n\ndef _quiet(self):\n"
                "    return None\n\n\npytest.Function.runtest = _quiet\n",
            },
            8,
            id="package code",
        ),
    ],
)
def test_code_imported_by_the_tests_that_replaces_runtest_is_named(
    pytester: pytest.Pytester,
    project: GitRepo,
    path: str,
    files: dict[str, str],
    line: int,
    xdist: tuple[str, ...],
) -> None:
    setup(project)
    project.commit(files, "break value, replace runtest")
    status, report = reviewed(pytester, project, *xdist)
    found = observed(report)
    assert [(f["path"], f["line"]) for f in found] == [(path, line)]
    never = "tests/test_a.py::test_ok (reported passed, but the test function was never called)"
    assert never in found[0]["evidence"]
    assert report["gate"]["review_clean"] == "no"
    assert status == 1


KNOWN_BROKEN = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\ndef _known(item, call):\n"
    "    report = yield\n    if report.failed and item.name.startswith('test_known'):\n"
    "        report.outcome = 'passed'\n    return report\n\n\n"
    "pytest_runtest_makereport = _known\n"
)
HARMLESS = {"app.py": APP + "\n\ndef other():\n    return 3\n"}


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
def test_an_outcome_hook_the_base_already_has_is_no_finding_of_a_harmless_change(
    pytester: pytest.Pytester, project: GitRepo, xdist: tuple[str, ...]
) -> None:
    known = "def test_known():\n    assert False\n"
    setup(project, files={"tests/conftest.py": KNOWN_BROKEN, "tests/test_k.py": known})
    project.commit(HARMLESS, "add other()")
    status, report = reviewed(pytester, project, *xdist)
    assert observed(report) == []
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    said = [text for text in report["limitations"] if "reported otherwise" in text]
    assert len(said) == 1
    assert "by code the change does not touch (tests/conftest.py)" in said[0]
    assert "tests/test_k.py::test_known (reported passed, but it raised AssertionError)" in said[0]
    assert status == 0


INNOCENT_HOOKS = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_logreport(report):\n"
    "    report.user_properties.append(('seen', report.outcome))\n\n\n"
    "@pytest.hookimpl(wrapper=True)\ndef pytest_runtest_makereport(item, call):\n"
    "    report = yield\n    report.sections.append(('extra', 'a note'))\n    return report\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
def test_a_change_adding_hooks_that_leave_outcomes_alone_stays_clean(
    pytester: pytest.Pytester, project: GitRepo, xdist: tuple[str, ...]
) -> None:
    # the name-based scan flags the makereport wrapper; this project accepts it as advisory
    setup(project, config='[tool.bounded-review.scans]\nreport_hooks = "advisory"\n')
    project.commit({**HARMLESS, "tests/conftest.py": INNOCENT_HOOKS}, "note each report")
    status, report = reviewed(pytester, project, *xdist)
    assert observed(report) == []
    assert [f["note"] for f in report["findings"]["advisory"]] == ["scan: report_hooks"]
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    assert not [text for text in report["limitations"] if "reported otherwise" in text]
    assert status == 0


LEGITIMATE = {
    "tests/test_kinds.py": (
        "import inspect\nimport unittest\n\nimport pytest\nfrom hypothesis import example, given\n"
        "from hypothesis import strategies as st\n\n\n"
        "@pytest.mark.xfail(reason='known')\ndef test_xfail():\n    assert False\n\n\n"
        "@pytest.mark.xfail(reason='fixed since')\ndef test_xpass():\n    pass\n\n\n"
        "def test_imperative_xfail():\n    pytest.xfail('later')\n\n\n"
        "def test_skips_itself():\n    pytest.skip('not here')\n\n\n"
        "def test_unittest_skip():\n    raise unittest.SkipTest('not here')\n\n\n"
        "@given(st.integers())\n@example(0)\ndef test_hypothesis(x):\n"
        "    assert isinstance(x, int)\n\n\n"
        "def test_hypothesis_attributes_survive(request):\n"
        "    assert request.node.obj.__name__ == 'test_hypothesis_attributes_survive'\n"
        "    assert test_hypothesis.is_hypothesis_test\n\n\n"
        "@pytest.mark.anyio\nasync def test_async(request):\n"
        "    assert inspect.iscoroutinefunction(request.node.obj)\n\n\n"
        "class TestMethods:\n    @pytest.mark.parametrize('n', [1, 2])\n"
        "    def test_method(self, n):\n        assert n in (1, 2)\n\n\n"
        "class Case(unittest.TestCase):\n    def test_passes(self):\n"
        "        self.assertTrue(True)\n\n"
        "    @unittest.skip('not here')\n    def test_skipped(self):\n        self.fail()\n"
    )
}
PLUGINS = {"PYTEST_ADDOPTS": "-p no:randomly -p no:platformdirs"}  # hypothesis and anyio load


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
def test_xfail_skip_unittest_hypothesis_and_async_tests_are_no_finding(
    pytester: pytest.Pytester, project: GitRepo, xdist: tuple[str, ...]
) -> None:
    setup(project, files=LEGITIMATE)
    project.commit(HARMLESS, "add other()")
    status, report = reviewed(pytester, project, *xdist, env=PLUGINS)
    assert observed(report) == []
    assert report["gate"] == {"review_clean": "yes", "reasons": []}, report["gate"]
    assert not [text for text in report["limitations"] if "reported otherwise" in text]
    assert report["tests"]["passed"] == 9  # test_a's two, xpass, hypothesis's two, async, 3
    assert status == 0


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
def test_a_failing_hypothesis_test_fails_as_before_without_the_wrapper_in_sight(
    pytester: pytest.Pytester, project: GitRepo, xdist: tuple[str, ...]
) -> None:
    given = (
        "from hypothesis import given\nfrom hypothesis import strategies as st\n\nimport app\n\n\n"
        "@given(st.integers(0, 3))\ndef test_value(x):\n    assert app.value() == 1\n"
    )
    setup(project, files={"tests/test_h.py": given})
    project.commit({"app.py": BROKEN_APP}, "break value")
    status, report = reviewed(pytester, project, *xdist, env=PLUGINS)
    assert observed(report) == []
    related = {t["nodeid"]: t["signature"] for t in report["tests"]["target_related"]}
    assert sorted(related) == ["tests/test_a.py::test_ok", "tests/test_h.py::test_value"]
    assert "watched" not in report["stdout"]  # hidden from tracebacks
    assert "watched" not in related["tests/test_h.py::test_value"]
    assert report["gate"]["review_clean"] == "no"
    assert status == 1


# Code is the change's by its own definition, read when the test ran, not by its file.
MARKS_TESTS = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
    "    for item in items:\n        item.add_marker(pytest.mark.unit)\n"
)
TOLERANT_TESTS = (
    "import pytest\n\nimport app\n\n\n@pytest.fixture(autouse=True)\ndef _tolerant(request):\n"
    "    test = request.node.obj\n\n    def run(*args, **kwargs):\n        try:\n"
    "            return test(*args, **kwargs)\n        except AssertionError:\n"
    "            return None\n\n    request.node.obj = run\n\n\n"
    "def test_ok():\n    assert app.value() == 1\n\n\ndef test_other():\n    pass\n"
)
RUNTEST_MONKEYPATCHED = (
    "import pytest\n\n\n@pytest.fixture(autouse=True)\ndef _quiet(monkeypatch):\n"
    '    monkeypatch.setattr(pytest.Function, "runtest", lambda self: None)\n'
)
RUNTEST_SET_AND_RESTORED = (  # gone by the test's teardown report; xunit setup is no fixture's
    "import pytest\n\nimport app\n\n_saved = pytest.Function.runtest\n\n\n"
    "def setup_function():\n    pytest.Function.runtest = lambda self: None\n\n\n"
    "def teardown_function():\n    pytest.Function.runtest = _saved\n\n\n"
    "def test_ok():\n    assert app.value() == 1\n\n\ndef test_other():\n    pass\n"
)
SETUP_HOOK = "def pytest_runtest_setup(item):\n    pass\n"
UNIT_MARKER = '[tool.pytest.ini_options]\nmarkers = ["unit: unit tests"]\n'
_, _, ALIAS = MAKEREPORT_ALIASED.rpartition("\n\n\n")
KNOWN = {"tests/test_k.py": "def test_known():\n    assert False\n"}


OUTSIDE_PLUGIN = (
    "import pytest\n\n\n@pytest.hookimpl(tryfirst=True)\ndef pytest_runtest_logreport(report):\n"
    "    if report.failed:\n        report.outcome = 'passed'\n"
)


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize(
    "base",
    [
        pytest.param({}, id="no hook"),
        # a collection hook cannot turn a call into a report: it explains nothing
        pytest.param({"conftest.py": MARKS_TESTS}, id="a base hook that adds marks"),
    ],
)
def test_a_divergence_no_code_of_the_project_explains_is_indeterminate(
    pytester: pytest.Pytester,
    project: GitRepo,
    base: dict[str, str],
    xdist: tuple[str, ...],
    tmp_path_factory: Any,
) -> None:
    outside = tmp_path_factory.mktemp("elsewhere")
    (outside / "passing_plugin.py").write_text(OUTSIDE_PLUGIN)
    setup(project, files=base, config=UNIT_MARKER)
    project.commit({"app.py": BROKEN_APP}, "break value")
    env = {"PYTHONPATH": str(outside), "PYTEST_ADDOPTS": f"{CHILD} -p passing_plugin"}
    status, report = reviewed(pytester, project, *xdist, env=env)
    assert observed(report) == []
    assert report["gate"]["review_clean"] == "indeterminate"
    [reason] = report["gate"]["reasons"]
    assert reason.startswith("1 test(s) reported otherwise than they ran, and no code of the ")
    assert "tests/test_a.py::test_ok (reported passed, but it raised AssertionError)" in reason
    assert status == 1


@pytest.mark.slow
def test_a_shard_whose_tests_were_reported_otherwise_is_incomplete_and_its_merge_undecided(
    pytester: pytest.Pytester, project: GitRepo
) -> None:
    out = pytester.path / ".bounded-review" / "shards"  # outputs stay inside the repository
    setup(project)
    project.commit({"app.py": BROKEN_APP, "tests/conftest.py": MAKEREPORT_ALIASED}, "pass anyway")
    with project.untouched():
        shard = pytester.runpytest_subprocess(
            "-p", "no:randomly", "--bounded-review", "--bounded-review-base=main",
            "--bounded-review-shard", f"--bounded-review-report={out / 'shard.json'}",
        )  # fmt: skip
        assert shard.ret == 0  # a shard records; the merge gates
        recorded = json.loads((out / "shard.json").read_text())
        assert recorded["shard"]["complete"] is False
        assert "tests reported otherwise than they ran, in tests/conftest.py" in " ".join(
            recorded["gate"]["reasons"]
        )
        merged = pytester.run(
            sys.executable, "-m", "pytest_boundedreview", "merge", out / "shard.json",
            f"--report={out / 'final.json'}",
        )  # fmt: skip
    final = json.loads((out / "final.json").read_text())
    assert final["gate"]["review_clean"] == "indeterminate"
    assert final["gate"]["reasons"][0].startswith(
        "shard shard.json is incomplete: tests reported otherwise than they ran, in tests/"
    )
    assert merged.ret == 2


STRICT = ("-W", "error", "--strict-config", "--strict-markers", "-p", "no:cacheprovider")


@pytest.mark.slow
@pytest.mark.parametrize(
    "extra", [pytest.param(STRICT, id="strict"), pytest.param(("-p", "no:xdist"), id="no xdist")]
)
def test_under_strict_options_only_the_rewritten_test_is_named(
    pytester: pytest.Pytester, project: GitRepo, extra: tuple[str, ...]
) -> None:
    setup(project, files=LEGITIMATE)
    project.commit({"app.py": BROKEN_APP, "tests/conftest.py": MAKEREPORT_ALIASED}, "pass anyway")
    status, report = reviewed(pytester, project, *extra, env=PLUGINS)
    [found] = observed(report)
    assert found["evidence"].startswith(
        "observed in the session: tests/test_a.py::test_ok (reported passed, but it raised "
        "AssertionError). In tests/conftest.py:"
    )
    assert report["gate"]["review_clean"] == "no"
    assert status == 1


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize(
    ("base", "change", "path", "line"),
    [
        pytest.param(
            {"conftest.py": MARKS_TESTS},
            {"tests/test_a.py": TOLERANT_TESTS},
            "tests/test_a.py",
            6,
            id="a fixture in the test module replaces item.obj",
        ),
        pytest.param(
            {},
            {"tests/conftest.py": RUNTEST_MONKEYPATCHED},
            "tests/conftest.py",
            4,
            id="a fixture monkeypatches runtest",
        ),
        pytest.param(
            {},
            {"tests/test_a.py": RUNTEST_SET_AND_RESTORED},
            "tests/test_a.py",
            9,
            id="runtest replaced for the test's call only",
        ),
        pytest.param(
            {"conftest.py": SETUP_HOOK},
            {"tests/conftest.py": RUNTEST_MONKEYPATCHED},
            "tests/conftest.py",
            4,
            id="a fixture monkeypatches runtest beside a base hook",
        ),
        pytest.param(
            {"tests/conftest.py": KNOWN_BROKEN, **KNOWN},
            {
                "tests/conftest.py": KNOWN_BROKEN.replace(
                    " and item.name.startswith('test_known')", ""
                )
            },
            "tests/conftest.py",
            4,
            id="the base's hook edited",
        ),
        pytest.param(
            {"tests/conftest.py": MAKEREPORT_ALIASED.removesuffix(ALIAS)},
            {"tests/conftest.py": MAKEREPORT_ALIASED},
            "tests/conftest.py",
            1,
            id="the base's function newly bound as a hook",
        ),
    ],
)
def test_code_the_change_adds_or_edits_is_named_whatever_the_base_holds_beside_it(
    pytester: pytest.Pytester,
    project: GitRepo,
    base: dict[str, str],
    change: dict[str, str],
    path: str,
    line: int,
    xdist: tuple[str, ...],
) -> None:
    setup(project, files=base, config=UNIT_MARKER)
    project.commit({"app.py": BROKEN_APP, **change}, "break value, pass its test anyway")
    status, report = reviewed(pytester, project, *xdist)
    found = observed(report)
    assert [(f["path"], f["line"], f["severity"]) for f in found] == [(path, line, "blocking")]
    assert "tests/test_a.py::test_ok (reported passed, but " in found[0]["evidence"]
    assert not [text for text in report["limitations"] if "reported otherwise" in text]
    assert report["gate"]["review_clean"] == "no"
    assert status == 1


QUARANTINE = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n    report = yield\n"
    "    if report.failed and item.get_closest_marker('known_issue'):\n"
    "        report.outcome = 'skipped'\n"
    "        report.longrepr = (str(item.path), 0, 'quarantined: known issue')\n"
    "    return report\n"
)
QUARANTINED = "import pytest\n\n\n@pytest.mark.known_issue\ndef test_known():\n    assert False\n"
NUMBERS = "\n\n@pytest.fixture\ndef numbers():\n    return [1, 2, 3]\n"


@pytest.mark.slow
@pytest.mark.parametrize("xdist", XDIST)
@pytest.mark.parametrize(
    "change",
    [
        pytest.param({"tests/conftest.py": "import os\n" + QUARANTINE + NUMBERS}, id="beside it"),
        pytest.param({"notes.txt": "notes\n"}, id="elsewhere"),
    ],
)
def test_a_change_beside_the_bases_unchanged_hook_stays_clean(
    pytester: pytest.Pytester, project: GitRepo, change: dict[str, str], xdist: tuple[str, ...]
) -> None:
    files = {"tests/conftest.py": QUARANTINE, "tests/test_k.py": QUARANTINED}
    setup(project, files=files, config='[tool.pytest.ini_options]\nmarkers = ["known_issue: q"]\n')
    project.commit(change, "a shared fixture")
    status, report = reviewed(pytester, project, *xdist)
    assert observed(report) == []
    assert report["gate"] == {"review_clean": "yes", "reasons": []}
    [said] = [text for text in report["limitations"] if "reported otherwise" in text]
    assert "by code the change does not touch (tests/conftest.py)" in said
    assert "tests/test_k.py::test_known (reported skipped, but it raised AssertionError" in said
    assert status == 0
