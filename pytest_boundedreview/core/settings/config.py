"""``[tool.bounded-review]`` in ``pyproject.toml`` plus option overrides → :class:`Settings`."""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, Literal

from ...models import plain as plain_models
from ...models.plain import Check, Limits, build, checked_plainly, plain, validate_data
from ..ceilings import HARD_CEILINGS, MAX_RETRIES, Ceilings
from ..configfile import TABLE, find_config
from ..errors import ConfigError
from ..pytestconfig.selecting import unknown as not_selecting
from . import validnote
from .statepath import DEFAULT_STATE_DIR, OWN_FOLDER_FIX, state_dir_problem
from .tables import (
    Argv,
    Category,
    CheckConfig,
    LaneConfig,
    LoopConfig,
    PlanConfig,
    RiskRules,
    RoutingConfig,
    ScanConfig,
    Seconds,
    SelectionConfig,
    Share,
    TriggerConfig,
)

# Options whose values are paths, relative to where the command ran.
PATH_KEYS = ("report", "markdown", "sarif")


def option_overrides(values: Mapping[str, object], cwd: Path) -> dict[str, object]:
    """Command-line option values as config overrides: unset ones (``None``, a flag not given)
    left out, paths made absolute against ``cwd``."""
    return {
        key: str(Path(cwd, str(value))) if key in PATH_KEYS else value
        for key, value in values.items()
        if value is not None and value is not False
    }


def _never_raised(key: str) -> Callable[[int | None], int | None]:
    ceiling = (HARD_CEILINGS._asdict() | {"max_retries": MAX_RETRIES})[key]

    def check(value: int | None) -> int | None:
        if value is not None and value > ceiling:
            raise ValueError(
                f"{value} would raise the ceiling of {ceiling}; "
                "ceilings may be lowered, never raised"
            )
        return value

    return check


def _unique_names(entries: list[Any]) -> list[Any]:
    names = [entry.name for entry in entries]
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise ValueError(f"names must be unique; repeated: {', '.join(duplicated)}")
    return entries


def _a_folder_of_its_own(value: str) -> str:
    why = state_dir_problem(value)
    if why is not None:
        raise ValueError(f"{why}; {OWN_FOLDER_FIX}")
    return value


def _a_suite(value: list[str]) -> list[str]:
    others = not_selecting(value)
    if others:
        raise ValueError(
            f"{', '.join(others)} cannot define a suite: it holds paths (relative to pytest's "
            "rootdir) and -m, -k, --deselect, --ignore, --ignore-glob only"
        )
    return value


Count = Annotated[int, Limits(ge=0)]


