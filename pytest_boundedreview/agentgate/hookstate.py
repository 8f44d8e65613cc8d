"""What an agent's hooks keep per agent session (CONTRACT §12), in
``<state>/agents/<agent>-<session>.json``, read and written under the ledger's kernel lock and
written atomically: the blocks given in the current task, the last decision blocked, the commit
and tree the turn started with and the base it is judged against, whether the last stop was
blocked, whether this task had its one block for a hook that could not decide in time, and the
last stop answered (so that the other copy of the hook answering the same stop repeats that
answer: :meth:`Counter.repeat`).

A task starts at the first turn that changes the tree after a stop that was allowed and ends at
the next allowed stop (:meth:`Counter.end_task`): the block budget is one task's, not the whole
agent session's."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from ..core.statefile import write_atomic
from ..models.record import record

_TEXT = ("last", "turn_tree", "turn_commit", "turn_base", "stop_head", "heard", "heard_by", "said")
_FLAGS = ("pending", "late", "said_block")
# How soon after a stop's answer the other copy of the hook may repeat it: two copies of one
# stop run one after the other within each one's deadline.
REPEAT_SECONDS = 60.0


@record
class Counter:
    """What the hook keeps for one agent session."""

    path: Path
    blocks: int = 0  # blocks given in the current task
    last: str = ""  # the key of the last decision blocked (tree + what it was blocked on)
    turn_tree: str = ""  # the tree the current turn started with ("" when not recorded)
    turn_commit: str = ""  # the commit the current turn started at ("" when none recorded)
    turn_base: str = ""  # the base commit recorded with it, which the turn is judged against
    stop_head: str = ""  # HEAD at the last stop answered ("" when none was)
    pending: bool = False  # the last answer was a block: the agent's next prompt follows it
    late: bool = False  # this task had its one block for a hook that could not decide in time
    heard: str = ""  # the stop answered last (its event's bytes, the tree), "" once repeated
    heard_by: str = ""  # which copy of the hook answered it
    heard_at: float = 0.0  # when (seconds since the epoch)
    said: str = ""  # what it answered
    said_block: bool = False

    @classmethod
    def load(cls, path: Path) -> Counter:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            found = cls(path, int(data["blocks"]))
            for key in _TEXT:
                value = data.get(key, "")
                if not isinstance(value, str):
                    raise TypeError(f"`{key}` is not a string")
                setattr(found, key, value)
            for key in _FLAGS:
                value = data.get(key, False)
                if not isinstance(value, bool):
                    raise TypeError(f"`{key}` is not true or false")
                setattr(found, key, value)
            at = data.get("heard_at", 0.0)
            if not isinstance(at, (int, float)) or isinstance(at, bool):
                raise TypeError("`heard_at` is not a number")
            found.heard_at = float(at)
            return found
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"the hook's state {path} is unreadable ({exc})") from None

    def save(self) -> None:
        self.path.parent.mkdir(exist_ok=True)
        data: dict[str, object] = {"blocks": self.blocks}
        data |= {key: getattr(self, key) for key in (*_TEXT, *_FLAGS, "heard_at")}
        write_atomic(self.path, json.dumps(data).encode())

    def blocked(self, key: str) -> None:
        """Count a block given on the decision ``key``."""
        self.blocks += 1
        self.last = key
        self.pending = True

    def end_task(self, key: str | None = None) -> None:
        """The stop was allowed: the task is over, the next one starts with a fresh budget.
        ``key``: the decision it was allowed on, kept as the last one, so the same stop asked
        again (a hook configured twice) is not a new task's first block."""
        self.blocks, self.pending, self.late = 0, False, False
        self.last = self.last if key is None else key

    def repeat(self, heard: str, by: str, now: float) -> tuple[bool, str] | None:
        """The answer (block, text) to repeat, uncounted, for the stop ``heard`` asked by the
        copy ``by`` at ``now``: the one given just before (within :data:`REPEAT_SECONDS`) to
        the same event bytes on the same tree by the other copy of the hook (Claude Code runs
        its plugin's and the project's, one after the other, on each stop); once, so that a
        third asking decides afresh. ``None``: decide."""
        if not self.heard or self.heard != heard or self.heard_by == by:
            return None
        if not 0 <= now - self.heard_at <= REPEAT_SECONDS:
            return None
        self.heard = ""
        return self.said_block, self.said

    def answered(self, heard: str, by: str, now: float, block: bool, text: str) -> None:
        """Keep the answer given to the stop ``heard`` by the copy ``by`` (:meth:`repeat`)."""
        self.heard, self.heard_by, self.heard_at = heard, by, now
        self.said_block, self.said = block, text


def hearing(event: bytes, tree: str, nested: tuple[str, ...]) -> str:
    """What identifies one stop as the hook sees it: its event's bytes, the tree the agent
    leaves and what nested repositories hold that the tree does not."""
    digest = hashlib.sha256(event)
    for part in (tree, *nested):
        digest.update(b"\0" + part.encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def records(state: Path) -> list[Counter]:
    """Every record the hooks keep in ``state`` (of any agent and session), newest first."""
    found = [path for path in (state / "agents").glob("*.json") if path.is_file()]
    found.sort(key=lambda path: path.stat().st_mtime_ns, reverse=True)
    return [Counter.load(path) for path in found]


@contextlib.contextmanager
def held(state: Path, agent: str, session: str, wait: float = 10) -> Iterator[None]:
    """The session's counter held against another hook of the same session (an agent may run
    a hook configured at two levels twice, at once): the ledger's kernel lock."""
    from ..loop.lock import exclusive

    lock = counter_path(state, agent, session, ".lock")
    lock.parent.mkdir(exist_ok=True)
    with exclusive(lock, wait=wait):
        yield


def counter_path(state: Path, agent: str, session: str, suffix: str = ".json") -> Path:
    """Where the hook keeps its count for one agent session (CONTRACT §12)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", session)[:80] or "unknown"
    if name != session:  # keep sessions whose ids differ only in odd characters apart
        name += "-" + hashlib.sha256(session.encode()).hexdigest()[:12]
    return state / "agents" / f"{agent}-{name}{suffix}"
