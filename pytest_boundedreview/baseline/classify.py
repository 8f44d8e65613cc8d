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
import dataclasses
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
    Ask,
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
    # Tests skipped (or xfailed) at head that pass at the base (see Questions).
    newly_skipped: list[TestFailure] = field(default_factory=list)
    # The tests the base collects from the paths listed; None when it was not asked or
    # could not tell.
    listed: frozenset[str] | None = None


@dataclass(frozen=True)
class Questions:
    """What a session asks the base besides its failures: whether the tests it skipped (or
    xfailed), and the files it skipped whole at collection, pass there; and which tests the
    base collects from ``listing`` (paths relative to the rootdir)."""

    skipped: Sequence[str] = ()
    skipped_files: Sequence[str] = ()
    listing: Sequence[str] = ()

    def __bool__(self) -> bool:
        return bool(self.skipped or self.skipped_files or self.listing)


# Cache keys of answers about paths rather than tests: no node id starts with "//".
LISTING, WHOLE = "//listing ", "//whole "


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
    started_early: Callable[[Ask], tuple[PendingRerun, Path] | None] | None = None
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
    failed: Sequence[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    questions: Questions = Questions(),
) -> Classification:
    """Classify every failing node of the session, and answer its other ``questions``. The
    base re-run starts first and runs while the flaky check re-runs the failures at head: the
    two overlap."""
    result = Classification()
    if not failed and not questions:
        return result
    if len(failed) > run.max_base_reruns:
        reason = (
            f"{len(failed)} failing tests exceed max_base_reruns = {run.max_base_reruns}: "
            "a systemic break, not re-run at base"
        )
        _unknown(failed, reason, result)
        result.limitations.append(reason)
        return result
    if len(questions.skipped) > run.max_base_reruns - len(failed):
        why = (
            f"{len(questions.skipped)} skipped tests exceed what max_base_reruns = "
            f"{run.max_base_reruns} leaves: whether the change skipped them was not checked"
        )
        result.limitations.append(why)
        questions = dataclasses.replace(questions, skipped=())
    with contextlib.ExitStack() as stack:  # on any exit: the base child ends, its checkout goes
        at_base = _start_at_base(failed, run, progress, stack, questions)
        remaining = _flaky_check(list(failed), run, progress, result) if failed else []
        at_base.judge(remaining, result)
        at_base.answer(questions, result)
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
    checkout: Path, ask: Ask, run: BaselineRun, at_base: bool = True
) -> tuple[PendingRerun, Path]:
    """Start what ``ask`` asks in ``checkout`` (see :func:`_at`), made ready first when it
    is the base's (``at_base``, see artefacts.py); also the rootdir the node ids are relative
    to."""
    rootdir, args, env = _at(checkout, run)
    if not rootdir.is_dir():
        return PendingRerun(), rootdir
    pending = start_rerun(
        ask,
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
    pending, rootdir = start_in(checkout, Ask.of(nodeids), run, at_base)
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


@dataclass(frozen=True)
class BaseAnswer:
    """What a base re-run established: a verdict per node id asked (see
    :func:`verdict_at_base`), the tests it collected from the paths it listed, and the
    outcomes of the files it ran whole."""

    verdicts: Verdicts
    listed: frozenset[str] = frozenset()
    whole: RerunResult | None = None
    trusted: bool = True  # it ran the base's code only (see verdict_at_base)


@contextlib.contextmanager
def started_at_base(run: BaselineRun, ask: Ask) -> Iterator[Callable[[], BaseAnswer]]:
    """Start what ``ask`` asks at the base revision in a checkout kept for the block; the
    function it yields waits for the answer. Both raise :class:`BaseUnavailable` when the
    base cannot tell."""
    base = run.base_commit
    if base is None:  # nothing existed before the change
        yield lambda: BaseAnswer({nodeid: {"kind": "missing"} for nodeid in ask.nodeids})
        return
    with contextlib.ExitStack() as stack:
        early = run.started_early(ask) if run.started_early is not None else None
        if early is None:
            pending, rootdir = start_in(enter_checkout(run, stack), ask, run)
        else:
            pending, rootdir = early
        stack.callback(pending.cancel)

        def answer() -> BaseAnswer:
            ran = pending.result()
            if ran.status == "setup":
                raise BaseUnavailable(f"the base could not be set up: {ran.detail}")
            if ran.status != "ok":
                broke = "timed out" if ran.status == "timeout" else "broke"
                raise BaseUnavailable(f"base run {broke}: {ran.detail}")
            why = run.preparation.withheld_because()
            verdicts = {n: verdict_at_base(n, ran, rootdir, why) for n in ask.nodeids}
            trusted = not (ran.live or ran.withheld)
            return BaseAnswer(verdicts, ran.listed, ran if ask.whole else None, trusted)

        yield answer


def base_verdicts(run: BaselineRun, nodeids: Sequence[str]) -> Verdicts:
    """What happens to each of ``nodeids`` at the base revision (see :func:`verdict_at_base`);
    raises :class:`BaseUnavailable` when the base cannot tell."""
    with started_at_base(run, Ask.of(nodeids)) as answer:
        return answer().verdicts


@dataclass
class _AtBase:
    """The base's answers: those cached for this base, and a re-run of the rest under way."""

    known: Verdicts
    cache_file: Path | None = None
    asked: frozenset[str] = frozenset()
    pending: Callable[[], BaseAnswer] | None = None
    unavailable: str | None = None
    head_rootdir: Path | None = None  # where the tests are at head
    notes: tuple[str, ...] = ()  # how the base checkout was made ready, when it is news
    answered: BaseAnswer | None = None
    waited: bool = False

    def _wait(self, into: Classification) -> None:
        """Wait for the base re-run (once), keep its answers and cache what may be; say once
        why the base could not tell, if it could not."""
        if self.waited:
            return
        self.waited = True
        if self.pending is not None and self.unavailable is None:
            try:
                self.answered = self.pending()
            except BaseUnavailable as exc:
                self.unavailable = str(exc)
        if self.unavailable is not None:
            into.limitations.append(self.unavailable)
            return
        if self.answered is None:
            return
        self.known.update(self.answered.verdicts)
        for kind in ("live", "withheld"):
            found = [v for v in self.known.values() if v["kind"] == kind]
            if found:
                into.limitations.append(found[0]["detail"] + ": its results count as unknown")
        if self.cache_file is not None:  # an answer from the live code is no base answer
            kept = {k: v for k, v in self.known.items() if v["kind"] not in _UNCACHED}
            basecache.store(self.cache_file, kept)

    def judge(self, nodes: Sequence[NodeOutcome], into: Classification) -> None:
        """File ``nodes`` (the failures the flaky check kept) by the base's answers; a base
        re-run none of them needs is not waited for here."""
        if nodes:  # how the base was made ready, when the report needs to say it
            into.limitations += self.notes
        if any(n.nodeid in self.asked for n in nodes):
            self._wait(into)
            if self.unavailable is not None:
                _unknown([n for n in nodes if n.nodeid in self.asked], self.unavailable, into)
        for node in nodes:
            if node.nodeid in self.known:
                _judge(node, self.known[node.nodeid], into, self.head_rootdir)

    def answer(self, questions: Questions, into: Classification) -> None:
        """Answer the session's other questions: which of its skipped tests pass at the
        base, and which tests the base collects from the paths listed."""
        if not questions:
            return
        self._wait(into)
        if self.unavailable is not None:
            return  # said once, as a limitation: nothing is answered
        for nodeid in questions.skipped:
            if self.known.get(nodeid, {}).get("kind") == "passed":
                into.newly_skipped.append(
                    TestFailure(nodeid=nodeid, signature="", reason="passes at base")
                )
        for path in questions.skipped_files:
            for nodeid in _lines(self.known.get(WHOLE + path, {}).get("passed", "")):
                reason = "passes at base; its file is skipped whole at collection"
                into.newly_skipped.append(TestFailure(nodeid=nodeid, signature="", reason=reason))
        entries = [self.known.get(LISTING + p, {}) for p in questions.listing]
        if entries and all(e.get("kind") == "listing" for e in entries):
            into.listed = frozenset(n for e in entries for n in _lines(e["ids"]))

    def keep_paths(self, answer: BaseAnswer, questions: Questions) -> None:
        """Keep what the base re-run said about paths (listed, run whole) as cache entries;
        what a run that did not run the base's code only said is no answer."""
        for path in questions.listing:
            inside = [n for n in answer.listed if _under(n, path)]
            entry = {"kind": "listing", "ids": "\n".join(sorted(inside))}
            self.known[LISTING + path] = entry if answer.trusted else _UNTRUSTED
        ran = answer.whole
        for path in questions.skipped_files:
            passed = sorted(n for n in ran.passed if _under(n, path)) if ran else []
            entry = {"kind": "whole", "passed": "\n".join(passed)}
            self.known[WHOLE + path] = entry if answer.trusted else _UNTRUSTED


_UNTRUSTED = {"kind": "live", "detail": "the base run did not run the base's code only"}


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line]


