"""Codex CLI lanes: ``codex exec`` in a read-only sandbox, built against codex-cli 0.171.0.

The lane-result schema goes in strict form through ``--output-schema``; the answer is the
final message ``-o`` writes. The ``--json`` event stream on stdout tells failures
(``turn.failed``, ``error`` events, error items) and the tokens of each turn.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.subproc import Outcome
from ..core.tables import LaneConfig
from ..models.report import Usage
from .agent import Agent, Tool, stderr_tail
from .answer import read_text
from .result import Attempt
from .schema import lane_result_schema

SCHEMA_FILE = "lane-result.schema.json"
LAST_FILE = "last-message.txt"


def invocation(lane: LaneConfig, tool: Tool, folder: Path, workdir: Path) -> list[str]:
    (folder / SCHEMA_FILE).write_text(json.dumps(lane_result_schema()))
    argv = ["exec", "--sandbox", "read-only", "--ephemeral", "--skip-git-repo-check", "--json"]
    argv += ["--output-schema", str(folder / SCHEMA_FILE)]
    argv += ["--output-last-message", str(folder / LAST_FILE), "--cd", str(workdir)]
    for flag in ("--ignore-user-config", "--ignore-rules"):  # no user MCP servers, hooks, rules
        if tool.offers(flag):
            argv.append(flag)
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


def _failure(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if kind == "turn.failed":
        return f"turn.failed: {_message(event)}"
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
    failures = [why for why in map(_failure, events) if why]
    if failures:
        return Attempt(None, "error", f"codex reported {failures[0]}", lane.model, usage)
    if out.returncode != 0:
        tail = stderr_tail(out)
        return Attempt(None, "error", f"exit {out.returncode}" + (f": {tail}" if tail else ""))
    last = folder / LAST_FILE
    text = last.read_text(encoding="utf-8", errors="replace") if last.is_file() else ""
    if not text.strip():
        return Attempt(None, "error", "codex wrote no final message", lane.model, usage)
    attempt = read_text(text, lane.model)
    return Attempt(attempt.result, attempt.failure, attempt.detail, lane.model, usage)


AGENT = Agent(
    name="codex",
    help_argv=("exec", "--help"),
    env=("OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"),
    required=(
        "--sandbox",
        "--ephemeral",
        "--skip-git-repo-check",
        "--json",
        "--output-schema",
        "--output-last-message",
        "--cd",
    ),
    invocation=invocation,
    read=read,
)
