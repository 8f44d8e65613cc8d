"""Lane kinds: one table from a lane's ``kind`` to its runner.

Every runner has the same signature: given a :class:`LaneCall` (the lane, its packet, its own
copy of the frozen tree and the lanes installed plugins offer), it returns the attempt to make,
which the review phase repeats while it fails (up to ``max_retries``), or, when the lane cannot
run at all, the failed attempt itself, which no retry would change. Adding a kind is an adapter
module with a ``run_once`` and a row in :data:`KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

from ..core.errors import UsageError
from ..core.settings.tables import LaneConfig
from ..hookspec import PluginLane
from ..models.record import record
from . import command, plugin
from .agents import agent
from .agents.agents import AGENTS
from .prompt import lens_prompt
from .result import Attempt


@record(frozen=True)
class LaneCall:
    """What a runner is given: the lane, its packet (JSON), the copy of the frozen tree it
    reviews in (its own: nothing one lane writes reaches another), and the lanes installed
    plugins offer, by name."""

    lane: LaneConfig
    packet: bytes
    workdir: Path
    plugins: Mapping[str, PluginLane]


Once = Callable[[], Attempt]
Runner = Callable[[LaneCall], Once | Attempt]


def _command(call: LaneCall) -> Once | Attempt:
    return lambda: command.run_once(call.lane, call.packet, call.workdir)


def _openai(call: LaneCall) -> Once | Attempt:
    from .endpoint import openai  # urllib's import cost only for sessions that use it

    try:
        lens = lens_prompt(call.lane, call.workdir)
    except UsageError as exc:
        return Attempt(None, "error", str(exc))
    return lambda: openai.run_once(call.lane, call.packet, lens)


def _plugin(call: LaneCall) -> Once | Attempt:
    offered = call.plugins.get(call.lane.name)
    if offered is None:
        return Attempt(None, "error", f"no installed plugin offers a lane named {call.lane.name!r}")
    return lambda: plugin.run_once(call.lane, offered, call.packet, call.workdir)


def _agent(which: agent.Agent) -> Runner:
    def runner(call: LaneCall) -> Once | Attempt:
        return lambda: agent.run_once(which, call.lane, call.packet, call.workdir)

    return runner


KINDS: dict[str, Runner] = {
    "command": _command,
    "openai": _openai,
    "plugin": _plugin,
    **{name: _agent(which) for name, which in AGENTS.items()},
}


# The kinds whose reviewer is a model the project prompts with its contract, which tells it a
# blocker needs a quote or a reproduction (triage holds their blockers to that). A command or
# plugin lane gets the packet alone: its own program decides what it answers, and may be a
# deterministic tool.
PROMPTED = frozenset({"openai", *AGENTS})


def runner_of(lane: LaneConfig) -> Runner:
    """The runner of ``lane``'s kind."""
    return KINDS[lane.kind]