@plain
class Settings:
    """Every setting; each option of the pytest face is also a key here (CLI wins)."""

    state_dir: Annotated[str, Check(_a_folder_of_its_own)] = DEFAULT_STATE_DIR
    """The state folder, relative to the repository root: reports, base cache, loop ledger. A
    folder of the tool's own: inside the repository, not its root, holding no file git tracks
    or shows, not one pytest collects."""
    base: str | None = None
    """The base revision of the review. Default: the CI base branch, else the upstream, else
    origin/HEAD."""
    target: Literal["auto", "pr", "local-diff", "staged"] = "auto"
    """What is reviewed: a PR range (`pr`), the working tree's diff (`local-diff`), the staged index
    (`staged`), or `auto` to choose."""
    mode: Literal["review-only", "review-and-fix"] = "review-only"
    """The authorization: `review-only`, or `review-and-fix` (repair loops allowed)."""
    risk: Literal["auto", "economy", "standard", "strict"] = "auto"
    """The risk tier that sets the budget; `auto` assesses it from the change."""
    report: str | None = None
    """Where the JSON report goes. Default: `report.json` in the state folder."""
    markdown: str | None = None
    """Also write the report as Markdown to this path."""
    sarif: str | None = None
    """Also write the report as a SARIF 2.1.0 log to this path."""
    review_command: str = "pytest --bounded-review"
    """The command an agent's stop hook tells the agent to run when its tree has no review (the
    hook adds `--bounded-review-target=local-diff` when `target` names another: the hook judges
    the working tree)."""
    no_lanes: bool = False
    """Run no reviewer lanes: the gate is deterministic (tests, checks, scans)."""
    full: bool = False
    """Force a full re-review round, not a delta."""
    reset: bool = False
    """Close the open loop for this target and start a new one."""
    shard: bool = False
    """Record this shard's outcomes only; the `bounded-review merge` step gates."""
    reruns: Annotated[int, Limits(ge=0, le=10)] = 1
    """Re-runs at head that tell a flaky test (0 turns the flaky check off)."""
    max_base_reruns: Annotated[int, Limits(ge=0, le=10_000)] = 50
    """More failing tests than this is a systemic break: they are `unknown`, not re-run at the
    base."""
    base_timeout: Seconds = 900
    """Seconds one re-run (at head or at the base) may take."""
    base_setup: Argv | None = None
    """An argv list (no shell) run in the base checkout, in pytest's rootdir there, before the
    base re-run: what makes the base run like the working tree (`["python", "setup.py",
    "build_ext", "--inplace"]`, compiled translations, generated code). It runs with the
    session's environment within `base_timeout`; if it fails, every base result is `unknown`. A
    change that alters it is reviewed with the base's value."""
    # Keep base checkouts in the user's cache folder for later cold runs (change/checkouts/kept.py).
    reuse_base_checkout: bool = False
    """Keep base checkouts in your cache folder for later cold runs (one per base commit, at most 3
    per repository)."""
    require_reproduction: bool = False
    """Only reproduced (or deterministic) blockers block; quoted or evidence-only ones are
    advisory."""
    require_assurances: bool = False
    """A verdict must carry its assurances, else the attempt failed."""
    # Typed dispositions: the committed waivers file (read from the reviewed snapshot), and
    # categories a `user` waiver never waives, beyond security, data-loss, authorization and
    # cryptography (the list only grows).
    waivers_file: str = "bounded-review-waivers.toml"
    """The committed waivers file, read from the reviewed snapshot, relative to the repository
    root (the base's file, when the change names another)."""
    waivers_from: Literal["base", "head"] = "head"
    """Which waivers apply: `head`, the waivers file as the change has it (a waiver the change
    itself adds is marked as such in the report), or `base`, only waivers the base already
    has."""
    protected_categories: list[Category] = field(default_factory=list)
    """Categories a `user` waiver never waives, beyond security, data-loss, authorization and
    cryptography (the list only grows)."""
    # A lane's blocking finding below this confidence (or without one, when required) is
    # advisory, with a note; a lane's own `min_confidence` wins.
    min_confidence: Share | None = None
    """A lane's blocker below this confidence is advisory, with a note; a lane's own
    `min_confidence` wins."""
    require_confidence: bool = False
    """A lane's blocker without a confidence is advisory."""
    allow_partial: bool = False
    """A partial run may be clean: one that ran less than the suite (test files its paths or
    ignores left out, tests deselected at invocation, shards that missed a file)."""
    suite: Annotated[list[str], Check(_a_suite)] = field(default_factory=list)
    """The narrowing your team accepts as the required suite, as pytest arguments: paths
    (relative to pytest's rootdir, in place of `testpaths`), `-m`, `-k`, `--deselect`,
    `--ignore`, `--ignore-glob`. A run with exactly this narrowing is whole; a narrower one is
    partial. Example: `suite = ["-m", "not slow"]`."""
    instructions: list[str] = field(default_factory=lambda: ["AGENTS.md", "CONTRIBUTING.md"])
    """Files of the repository handed to reviewers as the project's instructions."""
    max_lanes: Annotated[Count | None, Check(_never_raised("max_lanes"))] = None
    """Lanes per round; may lower the hard ceiling, never raise it."""
    max_concurrent: Annotated[
        Annotated[int, Limits(ge=1)] | None, Check(_never_raised("max_concurrent"))
    ] = None
    """Lanes running at once; may lower the hard ceiling, never raise it."""
    max_repair_loops: Annotated[Count | None, Check(_never_raised("max_repair_loops"))] = None
    """Repair rounds of a loop; may lower the hard ceiling, never raise it."""
    max_retries: Annotated[Count, Check(_never_raised("max_retries"))] = MAX_RETRIES
    """Retries of a failed lane attempt; may lower the hard ceiling, never raise it."""
    checks: Annotated[list[CheckConfig], Check(_unique_names)] = field(default_factory=list)
    """Check commands (linters, scanners) run at head and, when they report, at the base."""
    lanes: Annotated[list[LaneConfig], Check(_unique_names)] = field(default_factory=list)
    """Reviewer lanes: commands, OpenAI-compatible endpoints, coding agents, plugins."""
    scans: ScanConfig = field(default_factory=ScanConfig)
    """The severity of each built-in diff scan, or `off`."""
    risk_rules: RiskRules = field(default_factory=RiskRules)
    """What makes `risk = "auto"` strict or economy."""
    selection: SelectionConfig = field(default_factory=SelectionConfig)
    """Changed-line thresholds of the size classes that choose lanes."""
    loop: LoopConfig = field(default_factory=LoopConfig)
    """What counts as drift and as a systemic repair in the review loop."""
    plan: PlanConfig = field(default_factory=PlanConfig)
    """The sections a plan must have, and what makes a plan irreversible."""
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    """The live model list for command lanes and the ordered models of each routing tier."""
    blocked_plugins: list[str] = field(default_factory=list)
    """Lane plugins (entry point or conftest names) never loaded."""

    def __post_init__(self) -> None:
        self._waivers_file_in_the_repository()
        self._model_reviewer_exists()

    def _waivers_file_in_the_repository(self) -> None:
        parts = Path(self.waivers_file).parts
        if not parts or Path(self.waivers_file).is_absolute() or ".." in parts:
            raise ValueError(
                f"waivers_file {self.waivers_file!r} must be a path inside the repository, "
                "relative to its root"
            )
        if Path(*parts[: len(Path(self.state_dir).parts)]) == Path(self.state_dir):
            raise ValueError(
                f"waivers_file {self.waivers_file!r} is inside the state folder "
                f"{self.state_dir!r}, which holds generated state: commit it elsewhere"
            )

    def _model_reviewer_exists(self) -> None:
        named = self.loop.model_review_lane
        verdicts = [lane.name for lane in self.lanes if lane.role == "verdict"]
        if named is not None and named not in verdicts:
            known = ", ".join(verdicts) or "none configured"
            fix = "name one of them" if verdicts else 'add a lane with role = "verdict"'
            why = (
                f"loop.model_review_lane {named!r} names no verdict lane (verdict lanes: "
                f"{known}); {fix}, or leave the key out"
            )
            raise ValueError(why)

    @property
    def model_reviewer(self) -> str | None:
        """The lane that reviews the model on ``model-mismatch``: ``loop.model_review_lane``,
        else the first verdict lane with the architecture lens."""
        named = self.loop.model_review_lane
        found = next(
            (c.name for c in self.lanes if c.lens == "architecture" and c.role == "verdict"), None
        )
        return named or found

    def report_file(self, state: Path) -> Path:
        """Where the JSON report goes: ``report``, else ``report.json`` in the state folder."""
        return Path(self.report).absolute() if self.report else state / "report.json"

    @property
    def lowered_ceilings(self) -> Ceilings:
        """Configured ceilings, the hard ceiling where none is set."""
        return Ceilings(
            self.max_lanes if self.max_lanes is not None else HARD_CEILINGS.max_lanes,
            self.max_concurrent
            if self.max_concurrent is not None
            else HARD_CEILINGS.max_concurrent,
            self.max_repair_loops
            if self.max_repair_loops is not None
            else HARD_CEILINGS.max_repair_loops,
        )


