"""Typed dispositions: a waiver of one finding or check finding, as ``bounded-review-waivers.toml``
holds it, and what became of it in one review."""

from __future__ import annotations

import datetime
from typing import Annotated, Literal

from pydantic import Field, model_validator

from .base import Model
from .finding import CheckFinding, NonEmpty, ReportFinding

PROTECTED_CATEGORIES = ("security", "data-loss", "authorization", "cryptography")
REVISION = r"^(?:(?:tree|commit):(?:[0-9a-f]{40}|[0-9a-f]{64})|sha256:[0-9a-f]{64})$"


class ManualCheck(Model):
    """A security reviewer's manual check: where it is recorded, and the exact revision it
    was made on."""

    reference: NonEmpty
    revision: Annotated[str, Field(pattern=REVISION)]


class Waiver(Model):
    """One ``[[waiver]]``: an accountable, typed act, never a silent suppression."""

    fingerprint: NonEmpty
    disposition: Literal["user", "security-reviewer"]
    reason: NonEmpty
    by: NonEmpty
    expires: datetime.date | None = None
    evidence: ManualCheck | None = None

    @model_validator(mode="after")
    def _evidence_by_disposition(self) -> Waiver:
        for name in ("reason", "by"):
            if not getattr(self, name).strip():
                raise ValueError(f"`{name}` must say something (it is blank)")
        if self.disposition == "security-reviewer" and self.evidence is None:
            raise ValueError("a security-reviewer waiver needs `evidence` (reference, revision)")
        if self.disposition == "user" and self.evidence is not None:
            raise ValueError("`evidence` belongs to security-reviewer waivers only")
        return self


class WaiversFile(Model):
    waiver: list[Waiver] = Field(default_factory=list)


class WaivedFinding(ReportFinding):
    """A finding a waiver took out of the gate: still reported, with its waiver, and whether
    the change under review adds that waiver itself (the base's waivers file lacks it)."""

    waiver: Waiver
    added_by_change: bool = False


class WaivedCheckFinding(CheckFinding):
    check: str
    waiver: Waiver
    added_by_change: bool = False


class WaiverNote(Model):
    """A waiver that did not apply, and why: ``stale`` (matches nothing), ``void`` (expired)
    or ``refused`` (its disposition may not waive what it matches)."""

    state: Literal["stale", "void", "refused"]
    fingerprint: str
    disposition: str
    by: str
    why: str
    added_by_change: bool = False
