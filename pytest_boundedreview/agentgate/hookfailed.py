"""What the stop hook answers when it cannot decide (CONTRACT §12): an error (a broken event
field, unreadable settings, a corrupt state or report) or no answer within its deadline. It
blocks once per task saying why and what to do, then lets the agent stop with that shown:
never silence, never clean, never a hook the agent kills."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from ..core.settings.statepath import DEFAULT_STATE_DIR
from ..core.statefile import state_folder, write_atomic
from .agentprotocol import PROTOCOLS, continued
from .hookdeadline import Work
from .hookdecide import REVIEW, Answer
from .hookstate import Counter, counter_path, held

SLOW_TREE = "reading the working tree (git add --all, in a temporary index)"
_FIXES = {
    SLOW_TREE: "A large file or many files git does not ignore make that slow: add them to "
    ".gitignore (`git status --porcelain --untracked-files=all` lists the untracked ones) or "
    "move them out of the repository",
}


def failed(error: str, work: Work[Answer], event: Mapping[str, Any], agent: str) -> Answer:
    """Block once per task with ``error`` (never past a block the task already had: the
    error may be the hook's own), then let the agent stop with it shown."""
    let_go = Answer(False, error + "; not reviewed")
    state, session = work.state, PROTOCOLS[agent].session(event)
    if state is None and work.root is not None:  # the settings cannot say where: the default
        with contextlib.suppress(Exception):
            state = state_folder(work.root, DEFAULT_STATE_DIR)
    if state is None or continued(event):
        return let_go
    try:
        counter = Counter.load(counter_path(state, agent, session))
    except ValueError:
        counter = None
    marker = counter_path(state, agent, session, ".error")
    try:
        with work.committing():
            if (counter is not None and counter.blocks > 0) or marker.exists():
                return let_go
            marker.parent.mkdir(exist_ok=True)
            write_atomic(marker, error.encode())
    except OSError:
        return let_go
    return Answer(True, error + f". Fix it, or run `{REVIEW}` and report the state.")


def late(work: Work[Answer], seconds: float, event: Mapping[str, Any], agent: str) -> Answer:
    """Past the deadline: block once in this task saying why and what to do, then let the
    agent stop with the state (never silence, never a hook the agent kills)."""
    why = (
        f"bounded-review stop hook could not decide within {seconds:g} s: it was still {work.phase}"
    )
    let_go = Answer(False, why + "; not reviewed")
    if work.state is None:
        return let_go
    session = PROTOCOLS[agent].session(event)
    try:
        with held(work.state, agent, session, wait=1):
            counter = Counter.load(counter_path(work.state, agent, session))
            if counter.late:
                counter.end_task()
                counter.save()
                return let_go
            counter.late = True
            counter.blocked(f"late:{work.phase}")
            counter.save()
    except Exception:  # the state cannot be kept: nothing to count the one block in
        return let_go
    fix = _FIXES.get(work.phase, "git is slow here: check that `git status` answers quickly")
    return Answer(True, f"{why}. {fix}; then stop again (the next stop is let go if it is late).")
