"""Command lanes: a reviewer program gets the packet on stdin (and its path in
``BOUNDED_REVIEW_PACKET``) and answers with one lane-result JSON object on stdout."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..core import subproc, tempdirs
from ..core.settings.tables import LaneConfig
from .environment import lane_env
from .result import (
    OUTPUT_CAP,
    Attempt,
    exit_reason,
    process_failure,
    read_result,
    settled,
    with_retries,
)


def run_once(lane: LaneConfig, packet: bytes, workdir: Path, cap: int = OUTPUT_CAP) -> Attempt:
    """Run ``lane`` once in ``workdir`` (a copy of the snapshot) and read its answer."""
    assert lane.command is not None
    folder = tempdirs.make("lane")
    try:
        packet_file = folder / "packet.json"
        packet_file.write_bytes(packet)
        env = lane_env(lane.env, {"BOUNDED_REVIEW_PACKET": str(packet_file)})
        out = subproc.run(
            lane.command, cwd=workdir, env=env, timeout=lane.timeout, stdin=packet, cap=cap
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    failed = process_failure(out, lane.timeout, cap)
    if failed is not None:
        return failed
    if out.returncode != 0:  # its last words may say no retry can change this (no key, ...)
        return settled(Attempt(None, "error", exit_reason(out)))
    return read_result(out.stdout, cap, lane.model)


def run_with_retries(
    lane: LaneConfig, packet: bytes, workdir: Path, retries: int, cap: int = OUTPUT_CAP
) -> list[Attempt]:
    """The first attempt and up to ``retries`` more while attempts fail; all are kept."""
    return with_retries(lambda: run_once(lane, packet, workdir, cap), retries)
