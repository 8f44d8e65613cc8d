"""The tables inside ``[tool.bounded-review]``: one model for each, with the value types they
share. :class:`~pytest_boundedreview.core.config.Settings` holds them all."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from ..models.base import Model

Word = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
Argv = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
Seconds = Annotated[float, Field(gt=0, le=86400)]
Category = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,63}$")]
TargetKindName = Literal["pr", "local-diff", "staged", "plan"]


class CheckConfig(Model):
    """One ``[[tool.bounded-review.checks]]`` entry."""

    name: Word
    command: Argv
    format: Literal["exit-code", "sarif", "gnu"] = "exit-code"
    required: bool = True
    timeout: Seconds = 600
    # What its findings are (e.g. "style", "security"): a `user` waiver may waive a check
    # finding only when the check's category is known and not protected.
    category: Category | None = None


class LaneConfig(Model):
    """One ``[[tool.bounded-review.lanes]]`` entry."""

    name: Word
    lens: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
    role: Literal["verdict", "scout"] = "verdict"
    kind: Literal["command", "openai", "plugin", "claude", "codex", "gemini"] = "command"
    command: Argv | None = None  # agent kinds: how to start the tool, if not by its name
    model: str | None = None
    fallback_models: list[str] = Field(default_factory=list)
    reasoning: str | None = None
    timeout: Seconds = 600
    env: list[EnvName] = Field(default_factory=list)
    targets: list[TargetKindName] = Field(
        default_factory=lambda: ["pr", "local-diff", "staged", "plan"]  # type: ignore[arg-type]
    )
    base_url: str | None = None
    api_key_env: EnvName | None = None
    models_command: Argv | None = None
    max_turns: int | None = Field(default=None, ge=1, le=1000)  # claude only
    max_budget_usd: float | None = Field(default=None, gt=0, le=10_000)  # claude only
    prompt_file: str | None = None  # replaces the lens prompt; read from the snapshot
    min_confidence: float | None = Field(default=None, ge=0, le=1)  # else the global one

    @model_validator(mode="after")
    def _kind_needs(self) -> LaneConfig:
        if self.kind == "command" and self.command is None:
            raise ValueError(f"lane {self.name!r} has kind 'command' but no `command` argv list")
        if self.kind == "openai" and (self.base_url is None or self.model is None):
            raise ValueError(f"lane {self.name!r} has kind 'openai': set `base_url` and `model`")
        if self.prompt_file is not None:
            if self.kind in ("command", "plugin"):
                raise ValueError(
                    f"lane {self.name!r}: `prompt_file` is for model lanes (claude, codex, "
                    f"gemini, openai); a {self.kind} lane writes its own prompt"
                )
            parts = Path(self.prompt_file).parts
            if not parts or Path(self.prompt_file).is_absolute() or ".." in parts:
                raise ValueError(
                    f"lane {self.name!r}: `prompt_file` must be a path inside the repository, "
                    f"relative to its root (got {self.prompt_file!r})"
                )
        for key in ("max_turns", "max_budget_usd"):
            if getattr(self, key) is not None and self.kind != "claude":
                raise ValueError(
                    f"lane {self.name!r}: `{key}` is a limit only the claude kind can enforce; "
                    f"bound a {self.kind} lane with `timeout`"
                )
        return self


ScanLevel = Literal["blocking", "advisory", "off"]


class ScanConfig(Model):
    """``[tool.bounded-review.scans]``: the severity of each built-in scan, or ``off``."""

    conflict_markers: ScanLevel = "blocking"
    secrets: ScanLevel = "blocking"
    debugger: ScanLevel = "advisory"
    skip_added: ScanLevel = "advisory"
    deleted_tests: ScanLevel = "advisory"


def _regexes(patterns: list[str]) -> list[str]:
    """``patterns`` when each is a regular expression; else a ValueError naming the first."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return patterns


class TriggerConfig(Model):
    """``[tool.bounded-review.risk_rules.triggers.<name>]``: extends (or with ``replace``,
    overrides) a built-in trigger, adds a new one, or turns one off."""

    paths: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    added: list[Annotated[str, Field(min_length=1)]] = Field(default_factory=list)
    replace: bool = False
    enabled: bool = True

    _compiles = field_validator("added")(_regexes)


class RiskRules(Model):
    """``[tool.bounded-review.risk_rules]``: what makes ``risk = "auto"`` strict or economy."""

    trivial_lines: int = Field(default=3, ge=0, le=10_000)
    docs_paths: list[Annotated[str, Field(min_length=1)]] | None = None
    triggers: dict[Word, TriggerConfig] = Field(default_factory=dict)


class RoutingConfig(Model):
    """``[tool.bounded-review.routing]``: the live model list for command lanes and the
    ordered models of each routing tier."""

    models_command: Argv | None = None
    routine: list[str] = Field(default_factory=list)
    complex: list[str] = Field(default_factory=list)
    arbitration: list[str] = Field(default_factory=list)


class LoopConfig(Model):
    """``[tool.bounded-review.loop]``: what counts as drift and as a systemic repair."""

    # A repair may add or edit tests of the files in the initial scope without drifting.
    tests_in_scope: bool = True
    # A repair touching more than this share of the snapshot's files forces a full round.
    systemic_share: float = Field(default=0.5, gt=0, le=1)
    # The lane that reviews the model when one defect class keeps reappearing at new places
    # (``model-mismatch``); default: the first lane with the architecture lens.
    model_review_lane: str | None = None


def _names(*names: str) -> Any:
    return Field(default_factory=lambda: list(names), min_length=1)


class PlanConfig(Model):
    """``[tool.bounded-review.plan]``: the section titles a plan must have (any one of each
    list; a title may add words after one, e.g. "Verification and acceptance"), and what makes
    a plan irreversible enough to need a rollback section (regular expressions)."""

    objective: list[str] = _names("objective", "goal", "goals", "purpose")
    steps: list[str] = _names("steps", "approach", "implementation", "tasks", "work plan")
    verification: list[str] = _names(
        "verification", "acceptance", "acceptance criteria", "testing", "test plan", "validation"
    )
    rollback: list[str] = _names("rollback", "roll back", "revert", "backout", "recovery")
    irreversible: list[str] = Field(
        default_factory=lambda: [
            r"\bmigrat(e|es|ed|ion|ions)\b",
            r"\b(delete|deletes|deleting|deletion|drop|drops|truncate|purge)\b",
            r"\b(release|releases|publish|deploy|deploys|deployment)\b",
            r"\brm -rf\b",
        ]
    )

    _compiles = field_validator("irreversible")(_regexes)


class SelectionConfig(Model):
    """``[tool.bounded-review.selection]``: changed-line thresholds of the size classes."""

    small_lines: int = Field(default=50, ge=0)
    large_lines: int = Field(default=400, ge=1)
    # Skip model lanes for economy-tier changes the deterministic gate already found clean.
    settle_trivial: bool = False

    @model_validator(mode="after")
    def _ordered(self) -> SelectionConfig:
        if self.large_lines <= self.small_lines:
            raise ValueError(
                f"large_lines ({self.large_lines}) must be above small_lines ({self.small_lines})"
            )
        return self
