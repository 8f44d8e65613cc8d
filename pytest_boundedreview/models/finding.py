"""A reviewer finding as lanes emit it, and the triaged forms reports carry."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from .base import Model

BLOCKING_CATEGORIES = (
    "correctness",
    "security",
    "data-loss",
    "regression",
    "requirement",
    "compatibility",
    "plan-contradiction",
    "prerequisite",
    "unverifiable-gate",
    "missing-rollback",
)
ADVISORY_CATEGORIES = ("style", "naming", "refactor", "alternative", "hardening", "editorial")

NonEmpty = Annotated[str, Field(min_length=1)]
LineNumber = Annotated[int, Field(ge=1)]
Verification = Literal["deterministic", "reproduced", "quoted", "evidence"]


class Reproduce(Model):
    """How to show a finding: one pytest node id, or one command (argv list)."""

    pytest: NonEmpty | None = None
    command: Annotated[list[str], Field(min_length=1)] | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> Reproduce:
        if (self.pytest is None) == (self.command is None):
            raise ValueError("give exactly one of `pytest` (a node id) or `command` (argv list)")
        return self


class Finding(Model):
    """One finding (CONTRACT §6). ``path`` is repository-relative, ``line`` 1-based."""

    path: NonEmpty
    line: LineNumber
    end_line: LineNumber | None = None
    severity: Literal["blocking", "advisory"]
    category: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,63}$")]
    failure_mode: NonEmpty
    evidence: NonEmpty
    quote: NonEmpty | None = None
    reproduce: Reproduce | None = None
    remediation: NonEmpty
    confidence: Annotated[float, Field(ge=0, le=1)] | None = None

    @model_validator(mode="after")
    def _ordered_lines(self) -> Finding:
        if self.end_line is not None and self.end_line < self.line:
            raise ValueError(f"end_line {self.end_line} is before line {self.line}")
        return self


class ReportFinding(Finding):
    """A kept finding after triage."""

    fingerprint: NonEmpty
    lanes: list[str] = Field(default_factory=list)
    verification: Verification
    note: str | None = None


class CheckFinding(Model):
    """A finding of a configured check (a linter, a scanner), by its rule."""

    rule: str
    path: str | None
    line: int | None
    message: str
    fingerprint: str


class RejectedFinding(Model):
    """A finding triage refused, with the raw values it arrived with and the reason."""

    reason: NonEmpty
    lanes: list[str] = Field(default_factory=list)
    path: Any = None
    line: Any = None
    end_line: Any = None
    severity: Any = None
    category: Any = None
    failure_mode: Any = None
    evidence: Any = None
    quote: Any = None
    reproduce: Any = None
    remediation: Any = None
    confidence: Any = None
