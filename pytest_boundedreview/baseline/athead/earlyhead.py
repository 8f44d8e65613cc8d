"""The flaky check's first re-run at head, started during the session when it cannot run in
the session's own process or on an xdist worker (see onworkers.py).

A test that logs reports of its own (the ``subtests`` fixture), a file that failed to collect, or
under xdist a test whose worker does not re-run it, is not run again in the session's
process: the re-run at head is a pytest child. It starts at the first such failure, in
the rootdir, with the session's options and its environment from before its tests ran; it
loads the plugins and the conftest files of the session's paths, and waits (see
:func:`rerun.start_waiting`). When the session ends it is handed the failures, so its start
is behind it. A child that ended early or broke, or whose folder vanished, is replaced by a
re-run started the usual way; :meth:`EarlyHead.close` ends it on every exit of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..reruns.childenv import child_env
from ..reruns.rerun import Ask, RerunResult, WaitingRerun, start_waiting
from ..reruns.runspec import BaselineRun
from .inprocess import Rerunner


class EarlyHead:
    """At most one early head re-run per session; ``run`` says how the session re-runs."""

    def __init__(self, run: Callable[[], BaselineRun]) -> None:
        self._make_run = run
        self._waiting: WaitingRerun | None = None
        self._started = False

    def needs(self) -> None:
        """A test failed: start the child at the first failure."""
        if not self._started:
            self._started = True
            run = self._make_run()
            try:
                self._waiting = start_waiting(
                    rootdir=run.rootdir,
                    args=run.args,
                    env=child_env(environ=run.environ),
                    timeout=run.timeout,
                    paths=[str(path) for path in run.paths],
                    kind=("re-run", " at head"),
                )
            except OSError:  # no folder for it: the re-run starts the usual way, later
                self._waiting = None

    def rerun(self, nodeids: Sequence[str], usual: Rerunner) -> RerunResult:
        """Re-run ``nodeids`` in the waiting child (once: a later re-run is ``usual``'s),
        or the usual way when it ended or broke."""
        waiting, self._waiting = self._waiting, None
        pending = waiting.hand(Ask.of(nodeids)) if waiting is not None else None
        if pending is None:
            return usual(nodeids)
        ran = pending.result()
        return ran if ran.status not in ("error", "vanished") else usual(nodeids)

    def close(self) -> None:
        """End the child; safe to call more than once."""
        if self._waiting is not None:
            self._waiting.cancel()
            self._waiting = None
