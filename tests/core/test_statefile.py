"""Crash-safe writes: a regular file is replaced whole; a device or pipe is written through."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

from pytest_boundedreview.core.statefile import write_atomic


def test_a_file_is_replaced_whole(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "report.json"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["report.json"]


def test_a_pipe_is_written_through_and_stays_a_pipe(tmp_path: Path) -> None:
    fifo = tmp_path / "out"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    write_atomic(fifo, b"streamed")
    reader.join(timeout=10)
    assert received == [b"streamed"]
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # like /dev/null: never replaced by a file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
