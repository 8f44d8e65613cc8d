"""``bounded-review mcp``: a stdio MCP server with four read-only tools (CONTRACT §12).

``gate``, ``report``, ``next_action`` and ``loop_status`` let a coding agent ask, between its
own steps, whether the tree it is leaving has a clean review, what the last report says, what
to do next, and where the review loop stands. Each takes an optional ``repository`` (a folder
inside a git work tree; the server's working folder by default) and answers from what the
sessions wrote (``agentgate/mcptools.py``): nothing runs tests or reviewers, and nothing is written
but the configuration cache's note.

The MCP SDK is the optional extra ``mcp`` and is imported only here, only when the command
runs: without it the command is a usage error (exit 4) that names the install. An answer
that cannot be given comes back as a tool error naming the file and the fix, never as clean.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from .. import __version__
from ..core.errors import FatalError, UsageError
from . import mcptools

# The extra ``mcp`` in pyproject.toml (a test keeps the two equal): installed by its own
# name, since this package may not come from an index that has its extras.
SDK = "mcp>=2.3,<3"
Repository = Annotated[
    str | None,
    Field(
        description="a folder inside the git work tree to ask about (relative to the "
        "server's working folder); default: the server's working folder"
    ),
]
INSTRUCTIONS = (
    "Read-only answers about the bounded review of a git working tree: `gate` says whether a "
    "report of exactly this tree exists and its gate (yes, no, indeterminate or not-reviewed); "
    "`next_action` says what to do next; `report` returns the last report; `loop_status` the "
    "review loops, their rounds and ceilings. The review itself is `pytest --bounded-review`. "
    "Only a `yes` of this tree is clean; an error is never clean."
)


def _answer(view: Callable[[Path], dict[str, Any]], repository: str | None) -> dict[str, Any]:
    """``view``'s answer for ``repository``; what it cannot answer becomes a tool error."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return view(mcptools.folder_of(repository))
    except FatalError as exc:
        raise ToolError(str(exc)) from None
    except Exception as exc:  # a bug: still an error, with what happened
        raise ToolError(f"internal error ({type(exc).__name__}: {exc}); please report it") from exc


def gate(repository: Repository = None) -> dict[str, Any]:
    """Whether a review report of exactly the current working tree (untracked files
    included) exists and its gate: `yes` (clean), `no`, `indeterminate`, or `not-reviewed`
    (no report of this tree: run `pytest --bounded-review`). Only `yes` is clean."""
    return _answer(mcptools.gate, repository)


def report(repository: Repository = None) -> dict[str, Any]:
    """The last review report (bounded-review/report/v1) as validated, its path, and
    whether it is of the current working tree (`of_this_tree`)."""
    return _answer(mcptools.report, repository)


def next_action(repository: Repository = None) -> dict[str, Any]:
    """What to do next for the current working tree: the report's next action and its
    verified blockers, or the command to run when there is no report of this tree."""
    return _answer(mcptools.next_action, repository)


def loop_status(repository: Repository = None) -> dict[str, Any]:
    """The review loops in the state folder: status and stop reason, rounds, repair loops
    used and the ceilings, flags, and which loop the last report belongs to."""
    return _answer(mcptools.loop_status, repository)


TOOLS = (gate, report, next_action, loop_status)


def serve() -> None:
    """Build the server and run it on stdin/stdout until the client closes them."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.types import ToolAnnotations
    except ImportError as exc:
        raise UsageError(
            f"`bounded-review mcp` needs the MCP SDK ({SDK}), which cannot be imported here "
            f"({exc}): {sys.executable} -m pip install '{SDK}'"
        ) from None
    server: MCPServer[Any] = MCPServer(
        "bounded-review",
        version=__version__,
        instructions=INSTRUCTIONS,
        log_level="WARNING",
    )
    read_only = ToolAnnotations(
        read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    for tool in TOOLS:
        server.add_tool(tool, annotations=read_only, structured_output=True)
    server.run("stdio")
