"""A gemini home of one attempt's own (``GEMINI_CLI_HOME``), built against Gemini CLI 0.61.0.

Gemini offers no flag against the hooks, MCP servers, extensions and memory of the user's own
settings, keeps every session on disk, and loads ``.env`` files from the working folder and
every folder above it (a reviewed change, or another user of a shared temp folder, could set
the endpoint the user's key is sent to). Each attempt therefore gets a home whose settings turn
hooks off and ignore project ``.env`` files, keep only the user's auth choice and default model,
and link the credentials gemini saved at login; the search for ``.env`` files ends at an empty
one in the copy's ``.gemini/``. The key and project may come from the user's own
``~/.gemini/.env``: those few variables are read here and passed in the environment. The home
goes with the attempt's folder.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

# What gemini saved at login: the OAuth tokens, the account, the encrypted credential store.
CREDENTIALS = ("oauth_creds.json", "google_accounts.json", "gemini-credentials.json")
# What gemini itself takes from an untrusted .env file: its credentials, nothing else.
AUTH_VARIABLES = (
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
)
_LIMIT = 1024 * 1024
_DOTENV = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$")


def _read(path: Path) -> str | None:
    try:
        with open(path, "rb") as handle:
            return handle.read(_LIMIT).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def without_comments(text: str) -> str:
    """JSON with ``//`` and ``/* */`` comments (as gemini reads its settings) made plain."""
    out: list[str] = []
    i, n, in_string = 0, len(text), False
    while i < n:
        char = text[i]
        if in_string:
            out.append(text[i : i + 2] if char == "\\" else char)
            in_string = char != '"'
            i += 2 if char == "\\" else 1
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
        else:
            out.append(char)
            in_string = char == '"'
            i += 1
    return "".join(out)


def _carried(settings: Path) -> dict[str, Any]:
    """What the attempt keeps of the user's settings: the auth choice and the default model."""
    text = _read(settings)
    try:
        data = json.loads(without_comments(text)) if text else None
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    kept: dict[str, Any] = {}
    security, model = data.get("security"), data.get("model")
    if isinstance(security, dict) and "auth" in security:
        kept["security"] = {"auth": security["auth"]}
    if isinstance(model, dict) and isinstance(model.get("name"), str):
        kept["model"] = {"name": model["name"]}
    return kept


def _auth_from_dotenv(path: Path) -> dict[str, str]:
    """The credential variables of the user's ``~/.gemini/.env``."""
    found = {}
    for line in (_read(path) or "").splitlines():
        match = _DOTENV.match(line)
        if match and match[1] in AUTH_VARIABLES:
            value = match[2]
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            found[match[1]] = value
    return found


def private_home(folder: Path, workdir: Path, env: dict[str, str]) -> dict[str, str]:
    """Build the home in ``folder`` and stop the ``.env`` search in ``workdir`` (the lane's own
    copy); the variables that point gemini at them."""
    user = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home()) / ".gemini"
    home = folder / "home"
    own = home / ".gemini"
    own.mkdir(parents=True)
    settings = {
        "hooksConfig": {"enabled": False},
        "advanced": {"ignoreLocalEnv": True},
        **_carried(user / "settings.json"),
    }
    (own / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    for name in CREDENTIALS:
        if (user / name).is_file():
            (own / name).symlink_to(user / name)
    stop = workdir / ".gemini"
    stop.mkdir(exist_ok=True)
    (stop / ".env").write_text("", encoding="utf-8")
    auth = {k: v for k, v in _auth_from_dotenv(user / ".env").items() if k not in env}
    return {**auth, "GEMINI_CLI_HOME": str(home)}
