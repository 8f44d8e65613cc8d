"""The scripted model's play, as an obedient or a stubborn coding agent: for each new user
message (the prompt, or a stop hook's block) an episode of moves, which it plays one request
at a time as the CLI reports its tool results.

A block that names a command (``Run `...```) is obeyed by running exactly that command; a block
that lists blockers is answered by the next fix in the script, then the review again.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from modelserver import Move, Request, Say, Shell, Write

NAMED = re.compile(r"Run `([^`]+)`")
DEFAULT_REVIEW = "pytest --bounded-review"

# A task: in the worker's file, the text it replaces, first by a broken version, then by a fix.
Task = tuple[str, str, str]


@dataclass
class Script:
    """The model: ``plan(text)`` gives the episode for a new user message ``text``.
    ``triggers`` is every user message that started an episode, in order."""

    plan: Callable[[str], list[Move]]
    triggers: list[str] = field(default_factory=list)
    _queue: list[Move] = field(default_factory=list)

    def __call__(self, request: Request) -> Move:
        if not request.after_tools or not self._queue:
            self.triggers.append(request.user_text)
            self._queue = list(self.plan(request.user_text))
        return self._queue.pop(0)


@dataclass
class Worker:
    """A coding agent's memory over one file: what it holds now, the review command it was
    told to run, and the edits it has left to make."""

    path: str
    content: str
    review: str = DEFAULT_REVIEW

    def edit(self, new: str) -> Write:
        move = Write(self.path, new, self.content)
        self.content = new
        return move

    def told(self, text: str) -> str | None:
        """The command a block names (remembered), or ``None``."""
        named = NAMED.search(text)
        if named:
            self.review = named.group(1)
        return named.group(1) if named else None


PROMPT = "TASK:"  # every prompt the tests send starts so; a block never holds it


def is_block(text: str) -> bool:
    """Whether a user message is a stop hook's block rather than the user's prompt."""
    return PROMPT not in text


def obedient(worker: Worker, tasks: list[Task], *, fix_at_once: bool) -> Script:
    """Each prompt starts the next task (a broken edit); a block naming the review runs it
    (``fix_at_once``: then fixes and reviews again, in the same continuation); a block listing
    blockers gets the fix and the review again."""
    pending: list[str] = []

    def plan(text: str) -> list[Move]:
        if not is_block(text):
            old, broken, fixed = tasks.pop(0)
            assert old in worker.content, (old, worker.content)
            pending[:] = [worker.content.replace(old, fixed)]
            return [[worker.edit(worker.content.replace(old, broken))], Say("Done: written.")]
        named = worker.told(text)
        if named is not None and not (fix_at_once and pending):
            return [[Shell(named)], Say("I ran the review.")]
        moves: list[Move] = [[Shell(worker.review)]] if named is not None else []
        if pending:
            moves.append([worker.edit(pending.pop(0))])
        return [*moves, [Shell(worker.review)], Say("Fixed and reviewed again.")]

    return Script(plan)


def stubborn(worker: Worker, variants: list[str]) -> Script:
    """An agent that never fixes: each block that lists blockers gets another broken variant
    and the review again; a block naming the review runs it."""

    def plan(text: str) -> list[Move]:
        if not is_block(text):
            return [[worker.edit(variants.pop(0))], Say("Done.")]
        named = worker.told(text)
        if named is not None:
            return [[Shell(named)], Say("I ran the review.")]
        edit = [worker.edit(variants.pop(0))] if variants else []
        return [*([edit] if edit else []), [Shell(worker.review)], Say("Reviewed again.")]

    return Script(plan)
