from __future__ import annotations

import pytest

from pytest_boundedreview.core.strictjson import StrictJSONError, loads


def test_a_plain_document() -> None:
    assert loads(b'{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"a": 1, "a": 2}', "duplicate key 'a'"),
        (b'{"a": NaN}', "NaN is not a JSON number"),
        (b"[Infinity]", "Infinity is not a JSON number"),
        (b"[-Infinity]", "-Infinity is not a JSON number"),
        (b"[1e400]", "number 1e400 is out of range"),
        (b"[" + b"9" * 5000 + b"]", "unreadable number:"),
        (b"[" * 65 + b"]" * 65, "nesting deeper than 64 levels"),
        (b"[" * 100_000, "nesting deeper than 64 levels"),
        (b'{"a": "\xff"}', "not valid UTF-8 at byte 7"),
        (b'\xef\xbb\xbf{"a": 1}', "byte order mark"),
        (b'["\\ud800"]', "lone surrogate"),
        (b'{"\\udfff": 1}', "lone surrogate"),
        (b'{"a": 1', "invalid JSON at line 1 column 8"),
        (b"", "invalid JSON at line 1 column 1"),
    ],
)
def test_rejected_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads(data)
    assert reason in str(info.value)


def test_depth_counts_brackets_in_strings_as_text() -> None:
    assert loads(b'["' + b"[" * 200 + b'"]') == ["[" * 200]
    assert loads(b'["\\"[[["]') == ['"[[[']


def test_size_limit() -> None:
    with pytest.raises(StrictJSONError, match="11 bytes, over the limit of 10"):
        loads(b'"xxxxxxxxx"', max_bytes=10)
