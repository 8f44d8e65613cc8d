from __future__ import annotations

import functools
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pytest_boundedreview.baseline.failures import statements
from pytest_boundedreview.baseline.failures.signature import (
    from_excinfo,
    from_text,
    location,
    normalise_message,
)
from pytest_boundedreview.core.redaction import Redactor

ROOT = Path("/work/checkout")
PLAIN = Redactor({})  # no secret variables: only the token formats are scrubbed


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("assert 6 == 5", "assert N == N"),
        ("<Foo object at 0x7f3a2b1c>", "<Foo object at <addr>>"),
        (f"cannot open {tempfile.gettempdir()}/pytest-3/x.txt", "cannot open <tmp>"),
        ("missing /work/checkout/data/file.csv", "missing <root>/data/file.csv"),
        ("first line\nsecond line", "first line"),
        ("spaces   and\ttabs", "spaces and tabs"),
        ("value_2 stays, 3.5e10 folds", "value_2 stays, N folds"),
        ("", ""),
        ("x" * 500, "x" * 200),
    ],
)
def test_normalise_message(message: str, expected: str) -> None:
    assert normalise_message(message, ROOT, PLAIN) == expected


# pytest shortens a repr in the middle, keeping as many characters of its start whatever it
# holds ("<pkg.tests.te" + "..." + "x7f3ab90c1d0>"): what is left of the address at its end
# depends on the address.
SHORTENED = [
    (
        "assert [<pkg.tests.te...x7f3ab90c1d0>] == []",
        "assert [<pkg.tests.te...t 0x55d0e1a2b>] == []",
    ),
    ("assert <pkg.tests....x7f3ab90> is None", "assert <pkg.tests....7f3ab90c1> is None"),
    ("obj <pkg.tests.test_m...ab90c1d0ee> == 1", "obj <pkg.tests.test_m...90c1d0ee> == 1"),
    ("Foo(id=0x7f3a...b90)", "Foo(id=0x7f3a...c17)"),
    ("id 7f3ab90c1d0e gone", "id 55d0e1a2b3c4 gone"),
]


@pytest.mark.parametrize(("one", "other"), SHORTENED)
def test_a_shortened_repr_folds_whatever_address_it_shows(one: str, other: str) -> None:
    assert "x7f" not in normalise_message(one, ROOT, PLAIN)
    assert normalise_message(one, ROOT, PLAIN) == normalise_message(other, ROOT, PLAIN)


class AThingWithALongName:
    pass


class AnotherThingWithALongName:
    pass


def test_a_real_shortened_repr_keeps_its_start() -> None:
    from _pytest._io.saferepr import saferepr

    def shown(thing: object) -> str:
        return normalise_message(f"assert [{saferepr(thing, maxsize=50)}] == []", ROOT, PLAIN)

    assert {shown(AThingWithALongName()) for _ in range(5)} == {
        "assert [<test_signature.AThingW...>] == []"
    }
    assert shown(AnotherThingWithALongName()) == "assert [<test_signature.Another...>] == []"


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (  # a set's order follows the hash seed (or the objects' addresses)
            "Ambiguous dispatch for <class 'dict'>: {<class 'Mapping'>, <class 'MutableMapping'>}",
            "Ambiguous dispatch for <class 'dict'>: {<class 'MutableMapping'>, <class 'Mapping'>}",
        ),
        ("assert {'b', 'a, c'} == set()", "assert {'a, c', 'b'} == set()"),
        (
            "frozenset({frozenset({2, 1}), frozenset({3})})",
            "frozenset({frozenset({3}), frozenset({1, 2})})",
        ),
        ("{(1, 2), (3, 4)} differ", "{(3, 4), (1, 2)} differ"),
    ],
)
def test_the_order_of_a_sets_elements_does_not_matter(one: str, other: str) -> None:
    assert normalise_message(one, ROOT, PLAIN) == normalise_message(other, ROOT, PLAIN)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("{<class 'Mapping'>, <class 'MutableMapping'>}", "{<class 'Mapping'>, <class 'Set'>}"),
        ("{'a', 'b'}", "{'a', 'b', 'c'}"),
        ("{'a, b'}", "{'a', 'b'}"),  # a comma inside a string separates nothing
        ("frozenset({frozenset({1, 2}), frozenset({3})})", "frozenset({frozenset({3}), {1, 2}})"),
        ("(b, a) != x", "(a, b) != x"),  # only {...} groups are unordered
    ],
)
def test_other_elements_are_another_failure(one: str, other: str) -> None:
    assert normalise_message(one, ROOT, PLAIN) != normalise_message(other, ROOT, PLAIN)


def test_a_set_shortened_by_pytest_is_one_token() -> None:
    assert (
        normalise_message("assert {'a', 'b', ...'y', 'z'} == x", ROOT, PLAIN) == "assert {...} == x"
    )


