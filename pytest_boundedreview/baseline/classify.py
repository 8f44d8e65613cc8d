"""Classify the session's failures: target-related, pre-existing, flaky or unknown.

Failing node ids are re-run at head (a pass there means flaky) while those the base cache does
not know re-run, at the same time, at the base revision in a temporary checkout, with the base
sources first on ``sys.path`` and every import of the live repository's code turned to the
checkout's (``basefirst.py``), so no install of the project, editable or not, shadows the base
code; a base run that still ran a module of the live repository answers nothing (``unknown``).
The checkout is first made ready as the working tree runs (``artefacts.py``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.errors import GitError
from ..models import TestFailure
from ..target import git, kept, worktree
from . import artefacts, testdefs
from . import cache as basecache
from .outcomes import NodeOutcome
from .rerun import (
    PendingRerun,
    RerunResult,
    WaitingRerun,
    child_env,
    moved,
    rerun,
    start_rerun,
    start_waiting,
)

if TYPE_CHECKING:
    from ..core.config import Settings


@dataclass
class Classification:
    target_related: list[TestFailure] = field(default_factory=list)
    pre_existing: list[TestFailure] = field(default_factory=list)
    flaky: list[TestFailure] = field(default_factory=list)
    unknown: list[TestFailure] = field(default_factory=list)
    limitations: list[str] = field(default_factory=list)


@dataclass(frozen=True)
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
    started_early: Callable[[Sequence[str]], tuple[PendingRerun, Path] | None] | None = None
    setup: tuple[str, ...] | None = None  # base_setup, as configured

    @functools.cached_property
    def preparation(self) -> artefacts.Preparation:
        """What is done in a base checkout before the base re-run (see artefacts.py)."""
        if self.base_commit is None:
            return artefacts.Preparation()
        return artefacts.plan(self.repo, self.base_commit, self.rootdir, self.setup)

    def cache_file(self) -> Path:
        """Where the base answers of this run are cached (see cache.py)."""
        assert self.base_commit is not None
        stamp = self.preparation.stamp
        return basecache.cache_path(self.state, self.base_commit, self.args, stamp)

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


def verdict_at_base(
    nodeid: str, result: RerunResult, rootdir: Path, withheld_because: str = ""
) -> dict[str, str]:
    """What happened to ``nodeid`` in a base re-run whose rootdir is ``rootdir``
    (``withheld_because``: why compiled modules were not copied into the checkout)."""
    path = nodeid.split("::", 1)[0]
    if not (rootdir / path).exists():
        return {"kind": "missing"}
    if result.live:  # any outcome of that run may be the live code's: none counts
        shown = ", ".join(result.live[:3]) + (" ..." if len(result.live) > 3 else "")
        detail = f"the base run loaded {shown} from the working tree, not from the base"
        return {"kind": "live", "detail": detail}
    if result.withheld:  # its outcomes may be those of a missing compiled module
        shown = ", ".join(result.withheld[:3]) + (" ..." if len(result.withheld) > 3 else "")
        detail = (
            f"the base run could not import {shown}, built in the working tree and not "
            f"copied to the base, as {withheld_because or 'it was withheld'}"
        )
        return {"kind": "withheld", "detail": detail}
    if nodeid in result.failed:
        return {"kind": "failed", "signature": result.failed[nodeid]}
    if "::" not in nodeid:  # a file that failed to collect at head collects at base
        return {"kind": "passed"}
    if path in result.failed:
        return {"kind": "collect-error", "signature": result.failed[path]}
    if nodeid in result.passed:
        return {"kind": "passed"}
    if nodeid in result.found:
        return {"kind": "skipped"}
    return testdefs.not_collected(nodeid, rootdir / path)


def _judge(
    node: NodeOutcome,
    verdict: Mapping[str, str],
    into: Classification,
    head_rootdir: Path | None = None,
) -> None:
    """File one head failure under its class, given what happened to it at the base (and,
    for a test the base did not list, its file at head in ``head_rootdir``)."""
    kind, base = verdict["kind"], verdict.get("signature")
    if kind == "unlisted":
        new, why = testdefs.new_case(node.nodeid, verdict.get("decorated", ""), head_rootdir)
        bucket = into.target_related if new else into.unknown
        bucket.append(TestFailure(nodeid=node.nodeid, signature=node.signature, reason=why))
        return
    bucket, reason = {
        "live": (into.unknown, verdict.get("detail", "")),
        "withheld": (into.unknown, verdict.get("detail", "")),
        "unread": (into.unknown, verdict.get("detail", "")),
        "failed": (into.target_related, f"failure changed: was {base}"),
        "collect-error": (into.unknown, "its file does not collect at base"),
        "skipped": (into.unknown, "skipped at base"),  # the base could not tell: fail closed
        "passed": (
            into.target_related,
            "passes at base" if "::" in node.nodeid else "imports at base",
        ),
        "missing": (into.target_related, "new test: not at base"),
    }[kind]
    if kind == "failed" and base == node.signature:
        bucket, reason, base = into.pre_existing, "fails the same at base", None
    bucket.append(
        TestFailure(
            nodeid=node.nodeid, signature=node.signature, base_signature=base, reason=reason
        )
    )


def _unknown(nodes: Sequence[NodeOutcome], reason: str, into: Classification) -> None:
    into.unknown += [
        TestFailure(nodeid=n.nodeid, signature=n.signature, reason=reason) for n in nodes
    ]


def classify(
    failed: Sequence[NodeOutcome], run: BaselineRun, progress: Callable[[str], None]
) -> Classification:
    """Classify every failing node of the session. The base re-run starts first and runs
    while the flaky check re-runs the failures at head: the two overlap."""
    result = Classification()
    if not failed:
        return result
    if len(failed) > run.max_base_reruns:
        reason = (
            f"{len(failed)} failing tests exceed max_base_reruns = {run.max_base_reruns}: "
            "a systemic break, not re-run at base"
        )
        _unknown(failed, reason, result)
        result.limitations.append(reason)
        return result
    with contextlib.ExitStack() as stack:  # on any exit: the base child ends, its checkout goes
        at_base = _start_at_base(failed, run, progress, stack)
        remaining = _flaky_check(list(failed), run, progress, result)
        if remaining:
            at_base.judge(remaining, result)
    return result


def _flaky_check(
    remaining: list[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    into: Classification,
) -> list[NodeOutcome]:
    """Re-run the failures at head; file those that pass as flaky and return the rest."""
    env = child_env(environ=run.environ)  # the session's: its PYTHONHASHSEED, if set
    for attempt in range(run.reruns):
        progress(f"re-running {len(remaining)} failing test(s) at head (flaky check {attempt + 1})")
        nodeids = [n.nodeid for n in remaining]
        if run.rerun_at_head is not None:
            again = run.rerun_at_head(nodeids)
        else:
            again = rerun(nodeids, rootdir=run.rootdir, args=run.args, env=env, timeout=run.timeout)
        if again.status != "ok":
            into.limitations.append(f"flaky check at head did not complete: {again.detail}")
            break
        passed = [n for n in remaining if n.nodeid in again.passed]
        if passed and run.rerun_at_head is not None:
            passed = _confirmed_fresh(passed, run, env, progress, into)
        for node in passed:
            into.flaky.append(
                TestFailure(
                    nodeid=node.nodeid,
                    signature=node.signature,
                    reason="passes on a re-run at head, in a fresh process",
                )
            )
            remaining.remove(node)
    return remaining


def _confirmed_fresh(
    passed: list[NodeOutcome],
    run: BaselineRun,
    env: Mapping[str, str],
    progress: Callable[[str], None],
    into: Classification,
) -> list[NodeOutcome]:
    """Those of ``passed`` (on a re-run inside the session's own process) that pass in a fresh
    process too: a test that fails on its first call in every process is not flaky, whatever
    a second call in a process it already ran in says."""
    progress(f"confirming {len(passed)} passing re-run(s) in a fresh process")
    nodeids = [n.nodeid for n in passed]
    fresh = rerun(nodeids, rootdir=run.rootdir, args=run.args, env=env, timeout=run.timeout)
    if fresh.status != "ok":
        into.limitations.append(f"flaky check in a fresh process did not complete: {fresh.detail}")
        return []
    return [n for n in passed if n.nodeid in fresh.passed]


class BaseUnavailable(Exception):
    """The base could not answer: unreachable, outside the repository, or its run broke."""


def _at(
    checkout: Path, run: BaselineRun, made: bool = True
) -> tuple[Path, list[str], dict[str, str]]:
    """Where and how a re-run in ``checkout`` (a copy of some revision of the repository)
    runs: the rootdir the node ids are relative to, the session's options moved there, and
    an environment with its sources first on ``sys.path`` (``src/`` and the top; both when
    the checkout is not ``made`` yet, as a missing folder on the path is no harm). The re-run
    is started with ``copy_of=(run.repo.root, checkout)``: it imports the checkout's code."""
    try:
        relative = run.rootdir.relative_to(run.repo.root)
    except ValueError:
        why = f"pytest's rootdir {run.rootdir} is outside the repository {run.repo.root}"
        raise BaseUnavailable(why) from None
    sources = [p for p in (checkout / "src", checkout) if p.is_dir() or not made]
    env = child_env(sources, (run.repo.root, checkout), run.environ)
    return checkout / relative, moved(run.args, run.repo.root, checkout), env


def start_in(
    checkout: Path, nodeids: Sequence[str], run: BaselineRun, at_base: bool = True
) -> tuple[PendingRerun, Path]:
    """Start running ``nodeids`` in ``checkout`` (see :func:`_at`), made ready first when it
    is the base's (``at_base``, see artefacts.py); also the rootdir the node ids are relative
    to."""
    rootdir, args, env = _at(checkout, run)
    if not rootdir.is_dir():
        return PendingRerun(), rootdir
    pending = start_rerun(
        nodeids,
        rootdir=rootdir,
        args=args,
        env=env,
        timeout=run.timeout,
        copy_of=(run.repo.root, checkout),
        prepare=run.preparation if at_base else None,
    )
    return pending, rootdir


def start_waiting_in(
    checkout: Path, run: BaselineRun, first: Sequence[str] = ()
) -> WaitingRerun | None:
    """A re-run child in ``checkout`` (see :func:`_at`) waiting for its node ids, started
    with the session's paths, once the command ``first`` (if any) made the checkout and it was
    made ready (see artefacts.py); ``None`` when it cannot start. A path the base lacks is one
    pytest skips while waiting."""
    rootdir, args, env = _at(checkout, run, made=not first)
    paths = []
    for path in run.paths:
        with contextlib.suppress(ValueError):
            paths.append(str(checkout / path.relative_to(run.repo.root)))
    return start_waiting(
        rootdir=rootdir,
        args=args,
        env=env,
        timeout=run.timeout,
        paths=paths,
        first=first,
        copy_of=(run.repo.root, checkout),
        prepare=run.preparation,
    )


def rerun_in(
    checkout: Path, nodeids: Sequence[str], run: BaselineRun, at_base: bool = True
) -> tuple[RerunResult, Path]:
    """Run ``nodeids`` in ``checkout`` (see :func:`start_in`) and wait for the outcomes."""
    pending, rootdir = start_in(checkout, nodeids, run, at_base)
    return pending.result(), rootdir


Verdicts = dict[str, dict[str, str]]


def enter_checkout(run: BaselineRun, stack: contextlib.ExitStack) -> Path:
    """A checkout of the base kept until ``stack`` closes (and, with ``reuse_base_checkout``,
    for later runs); :class:`BaseUnavailable` when git cannot make it."""
    base = run.base_commit
    assert base is not None
    checkouts = kept.checkout if run.reuse_checkout else worktree.checkout
    try:
        return stack.enter_context(checkouts(run.repo, base))
    except GitError as exc:
        raise BaseUnavailable(f"base {base[:12]} unreachable: {exc}") from None


@contextlib.contextmanager
def started_at_base(run: BaselineRun, nodeids: Sequence[str]) -> Iterator[Callable[[], Verdicts]]:
    """Start re-running ``nodeids`` at the base revision in a checkout kept for the block;
    the function it yields waits for what happened to each (see :func:`verdict_at_base`).
    Both raise :class:`BaseUnavailable` when the base cannot tell."""
    base = run.base_commit
    if base is None:  # nothing existed before the change
        yield lambda: {nodeid: {"kind": "missing"} for nodeid in nodeids}
        return
    with contextlib.ExitStack() as stack:
        early = run.started_early(nodeids) if run.started_early is not None else None
        if early is None:
            pending, rootdir = start_in(enter_checkout(run, stack), nodeids, run)
        else:
            pending, rootdir = early
        stack.callback(pending.cancel)

        def verdicts() -> Verdicts:
            ran = pending.result()
            if ran.status == "setup":
                raise BaseUnavailable(f"the base could not be set up: {ran.detail}")
            if ran.status != "ok":
                broke = "timed out" if ran.status == "timeout" else "broke"
                raise BaseUnavailable(f"base run {broke}: {ran.detail}")
            why = run.preparation.withheld_because()
            return {nodeid: verdict_at_base(nodeid, ran, rootdir, why) for nodeid in nodeids}

        yield verdicts


def base_verdicts(run: BaselineRun, nodeids: Sequence[str]) -> Verdicts:
    """What happens to each of ``nodeids`` at the base revision (see :func:`verdict_at_base`);
    raises :class:`BaseUnavailable` when the base cannot tell."""
    with started_at_base(run, nodeids) as verdicts:
        return verdicts()


@dataclass
class _AtBase:
    """The base's answers: those cached for this base, and a re-run of the rest under way."""

    known: Verdicts
    cache_file: Path | None = None
    asked: frozenset[str] = frozenset()
    verdicts: Callable[[], Verdicts] | None = None
    unavailable: str | None = None
    head_rootdir: Path | None = None  # where the tests are at head
    notes: tuple[str, ...] = ()  # how the base checkout was made ready, when it is news

    def judge(self, nodes: Sequence[NodeOutcome], into: Classification) -> None:
        """File ``nodes`` (the failures the flaky check kept) by the base's answers; a base
        re-run none of them needs is not waited for (it ends with the classification)."""
        if nodes:  # how the base was made ready, when the report needs to say it
            into.limitations += self.notes
        if any(n.nodeid in self.asked for n in nodes):
            try:
                if self.verdicts is not None:
                    self.known.update(self.verdicts())
            except BaseUnavailable as exc:
                self.unavailable = str(exc)
            if self.unavailable is not None:
                _unknown([n for n in nodes if n.nodeid in self.asked], self.unavailable, into)
                into.limitations.append(self.unavailable)
            for kind in ("live", "withheld"):
                found = [v for v in self.known.values() if v["kind"] == kind]
                if found:
                    into.limitations.append(found[0]["detail"] + ": its results count as unknown")
            if self.cache_file is not None:  # an answer from the live code is no base answer
                kept = {k: v for k, v in self.known.items() if v["kind"] not in _UNCACHED}
                basecache.store(self.cache_file, kept)
        for node in nodes:
            if node.nodeid in self.known:
                _judge(node, self.known[node.nodeid], into, self.head_rootdir)


# Answers about this run alone: code of the working tree ran, or compiled modules it needs
# were withheld; the next run may do neither.
_UNCACHED = ("live", "withheld")


def _start_at_base(
    nodes: Sequence[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    stack: contextlib.ExitStack,
) -> _AtBase:
    """The cached base answers for ``nodes``, and a base re-run started for the others (only
    cache misses are run), kept until ``stack`` closes."""
    if run.base_commit is None:
        return _AtBase(
            known={n.nodeid: {"kind": "missing"} for n in nodes}, head_rootdir=run.rootdir
        )
    cache_file = run.cache_file()
    at = _AtBase(
        known=basecache.load(cache_file),
        cache_file=cache_file,
        head_rootdir=run.rootdir,
        notes=run.preparation.notes,
    )
    todo = [n.nodeid for n in nodes if n.nodeid not in at.known]
    if todo:
        at.asked = frozenset(todo)
        progress(f"re-running {len(todo)} failing test(s) at base {run.base_commit[:12]}")
        try:
            at.verdicts = stack.enter_context(started_at_base(run, todo))
        except BaseUnavailable as exc:
            at.unavailable = str(exc)
    return at
