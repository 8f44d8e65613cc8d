"""Each coding agent's hook protocol, as one table: where its event keeps the session id, the
repository and the "already continued" bit, and how it wants a stop blocked or allowed.

Sources, checked against the installed tools (the shapes are tested against the schemas kept in
``tests/data/agents``):

- Claude Code 2.1.197: the hook output schema in its binary: ``decision`` ``approve``/``block``,
  ``reason``, ``systemMessage`` (shown to the user); no output at all allows.
- Codex CLI 0.171.0: ``stop.command.output`` (JSON Schema in its binary, no keys beyond
  ``continue``, ``decision``, ``reason``, ``stopReason``, ``suppressOutput``,
  ``systemMessage``); ``{}`` allows.
- Gemini CLI 0.61.0 (``AfterAgent``): ``decision`` ``deny`` with ``reason`` retries the turn;
  stdout must hold only JSON, so an allow is ``{}``.
- GitHub Copilot CLI 1.0.102 (``agentStop``): ``decision`` ``block`` with a non-empty
  ``reason``; a ``reason`` without a block is refused, so there is no field for the user: the
  state goes to stderr. Its events spell keys in camelCase (``sessionId``).
- Cursor (``stop``; no installable tool here, so from its published hook reference as quoted by
  secondary sources): ``followup_message`` continues the conversation; nothing else is read, so
  the state goes to stderr. Its event has no ``cwd``: the first of ``workspace_roots``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..models.record import record
from ..render.escape import lines

REASON_CAP = 16000  # below Claude Code's cap on a hook's text (about 16384 characters)


@record(frozen=True)
class Protocol:
    """One agent's spelling of the stop hook's event and answers."""

    name: str
    session_keys: tuple[str, ...]
    block_key: str  # the key that carries the instruction when the stop is blocked
    block_decision: str | None  # the ``decision`` value that blocks, if the agent uses one
    message_key: str | None  # the key the user reads when a stop is allowed, if any
    silent: str  # what an allow without a message prints ("" or "{}")

    def session(self, event: Mapping[str, Any]) -> str:
        for key in self.session_keys:
            if isinstance(event.get(key), str) and event[key]:
                return str(event[key])
        return "unknown"

    def block(self, text: str) -> dict[str, str]:
        out = {"decision": self.block_decision} if self.block_decision else {}
        return {**out, self.block_key: capped(lines(text))}

    def allow(self, text: str) -> tuple[str, str]:
        """What goes to stdout and to stderr when the stop is allowed with ``text``."""
        if not text:
            return self.silent, ""
        if self.message_key is None:
            return "{}", lines(text)
        return json.dumps({self.message_key: capped(lines(text))}), ""


PROTOCOLS = {
    protocol.name: protocol
    for protocol in (
        # Copilot CLI runs the hooks of .claude/settings.json too, with its own event
        Protocol("claude", ("session_id", "sessionId"), "reason", "block", "systemMessage", ""),
        Protocol("codex", ("session_id",), "reason", "block", "systemMessage", "{}"),
        Protocol("gemini", ("session_id",), "reason", "deny", "systemMessage", "{}"),
        Protocol("cursor", ("conversation_id", "session_id"), "followup_message", None, None, "{}"),
        Protocol("copilot", ("sessionId", "session_id"), "reason", "block", None, "{}"),
    )
}
AGENTS = tuple(PROTOCOLS)

# What the turn-start hook prints: nothing that adds to the prompt or refuses it.
START_OUTPUT = {"claude": "", "codex": "{}", "gemini": "{}", "cursor": '{"continue": true}'}


def repository(event: Mapping[str, Any]) -> str:
    """The folder the agent works in: ``cwd`` (``workingDirectory`` in Copilot's SDK spelling),
    else the first workspace root (Cursor), else the hook's own working folder."""
    for key in ("cwd", "workingDirectory"):
        if isinstance(event.get(key), str) and event[key]:
            return str(event[key])
    roots = event.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return "."


def continued(event: Mapping[str, Any]) -> bool:
    """Whether the agent says this stop follows a block (advisory: the hook counts its own)."""
    return any(event.get(key) is True for key in ("stop_hook_active", "stopHookActive"))


def ended_by_user(event: Mapping[str, Any]) -> bool:
    """Cursor reports a turn the user aborted or that failed: nothing to hold it to."""
    return event.get("status") in ("aborted", "error")


PLUGIN_ROOT = "CLAUDE_PLUGIN_ROOT"  # set for the hooks of a Claude Code plugin


def copy_of(env: Mapping[str, str]) -> str:
    """Which copy of the hook this is: the Claude Code plugin's, or the one the project's
    settings hold (``init --agent``). Claude Code runs both on each stop when both are there;
    the second repeats the first's answer (``hookstate.Counter.repeat``)."""
    return "plugin" if env.get(PLUGIN_ROOT) else "project"


def capped(text: str) -> str:
    if len(text) <= REASON_CAP:
        return text
    return text[: REASON_CAP - 80] + "\n… (cut here; every blocker is in the report)"