def test_location_is_relative_to_the_checkout() -> None:
    assert location("/work/checkout/pkg/mod.py", ROOT) == "pkg/mod.py"
    assert location("/elsewhere/mod.py", ROOT) == "/elsewhere/mod.py"
    assert location(pytest.__file__, ROOT).startswith("<lib>/")


def test_from_excinfo_names_type_message_and_frame() -> None:
    def failing() -> None:
        raise ValueError("bad value 42 at 0xdeadbeef")

    with pytest.raises(ValueError, match="bad value") as info:
        failing()
    here = Path(__file__).parent
    assert from_excinfo(info, here, redact=PLAIN) == (
        "ValueError: bad value N at <addr> @ test_signature.py::failing"
        ' :: raise ValueError("bad value 42 at 0xdeadbeef")'
    )


def test_an_assertion_is_told_apart_by_its_statement_and_where_lines() -> None:
    def value(x: int) -> int:
        return x + 1

    def check(x: int) -> None:
        assert value(x) == 3

    root = Path(__file__).parent
    signatures = []
    for x in (1, 5):
        with pytest.raises(AssertionError) as info:
            check(x)
        signatures.append(from_excinfo(info, root, redact=PLAIN))
    # the numbers differ, the statement does not: one failure, wherever it ran
    assert signatures[0] == signatures[1]
    assert signatures[0].endswith(":: assert value(x) == 3")


def _check(got: int, want: int) -> None:
    assert got == want


def _signed(test: Callable[[], None]) -> str:
    with pytest.raises(AssertionError) as info:
        test()
    return from_excinfo(info, Path(__file__).parent, test, redact=PLAIN)


def test_a_helpers_failure_names_where_the_test_called_it() -> None:
    def calls_it_twice() -> None:
        _check(1, 1 + 1)

    def calls_it_elsewhere() -> None:
        _check(1, 1)
        _check(
            1,  # the same call, over three lines
            1 + 1,
        )

    def calls_it_otherwise() -> None:
        _check(1, 3)

    first = _signed(calls_it_twice)
    assert first.endswith(
        ":: assert got == want <- test_signature.py::calls_it_twice :: _check(1, 1 + 1)"
    ), first
    split = _signed(calls_it_elsewhere)
    assert split.endswith(
        "<- test_signature.py::calls_it_elsewhere"
        " :: _check( 1, # the same call, over three lines 1 + 1, )"
    ), split
    # the message's numbers fold: only the call, as written, tells these two apart
    otherwise = _signed(calls_it_otherwise)
    assert otherwise.split(" <- ")[0] == first.split(" <- ")[0]
    assert otherwise.endswith(":: _check(1, 3)")


def test_without_positions_the_call_is_the_statement_it_is_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before Python 3.11 code keeps no source spans: the statement holding the call, as
    pytest finds it, stands for it, a call over several lines whole."""
    monkeypatch.setattr(statements, "POSITIONS", False)

    def over_lines() -> None:
        kept = _check(
            2,
            3,
        )
        assert kept is None

    def otherwise() -> None:
        kept = _check(
            2,
            4,
        )
        assert kept is None

    assert _signed(over_lines).endswith(
        "<- test_signature.py::over_lines :: kept = _check( 2, 3, )"
    )
    assert _signed(otherwise).endswith(":: kept = _check( 2, 4, )")


@pytest.mark.skipif(not statements.POSITIONS, reason="source spans: Python 3.11 and later")
def test_a_call_after_other_text_on_its_line_is_cut_where_it_begins_and_ends() -> None:
    def non_ascii() -> None:
        é = "ü"; _check(len("äö"), len(é))  # fmt: skip  # noqa: E702

    assert _signed(non_ascii).endswith(':: _check(len("äö"), len(é))')


def test_a_decorated_test_is_found_through_its_wrapper() -> None:
    def logged(function: Callable[[], None]) -> Callable[[], None]:
        @functools.wraps(function)
        def wrapper() -> None:
            function()

        return wrapper

    @logged
    def decorated() -> None:
        _check(2, 3)

    assert _signed(decorated).endswith("<- test_signature.py::decorated :: _check(2, 3)")


def test_a_hypothesis_test_is_found_through_its_proxy() -> None:
    """``@given`` runs the test through a proxy made from other source, which says it is the
    test's file and line: the call is found in the test itself, whatever decorates it."""
    hypothesis = pytest.importorskip("hypothesis")
    strategies = pytest.importorskip("hypothesis.strategies")

    def body(x: int) -> None:
        _check(x, 0)

    given = hypothesis.given(strategies.integers(min_value=1, max_value=3))
    plain = given(body)
    configured = hypothesis.settings(deadline=None, database=None)(given(body))
    signatures = {_signed(plain), _signed(configured)}
    assert len(signatures) == 1, signatures
    assert signatures.pop().endswith("<- test_signature.py::body :: _check(x, 0)")


