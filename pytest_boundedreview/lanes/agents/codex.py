"""Codex CLI lanes: ``codex exec`` in a read-only sandbox, built against codex-cli 0.171.0.

The lane-result schema goes in strict form through ``--output-schema``; the answer is the
final message ``-o`` writes. The ``--json`` event stream on stdout tells failures and the
tokens of each turn: ``turn.failed``, or no ``turn.completed`` at all, fails the attempt. Codex
also reports transient trouble it recovers from as ``error`` events (``Reconnecting... 2/5``)
and warnings as error items; those are kept as a note, and fail the attempt only when no turn
completed. The model is checked against ``codex debug models`` when that answers.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path
from typing import Any

from ...core import subproc
from ...core.settings.tables import LaneConfig
from ...core.subproc import Outcome
from ...models.report import Usage
from ..environment import lane_env
from ..result import Attempt, exit_reason
from ..schema import lane_result_schema
from .agent import Agent, Tool, unverified
from .answer import read_text

AGENT_ENV = ("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME")
SCHEMA_FILE = "lane-result.schema.json"
LAST_FILE = "last-message.txt"


def invocation(lane: LaneConfig, tool: Tool, folder: Path, workdir: Path) -> list[str]:
    (folder / SCHEMA_FILE).write_text(json.dumps(lane_result_schema()))
    argv = ["exec", "--sandbox", "read-only", "--ephemeral", "--skip-git-repo-check", "--json"]
    argv += ["--output-schema", str(folder / SCHEMA_FILE)]
    argv += ["--output-last-message", str(folder / LAST_FILE), "--cd", str(workdir)]
    argv += ["--ignore-user-config", "--ignore-rules"]  # no user MCP servers, hooks or rules
    if tool.offers("--color"):
        argv += ["--color", "never"]
    if lane.model:
        argv += ["--model", lane.model]
    if lane.reasoning:
        argv += ["--config", f"model_reasoning_effort={json.dumps(lane.reasoning)}"]
    return [*argv, "-"]  # the prompt comes on stdin


def _events(stdout: bytes) -> list[dict[str, Any]]:
    events = []
    for line in stdout.decode("utf-8", "replace").splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            events.append(event)
    return events


def _message(event: dict[str, Any]) -> str:
    for holder in (event, event.get("error"), event.get("item")):
        message = holder.get("message") if isinstance(holder, dict) else None
        if isinstance(message, str):
            return message[:300]
    return "no message"


def _trouble(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if kind == "error":
        return f"error event: {_message(event)}"
    item = event.get("item")
    if kind == "item.completed" and isinstance(item, dict) and item.get("type") == "error":
        return f"error item: {_message(event)}"
    return None


def usage_of(events: list[dict[str, Any]]) -> Usage:
    turns = [e["usage"] for e in events if e.get("type") == "turn.completed" and "usage" in e]
    totals = {"input_tokens": 0, "output_tokens": 0}
    for usage in turns:
        for key in totals:
            value = usage.get(key) if isinstance(usage, dict) else None
            totals[key] += value if isinstance(value, int) and value >= 0 else 0
    if not turns:
        return Usage()
    return Usage(turns=len(turns), **totals)


def read(lane: LaneConfig, out: Outcome, folder: Path) -> Attempt:
    events = _events(out.stdout)
    usage = usage_of(events)
    troubles = [why for why in map(_trouble, events) if why]
    failed = [e for e in events if e.get("type") == "turn.failed"]
    if failed:
        why = f"codex reported turn.failed: {_message(failed[0])}"
        return Attempt(None, "error", why, lane.model, usage)
    if out.returncode != 0:
        why = exit_reason(out, troubles[-1] if troubles else None)
        return Attempt(None, "error", why, lane.model, usage)
    if not any(e.get("type") == "turn.completed" for e in events):
        why = f"codex completed no turn ({troubles[-1]})" if troubles else "codex completed no turn"
        return Attempt(None, "error", why, lane.model, usage)
    last = folder / LAST_FILE
    text = last.read_text(encoding="utf-8", errors="replace") if last.is_file() else ""
    if not text.strip():
        return Attempt(None, "error", "codex wrote no final message", lane.model, usage)
    attempt = read_text(text, lane.model)
    detail = attempt.detail or (f"codex recovered from {troubles[0]}" if troubles else "")
    return dataclasses.replace(attempt, detail=detail, usage=usage)


@functools.cache
def _catalog(argv: tuple[str, ...], path: str) -> dict[str, list[str]] | None:
    """``codex debug models``: each listed model's reasoning levels; ``None`` if it fails."""
    env = lane_env([*AGENT_ENV], {"PATH": path, "NO_COLOR": "1"})
    out = subproc.run([*argv, "debug", "models"], cwd=Path.home(), env=env, timeout=60)
    try:
        models = json.loads(out.stdout)["models"] if out.returncode == 0 else None
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(models, list):
        return None
    catalog = {}
    for entry in models:
        if isinstance(entry, dict) and isinstance(entry.get("slug"), str):
            levels = entry.get("supported_reasoning_levels") or []
            catalog[entry["slug"]] = [
                level["effort"] for level in levels if isinstance(level, dict) and "effort" in level
            ]
    return catalog or None


def verify(lane: LaneConfig, tool: Tool, env: dict[str, str]) -> tuple[bool, str]:
    if lane.model is None:
        return True, unverified(None)
    catalog = _catalog(tool.argv, env.get("PATH", ""))
    if catalog is None:
        return True, unverified(lane.model)
    if lane.model not in catalog:
        shown = ", ".join(list(catalog)[:20])
        return False, f"model not available: {lane.model} (codex debug models lists: {shown})"
    if lane.reasoning and catalog[lane.model] and lane.reasoning not in catalog[lane.model]:
        offered = ", ".join(catalog[lane.model])
        return False, f"reasoning {lane.reasoning!r} not offered by {lane.model} ({offered})"
    return True, "model listed by `codex debug models`"


AGENT = Agent(
    name="codex",
    help_argv=("exec", "--help"),
    env=AGENT_ENV,
    required=(
        "--sandbox",
        "--ephemeral",
        "--skip-git-repo-check",
        "--json",
        "--output-schema",
        "--output-last-message",
        "--cd",
        "--ignore-user-config",
        "--ignore-rules",
    ),
    invocation=invocation,
    read=read,
    verify=verify,
)
