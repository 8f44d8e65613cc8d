"""pluggy hooks of the ``boundedreview`` project (entry-point group ``boundedreview``).

A lane plugin implements :func:`boundedreview_lanes` with :data:`hookimpl` and returns lane
objects; the core drives them, so budgets, concurrency, timeouts and triage stay the core's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:
    from .lanes.plugin import PluginLane

PROJECT = "boundedreview"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


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
