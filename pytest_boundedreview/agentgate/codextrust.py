"""What Codex needs besides ``.codex/hooks.json`` before the hooks run headless.

Codex 0.171.0 runs a project hook only once it is trusted, and ``codex exec`` skips an
untrusted one without a word. Trust is kept per hook in the user's configuration
(``$CODEX_HOME/config.toml``, ``~/.codex/config.toml`` by default)::

    [hooks.state."<repo>/.codex/hooks.json:stop:0:0"]
    trusted_hash = "sha256:<hex>"

The key is the hooks file's absolute path, the event's snake-case label, the group's index in
the event's list and the handler's index in the group. The hash (Codex's ``command_hook_hash``
and ``version_for_toml``, checked against ``codex app-server`` ``hooks/list``) is SHA-256 of the
compact JSON, keys sorted, of the normalized hook: ``event_name``, and ``hooks`` holding the one
handler as ``type``, ``command``, ``timeout`` (600 when unset, at least 1), ``async`` and, when
set, ``statusMessage``; the Stop and UserPromptSubmit events take no matcher. Any change to the
entry changes the hash, and Codex then treats the hook as modified, not trusted.

Codex also reads ``.codex/`` only in a project the user trusts (``[projects."<repo>"]
trust_level = "trusted"``): that trusts every setting the project's ``.codex/config.toml`` may
make, so it is the user's decision, printed and never written here.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from .agentsettings import AgentHooks

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

DEFAULT_TIMEOUT = 600  # Codex's, for a handler that names none


def config_path(environ: dict[str, str] | None = None) -> Path:
    """The user's Codex configuration file: ``$CODEX_HOME/config.toml``."""
    env = os.environ if environ is None else environ
    home = env.get("CODEX_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".codex")
    return Path(home) / "config.toml"


def label(event: str) -> str:
    """Codex's key label of an event: ``UserPromptSubmit`` -> ``user_prompt_submit``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_hash(event: str, handler: dict[str, Any]) -> str:
    """The ``trusted_hash`` Codex 0.171.0 computes for ``handler`` under ``event``."""
    normal: dict[str, Any] = {
        "type": "command",
        "command": handler["command"],
        "timeout": max(1, int(handler.get("timeout") or DEFAULT_TIMEOUT)),
        "async": bool(handler.get("async", False)),
    }
    if isinstance(handler.get("statusMessage"), str):
        normal["statusMessage"] = handler["statusMessage"]
    identity = {"event_name": label(event), "hooks": [normal]}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def trusted_hashes(spec: AgentHooks, root: Path, data: dict[str, Any]) -> dict[str, str]:
    """Each of our hooks in the settings ``data`` (as written): its Codex key and hash."""
    found = {}
    source = f"{root}/{spec.path}"
    for event, (group, index, handler) in _ours(spec, data):
        found[f"{source}:{label(event)}:{group}:{index}"] = hook_hash(event, handler)
    return found


def _ours(spec: AgentHooks, data: dict[str, Any]) -> Iterator[tuple[str, tuple[int, int, Any]]]:
    hooks = data.get("hooks", {})
    for event, kind in spec.events().items():
        for i, group in enumerate(hooks.get(event, [])):
            for j, handler in enumerate(group.get("hooks", []) if isinstance(group, dict) else []):
                if isinstance(handler, dict) and handler.get("command") == spec.command(kind):
                    yield event, (i, j, handler)


def entries_text(hashes: dict[str, str]) -> str:
    """The TOML tables that trust ``hashes``."""
    return "".join(
        f"\n[hooks.state.{json.dumps(key)}]\ntrusted_hash = {json.dumps(value)}\n"
        for key, value in hashes.items()
    )


def trust_change(path: Path, hashes: dict[str, str]) -> tuple[bytes | None, bytes]:
    """The user's Codex configuration before and after trusting ``hashes``: a missing table is
    appended, a stale ``trusted_hash`` line under its own table header replaced, every other
    byte kept. A file it cannot edit that way is refused, with the lines to add by hand."""
    before = path.read_bytes() if path.exists() else None
    text = (before or b"").decode("utf-8", "replace")
    by_hand = f"add this to {path} by hand:\n{entries_text(hashes)}"
    try:
        states = tomllib.loads(text).get("hooks", {}).get("state", {})
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(
            f"{path}: not valid TOML ({exc}); nothing was written; {by_hand}"
        ) from None
    missing = {}
    for key, value in hashes.items():
        held = states.get(key, {}).get("trusted_hash") if isinstance(states, dict) else None
        if held == value:
            continue
        if held is None and key not in states:
            missing[key] = value
            continue
        header = re.escape(f"[hooks.state.{json.dumps(key)}]")
        pattern = rf"(?m)^({header}[ \t]*\r?\n(?:(?!\[)[^\n]*\n)*?)trusted_hash[ \t]*=[^\n]*"
        line = f"trusted_hash = {json.dumps(value)}"
        text, count = re.subn(pattern, rf"\g<1>{_literal(line)}", text)
        if count != 1:
            raise UsageError(
                f"{path}: `hooks.state.{json.dumps(key)}` is written in a form "
                f"init does not edit; nothing was written; {by_hand}"
            )
    if missing:
        text += ("" if not text or text.endswith("\n") else "\n") + entries_text(missing)
    after = text.encode()
    check = tomllib.loads(text).get("hooks", {}).get("state", {})
    assert all(check[k]["trusted_hash"] == v for k, v in hashes.items())
    return before, after


def _literal(text: str) -> str:
    """``text`` as a replacement template that stands for itself."""
    return text.replace("\\", "\\\\")


def project_trusted(path: Path, root: Path) -> bool:
    """Whether the user's Codex configuration trusts the project at ``root`` (or a folder
    above it)."""
    try:
        projects = tomllib.loads(path.read_text(encoding="utf-8")).get("projects", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    if not isinstance(projects, dict):
        return False
    entries = [projects.get(str(folder)) for folder in (root, *root.parents)]
    return any(isinstance(e, dict) and e.get("trust_level") == "trusted" for e in entries)
