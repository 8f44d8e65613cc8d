"""pluggy markers of the ``boundedreview`` project (lane plugins use ``hookimpl``)."""

from __future__ import annotations

import pluggy

PROJECT = "boundedreview"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
