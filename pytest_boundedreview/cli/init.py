"""``bounded-review init``: propose a ``[tool.bounded-review]`` table from the coding agents
found on PATH and a model server it finds (``cli/localserver.py``), printed as a diff of
``pyproject.toml``; ``--write`` appends it and keeps every other byte. An existing table is
never replaced."""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..change import git
from ..core.configfile import find_config, read_toml
from ..core.errors import UsageError
from ..core.statefile import default_mode, write_atomic
from ..render.escape import terminal
from .localserver import LOOPBACK, Found, find_server, lane_text

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

AGENT_ORDER = ("claude", "codex", "gemini")
KEY_VARIABLES = ("OPENAI_API_KEY",)  # what an `openai` lane would read its key from


def found_agents(path: str | None = None) -> list[str]:
    """The agent CLIs on ``path`` (default: ``PATH``), in the order they are preferred."""
    return [name for name in AGENT_ORDER if shutil.which(name, path=path) is not None]


def _lane(name: str, lens: str, kind: str, role: str = "verdict") -> str:
    lines = [
        "",
        "[[tool.bounded-review.lanes]]",
        f'name = "{name}"',
        f'lens = "{lens}"',
    ]
    if role != "verdict":
        lines.append(f'role = "{role}"')
    lines += [f'kind = "{kind}"', f"timeout = {600 if role == 'scout' else 900}"]
    if kind == "claude":
        lines.append("max_budget_usd = 2.0  # per attempt; passed when claude's --help lists it")
    return "\n".join(lines) + "\n"


def proposal(agents: Sequence[str], server: Found | None = None) -> str:
    """The table for ``agents`` and a model ``server`` (at least one of them): a surgical
    correctness lane and a deep security lane, on different tools when two exist, and a scout
    when a second tool does; the server's lane beside the agents', or both lanes on it when no
    agent exists."""
    found = [f"the agents on PATH: {', '.join(agents)}"] if agents else []
    found += [f"the model server at {server.base_url}"] if server else []
    text = (
        "\n[tool.bounded-review]\n"
        f"# Proposed by `bounded-review init` from {' and '.join(found)}.\n"
        "# Each lane reviews a read-only copy of the change; `bounded-review lanes` shows\n"
        "# which would run on the current change, `bounded-review prompt NAME` what it reads.\n"
    )
    if not agents:
        assert server is not None
        return (
            text
            + lane_text("surgical", "correctness", server)
            + lane_text("deep", "security", server)
        )
    first, second = agents[0], agents[1] if len(agents) > 1 else agents[0]
    text += _lane("surgical", "correctness", first)
    text += _lane("deep", "security", second)
    if len(agents) > 1:
        text += _lane("scout", "facts", agents[2] if len(agents) > 2 else second, "scout")
    if server is not None:
        text += lane_text("local", "correctness", server)
    return text


def _target_file(repo: git.Repo, cwd: Path) -> Path:
    for folder in [cwd, *cwd.parents]:
        if (folder / "pyproject.toml").is_file():
            return folder / "pyproject.toml"
        if folder == repo.root:
            break
    return repo.root / "pyproject.toml"


def cmd_init(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> int:
    environ = os.environ if environ is None else environ
    cwd = Path.cwd()
    repo = git.open_repo(cwd)
    existing, _ = find_config(cwd, repo.root)
    if existing is not None:
        raise UsageError(
            f"{existing} already has [tool.bounded-review]: init never replaces it; edit it by "
            "hand (`bounded-review lanes` shows what it would run)"
        )
    agents = found_agents(environ.get("PATH"))
    server, passed_over = find_server(environ)
    if passed_over:
        print(f"bounded-review init: OPENAI_BASE_URL passed over: {terminal(passed_over)}")
    if not agents and server is None:
        keys = [name for name in KEY_VARIABLES if environ.get(name)]
        print("bounded-review init: no coding agent on PATH (looked for claude, codex, gemini)")
        print(
            "bounded-review init: no model server found (OPENAI_BASE_URL, or the default "
            f"ports of {', '.join(name for _, name in LOOPBACK)} on 127.0.0.1)"
        )
        if keys:
            print(
                f"{', '.join(keys)} is set: an `openai` lane can use it; add one by hand with "
                "the exact id of a model your endpoint lists (README, 'OpenAI-compatible')"
            )
        print("nothing proposed; nothing written")
        return 1
    shown_path = _target_file(repo, cwd)
    path = shown_path.resolve()  # a linked pyproject.toml is edited where it lives
    before = path.read_bytes() if path.is_file() else b""
    if before:
        read_toml(path)  # a broken file is a config error here, not after our edit
    newline = b"\r\n" if b"\r\n" in before else b"\n"
    glue = b"" if not before or before.endswith(b"\n") else newline
    after = before + glue + proposal(agents, server).encode().replace(b"\n", newline)
    try:
        tomllib.loads(after.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(
            f"{shown_path}: adding [tool.bounded-review] would not parse ({exc}); the file "
            "declares `tool` in a way a new table cannot extend: add the table by hand"
        ) from None
    old = before.decode("utf-8", "replace").splitlines(keepends=True)
    new = after.decode("utf-8", "replace").splitlines(keepends=True)
    label = os.path.relpath(shown_path, cwd)
    source = f"a/{label}" if before else "/dev/null"
    print("".join(difflib.unified_diff(old, new, source, f"b/{label}")), end="")
    if not args.write:
        print(f"bounded-review init: run `bounded-review init --write` to add this to {label}")
        return 0
    mode = path.stat().st_mode & 0o7777 if before else default_mode()
    write_atomic(path, after)
    os.chmod(path, mode)  # the temporary file's 0600 must not stick
    print(f"bounded-review init: added [tool.bounded-review] to {label}")
    return 0
