"""One attempt of one lane, and the strict reading of a lane's answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from ..core import strictjson
from ..core.subproc import Outcome
from ..core.validation import describe_all
from ..models.lane import LaneResult
from ..models.report import Usage

OUTPUT_CAP = 1024 * 1024
FailureKind = Literal["error", "died", "limit"]


@dataclass(frozen=True)
class Attempt:
    """One run of one lane: its result, or how it failed (``error`` | ``died`` | ``limit``),
    the model that actually answered, and for agent lanes the tool and what it reported
    spending, when known."""

    result: LaneResult | None
    failure: FailureKind | None = None
    detail: str = ""
    model: str | None = None
    usage: Usage | None = None
    tool: str | None = None
    tool_version: str | None = None

    @property
    def ok(self) -> bool:
        return self.result is not None


def with_retries(call: Callable[[], Attempt], retries: int) -> list[Attempt]:
    """The first attempt and up to ``retries`` more while attempts fail; all are kept."""
    attempts = [call()]
    while not attempts[-1].ok and len(attempts) <= retries:
        attempts.append(call())
    return attempts


def read_result(data: bytes, cap: int = OUTPUT_CAP, model: str | None = None) -> Attempt:
    """A lane's answer, strictly: JSON without traps, then the lane-result schema."""
    try:
        document = strictjson.loads(data, max_bytes=cap)
        return Attempt(LaneResult.model_validate(document), model=model)
    except strictjson.StrictJSONError as exc:
        return Attempt(None, "error", f"invalid JSON: {exc}", model=model)
    except ValidationError as exc:
        reasons = "; ".join(describe_all(exc))
        return Attempt(None, "error", f"not a lane result: {reasons}", model=model)


def stderr_tail(out: Outcome) -> str:
    """The last line a reviewer process printed on stderr, for a failure's reason."""
    lines = out.stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1][:300] if lines else ""


def exit_reason(out: Outcome, tail: str | None = None) -> str:
    """``exit N``, with ``tail`` (by default the last line on stderr) when there is one."""
    tail = stderr_tail(out) if tail is None else tail
    return f"exit {out.returncode}" + (f": {tail}" if tail else "")


def process_failure(
    out: Outcome, timeout: float, cap: int, model: str | None = None
) -> Attempt | None:
    """How a reviewer process failed before it could answer: it did not start, ran out of
    time, printed more than ``cap`` bytes, or was killed; ``None`` when it exited."""
    if out.start_error:
        return Attempt(None, "error", f"could not start: {out.start_error}", model)
    if out.timed_out:
        return Attempt(None, "limit", f"timed out after {timeout:g}s", model)
    if out.truncated:
        return Attempt(None, "limit", f"output over the cap of {cap} bytes", model)
    if out.returncode is not None and out.returncode < 0:
        return Attempt(None, "died", f"killed by signal {-out.returncode}", model)
    return None