def _under(nodeid: str, path: str) -> bool:
    """Whether ``nodeid`` is a test collected from ``path`` (a file or folder, ``.`` the
    rootdir)."""
    file = nodeid.split("::", 1)[0]
    return path == "." or file == path or file.startswith(path.rstrip("/") + "/")


# Answers about this run alone: code of the working tree ran, or compiled modules it needs
# were withheld; the next run may do neither.
_UNCACHED = ("live", "withheld")


def _start_at_base(
    nodes: Sequence[NodeOutcome],
    run: BaselineRun,
    progress: Callable[[str], None],
    stack: contextlib.ExitStack,
    questions: Questions = Questions(),
) -> _AtBase:
    """The cached base answers for ``nodes`` and ``questions``, and a base re-run started
    for the others (only cache misses are run), kept until ``stack`` closes."""
    if run.base_commit is None:
        known: Verdicts = {n.nodeid: {"kind": "missing"} for n in nodes}
        known |= {n: {"kind": "missing"} for n in questions.skipped}
        known |= {WHOLE + p: {"kind": "whole", "passed": ""} for p in questions.skipped_files}
        known |= {LISTING + p: {"kind": "listing", "ids": ""} for p in questions.listing}
        return _AtBase(known=known, head_rootdir=run.rootdir)
    cache_file = run.cache_file()
    at = _AtBase(
        known=basecache.load(cache_file),
        cache_file=cache_file,
        head_rootdir=run.rootdir,
        notes=run.preparation.notes,
    )
    todo = [n for n in [*(n.nodeid for n in nodes), *questions.skipped] if n not in at.known]
    ask = Ask(
        nodeids=frozenset(todo),
        whole=tuple(p for p in questions.skipped_files if WHOLE + p not in at.known),
        listing=tuple(p for p in questions.listing if LISTING + p not in at.known),
    )
    if not (ask.nodeids or ask.whole or ask.listing):
        return at
    at.asked = ask.nodeids
    failing = sum(n.nodeid in ask.nodeids for n in nodes)
    what = [f"{len(ask.nodeids) - failing} skipped test(s)"] if len(ask.nodeids) > failing else []
    what += [f"{len(ask.whole)} skipped file(s)"] if ask.whole else []
    what += [f"the collection of {len(ask.listing)} path(s)"] if ask.listing else []
    base = run.base_commit[:12]
    if failing:
        progress(", ".join([f"re-running {failing} failing test(s) at base {base}", *what]))
    else:
        progress(f"asking base {base}: {', '.join(what)}")
    try:
        started = stack.enter_context(started_at_base(run, ask))
    except BaseUnavailable as exc:
        at.unavailable = str(exc)
        return at
    asked_paths = Questions(listing=ask.listing, skipped_files=ask.whole)

    def pending() -> BaseAnswer:
        answer = started()
        at.keep_paths(answer, asked_paths)
        return answer

    at.pending = pending
    return at
