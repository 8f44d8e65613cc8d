"""Command lanes: a reviewer program gets the packet on stdin (and its path in
``BOUNDED_REVIEW_PACKET``) and answers with one lane-result JSON object on stdout."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ValidationError

from .. import strictjson, subproc, tempdirs
from ..config import LaneConfig
from ..models.lane import LaneResult
from ..validation import describe_all
from .environment import lane_env

OUTPUT_CAP = 1024 * 1024
FailureKind = Literal["error", "died", "limit"]


@dataclass(frozen=True)
class Attempt:
    """One run of one lane: its result, or how it failed (``error`` | ``died`` | ``limit``)."""

    result: LaneResult | None
    failure: FailureKind | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.result is not None


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
    try:
        document = strictjson.loads(out.stdout, max_bytes=cap)
        return Attempt(LaneResult.model_validate(document))
    except strictjson.StrictJSONError as exc:
        return Attempt(None, "error", f"invalid JSON: {exc}")
    except ValidationError as exc:
        return Attempt(None, "error", "not a lane result: " + "; ".join(describe_all(exc)))


def run_with_retries(
    lane: LaneConfig, packet: bytes, workdir: Path, retries: int, cap: int = OUTPUT_CAP
) -> list[Attempt]:
    """The first attempt and up to ``retries`` more while attempts fail; all are kept."""
    attempts = [run_once(lane, packet, workdir, cap)]
    while not attempts[-1].ok and len(attempts) <= retries:
        attempts.append(run_once(lane, packet, workdir, cap))
    return attempts
