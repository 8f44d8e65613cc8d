"""Where and how the session ran, as the re-runs at the base and at head need it
(:class:`BaselineRun`): plain values, and what the base cache of this run is called. A session
reads its cache with this alone; the machinery that runs tests at the base (baserun.py,
early.py) is imported only when the cache does not answer."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from ...change import git
from ...models.record import record
from ..checkout import artefacts
from . import cache as basecache

if TYPE_CHECKING:
    from ...core.settings.config import Settings
    from .rerun import Ask, PendingRerun, RerunResult


@record(frozen=True)
class BaselineRun:
    """Where and how the session ran, as the re-runs need it."""

    repo: git.Repo
    rootdir: Path
    base_commit: str | None
    args: Sequence[str]
    reruns: int
    max_base_reruns: int
    timeout: float
    state: Path
    reuse_checkout: bool = False  # a kept checkout of the base (reuse_base_checkout)
    # The session's environment before its tests changed it (else the process's, read when
    # a re-run starts), and the paths it was given (absolute), for an early base re-run.
    environ: Mapping[str, str] | None = None
    paths: Sequence[Path] = ()
    # Re-runs at head; the session passes an in-process runner when it can (no xdist).
    rerun_at_head: Callable[[Sequence[str]], RerunResult] | None = None
    # The base re-run the session started early, handed the node ids (see early.py).
    started_early: Callable[[Ask], tuple[PendingRerun, Path] | None] | None = None
    setup: tuple[str, ...] | None = None  # base_setup, as configured
    # What this run worked out, shared by its copies (dataclasses.replace keeps the dict).
    worked_out: dict[str, artefacts.Preparation] = field(
        default_factory=dict, compare=False, repr=False
    )

    @property
    def preparation(self) -> artefacts.Preparation:
        """What is done in a base checkout before the base re-run (see artefacts.py); worked
        out once for this run and its copies."""
        if "preparation" not in self.worked_out:
            plan = artefacts.Preparation()
            if self.base_commit is not None:
                plan = artefacts.plan(
                    self.repo, self.base_commit, self.rootdir, self.setup, self.environ
                )
            self.worked_out["preparation"] = plan
        return self.worked_out["preparation"]

    def cache_file(self) -> Path:
        """Where the base answers of this run are cached (see cache.py): keyed by the
        environment its base re-runs are given."""
        assert self.base_commit is not None
        stamp = self.preparation.stamp
        return basecache.cache_path(self.state, self.base_commit, self.args, stamp, self.environ)

    @classmethod
    def configured(
        cls,
        repo: git.Repo,
        rootdir: Path,
        base_commit: str | None,
        args: Sequence[str],
        settings: Settings,
        state: Path,
    ) -> BaselineRun:
        """Re-runs within the limits ``settings`` sets."""
        return cls(
            repo=repo,
            rootdir=rootdir,
            base_commit=base_commit,
            args=args,
            reruns=settings.reruns,
            max_base_reruns=settings.max_base_reruns,
            timeout=settings.base_timeout,
            state=state,
            reuse_checkout=settings.reuse_base_checkout,
            setup=tuple(settings.base_setup) if settings.base_setup else None,
        )

    def known(self) -> set[str]:
        """The keys the base cache of this run answers (none without a base commit)."""
        if self.base_commit is None:
            return set()
        return set(basecache.load(self.cache_file()))
