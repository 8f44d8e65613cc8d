from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from pytest_boundedreview.baseline.signature import (
    from_excinfo,
    from_text,
    location,
    normalise_message,
)

ROOT = Path("/work/checkout")


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
    assert normalise_message(message, ROOT) == expected


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
    assert from_excinfo(info, here) == (
        "ValueError: bad value N at <addr> @ test_signature.py::failing"
    )


def test_same_failure_in_two_checkouts_has_one_signature() -> None:
    text = "E   ModuleNotFoundError: No module named 'x'\n"
    assert from_text(text, "t.py", Path("/a")) == from_text(text, "t.py", Path("/b"))
    assert from_text(text, "t.py", ROOT) == (
        "ModuleNotFoundError: No module named 'x' @ t.py::<module>"
    )
    assert (
        from_text("something odd", "t.py", ROOT) == "CollectError: something odd @ t.py::<module>"
    )
