"""Driving ``bounded-review hook`` as each coding agent does: the agent's own event shape on
stdin, and its answer checked against the schema that agent ships (``data/agents``)."""

from __future__ import annotations

import json
import re
import shlex
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jsonschema
import warmstart
from gitrepo import GitRepo, clean_env

AGENTS = ("claude", "codex", "gemini", "cursor", "copilot")
SCHEMAS = Path(__file__).parent / "data" / "agents"
STOP_SCHEMA = {
    "claude": "claude-2.1.197-hook-output.schema.json",
    "codex": "codex-0.171.0-stop.command.output.schema.json",
    "gemini": "gemini-0.61.0-hook-output.schema.json",
    "cursor": "cursor-stop-output.schema.json",
    "copilot": "copilot-1.0.102-agentStop-output.schema.json",
}
START_SCHEMA = {
    "claude": "claude-2.1.197-hook-output.schema.json",
    "codex": "codex-0.171.0-user-prompt-submit.command.output.schema.json",
    "gemini": "gemini-0.61.0-hook-output.schema.json",
}
BLOCK_KEY = {"cursor": "followup_message"}
BLOCK_DECISION = {"gemini": "deny", "cursor": None}
MESSAGE_KEY = {"cursor": None, "copilot": None}


def schema(name: str) -> dict[str, Any]:
    loaded = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def event(agent: str, repo: Path, session: str, *, stop: bool = True) -> dict[str, Any]:
    """The event ``agent`` sends its stop (or turn-start) hook, as its own schema spells it."""
    now = datetime.now(timezone.utc).isoformat()
    if agent == "cursor":
        base = {"conversation_id": session, "generation_id": "g1", "workspace_roots": [str(repo)]}
        more = {"status": "completed", "loop_count": 0} if stop else {"prompt": "fix it"}
        return {**base, "hook_event_name": "stop" if stop else "beforeSubmitPrompt", **more}
    if agent == "copilot":
        base = {"timestamp": now, "cwd": str(repo), "sessionId": session}
        more = {"transcriptPath": "/dev/null", "stopReason": "end_turn"} if stop else {}
        return {**base, **more} if stop else {**base, "prompt": "fix it"}
    common = {"session_id": session, "cwd": str(repo), "transcript_path": None}
    if agent == "codex":
        name = "Stop" if stop else "UserPromptSubmit"
        common |= {"hook_event_name": name, "model": "gpt-5", "permission_mode": "default"}
        common |= {"turn_id": "t1"}
        if stop:
            common |= {"last_assistant_message": None, "stop_hook_active": False}
        else:
            common |= {"prompt": "fix it"}
        return common
    if agent == "gemini":
        name = "AfterAgent" if stop else "BeforeAgent"
        common |= {"hook_event_name": name, "timestamp": now, "prompt": "fix it"}
        return common | ({"prompt_response": "done", "stop_hook_active": False} if stop else {})
    name = "Stop" if stop else "UserPromptSubmit"
    common |= {"hook_event_name": name, "transcript_path": "/dev/null"}
    return common | ({"stop_hook_active": False} if stop else {"prompt": "fix it"})


@dataclass(frozen=True)
class Said:
    """What the hook printed and what it means in the agent's protocol."""

    agent: str
    code: int
    out: str
    err: str

    @property
    def parsed(self) -> dict[str, Any]:
        parsed = json.loads(self.out) if self.out.strip() else {}
        assert isinstance(parsed, dict)
        return parsed

    @property
    def blocked(self) -> bool:
        key = BLOCK_KEY.get(self.agent, "reason")
        decision = BLOCK_DECISION.get(self.agent, "block")
        said = self.parsed
        return bool(said.get(key)) and (decision is None or said.get("decision") == decision)

    @property
    def instruction(self) -> str:
        assert self.blocked, self
        return str(self.parsed[BLOCK_KEY.get(self.agent, "reason")])

    @property
    def message(self) -> str:
        """What the user reads when the stop is allowed ("" when nothing)."""
        assert not self.blocked, self
        key = MESSAGE_KEY.get(self.agent, "systemMessage")
        return str(self.parsed.get(key, "")) if key else self.err.strip()


def hook(
    repo: GitRepo,
    agent: str,
    session: str = "s1",
    *,
    kind: str = "stop",
    raw: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Said:
    """Run the hook as ``agent`` runs it (``env``: variables added to its environment) and
    check its answer against the agent's schema."""
    data = raw if raw is not None else json.dumps(event(agent, repo.path, session)).encode()
    if kind == "start" and raw is None:
        data = json.dumps(event(agent, repo.path, session, stop=False)).encode()
    done = warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "hook", kind, "--agent", agent],
        input=data,
        capture_output=True,
        cwd=cwd or repo.path,
        env=clean_env(env),
        timeout=60,
        check=False,
    )
    said = Said(agent, done.returncode, done.stdout.decode(), done.stderr.decode())
    assert said.code == 0, said
    names = STOP_SCHEMA if kind == "stop" else START_SCHEMA
    if said.out.strip() and agent in names:
        jsonschema.validate(said.parsed, schema(names[agent]))
    if said.out.strip():
        assert said.out.count("\n") == 1, said  # one JSON document, nothing else on stdout
    return said


BROKEN = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def make_repo(path: Path) -> GitRepo:
    """A base whose test passes, and a feature branch checked out, nothing changed yet."""
    project = GitRepo.init(path)
    project.commit(
        {
            ".gitignore": ".bounded-review/\n__pycache__/\n.pytest_cache/\n",
            "pyproject.toml": '[tool.bounded-review]\nmode = "review-and-fix"\nbase = "main"\n',
            "app.py": FIXED,
            "test_app.py": "from app import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
        },
        "base",
    )
    project.git("checkout", "--quiet", "-b", "feature")
    return project


def named_command(instruction: str) -> list[str] | None:
    """The review command a block names (``run `COMMAND```), as an argument list."""
    found = re.search(r"[Rr]un `([^`]+)`", instruction)
    return shlex.split(found.group(1)) if found else None


def review(repo: GitRepo, command: list[str] | None = None) -> dict[str, Any]:
    """The review the block's instruction asks for (``command``: exactly the one it names,
    else a bare ``pytest --bounded-review``), run as the agent would run it; its report."""
    done = warmstart.run(
        command or [sys.executable, "-m", "pytest", "-q", "--bounded-review"],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    path = repo.path / ".bounded-review" / "report.json"
    assert path.exists(), done.stdout + done.stderr
    report = json.loads(path.read_text())
    assert isinstance(report, dict)
    return report
