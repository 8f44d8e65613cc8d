"""The shared install folder of the real-tool tests: made once per key, never half made."""

from __future__ import annotations

from pathlib import Path

import pytest
from installonce import made_once


def test_a_folder_is_made_once_per_key_and_marked_complete(tmp_path: Path) -> None:
    calls: list[Path] = []

    def make(temp: Path) -> str:
        calls.append(temp)
        (temp / "tool").write_text("x")
        return "v1"

    first = made_once(tmp_path, "k", make)
    again = made_once(tmp_path, "k", make)
    assert first == again == tmp_path / "k"
    assert len(calls) == 1
    assert (first / "tool").read_text() == "x"
    assert (first / "installed").read_text() == "v1"
    made_once(tmp_path, "other", make)
    assert len(calls) == 2


def test_a_failed_make_leaves_nothing_and_is_tried_again(tmp_path: Path) -> None:
    def broken(temp: Path) -> str:
        (temp / "half").write_text("x")
        raise RuntimeError("install failed")

    with pytest.raises(RuntimeError, match="install failed"):
        made_once(tmp_path, "k", broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.lock"]
    assert (made_once(tmp_path, "k", lambda temp: "v2") / "installed").read_text() == "v2"
