"""Whether code that ran is the base's: by its own definition, not by its file."""

from __future__ import annotations

from pytest_boundedreview.checks.samecode import unchanged

HOOK = (
    "import pytest\n\n\n@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    return (yield)\n"
)
FIXTURE = "\n\n@pytest.fixture\ndef numbers():\n    return [1, 2, 3]\n"


def test_a_definition_moved_beside_new_code_is_the_bases() -> None:
    now = "import os\n" + HOOK + FIXTURE
    assert unchanged(now, HOOK, 5, "implements pytest_runtest_makereport (f)")
    assert unchanged(now, HOOK, 1, "registers pytest_runtest_makereport (f)")
    assert not unchanged(now, HOOK, 8, "is the fixture numbers, used by the test")


def test_an_edited_or_absent_definition_is_the_changes() -> None:
    edited = HOOK.replace("return (yield)", "return None")
    assert not unchanged(edited, HOOK, 4, "implements pytest_runtest_makereport (f)")
    assert not unchanged(HOOK, None, 4, "implements pytest_runtest_makereport (f)")
    assert not unchanged("def (:\n", HOOK, 1, "implements x")  # unparsable: not cleared
    assert not unchanged(HOOK, HOOK, 3, "implements x")  # no code starts there: not cleared


def test_a_closure_or_lambda_is_judged_by_what_holds_it() -> None:
    base = "import pytest\n\n\ndef _quiet(monkeypatch):\n    pass\n\n\nf = lambda self: None\n"
    now = (
        "import pytest\n\n\ndef _quiet(monkeypatch):\n"
        "    monkeypatch.setattr(pytest.Function, 'runtest', lambda self: None)\n\n\n"
        "pytest.Function.runtest = lambda self: None\n"
    )
    assert not unchanged(now, base, 5, "runs Function tests (runtest)")  # _quiet changed
    assert not unchanged(now, base, 8, "runs Function tests (runtest)")  # a new statement
    assert unchanged(base, base, 8, "runs Function tests (runtest)")


def test_a_hook_newly_bound_to_the_bases_function_is_the_changes() -> None:
    base = "def _f(item, call):\n    pass\n"
    now = base + "\n\npytest_runtest_makereport = _f\n"
    assert unchanged(now, base, 1, "implements pytest_runtest_makereport (_f)")
    assert not unchanged(now, base, 1, "registers pytest_runtest_makereport (_f)")


def test_a_test_class_is_judged_whole() -> None:
    base = "class Item:\n    class Inner:\n        def runtest(self):\n            pass\n"
    assert unchanged(base, base, 1, "defines the test class Item.Inner")
    edited = base.replace("pass", "return None")
    assert not unchanged(edited, base, 1, "defines the test class Item.Inner")
    assert not unchanged(base, base, 1, "defines the test class Missing")


def test_a_binding_no_statement_makes_is_not_cleared() -> None:
    base = "def _f(item, call):\n    pass\n"
    now = base + "\n\nglobals()['pytest_runtest_makereport'] = _f\n"
    assert not unchanged(now, base, 1, "registers pytest_runtest_makereport (_f)")
    named = (
        "import pytest\n\n\n@pytest.hookimpl(specname='pytest_runtest_makereport')\n"
        "def _f(item, call):\n    pass\n"
    )
    assert unchanged(named + "\n\nx = 1\n", named, 1, "registers pytest_runtest_makereport (_f)")