_SECTION_MODELS: dict[str, type] = {
    "checks": CheckConfig,
    "lanes": LaneConfig,
    "scans": ScanConfig,
    "risk_rules": RiskRules,
    "selection": SelectionConfig,
    "routing": RoutingConfig,
    "loop": LoopConfig,
    "plan": PlanConfig,
}

# The modules holding the rules a configuration is validated by (see validnote.py).
_RULES = (__name__, CheckConfig.__module__, Ceilings.__module__, plain_models.__name__)


def _explain(error: Any, overrides: Mapping[str, object]) -> str:
    import difflib  # (only for an error: its import is 1 ms of every session's start)

    from ..validation import UNKNOWN_KEY, describe

    loc = error["loc"]
    line = describe(error)
    if error["type"] in UNKNOWN_KEY:
        model: type = Settings
        if len(loc) > 1 and isinstance(loc[0], str) and loc[0] in _SECTION_MODELS:
            model = _SECTION_MODELS[loc[0]]
        if tuple(loc[:2]) == ("risk_rules", "triggers") and len(loc) > 3:
            model = TriggerConfig
        known = sorted(f.name for f in dataclasses.fields(model))
        close = difflib.get_close_matches(str(loc[-1]), known, n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        line += f"; {hint}known keys: {', '.join(known)}"
    if error["type"] == "list_type" and isinstance(error.get("input"), str):
        try:
            words = shlex.split(error["input"])
        except ValueError:  # an unclosed quote
            words = error["input"].split()
        line += f"; write it as a list (an argv list runs without a shell): {json.dumps(words)}"
    if tuple(loc) == ("base_setup",) and error["type"] == "too_short":
        line += "; leave the key out to run no set-up command"
    if loc and loc[0] in overrides:
        line = f"--bounded-review-{str(loc[0]).replace('_', '-')}: {line}"
    return line


def load_settings(
    start: Path,
    stop: Path | None = None,
    overrides: Mapping[str, object] | None = None,
    approve: Callable[[Settings], object] | None = None,
) -> tuple[Settings, Path | None]:
    """Settings from the nearest config, with ``overrides`` (non-``None`` option values) on
    top; :class:`ConfigError` naming the file, key, bad value and allowed values.

    ``approve`` sees the settings before anything is written and refuses them by raising
    :class:`ConfigError` (the faces check there that ``state_dir`` is a folder of the tool's
    own). One whose every value is plainly valid (text, flags, words: see
    :func:`checked_plainly`) is built without pydantic. Another (with its overrides) is
    validated by pydantic once: its digest, with the package's version, is then noted in the
    state folder's cache under ``stop``, and later runs with the same one build the settings
    without pydantic."""
    path, table = find_config(start, stop)
    overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
    data = {**table, **overrides}
    source = f"{path}: [{TABLE}]" if path else "options"
    state_dir = data.get("state_dir", Settings.state_dir)
    marker = validnote.marker(stop, state_dir, data, _RULES)
    if marker is not None and marker.exists():
        return _approved(build(Settings, data), approve, source), path
    settings = checked_plainly(Settings, data)  # CI's usual case: no pydantic at all
    if settings is None:
        from pydantic import ValidationError

        try:
            settings = validate_data(Settings, data)
        except ValidationError as exc:
            lines = [_explain(error, overrides) for error in exc.errors(include_url=False)]
            raise ConfigError(f"{source} is invalid:\n  " + "\n  ".join(lines)) from None
    _approved(settings, approve, source)
    if marker is not None:
        validnote.note(marker)
    return settings, path


def validated(data: Mapping[str, object]) -> Settings:
    """:class:`Settings` from a configuration's data (a table with its overrides), validated
    by pydantic unless its every value is plainly valid (see :func:`checked_plainly`);
    pydantic's ``ValidationError`` when it is invalid."""
    plainly = checked_plainly(Settings, data)
    return plainly if plainly is not None else validate_data(Settings, data)


def _approved(
    settings: Settings, approve: Callable[[Settings], object] | None, source: str
) -> Settings:
    if approve is not None:
        try:
            approve(settings)
        except ConfigError as exc:
            raise ConfigError(f"{source} is invalid:\n  {exc}") from None
    return settings
