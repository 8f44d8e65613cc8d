"""The base re-run started during the session, at the first failure the base cache does not
know.

The base checkout is made and a re-run child started in it at once: the child loads pytest,
the plugins and the base's conftest files, then waits for its node ids while the session goes
on, so by the time the session ends the child's start is behind it. The classification hands
it the failures that need the base (see :func:`classify.started_at_base`). A child that ended
before it was ready (an option the base's conftest files do not know, say) is replaced by a
re-run started the usual way in the same checkout. Only cache misses start one; a child that
is never needed costs its start and nothing else. :meth:`EarlyBase.close` ends the child and
removes the checkout; the session calls it on every exit, and a killed session's leftovers go
with the next run's sweep.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from pathlib import Path

from . import cache as basecache
from .classify import BaselineRun, BaseUnavailable, enter_checkout, start_in, start_waiting_in
from .rerun import PendingRerun, WaitingRerun


class EarlyBase:
    """At most one early base re-run per session; ``run`` says how the session re-runs."""

    def __init__(self, run: Callable[[], BaselineRun]) -> None:
        self._make_run = run
        self._run: BaselineRun | None = None
        self._stack = contextlib.ExitStack()
        self._known: set[str] | None = None  # node ids the base cache answers
        self._checkout: Path | None = None
        self._waiting: WaitingRerun | None = None
        self._settled = False  # started, or ruled out

    def failed(self, nodeid: str) -> None:
        """``nodeid`` failed in the session: start at the first the base cache does not know."""
        if self._settled:
            return
        if self._run is None:
            self._run = self._make_run()
        run = self._run
        if run.base_commit is None or run.max_base_reruns == 0:
            self._settled = True
            return
        if self._known is None:
            cache_file = basecache.cache_path(run.state, run.base_commit, run.args)
            self._known = set(basecache.load(cache_file))
        if nodeid in self._known:
            return
        self._settled = True
        try:
            self._checkout = enter_checkout(run, self._stack)
            self._waiting = start_waiting_in(self._checkout, run)
        except (BaseUnavailable, OSError):
            self.close()  # the classification tries the usual way, and says why it failed
            return
        if self._waiting is not None:
            self._stack.callback(self._waiting.cancel)

    def hand(self, nodeids: Sequence[str]) -> tuple[PendingRerun, Path] | None:
        """The base re-run of ``nodeids`` in the early checkout, and the rootdir the node ids
        are relative to; ``None`` when nothing was started early."""
        run, checkout, waiting = self._run, self._checkout, self._waiting
        self._waiting = None
        if run is None or checkout is None:
            return None
        pending = waiting.hand(nodeids) if waiting is not None else None
        if pending is None or waiting is None:
            return start_in(checkout, nodeids, run)
        return pending, waiting.rootdir

    def close(self) -> None:
        """End the child and remove the checkout; safe to call more than once."""
        self._waiting, self._checkout = None, None
        self._stack.close()
