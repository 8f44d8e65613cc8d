"""One attempt of one lane, and the strict reading of a lane's answer."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Literal

from pydantic import ValidationError

from ..core import strictjson
from ..core.subproc import Outcome
from ..core.validation import describe_all
from ..models.lane import LaneResult
from ..models.record import record
from ..models.report import Usage

OUTPUT_CAP = 1024 * 1024
FailureKind = Literal["error", "died", "limit"]


@record(frozen=True)
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
    final: bool = False  # a failure no retry can change (see :func:`settled`)

    @property
    def ok(self) -> bool:
        return self.result is not None


def with_retries(call: Callable[[], Attempt], retries: int) -> list[Attempt]:
    """The first attempt and up to ``retries`` more while attempts fail, unless one fails in
    a way no retry can change; all are kept."""
    attempts = [call()]
    while not (attempts[-1].ok or attempts[-1].final) and len(attempts) <= retries:
        attempts.append(call())
    return attempts


# What a reviewer says when it cannot run until someone acts: no login or key, a model that
# does not exist, a prompt over the model's context. (Claude Code 2.1.197 without a login:
# ``"is_error": true``, ``"result": "Not logged in · Please run /login"``, exit 1; Gemini CLI:
# FatalAuthenticationError; the context refusals are the servers' words, see ``refusal``.)
_FINAL = re.compile(
    r"not logged in|please run /login|please set an auth method|invalid api key|"
    r"authentication (?:failed|error|required)|unauthori[sz]ed|\bHTTP 40[13]\b|forbidden|"
    r"model not found|unknown model|model .{0,80} (?:does not exist|not found)|"
    r"context_length_exceeded|exceeds the available context size|maximum context length|"
    r"prompt is too long",
    re.IGNORECASE,
)


def settled(attempt: Attempt) -> Attempt:
    """``attempt``, marked final when it failed in a way no retry can change."""
    if attempt.ok or attempt.final or not _FINAL.search(attempt.detail):
        return attempt
    return dataclasses.replace(attempt, final=True)


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
    if out.start_error:  # a missing or unrunnable program: no retry changes that
        return Attempt(None, "error", f"could not start: {out.start_error}", model, final=True)
    if out.timed_out:
        return Attempt(None, "limit", f"timed out after {timeout:g}s", model)
    if out.truncated:
        return Attempt(None, "limit", f"output over the cap of {cap} bytes", model)
    if out.returncode is not None and out.returncode < 0:
        return Attempt(None, "died", f"killed by signal {-out.returncode}", model)
    return None
