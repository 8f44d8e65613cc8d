"""One attempt of one lane, and the strict reading of a lane's answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import ValidationError

from ..core import strictjson
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
