"""What the witness stamps on each test's teardown report: what the test's call did, seen by a
wrapper around its function, or that it was not observed (a kind of test it cannot wrap)."""

from __future__ import annotations

import pytest

from pytest_boundedreview.baseline.athead.witness import STAMP, Witness


def stamps(pytester: pytest.Pytester, *args: str) -> dict[str, str]:
    reprec = pytester.inline_run("-p", "no:randomly", *args, plugins=[Witness(pytester.path)])
    reports = reprec.getreports("pytest_runtest_logreport")
    return {r.nodeid.split("::", 1)[1]: getattr(r, STAMP) for r in reports if r.when == "teardown"}


def test_each_kind_of_call_is_stamped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_kinds="""
        import unittest

        import pytest


        def test_passes():
            pass


        def test_fails():
            raise ValueError("no")


        def test_skips_itself():
            pytest.skip("not here")


        def test_unittest_skip():
            raise unittest.SkipTest("not here")


        @pytest.mark.xfail(reason="known")
        def test_xfail():
            assert False


        def test_imperative_xfail():
            pytest.xfail("later")


        @pytest.mark.skip(reason="not here")
        def test_skipped_before_its_call():
            pass


        class TestMethods:
            @pytest.mark.parametrize("n", [1, 2])
            def test_method(self, n):
                assert n == 1


        async def test_async():
            pass


        class Case(unittest.TestCase):
            def test_case(self):
                pass
        """
    )
    assert stamps(pytester) == {  # (the async test fails: no plugin runs it here)
        "test_passes": "returned",
        "test_fails": "raised:ValueError",
        "test_skips_itself": "skip",
        "test_unittest_skip": "skip",
        "test_xfail": "xfail:AssertionError",
        "test_imperative_xfail": "xfail:XFailed",
        "test_skipped_before_its_call": "not-called",
        "TestMethods::test_method[1]": "returned",
        "TestMethods::test_method[2]": "raised:AssertionError",
        "test_async": "unobserved",
        "Case::test_case": "unobserved",
    }


def test_a_raise_stays_on_record_when_the_test_is_called_again(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import pytest


        @pytest.hookimpl(tryfirst=True)
        def pytest_pyfunc_call(pyfuncitem):
            try:
                pyfuncitem.obj()
            except AssertionError:
                pyfuncitem.obj()
            return True
        """
    )
    pytester.makepyfile(
        test_twice="""
        CALLS = []


        def test_fails_once():
            CALLS.append(1)
            assert len(CALLS) > 1
        """
    )
    assert stamps(pytester) == {"test_fails_once": "raised:AssertionError"}


def test_the_wrapper_keeps_what_pytest_and_plugins_read_of_the_test(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_seen="""
        import inspect


        def marked():
            pass


        def test_reads_itself(request):
            test = request.node.obj
            assert test.__name__ == "test_reads_itself"
            assert inspect.unwrap(test) is not test
            assert request.node.location[1] == 7  # the test's own line, not the wrapper's
            assert inspect.signature(test).parameters.keys() == {"request"}


        def test_fails():
            assert 1 == 2
        """
    )
    result = pytester.runpytest_inprocess("-p", "no:randomly", plugins=[Witness(pytester.path)])
    result.assert_outcomes(passed=1, failed=1)
    assert "watched" not in result.stdout.str()  # the wrapper hides from tracebacks


def test_a_subtests_report_is_not_held_against_its_test_while_it_runs(
    pytester: pytest.Pytester,
) -> None:
    """pytest's ``subtests`` makes a report for each subtest from inside the test's call: those
    are not the test's report, so none of them is taken for one that differs from its call
    (each would cost a scan of the code that runs tests); the test's own report still is."""
    pytester.makepyfile(
        test_sub="""
        def test_passes(subtests):
            for n in range(3):
                with subtests.test(n=n):
                    assert n < 3


        def test_a_subtest_fails(subtests):
            with subtests.test(n=1):
                assert False
        """
    )
    witness = Witness(pytester.path)
    reprec = pytester.inline_run("-p", "no:randomly", plugins=[witness])
    reports = reprec.getreports("pytest_runtest_logreport")
    stamped = {
        r.nodeid.split("::", 1)[1]: getattr(r, STAMP) for r in reports if r.when == "teardown"
    }
    assert stamped == {"test_passes": "returned", "test_a_subtest_fails": "returned"}
    assert witness.suspects(reprec.getcalls("pytest_sessionfinish")[0].session.config) == []
    assert not witness._odd


def test_a_string_condition_is_read_in_the_test_modules_namespace(
    pytester: pytest.Pytester,
) -> None:
    """pytest evaluates ``skipif("...")`` and ``xfail("...")`` in the test function's globals
    (``item.obj.__globals__``): the wrapped function keeps the module's, so a condition naming
    one of its names skips or xfails as without the wrapper, never an error."""
    pytester.makepyfile(
        test_cond="""
        import pytest

        OPTIONAL = None


        @pytest.mark.skipif("OPTIONAL is None")
        def test_skipped():
            OPTIONAL.run()


        @pytest.mark.xfail("OPTIONAL is None", reason="not here", strict=True)
        def test_xfailed():
            OPTIONAL.run()


        class TestMethods:
            @pytest.mark.skipif("OPTIONAL is None")
            def test_method(self):
                OPTIONAL.run()
        """
    )
    reprec = pytester.inline_run("-p", "no:randomly", plugins=[Witness(pytester.path)])
    outcomes = {
        r.nodeid.split("::", 1)[1]: (r.outcome, hasattr(r, "wasxfail"))
        for r in reprec.getreports("pytest_runtest_logreport")
        if (r.when == "setup" and r.skipped) or r.when == "call"
    }
    assert outcomes == {
        "test_skipped": ("skipped", False),
        "test_xfailed": ("skipped", True),
        "TestMethods::test_method": ("skipped", False),
    }
