"""Claude Code lanes: ``claude -p`` with read tools only, built against Claude Code 2.1.332.

The answer is the envelope's ``structured_output`` (``--json-schema``), else its ``result``
text. Claude reports many failures while exiting 0: ``is_error``, a ``subtype`` other than
``success``, an empty envelope; each is a failed attempt with its reason.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from ...core.settings.tables import LaneConfig
from ...core.subproc import Outcome
from ...models.report import Usage
from ..result import Attempt, read_result
from ..schema import lane_result_schema
from .agent import Agent, Tool, read_envelope
from .answer import read_text

READ_TOOLS = "Read,Grep,Glob"
NO_MCP = json.dumps({"mcpServers": {}})
_LIMITS = {"error_max_turns", "error_max_budget_usd"}


def invocation(lane: LaneConfig, tool: Tool, folder: Path, workdir: Path) -> list[str]:
    argv = ["--print", "--output-format", "json"]
    argv += ["--tools", READ_TOOLS, "--allowedTools", READ_TOOLS, "--permission-mode", "dontAsk"]
    argv += ["--no-session-persistence", "--strict-mcp-config", "--mcp-config", NO_MCP]
    # No hooks, plugins, skills or CLAUDE.md: hooks in the reviewed change would run on the
    # host otherwise. Required: a claude without it is not run.
    argv.append("--safe-mode")
    # Settings from the user only: the reviewed change's .claude/settings.json could name an
    # apiKeyHelper (a command run on the host) or a base URL that receives the API key.
    argv += ["--setting-sources", "user"]
    if lane.max_turns is not None:  # hidden from 2.1.332's help, documented for --print
        argv += ["--max-turns", str(lane.max_turns)]
    optional = {
        "--permission-prompts": ["none"],
        "--disable-slash-commands": [],
        "--json-schema": [json.dumps(lane_result_schema(), separators=(",", ":"))],
    }
    if lane.model:
        optional["--model"] = [lane.model]
    if lane.reasoning:
        optional["--effort"] = [lane.reasoning]
    if lane.max_budget_usd is not None:
        optional["--max-budget-usd"] = [f"{lane.max_budget_usd:g}"]
    for flag, values in optional.items():
        if tool.offers(flag):
            argv += [flag, *values]
    return argv


def _number(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def usage_of(envelope: dict[str, Any]) -> Usage:
    tokens = envelope.get("usage") if isinstance(envelope.get("usage"), dict) else {}
    assert isinstance(tokens, dict)
    inputs = [
        _number(tokens.get(key))
        for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    ]
    cost = envelope.get("total_cost_usd")
    return Usage(
        input_tokens=sum(n or 0 for n in inputs) if any(n is not None for n in inputs) else None,
        output_tokens=_number(tokens.get("output_tokens")),
        cost_usd=float(cost) if isinstance(cost, (int, float)) and cost >= 0 else None,
        turns=_number(envelope.get("num_turns")),
    )


def _model(envelope: dict[str, Any], lane: LaneConfig) -> str | None:
    used = envelope.get("modelUsage")
    if isinstance(used, dict) and used:
        return ", ".join(str(name) for name in used)
    return lane.model


def _reason(envelope: dict[str, Any]) -> str:
    parts = [f"subtype {envelope.get('subtype')!r}"]
    if envelope.get("is_error") is True:
        parts.append("is_error")
    for key in ("api_error_status", "terminal_reason"):
        if envelope.get(key) is not None:
            parts.append(f"{key} {envelope[key]!r}")
    errors = envelope.get("errors")
    if isinstance(errors, list) and errors:
        parts.append(str(errors[0])[:300])
    elif isinstance(envelope.get("result"), str) and envelope["result"].strip():
        parts.append(envelope["result"].strip()[:300])
    return "claude reported a failure: " + "; ".join(parts)


def read(lane: LaneConfig, out: Outcome, folder: Path) -> Attempt:
    envelope = read_envelope("claude", out.stdout, out, lane.model)
    if isinstance(envelope, Attempt):
        return envelope
    usage, model = usage_of(envelope), _model(envelope, lane)
    if envelope.get("is_error") is not False or envelope.get("subtype") != "success":
        kind = "limit" if envelope.get("subtype") in _LIMITS else "error"
        return Attempt(None, kind, _reason(envelope), model, usage)  # type: ignore[arg-type]
    if out.returncode != 0:
        return Attempt(None, "error", f"claude exited {out.returncode} after success", model, usage)
    structured = envelope.get("structured_output")
    if isinstance(structured, dict):
        attempt = read_result(json.dumps(structured).encode(), model=model)
    elif isinstance(envelope.get("result"), str):
        attempt = read_text(envelope["result"], model)
    else:
        attempt = Attempt(None, "error", "claude answered neither structured_output nor a result")
    return dataclasses.replace(attempt, model=model, usage=usage)


AGENT = Agent(
    name="claude",
    help_argv=("--help",),
    env=("ANTHROPIC_API_KEY", "CLAUDE_CONFIG_DIR"),  # others through the lane's `env`
    required=(
        "--print",
        "--output-format",
        "--tools",
        "--allowedTools",
        "--permission-mode",
        "--no-session-persistence",
        "--strict-mcp-config",
        "--mcp-config",
        "--safe-mode",
        "--setting-sources",
    ),
    invocation=invocation,
    read=read,
)
