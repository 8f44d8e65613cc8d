"""pluggy hooks of the ``boundedreview`` project (entry-point group ``boundedreview``).

A lane plugin implements :func:`boundedreview_lanes` with :data:`hookimpl` and returns lane
objects; the core drives them, so budgets, concurrency, timeouts and triage stay the core's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import pluggy

PROJECT = "boundedreview"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class PluginLane(Protocol):
    """What :func:`boundedreview_lanes` returns a sequence of."""

    name: str
    lens: str
    role: str

    def review(self, packet: dict[str, Any], workdir: Path) -> dict[str, Any]: ...


@hookspec
def boundedreview_lanes(settings: Any) -> Sequence[PluginLane]:  # type: ignore[empty-body]
    """Return the reviewer lanes this plugin offers.

    Each lane object has ``name``, ``lens`` and ``role`` (``"verdict"`` or ``"scout"``)
    attributes, optionally ``model``, and a ``review(packet, workdir)`` method that takes the
    packet as a dict and the path of a read-only copy of the snapshot, and returns one
    ``bounded-review/lane-result/v1`` document as a dict. ``settings`` is the validated
    configuration. Lanes run in threads of the reviewing process and must not block forever;
    one that outlives its timeout is reported ``unverified`` (``limit``).
    """