def test_no_call_site_when_the_test_fails_itself_or_is_not_in_the_traceback() -> None:
    def fails_itself() -> None:
        assert 2 == 3

    def elsewhere() -> None:
        pass

    assert " <- " not in _signed(fails_itself)
    with pytest.raises(AssertionError) as info:
        _check(2, 3)
    assert " <- " not in from_excinfo(info, Path(__file__).parent, elsewhere, redact=PLAIN)
    assert " <- " not in from_excinfo(info, Path(__file__).parent, "not a function", redact=PLAIN)


def test_same_failure_in_two_checkouts_has_one_signature() -> None:
    text = "E   ModuleNotFoundError: No module named 'x'\n"
    assert from_text(text, "t.py", Path("/a"), PLAIN) == from_text(text, "t.py", Path("/b"), PLAIN)
    assert from_text(text, "t.py", ROOT, PLAIN) == (
        "ModuleNotFoundError: No module named 'x' @ t.py::<module>"
    )
    assert (
        from_text("something odd", "t.py", ROOT, PLAIN)
        == "CollectError: something odd @ t.py::<module>"
    )


STATEMENTS = '''\
import functools


@functools.cache
@staticmethod
def decorated(x):  # a comment
    return (
        x
        + 1
    )


class Holder:
    """A docstring."""

    def method(self, value):
        try:
            value = int(value)
        except ValueError:
            value = 0
        else:
            value += 1
        finally:
            pass
        if value > 2:
            return 1
        elif value > 1:
            return 2
        else:
            return 3

    # a comment between methods

    async def coroutine(self):
        for item in range(3):
            await item
        else:
            pass
        while False:
            break
        with open("x") as handle:
            handle.read()


def matched(command):
    match command:
        case [x, y]:
            return x
        case _:
            return None
# a dedented comment at the end
'''


def _pytests_statement(lines: list[int], text: str) -> list[tuple[int, int | None]]:
    from _pytest._code.source import Source, getstatementrange_ast

    from pytest_boundedreview.baseline.failures.statements import _around, _starts

    source = Source(text)
    found = []
    for lineno in lines:
        _, *whole = getstatementrange_ast(lineno, source)  # pytest's own parse
        _, *kept = getstatementrange_ast(lineno, source, astnode=_around(_starts(text), lineno))
        assert kept == whole, (lineno, source.lines[lineno])
        found.append(tuple(kept))
    return found


def test_the_statement_found_from_the_kept_starts_is_the_one_pytest_finds() -> None:
    lines = range(2, len(STATEMENTS.splitlines()))  # from the first statement on
    found = _pytests_statement(list(lines), STATEMENTS)
    assert len(set(found)) > 20  # many statements told apart, not one range for all


@pytest.mark.slow
def test_the_statement_found_in_real_modules_is_the_one_pytest_finds() -> None:
    import pytest_boundedreview.baseline.failures.signature as signature
    import pytest_boundedreview.checks.scans as scans

    for module in (signature, scans):
        text = Path(str(module.__file__)).read_text(encoding="utf-8")
        first = next(i for i, line in enumerate(text.splitlines()) if line.startswith('"""'))
        _pytests_statement(list(range(first, len(text.splitlines()))), text)


def test_a_failure_leaves_no_parse_of_its_file_behind() -> None:
    """A parsed file is thousands of objects every full garbage collection walks for the rest
    of the session: only where its statements begin is kept."""
    import ast
    import gc

    def failing() -> None:
        raise ValueError("bad")

    with pytest.raises(ValueError, match="bad") as info:
        failing()
    gc.collect()
    before = sum(isinstance(o, ast.AST) for o in gc.get_objects())
    signature = from_excinfo(info, Path(__file__).parent, redact=PLAIN)
    gc.collect()
    after = sum(isinstance(o, ast.AST) for o in gc.get_objects())
    assert signature.endswith(':: raise ValueError("bad")')
    assert after == before


def test_a_test_that_cannot_be_looked_into_leaves_its_call_out() -> None:
    """Whatever the test object does when asked, the signature is taken, without the call."""

    class Hostile:
        def __call__(self) -> None:
            _check(2, 3)

        def __getattr__(self, name: str) -> object:
            raise RuntimeError(f"asked for {name}")

    hostile = Hostile()
    with pytest.raises(AssertionError) as info:
        hostile()
    signature = from_excinfo(info, Path(__file__).parent, hostile, redact=PLAIN)
    assert signature.endswith("test_signature.py::_check :: assert got == want")
