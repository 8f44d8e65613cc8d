"""Where and how tests re-run at the base revision (the session's run as the re-runs need it is
:class:`runspec.BaselineRun`): a checkout of the base (temporary, or kept with
``reuse_base_checkout``), a re-run started there (or handed to the child the session started
early, see early.py), and what happened to each node id there (:func:`verdict_at_base`).
The checkout is first made ready as the working tree runs (``artefacts.py``), and the re-run
imports the checkout's code (``basefirst.py``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...change.checkouts import kept, worktree
from ...core.errors import GitError
from ...models.record import record
from ..checkout import basecontent
from ..reruns.childenv import child_env, moved
from ..reruns.rerun import Ask, PendingRerun, RerunResult, WaitingRerun, start_rerun, start_waiting
from ..reruns.runspec import BaselineRun
from ..suite import testdefs

if TYPE_CHECKING:
    pass


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
    env = child_env(sources, (run.repo.root, checkout), basecontent.storage_env(run.environ))
    return checkout / relative, moved(run.args, run.repo.root, checkout), env


def start_in(
    checkout: Path, ask: Ask, run: BaselineRun, at_base: bool = True
) -> tuple[PendingRerun, Path]:
    """Start what ``ask`` asks in ``checkout`` (see :func:`_at`), made ready first when it
    is the base's (``at_base``, see artefacts.py); also the rootdir the node ids are relative
    to."""
    rootdir, args, env = _at(checkout, run)
    if not checkout.is_dir():  # removed under the session: no answer, not "missing"
        return PendingRerun.vanished("the checkout", checkout), rootdir
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
        what=ask.described(*_kind(run, at_base)),
    )
    return pending, rootdir


def _kind(run: BaselineRun, at_base: bool = True) -> tuple[str, str]:
    """What a progress line calls a re-run of ``run`` in a checkout, and where it runs."""
    if at_base and run.base_commit is not None:
        return "base re-run", f" at {run.base_commit[:12]}"
    return "re-run", " in a checkout"


def start_waiting_in(
    checkout: Path, run: BaselineRun, first: Sequence[str] = (), listing: Sequence[str] = ()
) -> WaitingRerun | None:
    """A re-run child in ``checkout`` (see :func:`_at`) waiting for its node ids, started
    with the session's paths, once the command ``first`` (if any) made the checkout and it was
    made ready (see artefacts.py), that lists the tests of ``listing`` while it waits;
    ``None`` when it cannot start. A path the base lacks is one pytest skips while
    waiting."""
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
        listing=listing,
        kind=_kind(run),
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


@record(frozen=True)
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
            nonlocal rootdir
            ran = pending.result()
            if ran.status == "vanished":  # removed under the run: once more, in a new checkout
                again, rootdir = start_in(enter_checkout(run, stack), ask, run)
                stack.callback(again.cancel)
                ran = again.result()
                if ran.status == "vanished":
                    raise BaseUnavailable(f"the base re-run lost its folders twice: {ran.detail}")
            if ran.status == "setup":
                raise BaseUnavailable(f"the base could not be set up: {ran.detail}")
            if ran.status != "ok":
                broke = "timed out" if ran.status == "timeout" else "broke"
                raise BaseUnavailable(f"base run {broke}: {ran.detail}")
            why = run.preparation.withheld_because()
            verdicts = {n: verdict_at_base(n, ran, rootdir, why) for n in ask.nodeids}
            # What the base ran without (basecontent.py), known before it ran or found there
            uncertain = (*run.preparation.uncertain, *ran.uncertain)
            verdicts = basecontent.uncertain_verdicts(verdicts, uncertain)
            trusted = not (ran.live or ran.withheld or uncertain)
            return BaseAnswer(verdicts, ran.listed, ran if ask.whole else None, trusted)

        yield answer


def base_verdicts(run: BaselineRun, nodeids: Sequence[str]) -> Verdicts:
    """What happens to each of ``nodeids`` at the base revision (see :func:`verdict_at_base`);
    raises :class:`BaseUnavailable` when the base cannot tell."""
    with started_at_base(run, Ask.of(nodeids)) as answer:
        return answer().verdicts
