"""The pytest face: options, and the session object registered when ``--bounded-review`` is on."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import git
from .config import Settings, load_settings
from .errors import FatalError
from .target import Target, freeze

# Options that are also config keys: (key, metavar or choices, help). Flags have no values.
_VALUE_OPTIONS: tuple[tuple[str, str | tuple[str, ...], str], ...] = (
    ("base", "REF", "base revision of the review (default: CI base branch, upstream, origin/HEAD)"),
    ("target", ("auto", "pr", "local-diff", "staged"), "what is reviewed (default: auto)"),
    ("mode", ("review-only", "review-and-fix"), "authorization (default: review-only)"),
    ("risk", ("auto", "economy", "standard", "strict"), "risk tier (default: auto)"),
    ("report", "PATH", "JSON report path (default: .bounded-review/report.json)"),
    ("markdown", "PATH", "also write a Markdown report"),
    ("sarif", "PATH", "also write a SARIF 2.1.0 log"),
)
_FLAG_OPTIONS: tuple[tuple[str, str], ...] = (
    ("no_lanes", "deterministic gate only: run no reviewer lanes"),
    ("full", "force a full re-review round"),
    ("reset", "close the open loop for this target and start a new one"),
    ("shard", "record this shard's outcomes only; the `bounded-review merge` step gates"),
)
_PATH_KEYS = ("report", "markdown", "sarif")
SESSION_KEY = pytest.StashKey["BoundedReview"]()


def _flag(key: str) -> str:
    return "--bounded-review-" + key.replace("_", "-")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("bounded-review", "bounded review (a finite evidence gate)")
    group.addoption(
        "--bounded-review",
        action="store_true",
        default=False,
        help="gate the session on what the change under review caused",
    )
    for key, kind, text in _VALUE_OPTIONS:
        dest = f"bounded_review_{key}"
        if isinstance(kind, tuple):
            group.addoption(_flag(key), dest=dest, choices=kind, default=None, help=text)
        else:
            group.addoption(_flag(key), dest=dest, metavar=kind, default=None, help=text)
    for key, text in _FLAG_OPTIONS:
        group.addoption(
            _flag(key), dest=f"bounded_review_{key}", action="store_true", default=None, help=text
        )


def _overrides(config: pytest.Config) -> dict[str, object]:
    keys = [key for key, _, _ in _VALUE_OPTIONS] + [key for key, _ in _FLAG_OPTIONS]
    values: dict[str, object] = {}
    for key in keys:
        value = config.getoption(f"bounded_review_{key}")
        if value is not None and key in _PATH_KEYS:
            value = str(Path(config.invocation_params.dir, value))
        values[key] = value
    return values


class BoundedReview:
    """The controller-side state of one bounded-review session."""

    def __init__(self, settings: Settings, repo: git.Repo, target: Target) -> None:
        self.settings = settings
        self.repo = repo
        self.target = target

    @classmethod
    def from_config(cls, config: pytest.Config) -> BoundedReview:
        try:
            repo = git.open_repo(Path(config.rootpath))
            settings, _ = load_settings(Path(config.rootpath), repo.root, _overrides(config))
            target = freeze(repo, settings.target, settings.base)
        except FatalError as exc:
            raise pytest.UsageError(f"bounded-review: {exc}") from None
        return cls(settings, repo, target)

    def pytest_report_header(self) -> list[str]:
        target = self.target
        base = target.base + (f" @ {target.base_commit[:12]}" if target.base_commit else "")
        count = len(target.files)
        what = f"{count} file{'' if count == 1 else 's'} changed" if count else "nothing to review"
        return [f"bounded-review: target {target.kind} (base {base}), {target.revision}, {what}"]


def pytest_configure(config: pytest.Config) -> None:
    # xdist workers only run tests; the controller alone reviews and writes.
    if not config.getoption("bounded_review") or hasattr(config, "workerinput"):
        return
    session = BoundedReview.from_config(config)
    config.stash[SESSION_KEY] = session
    config.pluginmanager.register(session, "bounded-review-session")


def pytest_unconfigure(config: pytest.Config) -> None:
    session = config.stash.get(SESSION_KEY, None)
    if session is not None:
        config.pluginmanager.unregister(session)
        del config.stash[SESSION_KEY]
