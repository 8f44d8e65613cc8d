"""The hook entries ``bounded-review init --agent`` adds to a coding agent's project settings,
and their merge into a settings document that may hold other keys and hooks already.

Each agent gets two entries: its stop-time event runs ``bounded-review hook stop``, and the
event that starts a turn runs ``bounded-review hook start`` (it records the tree the turn
started with). The shapes were checked against the installed CLIs (``docs/cli.md`` and
``tests/data/agents/README.md`` say how):

- Claude Code 2.1.197, ``.claude/settings.json``: ``{"hooks": {EVENT: [{"hooks": [HANDLER]}]}}``,
  a handler ``{"type": "command", "command", "timeout"}`` with the timeout in seconds.
- Codex 0.171.0, ``.codex/hooks.json``: the same layout; the file may hold no other top-level
  key than ``description`` and ``hooks``.
- Gemini CLI 0.61.0, ``.gemini/settings.json``: the same layout; the timeout is in
  milliseconds and ``name`` labels the hook.
- Copilot CLI 1.0.102, ``.github/hooks/bounded-review.json``: ``{"version": 1, "hooks":
  {EVENT: [HANDLER]}}``, a handler ``{"type": "command", "bash", "powershell", "timeoutSec"}``.
- Cursor could not be checked (no command-line Cursor to install): ``.cursor/hooks.json`` as
  ``{"version": 1, "hooks": {EVENT: [{"command"}]}}`` follows its published description, and no
  timeout is written because no field for one could be confirmed.

An entry is ours when it runs exactly our command for its event (its other fields, a longer
timeout say, are the user's and kept). Any other entry of our events that runs bounded-review,
and any entry anywhere that runs ``bounded-review hook``, is one init did not write: it is
refused, never replaced.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ..core.errors import UsageError
from ..models.record import record
from .jsonfile import line_of

TIMEOUT = 30  # seconds: the hook itself answers in about a second
COMMAND_KEYS = ("command", "bash", "powershell")  # where a handler names what it runs


@record(frozen=True)
class AgentHooks:
    """Where one agent reads project hooks, and the entries init adds there."""

    agent: str
    path: str  # relative to the repository root
    stop: str  # the event an agent fires before it ends its turn
    start: str  # the event fired when a turn starts
    grouped: bool  # handlers sit in `{"hooks": [...]}` groups, else straight in the event's list
    version: int | None = None  # the format version the file declares
    note: str = ""  # what else the agent needs before the hook runs

    def command(self, kind: str) -> str:
        return f"bounded-review hook {kind} --agent {self.agent}"

    def handler(self, kind: str) -> dict[str, Any]:
        command = self.command(kind)
        if self.agent == "gemini":
            name = f"bounded-review-{kind}"
            return {"name": name, "type": "command", "command": command, "timeout": TIMEOUT * 1000}
        if self.agent == "copilot":
            shells = {"bash": command, "powershell": command}
            return {"type": "command", **shells, "timeoutSec": TIMEOUT}
        if self.agent == "cursor":
            return {"command": command}  # unverified: no timeout field is known
        return {"type": "command", "command": command, "timeout": TIMEOUT}

    def events(self) -> dict[str, str]:
        """Each event init adds to, and the hook it runs there (start first: a turn's order)."""
        return {self.start: "start", self.stop: "stop"}

    def entries(self) -> dict[str, dict[str, Any]]:
        """Each event init adds to, and the handler it adds there."""
        return {event: self.handler(kind) for event, kind in self.events().items()}

    def document(self, events: list[str]) -> dict[str, Any]:
        """The entries for ``events`` as a settings document, to add by hand."""
        data: dict[str, Any] = {} if self.version is None else {"version": self.version}
        data["hooks"] = {event: [self.item(self.entries()[event])] for event in events}
        return data

    def item(self, handler: dict[str, Any]) -> dict[str, Any]:
        return {"hooks": [handler]} if self.grouped else handler


_TRUST = "runs project hooks only in a folder you trust"
AGENTS: dict[str, AgentHooks] = {
    spec.agent: spec
    for spec in (
        AgentHooks("claude", ".claude/settings.json", "Stop", "UserPromptSubmit", True),
        AgentHooks(
            "codex",
            ".codex/hooks.json",
            "Stop",
            "UserPromptSubmit",
            True,
            note="Codex reads .codex/ only in a trusted project and runs a new or changed hook "
            "once you trust it (/hooks in Codex)",
        ),
        AgentHooks(
            "gemini",
            ".gemini/settings.json",
            "AfterAgent",
            "BeforeAgent",
            True,
            note=f"Gemini CLI {_TRUST}, and `gemini --skip-trust` never reads "
            ".gemini/settings.json (the hooks are then off, silently): trust the folder once in "
            "Gemini CLI, or add it "
            'to ~/.gemini/trustedFolders.json as `{"<this folder>": "TRUST_FOLDER"}`, or run '
            "headless with GEMINI_CLI_TRUST_WORKSPACE=true",
        ),
        AgentHooks(
            "cursor",
            ".cursor/hooks.json",
            "stop",
            "beforeSubmitPrompt",
            False,
            1,
            note="Cursor's hook format could not be checked against an installed Cursor",
        ),
        AgentHooks(
            "copilot",
            ".github/hooks/bounded-review.json",
            "agentStop",
            "userPromptSubmitted",
            False,
            1,
            note=f"Copilot CLI {_TRUST}",
        ),
    )
}


def _runs(handler: object) -> list[str]:
    if not isinstance(handler, dict):
        return []
    return [value for key in COMMAND_KEYS if isinstance(value := handler.get(key), str)]


def _handlers(spec: AgentHooks, hooks: dict[str, Any]) -> Iterator[tuple[str, str, object]]:
    """Every handler of the hooks table: where it is, its event, the handler."""
    for event, items in hooks.items():
        for i, item in enumerate(items if isinstance(items, list) else []):
            inner = item.get("hooks") if spec.grouped and isinstance(item, dict) else None
            if not spec.grouped:
                yield f"hooks.{event}[{i}]", event, item
            elif isinstance(inner, list):
                for j, handler in enumerate(inner):
                    yield f"hooks.{event}[{i}].hooks[{j}]", event, handler


def merge(spec: AgentHooks, data: dict[str, Any], label: str, raw: bytes) -> list[str]:
    """Add to ``data`` (the object of the file shown as ``label``, whose bytes are ``raw``) the
    entries it lacks, in place; return the events added. An entry init did not write, or a
    table shaped other than the agent reads it, is refused before anything changes."""
    if spec.version is not None and data.get("version", spec.version) != spec.version:
        raise UsageError(
            f"{label}: `version` is {json.dumps(data['version'])}; init writes version "
            f"{spec.version} only: add the entries by hand; nothing was written"
        )
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f"{label}: `hooks` is not an object; fix it first; nothing was written")
    for event in spec.entries():
        if not isinstance(hooks.get(event, []), list):
            raise UsageError(
                f"{label}: `hooks.{event}` is not a list; fix it first; nothing was written"
            )
    present = _ours(spec, hooks, label, raw)
    added = [event for event in spec.entries() if event not in present]
    if added:
        hooks = data.setdefault("hooks", hooks)
        for event in added:
            hooks.setdefault(event, []).append(spec.item(spec.entries()[event]))
    return added


def _ours(spec: AgentHooks, hooks: dict[str, Any], label: str, raw: bytes) -> set[str]:
    """The events that hold our entry already. An entry that runs bounded-review where ours
    goes, or runs ``bounded-review hook`` anywhere, and is not ours, is refused."""
    present = set()
    for where, event, handler in _handlers(spec, hooks):
        runs = [text for text in _runs(handler) if "bounded-review" in text]
        if not runs:
            continue
        ours = spec.entries().get(event)
        if ours is not None and set(runs) == {_runs(ours)[0]} and _typed(handler):
            present.add(event)
        elif ours is not None or any("bounded-review hook" in text for text in runs):
            line = line_of(raw, runs[0])
            at = f" (line {line})" if line else ""
            fix = f"remove it (no bounded-review hook belongs under {event})"
            if ours is not None:
                fix = f"remove it, or make it run exactly `{_runs(ours)[0]}`"
            raise UsageError(
                f"{label}: {where}{at} runs `{runs[0]}`, an entry `bounded-review init` did not "
                f"write and never replaces: {fix}, then run init again; nothing was written"
            )
    return present


def _typed(handler: object) -> bool:
    return isinstance(handler, dict) and handler.get("type", "command") == "command"
