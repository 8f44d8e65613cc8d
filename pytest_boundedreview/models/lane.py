"""What a reviewer lane receives (the packet) and what it answers (the lane result)."""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import ConfigDict, Field, model_validator

from .base import Model
from .finding import Finding, ReportFinding
from .report import TestFailure

PACKET_SCHEMA: Final = "bounded-review/packet/v1"
LANE_RESULT_SCHEMA: Final = "bounded-review/lane-result/v1"
Short = Annotated[str, Field(min_length=1, max_length=2000)]


class Assurances(Model):
    """Short answers a verdict lane gives about the change (required for plan targets)."""

    root_proven: Short
    scope_unchanged: Short
    verification_adequate: Short


class Reconciliation(Model):
    """A verdict lane's answer to one scout finding, named by its fingerprint."""

    fingerprint: Annotated[str, Field(min_length=1)]
    decision: Literal["accepted", "dismissed"]
    reason: str | None = None

    @model_validator(mode="after")
    def _dismissal_has_reason(self) -> Reconciliation:
        if self.decision == "dismissed" and not self.reason:
            raise ValueError("a dismissed scout finding needs a `reason`")
        return self


# The three rules of a verdict the field types cannot say, as JSON Schema (the model's validator
# below enforces them): a verdict comes with a rationale or findings, a revise with a finding,
# and a pass with no blocking finding.
VERDICT_RULES: Final[dict[str, Any]] = {
    "allOf": [
        {
            "if": {
                "properties": {"verdict": {"enum": ["pass", "revise"]}},
                "required": ["verdict"],
            },
            "then": {
                "anyOf": [
                    {
                        "properties": {"rationale": {"type": "string", "pattern": "\\S"}},
                        "required": ["rationale"],
                    },
                    {"properties": {"findings": {"minItems": 1}}, "required": ["findings"]},
                ]
            },
        },
        {
            "if": {"properties": {"verdict": {"const": "revise"}}, "required": ["verdict"]},
            "then": {"properties": {"findings": {"minItems": 1}}, "required": ["findings"]},
        },
        {
            "if": {"properties": {"verdict": {"const": "pass"}}, "required": ["verdict"]},
            "then": {
                "properties": {
                    "findings": {
                        "items": {
                            "not": {
                                "properties": {"severity": {"const": "blocking"}},
                                "required": ["severity"],
                            }
                        }
                    }
                }
            },
        },
    ]
}


class LaneResult(Model):
    """One lane's answer. Findings stay raw here: triage checks each one on its own, so one
    malformed finding is rejected without discarding the lane's other findings."""

    model_config = ConfigDict(json_schema_extra=VERDICT_RULES)

    schema_: Literal["bounded-review/lane-result/v1"] = Field(alias="schema")
    verdict: Literal["pass", "revise"] | None = Field(
        default=None,
        description="`pass` or `revise` for a verdict lane, null for a scout; a `revise` "
        "carries at least one finding, a `pass` no blocking one",
    )
    rationale: str | None = None
    findings: list[dict[str, Any]] = Field(default_factory=list)
    reconciliation: list[Reconciliation] = Field(default_factory=list)
    assurances: Assurances | None = None

    @model_validator(mode="after")
    def _not_bare(self) -> LaneResult:
        if self.verdict is not None and not (self.rationale or "").strip() and not self.findings:
            raise ValueError("a bare verdict (no rationale and no findings) is not a review")
        if self.verdict == "revise" and not self.findings:
            raise ValueError(
                "a `revise` verdict without a finding: name at least one finding to revise, "
                "or answer `pass`"
            )
        if self.verdict == "pass" and any(
            isinstance(f, dict) and f.get("severity") == "blocking" for f in self.findings
        ):
            raise ValueError(
                "a `pass` verdict with a blocking finding contradicts itself: answer `revise` "
                "to block on it, or make the finding advisory"
            )
        return self


class LaneInfo(Model):
    name: str
    lens: str
    role: Literal["verdict", "scout"]


class PacketTarget(Model):
    kind: Literal["pr", "local-diff", "staged", "plan"]
    base: str | None
    revision: str


class PacketFile(Model):
    path: str
    status: str
    added_lines: list[int] = Field(default_factory=list)


class Requirement(Model):
    path: str
    text: str


class PacketBaseline(Model):
    target_related: list[TestFailure] = Field(default_factory=list)
    pre_existing: list[TestFailure] = Field(default_factory=list)


class Manifestation(Model):
    """One round's findings of the defect class a model review looks at."""

    round: int
    revision: str
    findings: list[ReportFinding] = Field(default_factory=list)
    fix: str | None = None  # the diff from the round listed before to this one


class ModelReviewPacket(Model):
    """What a model review hears: the class that reappeared at new places, round by round."""

    lane: str
    category: str
    history: list[Manifestation] = Field(default_factory=list)


class Packet(Model):
    """The frozen, read-only input of one lane (CONTRACT §6)."""

    schema_: Literal["bounded-review/packet/v1"] = Field(alias="schema")
    lane: LaneInfo
    target: PacketTarget
    scope: list[PacketFile]
    diff: str
    requirements: list[Requirement] = Field(default_factory=list)
    baseline: PacketBaseline = Field(default_factory=PacketBaseline)
    scout_findings: list[ReportFinding] = Field(default_factory=list)
    open_findings: list[ReportFinding] = Field(default_factory=list)
    delta: str | None = None  # a repair round: the diff since the round that raised them
    model_review: ModelReviewPacket | None = None  # for the model-review lane only
    finding_schema: dict[str, Any] = Field(default_factory=Finding.model_json_schema)
    read_only: Literal[True] = True
    model: str | None = None
    reasoning: str | None = None
