"""What an agent's hooks keep per agent session (CONTRACT §12): the blocks given, the last
(tree, report) blocked, the tree the turn started with and whether the last stop was blocked,
in ``<state>/agents/<agent>-<session>.json``, read and written under the ledger's kernel lock
and written atomically."""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path

from ..core.statefile import write_atomic
from ..models.record import record


@record
class Counter:
    """What the hook keeps for one agent session: the blocks it gave, the last (tree, report)
    it blocked, and the tree the current turn started with."""

    path: Path
    blocks: int = 0
    last: str = ""
    turn_tree: str = ""
    pending: bool = False  # the last answer was a block: the agent's next prompt follows it

    @classmethod
    def load(cls, path: Path) -> Counter:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            turn, pending = data.get("turn_tree", ""), data.get("pending", False)
            if not isinstance(pending, bool) or not isinstance(turn, str):
                raise TypeError("`turn_tree` or `pending` of another type")
            return cls(path, int(data["blocks"]), str(data["last"]), turn, pending)
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"the hook's state {path} is unreadable ({exc})") from None

    def save(self) -> None:
        self.path.parent.mkdir(exist_ok=True)
        data = {"blocks": self.blocks, "last": self.last, "turn_tree": self.turn_tree}
        write_atomic(self.path, json.dumps(data | {"pending": self.pending}).encode())


@contextlib.contextmanager
def held(state: Path, agent: str, session: str) -> Iterator[None]:
    """The session's counter held against another hook of the same session (an agent may run
    a hook configured at two levels twice, at once): the ledger's kernel lock."""
    from ..loop.lock import exclusive

    lock = counter_path(state, agent, session, ".lock")
    lock.parent.mkdir(exist_ok=True)
    with exclusive(lock, wait=10):
        yield


def counter_path(state: Path, agent: str, session: str, suffix: str = ".json") -> Path:
    """Where the hook keeps its count for one agent session (CONTRACT §12)."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", session)[:80] or "unknown"
    if name != session:  # keep sessions whose ids differ only in odd characters apart
        name += "-" + hashlib.sha256(session.encode()).hexdigest()[:12]
    return state / "agents" / f"{agent}-{name}{suffix}"
