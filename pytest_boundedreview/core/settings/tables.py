"""The tables inside ``[tool.bounded-review]``: one model for each, with the value types they
share. :class:`~pytest_boundedreview.core.settings.config.Settings` holds them all."""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Annotated, Literal

from ...models.plain import Check, Limits, plain

Word = Annotated[str, Limits(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")]
EnvName = Annotated[str, Limits(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")]
NonEmpty = Annotated[str, Limits(min_length=1)]
Argv = Annotated[list[NonEmpty], Limits(min_length=1)]
Seconds = Annotated[float, Limits(gt=0, le=86400)]
Share = Annotated[float, Limits(ge=0, le=1)]
Category = Annotated[str, Limits(pattern=r"^[a-z][a-z0-9-]{0,63}$")]
TargetKindName = Literal["pr", "local-diff", "staged", "plan"]


@plain
class CheckConfig:
    """One ``[[tool.bounded-review.checks]]`` entry."""

    name: Word
    """The check's name, unique among checks."""
    command: Argv
    """The argv list to run, in the repository root (no shell)."""
    format: Literal["exit-code", "sarif", "gnu"] = "exit-code"
    """How its output is read: the exit status alone, SARIF, or GNU `file:line: message` lines."""
    required: bool = True
    """A required check that fails (or cannot run) keeps the gate from `yes`."""
    timeout: Seconds = 600
    """Seconds one run of the check may take."""
    # What its findings are (e.g. "style", "security"): a `user` waiver may waive a check
    # finding only when the check's category is known and not protected.
    category: Category | None = None
    """What its findings are (`style`, `security`, ...); a `user` waiver may waive only classified,
    unprotected ones."""


@plain
class LaneConfig:
    """One ``[[tool.bounded-review.lanes]]`` entry."""

    name: Word
    """The lane's name, unique among lanes."""
    lens: Annotated[str, Limits(pattern=r"^[a-z][a-z0-9-]{0,31}$")]
    """What the lane reviews for (`correctness`, `security`, `architecture`, ...)."""
    role: Literal["verdict", "scout"] = "verdict"
    """A `verdict` lane decides; a `scout` lane's findings are handed to the verdict lanes."""
    kind: Literal["command", "openai", "plugin", "claude", "codex", "gemini"] = "command"
    """How the lane runs: a command, an OpenAI-compatible endpoint, a plugin, or a coding agent."""
    command: Argv | None = None  # agent kinds: how to start the tool, if not by its name
    """The argv list (a command lane), or how to start an agent when not by its name."""
    model: str | None = None
    """The model to ask for."""
    fallback_models: list[str] = field(default_factory=list)
    """Models to try, in order, when the model is unavailable."""
    reasoning: str | None = None
    """The reasoning effort to ask for, where the tool takes one."""
    timeout: Seconds = 600
    """Seconds one attempt may take, everything included (an `openai` lane's model list,
    completion and fallback request share them)."""
    env: list[EnvName] = field(default_factory=list)
    """Environment variables passed to the lane (all others are withheld)."""
    targets: list[TargetKindName] = field(
        default_factory=lambda: ["pr", "local-diff", "staged", "plan"]
    )
    """The target kinds this lane reviews."""
    base_url: str | None = None
    """The endpoint of an `openai` lane."""
    api_key_env: EnvName | None = None
    """The variable holding an `openai` lane's API key."""
    max_output_tokens: Annotated[int, Limits(ge=16, le=1_000_000)] | None = None
    """The most tokens an `openai` lane's answer may take (unset: 4096); an answer cut there
    is a failure that says so."""
    output_tokens_key: Literal["max_tokens", "max_completion_tokens"] | None = None
    """How `max_output_tokens` is sent (unset: `max_completion_tokens` to api.openai.com,
    `max_tokens` elsewhere)."""
    temperature: Annotated[float, Limits(ge=0, le=2)] | None = None
    """An `openai` lane's sampling temperature (unset: 0, so a review is repeatable; not sent
    to api.openai.com or on a lane with `reasoning`, as reasoning models take only their
    own)."""
    seed: Annotated[int, Limits(ge=0, le=2**63 - 1)] | None = None
    """The sampling seed an `openai` lane sends (unset: none sent)."""
    models_command: Argv | None = None
    """An argv list that prints the models available now, one per line."""
    max_turns: Annotated[int, Limits(ge=1, le=1000)] | None = None  # claude only
    """The most agent turns (claude only)."""
    max_budget_usd: Annotated[float, Limits(gt=0, le=10_000)] | None = None  # claude only
    """The most an attempt may spend, in US dollars (claude only)."""
    prompt_file: str | None = None  # replaces the lens prompt; read from the snapshot
    """A prompt replacing the lens prompt, read from the snapshot (model lanes only)."""
    min_confidence: Share | None = None  # else the global one
    """This lane's confidence floor for blockers (else the global one)."""

    def __post_init__(self) -> None:
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
        for key in ("max_output_tokens", "output_tokens_key", "temperature", "seed"):
            if getattr(self, key) is not None and self.kind != "openai":
                raise ValueError(
                    f"lane {self.name!r}: `{key}` is sent only by the openai kind; "
                    f"bound a {self.kind} lane with `timeout`"
                )


ScanLevel = Literal["blocking", "advisory", "off"]


@plain
class ScanConfig:
    """``[tool.bounded-review.scans]``: the severity of each built-in scan, or ``off``."""

    conflict_markers: ScanLevel = "blocking"
    """Merge conflict markers added by the change."""
    secrets: ScanLevel = "blocking"
    """Secrets (keys, tokens, private keys) added by the change."""
    debugger: ScanLevel = "advisory"
    """Debugger calls (`breakpoint()`, `pdb`) added by the change."""
    skip_added: ScanLevel = "advisory"
    """`skip`/`xfail` added to an existing test."""
    deleted_tests: ScanLevel = "advisory"
    """Tests the change deletes."""
    report_hooks: ScanLevel = "blocking"
    """Hooks that can alter outcomes or reports (`pytest_runtest_makereport`,
    `pytest_collection_modifyitems`, ...) added or changed in conftest files and local plugins."""


def _regexes(patterns: list[str]) -> list[str]:
    """``patterns`` when each is a regular expression; else a ValueError naming the first."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a regular expression: {exc}") from None
    return patterns


@plain
class TriggerConfig:
    """``[tool.bounded-review.risk_rules.triggers.<name>]``: extends (or with ``replace``,
    overrides) a built-in trigger, adds a new one, or turns one off."""

    paths: list[NonEmpty] = field(default_factory=list)
    """Path globs (`**` crosses folders) that make a change strict."""
    added: Annotated[list[NonEmpty], Check(_regexes)] = field(default_factory=list)
    """Regular expressions of added or removed lines that make a change strict."""
    replace: bool = False
    """Replace the built-in trigger of this name instead of extending it."""
    enabled: bool = True
    """Turn the trigger off with `false`."""


@plain
class RiskRules:
    """``[tool.bounded-review.risk_rules]``: what makes ``risk = "auto"`` strict or economy."""

    trivial_lines: Annotated[int, Limits(ge=0, le=10_000)] = 3
    """A change of at most this many lines (no binary or mode-only change) is economy."""
    docs_paths: list[NonEmpty] | None = None
    """Path globs of documentation: a change only there is economy."""
    triggers: dict[Word, TriggerConfig] = field(default_factory=dict)
    """Named triggers, each extending, replacing, adding or turning off a built-in one."""


@plain
class RoutingConfig:
    """``[tool.bounded-review.routing]``: the live model list for command lanes and the
    ordered models of each routing tier."""

    models_command: Argv | None = None
    """An argv list that prints the models available now, for command lanes."""
    routine: list[str] = field(default_factory=list)
    """Models, in order, for routine reviews."""
    complex: list[str] = field(default_factory=list)
    """Models, in order, for complex reviews."""
    arbitration: list[str] = field(default_factory=list)
    """Models, in order, for arbitration."""


@plain
class LoopConfig:
    """``[tool.bounded-review.loop]``: what counts as drift and as a systemic repair."""

    # A repair may add or edit tests of the files in the initial scope without drifting.
    tests_in_scope: bool = True
    """A repair may add or edit tests of the files in the initial scope without drifting."""
    # A repair touching more than this share of the snapshot's files forces a full round.
    systemic_share: Annotated[float, Limits(gt=0, le=1)] = 0.5
    """A repair touching more than this share of the snapshot's files forces a full round."""
    # The lane that reviews the model when one defect class keeps reappearing at new places
    # (``model-mismatch``); default: the first lane with the architecture lens.
    model_review_lane: str | None = None
    """The lane that reviews the model when a defect class keeps reappearing (default: the first
    verdict lane with the architecture lens)."""


def _names(*names: str) -> list[str]:
    return field(default_factory=lambda: list(names))


Titles = Annotated[list[str], Limits(min_length=1)]


@plain
class PlanConfig:
    """``[tool.bounded-review.plan]``: the section titles a plan must have (any one of each
    list; a title may add words after one, e.g. "Verification and acceptance"), and what makes
    a plan irreversible enough to need a rollback section (regular expressions)."""

    objective: Titles = _names("objective", "goal", "goals", "purpose")
    """Titles of the objective section (any one)."""
    steps: Titles = _names("steps", "approach", "implementation", "tasks", "work plan")
    """Titles of the steps section (any one)."""
    verification: Titles = _names(
        "verification", "acceptance", "acceptance criteria", "testing", "test plan", "validation"
    )
    """Titles of the verification section (any one)."""
    rollback: Titles = _names("rollback", "roll back", "revert", "backout", "recovery")
    """Titles of the rollback section (any one)."""
    irreversible: Annotated[list[str], Check(_regexes)] = field(
        default_factory=lambda: [
            r"\bmigrat(e|es|ed|ion|ions)\b",
            r"\b(delete|deletes|deleting|deletion|drop|drops|truncate|purge)\b",
            r"\b(release|releases|publish|deploy|deploys|deployment)\b",
            r"\brm -rf\b",
        ]
    )
    """Regular expressions that make a plan irreversible enough to need a rollback section."""


@plain
class SelectionConfig:
    """``[tool.bounded-review.selection]``: changed-line thresholds of the size classes."""

    small_lines: Annotated[int, Limits(ge=0)] = 50
    """At most this many changed lines is a small change."""
    large_lines: Annotated[int, Limits(ge=1)] = 400
    """More than this many changed lines is a large change."""
    # Skip model lanes for economy-tier changes the deterministic gate already found clean.
    settle_trivial: bool = False
    """Skip model lanes for economy-tier changes the deterministic gate found clean."""

    def __post_init__(self) -> None:
        if self.large_lines <= self.small_lines:
            raise ValueError(
                f"large_lines ({self.large_lines}) must be above small_lines ({self.small_lines})"
            )
