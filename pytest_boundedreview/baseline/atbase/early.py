"""The base re-run started during the session, at the first failure the base cache does not
know.

At that failure one background process starts: ``git worktree add`` of the base, the
checkout made ready (compiled modules copied in, ``base_setup`` run: see artefacts.py), then,
in the new checkout, a re-run child that loads pytest, the plugins and the base's conftest
files for the session's paths, and waits for its node ids while the session goes on. By the
time the session ends the checkout and the child's start are behind it. (A kept checkout,
``reuse_base_checkout``, is brought back to its commit at once instead: that is quick; the
process then makes it ready.) The classification hands the child the failures that need the
base (see :func:`baserun.started_at_base`). A child that ended early or broke is replaced by
a re-run started the usual way, in the same checkout if it was made; one whose set-up command
failed is not: that failure is the base's answer (every base result unknown). Only cache
misses start anything; what is never needed costs its start and nothing else.

:meth:`EarlyBase.close` ends the child and removes the checkout; the session calls it on every
exit, and a killed session's leftovers go with the next run's sweep (the child dies with it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path

from ...change.checkouts import worktree
from ..reruns.cache import LISTING
from ..reruns.rerun import Ask, PendingRerun, RerunResult, WaitingRerun
from ..reruns.runspec import BaselineRun
from .baserun import BaseUnavailable, enter_checkout, start_in, start_waiting_in


class _OrUsual(PendingRerun):
    """The early child's re-run; when it broke (an error, not a timeout), a re-run started
    the usual way in its place."""

    def __init__(self, early: PendingRerun, usual: Callable[[], PendingRerun]) -> None:
        super().__init__()
        self._early, self._usual = early, usual
        self._replaced: PendingRerun | None = None

    def result(self) -> RerunResult:
        ran = self._early.result()
        if ran.status != "error":
            return ran
        self._replaced = self._usual()
        return self._replaced.result()

    def cancel(self) -> None:
        self._early.cancel()
        if self._replaced is not None:
            self._replaced.cancel()


class EarlyBase:
    """At most one early base re-run per session; ``run`` says how the session re-runs."""

    def __init__(
        self,
        run: Callable[[], BaselineRun],
        listing: Sequence[str] = (),
        known: set[str] | None = None,
    ) -> None:
        self._make_run = run
        self._listing = listing  # paths whose collection the session asks of the base
        self._run: BaselineRun | None = None
        self._stack = contextlib.ExitStack()
        self._known = known  # the keys the base cache answers (read here when not given)
        self._checkout: Path | None = None
        self._made = False  # the checkout is there whole (else its child makes it first)
        self._waiting: WaitingRerun | None = None
        self._settled = False  # started, or ruled out

    def needs(self, key: str) -> None:
        """The session needs the base's answer for ``key`` (a node id that failed or was
        skipped, or a path whose collection or skipped tests it asks about, see
        :class:`classify.Questions`): start at the first the base cache does not know."""
        if self._settled:
            return
        if self._run is None:
            self._run = self._make_run()
        run = self._run
        if run.base_commit is None or run.max_base_reruns == 0:
            self._settled = True
            return
        if self._known is None:
            self._known = run.known()
        if key in self._known:
            return
        self._settled = True
        listing = [p for p in self._listing if LISTING + p not in self._known]
        try:
            if run.reuse_checkout:
                self._checkout = enter_checkout(run, self._stack)
                self._made = True
                self._stack.callback(self._end_child)  # before the checkout is given back
                self._waiting = start_waiting_in(self._checkout, run, listing=listing)
            else:
                self._checkout, add = worktree.add_command(run.repo, run.base_commit)
                self._stack.callback(worktree.remove, run.repo, self._checkout)
                self._stack.callback(self._end_child)  # before the checkout is removed
                self._waiting = start_waiting_in(self._checkout, run, add, listing)
        except (BaseUnavailable, OSError):
            self.close()  # the classification tries the usual way, and says why it failed

    def hand(self, ask: Ask) -> tuple[PendingRerun, Path] | None:
        """The base re-run of ``ask`` in the early checkout, and the rootdir its node ids
        are relative to; ``None`` when no checkout was made early."""
        # The waiting child stays ours until the session closes (a Ctrl-C in the middle of
        # the hand-over must still end it): cancelling it twice is harmless.
        run, checkout, waiting = self._run, self._checkout, self._waiting
        if run is None or checkout is None:
            return None
        pending = waiting.hand(ask) if waiting is not None else None
        if pending is None or waiting is None:  # the child ended, or the add before it
            made = self._made or (waiting is not None and waiting.made)
            return start_in(checkout, ask, run) if made else None  # never a half-made one
        there, usual = checkout, run  # for the closure: neither is None

        def started_usually() -> PendingRerun:
            return start_in(there, ask, usual)[0]  # handed: the checkout was made

        return _OrUsual(pending, started_usually), waiting.rootdir

    def _end_child(self) -> None:
        if self._waiting is not None:
            self._waiting.cancel()

    def close(self) -> None:
        """End the child and remove the checkout; safe to call more than once."""
        self._stack.close()
        self._waiting, self._checkout = None, None
