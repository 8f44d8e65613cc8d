"""Command lanes: a reviewer program gets the packet on stdin (and its path in
``BOUNDED_REVIEW_PACKET``) and answers with one lane-result JSON object on stdout."""

from __future__ import annotations

import shutil
from pathlib import Path

from ..core import subproc, tempdirs
from ..core.tables import LaneConfig
from .environment import lane_env
from .result import OUTPUT_CAP, Attempt, read_result, with_retries


def _tail(data: bytes) -> str:
    lines = data.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else ""


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
    if out.start_error:
        return Attempt(None, "error", f"could not start: {out.start_error}")
    if out.timed_out:
        return Attempt(None, "limit", f"timed out after {lane.timeout:g}s")
    if out.truncated:
        return Attempt(None, "limit", f"output over the cap of {cap} bytes")
    assert out.returncode is not None
    if out.returncode < 0:
        return Attempt(None, "died", f"killed by signal {-out.returncode}")
    if out.returncode != 0:
        tail = _tail(out.stderr)
        return Attempt(None, "error", f"exit {out.returncode}" + (f": {tail}" if tail else ""))
    return read_result(out.stdout, cap, lane.model)


def run_with_retries(
    lane: LaneConfig, packet: bytes, workdir: Path, retries: int, cap: int = OUTPUT_CAP
) -> list[Attempt]:
    """The first attempt and up to ``retries`` more while attempts fail; all are kept."""
    return with_retries(lambda: run_once(lane, packet, workdir, cap), retries)
