"""Gemini CLI lanes: ``gemini --prompt`` headless, built against Gemini CLI 0.61.0.

Gemini takes no output schema: the answer is the JSON envelope's ``response`` text, parsed
and validated here. A fatal error prints its envelope on stderr, with an exit status (41 auth,
42 input, 53 turn limit). In the ``default`` approval mode a headless run denies every tool
that would ask (edits, shell); ``plan`` is not used, as leaving it switches to auto-approval.
Gemini expands ``@path`` in its input into file contents, so every ``@`` of the prompt is
escaped.
Each attempt runs with a home of its own (``lanes/agents/geminihome.py``).
"""

from __future__ import annotations

import dataclasses
import re
import secrets
from pathlib import Path
from typing import Any

from ...core.settings.tables import LaneConfig
from ...core.subproc import Outcome
from ...models.report import Usage
from ..result import Attempt
from .agent import Agent, Tool, read_envelope
from .answer import read_text
from .geminihome import private_home

# --prompt is appended to what stdin brings (the whole prompt); it is never packet text.
NUDGE = (
    "Review as the text above asks and answer with the one JSON object it describes. In that "
    "text \\@ stands for @ (escaped for this tool); quote code with a plain @."
)
_LIMITS = {53: "turn limit exceeded (exit 53)"}
_TOKENS = (("input_tokens", ("prompt", "input")), ("output_tokens", ("candidates", "thoughts")))


def invocation(lane: LaneConfig, tool: Tool, folder: Path, workdir: Path) -> list[str]:
    argv = ["--prompt", NUDGE, "--output-format", "json"]
    argv += ["--approval-mode", "default", "--skip-trust"]
    if tool.offers("--extensions"):
        argv += ["--extensions", "none"]
    if tool.offers("--allowed-mcp-server-names"):
        # An allow-list, not an off switch: a name no configuration can know allows none.
        argv += ["--allowed-mcp-server-names", f"bounded-review-none-{secrets.token_hex(8)}"]
    if lane.model:
        argv += ["--model", lane.model]
    return argv


def usage_of(envelope: dict[str, Any]) -> tuple[Usage, list[str]]:
    stats = envelope.get("stats")
    models = stats.get("models") if isinstance(stats, dict) else None
    if not isinstance(models, dict) or not models:
        return Usage(), []
    totals = {"input_tokens": 0, "output_tokens": 0}
    for entry in models.values():
        tokens = entry.get("tokens") if isinstance(entry, dict) else None
        if not isinstance(tokens, dict):
            continue
        for key, names in _TOKENS:
            counted = [tokens[n] for n in names if isinstance(tokens.get(n), int)]
            if key == "input_tokens":
                counted = counted[:1]  # `prompt` and `input` name the same count
            totals[key] += sum(max(value, 0) for value in counted)
    return Usage(**totals), [str(name) for name in models]


def _stderr_envelope(out: Outcome) -> bytes | None:
    text = out.stderr
    first, last = text.find(b"{"), text.rfind(b"}")
    return text[first : last + 1] if 0 <= first < last else None


def _unescaped(response: str) -> str:
    """The answer with the prompt's ``\\@`` escape undone (in JSON text, ``\\\\@``), so quotes
    match the snapshot."""
    return response.replace("\\\\@", "@").replace("\\@", "@")


def shield(text: str) -> str:
    """Every ``@`` escaped: gemini expands ``@path`` in its input into file contents."""
    return re.sub(r"(?<!\\)@", r"\\@", text)


def read(lane: LaneConfig, out: Outcome, folder: Path) -> Attempt:
    data = out.stdout if out.stdout.strip() else _stderr_envelope(out)
    envelope = read_envelope("gemini", data, out, lane.model)
    if isinstance(envelope, Attempt):
        return envelope
    usage, models = usage_of(envelope)
    model = ", ".join(models) or lane.model
    error = envelope.get("error")
    if error is not None or out.returncode != 0:
        message = error.get("message") if isinstance(error, dict) else None
        why = _LIMITS.get(out.returncode or 0) or f"exit {out.returncode}"
        kind = "limit" if out.returncode in _LIMITS else "error"
        detail = f"gemini reported a failure: {message or why}"
        return Attempt(None, kind, detail[:400], model, usage)  # type: ignore[arg-type]
    response = envelope.get("response")
    if not isinstance(response, str):
        return Attempt(None, "error", "gemini's envelope has no response text", model, usage)
    attempt = read_text(_unescaped(response), model)
    return dataclasses.replace(attempt, model=model, usage=usage)


AGENT = Agent(
    name="gemini",
    help_argv=("--help",),
    env=("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT", "GOOGLE_GENAI_USE_VERTEXAI"),
    required=("--prompt", "--output-format", "--approval-mode", "--skip-trust"),
    invocation=invocation,
    read=read,
    shield=shield,
    # The change's own .gemini/ (settings with hooks, MCP servers) never configures the
    # reviewer: its files stay in the diff, not in the lane's working copy.
    strip=(".gemini",),
    setup=private_home,
)
