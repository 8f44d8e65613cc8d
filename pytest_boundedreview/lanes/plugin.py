"""Plugin lanes: found through pluggy (entry points of group ``boundedreview`` and the
session's conftest modules), blocked by name in configuration, driven by the core."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pluggy
from pydantic import ValidationError

from .. import hookspec
from ..core.settings.tables import LaneConfig
from ..core.validation import describe_all
from ..hookspec import PluginLane
from ..models.plain import validate
from .result import Attempt, read_result, settled


def manager(blocked: Iterable[str] = (), extra: Iterable[object] = ()) -> pluggy.PluginManager:
    """A plugin manager with the entry-point plugins not ``blocked``, and ``extra`` objects
    (for example conftest modules) that implement a ``boundedreview_`` hook."""
    pm = pluggy.PluginManager(hookspec.PROJECT)
    pm.add_hookspecs(hookspec)
    for name in blocked:
        pm.set_blocked(name)
    pm.load_setuptools_entrypoints(hookspec.PROJECT)
    for plugin in extra:
        if any(attr.startswith("boundedreview_") for attr in dir(plugin)):
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
            if pm.is_blocked(name) or pm.is_registered(plugin):
                continue
            if pm.has_plugin(name):  # several conftest modules share a name
                name = f"{name}-{id(plugin)}"
            pm.register(plugin, name)
    return pm


def plugin_lanes(
    pm: pluggy.PluginManager, settings: object, problems: list[str] | None = None
) -> list[tuple[LaneConfig, PluginLane]]:
    """Every lane the registered plugins offer, as a lane configuration and its object; a lane
    object that does not describe itself validly is left out, with a line in ``problems``."""
    found = []
    for impl in pm.hook.boundedreview_lanes.get_hookimpls():
        try:  # one broken plugin must not take the other lanes down with it
            lanes = impl.function(settings=settings)
            if not isinstance(lanes, (list, tuple)):
                raise TypeError(f"returned {type(lanes).__name__}, not a list of lanes")
        except Exception as exc:
            if problems is not None:
                problems.append(f"plugin {impl.plugin_name!r} offered no lanes: {exc!r}")
            continue
        for lane in lanes:
            try:
                config = _config_of(lane)
            except (ValidationError, AttributeError) as exc:
                reasons = describe_all(exc) if isinstance(exc, ValidationError) else [str(exc)]
                name = getattr(lane, "name", repr(lane))
                if problems is not None:
                    problems.append(f"plugin lane {name!r} is invalid: {'; '.join(reasons)}")
                continue
            found.append((config, lane))
    return found


def _config_of(lane: PluginLane) -> LaneConfig:
    described = {
        "name": lane.name,
        "lens": lane.lens,
        "role": getattr(lane, "role", "verdict"),
        "kind": "plugin",
        "model": getattr(lane, "model", None),
        "timeout": getattr(lane, "timeout", 600),
    }
    try:
        text = json.dumps(described)
    except (TypeError, ValueError) as exc:  # not JSON data at all: name what is wrong
        raise AttributeError(f"its description is not plain data: {exc}") from None
    return validate(LaneConfig, text)


def run_once(config: LaneConfig, lane: PluginLane, packet: bytes, workdir: Path) -> Attempt:
    """Call the plugin's ``review`` in a thread, bounded by the lane's timeout."""
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["answer"] = lane.review(json.loads(packet), workdir)
        except Exception as exc:  # a plugin's failure is the lane's failure, not ours
            box["error"] = f"{type(exc).__name__}: {exc}"

    worker = threading.Thread(target=call, name=f"lane-{config.name}", daemon=True)
    worker.start()
    worker.join(config.timeout)
    if worker.is_alive():
        return Attempt(None, "limit", f"timed out after {config.timeout:g}s", config.model)
    if "error" in box:
        raised = Attempt(None, "error", f"the plugin raised {box['error']}", config.model)
        return settled(raised)  # "Unauthorized", "model not found": no retry changes those
    try:
        data = json.dumps(box.get("answer"), allow_nan=False).encode()
    except (TypeError, ValueError) as exc:
        return Attempt(None, "error", f"the plugin's answer is not JSON: {exc}", config.model)
    return read_result(data, model=config.model)
