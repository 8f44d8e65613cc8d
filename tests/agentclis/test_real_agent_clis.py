"""The stop gate inside the real agent CLIs (versions pinned in ``package-lock.json``), each
driven headless through real turns by a scripted model on 127.0.0.1, in a small real git
repository after ``bounded-review init --agent NAME --write``.

Every stop hook call is logged by a pass-through shim (``realclis.SHIM``); with
``BOUNDED_REVIEW_AGENT_MATRIX`` set, each test appends its row of the matrix (stop calls,
blocks, how it ended, the final gate, the hook's time per path) to that file as a JSON line.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import realclis
from gitrepo import GitRepo, clean_env
from modelserver import ModelServer
from scripted import PROMPT, Script, Worker, obedient, stubborn

pytestmark = pytest.mark.agent_cli

CLIS = sorted(realclis.CLIS)
MODULE = "calc/__init__.py"
BASE = (
    "def add(a, b):\n    return a + b\n\n\n"
    "def sub(a, b):\n    return a - b\n\n\n"
    "def mul(a, b):\n    return a * b\n"
)
TESTS = (
    "from calc import add, mul, sub\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "def test_sub():\n    assert sub(2, 3) == -1\n\n\n"
    "def test_mul():\n    assert mul(2, 3) == 6\n"
)
CONFIG = (
    '[tool.bounded-review]\nmode = "review-and-fix"\nbase = "main"\n\n'
    '[tool.pytest.ini_options]\npythonpath = ["."]\n'
)
IGNORES = ".bounded-review/\n__pycache__/\n.pytest_cache/\n"


# Each task: the line it changes, its broken version, then its fix (a tree not the base's).
TASK_ADD = ("return a + b", "return a - b", "return b + a")
TASK_SUB = ("return a - b", "return b - a", "return -(b - a)")
TASK_MUL = ("return a * b", "return a ** b", "return b * a")
# A stubborn agent's versions of add(): each one still broken.
STUBBORN = ["return a - b", "return a - b + 0", "return 0 + a - b", "return a - b - 0"]


def project(path: Path, agent: str, env: dict[str, str], *, gitignore: bool = True) -> GitRepo:
    """A tiny package with its tests on `main`, the agent's hooks written by init (run with the
    agent's own environment: Codex's trust goes to its HOME) and committed, and a feature branch
    checked out."""
    repo = GitRepo.init(path)
    files = {MODULE: BASE, "tests/test_calc.py": TESTS, "pyproject.toml": CONFIG}
    repo.commit(files | ({".gitignore": IGNORES} if gitignore else {}), "base")
    init = subprocess.run(
        [str(realclis.VENV_BIN / "bounded-review"), "init", "--agent", agent, "--write"],
        cwd=repo.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert init.returncode == 0, init.stderr
    repo.commit(message="agent hooks")
    repo.git("checkout", "--quiet", "-b", "feature")
    return repo


@dataclass
class Stop:
    """One stop hook call as the agent made it."""

    answer: dict[str, Any]
    message: str  # what the user is shown when the stop is allowed
    seconds: float

    @property
    def blocked(self) -> bool:
        return self.answer.get("decision") in ("block", "deny")

    @property
    def path(self) -> str:
        if self.blocked:
            return "block"
        return "let go" if self.message else "allow"


def stops(cli: realclis.Cli) -> list[Stop]:
    found = []
    for call in cli.hooks():
        if call["args"][:2] != ["hook", "stop"]:
            continue
        answer = json.loads(call["out"]) if call["out"].strip() else {}
        message = str(answer.get("systemMessage", "")) or call["err"].strip()
        found.append(Stop(answer, message, call["seconds"]))
    return found


def gate(repo: GitRepo) -> tuple[str, int]:
    """The last report's gate, and `bounded-review gate --stage working-tree` on what the agent
    left, as the docs tell a headless user to check it (the agent is done)."""
    report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
    clean = str(report["gate"]["review_clean"])
    done = subprocess.run(
        [str(realclis.VENV_BIN / "bounded-review"), "gate", "--stage", "working-tree"],
        cwd=repo.path,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    return clean, done.returncode


def record(
    cli: realclis.Cli,
    scenario: str,
    found: list[Stop],
    gated: tuple[str, int],
    runs: list[realclis.Run],
) -> None:
    """Append this run's row of the matrix to ``$BOUNDED_REVIEW_AGENT_MATRIX``, if set."""
    target = os.environ.get("BOUNDED_REVIEW_AGENT_MATRIX")
    if not target:
        return
    last = found[-1] if found else None
    ended = "no stop" if last is None else last.path + (f": {last.message}" if last.message else "")
    hook_seconds: dict[str, list[float]] = {}
    for stop in found:
        hook_seconds.setdefault(stop.path, []).append(round(stop.seconds, 3))
    starts = [c["seconds"] for c in cli.hooks() if c["args"][:2] == ["hook", "start"]]
    row = {
        "cli": cli.name,
        "version": realclis.versions()[realclis.BINARIES[cli.name]],
        "scenario": scenario,
        "stop_calls": len(found),
        "blocks": sum(stop.blocked for stop in found),
        "ended": ended,
        "report_gate": gated[0],
        "gate_exit": gated[1],
        "hook_seconds": hook_seconds | {"start": [round(s, 3) for s in starts]},
        # whether the CLI's own headless output (stdout, stderr) holds the let-go message
        "message_in_cli_output": bool(last and last.message)
        and any(
            json.dumps(last.message)[1:-1] in run.stdout or last.message in run.stderr
            for run in runs
        ),
        "code": os.environ.get("BOUNDED_REVIEW_AGENT_MATRIX_LABEL", "this branch"),
    }
    with open(target, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(json.dumps(row) + "\n")


def start(
    kind: str, cli_bin: Path, tmp_path: Path, script: Script, *, gitignore: bool = True
) -> tuple[ModelServer, realclis.Cli, GitRepo]:
    """The model server, the CLI set up against it with a fresh HOME, and the project."""
    path = tmp_path / "repo"
    server = ModelServer(script, str(path))
    cli = realclis.CLIS[kind](cli_bin, path, tmp_path / "home", server.url, clean_env())
    return server, cli, project(path, kind, cli.env, gitignore=gitignore)


def arrived(cli: realclis.Cli, found: list[Stop], script: Script) -> None:
    """Each block's reason is the model's next user message, in order. Gemini CLI gives it as
    a new user turn of exactly that text, and retries as a new turn: `BeforeAgent` (the start
    hook) fires again first, and `stop_hook_active` is false on every `AfterAgent`, so only the
    hook's own count keeps the task's blocks."""
    blocks = [stop.answer["reason"] for stop in found if stop.blocked]
    follow = [text for text in script.triggers if PROMPT not in text]
    assert len(follow) == len(blocks), (follow, blocks)
    for reason, text in zip(blocks, follow, strict=True):
        assert (text == reason) if cli.name == "gemini" else (reason in text), (reason, text)
    if cli.name != "gemini":
        return
    calls = [call for call in cli.hooks() if call["args"][:1] == ["hook"]]
    kinds = [call["args"][1] for call in calls]
    for n, call in enumerate(calls[:-1]):
        if kinds[n] == "stop" and json.loads(call["out"] or "{}").get("decision") == "deny":
            assert kinds[n + 1] == "start", kinds
    events = [json.loads(call["event"]) for call in calls if call["args"][1] == "stop"]
    assert [event.get("stop_hook_active") for event in events] == [False] * len(events), events


@pytest.mark.slow
@pytest.mark.parametrize("kind", CLIS)
def test_a_broken_edit_is_held_until_its_fix_is_reviewed_clean(
    kind: str, cli_bin: Path, tmp_path: Path
) -> None:
    worker = Worker(MODULE, BASE)
    script = obedient(worker, [TASK_ADD], fix_at_once=True)
    server, cli, repo = start(kind, cli_bin, tmp_path, script)
    with server:
        run = cli.turn(f"{PROMPT} make add() read better")
    assert run.code == 0, run.stderr[-3000:]
    assert not server.errors, server.errors
    found = stops(cli)
    assert [stop.path for stop in found] == ["block", "allow"], found
    assert "Run `" in found[0].answer["reason"]
    arrived(cli, found, script)
    assert worker.review in found[0].answer["reason"]  # it ran exactly the command named
    with repo.untouched():  # a review run again outside the agent leaves the user's state
        again = subprocess.run(
            [str(realclis.VENV_BIN / "python"), "-m", "pytest", "-q", "--bounded-review"],
            cwd=repo.path,
            env={k: v for k, v in cli.env.items() if k != "HOME"} | {"HOME": str(tmp_path)},
            capture_output=True,
            text=True,
            check=False,
        )
    assert again.returncode == 0, again.stdout[-3000:]
    gated = gate(repo)
    record(cli, "a broken edit, fixed", found, gated, [run])
    assert gated == ("yes", 0)


@pytest.mark.slow
@pytest.mark.parametrize("kind", CLIS)
def test_a_stubborn_agent_is_let_go_at_the_ceiling_with_the_state_shown(
    kind: str, cli_bin: Path, tmp_path: Path
) -> None:
    worker = Worker(MODULE, BASE)
    script = stubborn(worker, [BASE.replace("return a + b", line) for line in STUBBORN])
    server, cli, repo = start(kind, cli_bin, tmp_path, script)
    with server:
        run = cli.turn(f"{PROMPT} make add() read better")
    assert run.code == 0, run.stderr[-3000:]
    assert not server.errors, server.errors
    found = stops(cli)
    gated = gate(repo)
    record(cli, "a stubborn agent", found, gated, [run])
    *held, last = found
    assert held, found
    assert all(stop.blocked for stop in held), found
    arrived(cli, found, script)
    assert last.path == "let go", last
    # exactly the rules' ceiling (the standard tier's 2 repair loops) + 1 blocks, in one task:
    # Gemini CLI's retries (each a new turn to its hooks) did not start the count again
    assert len(held) == 3, (found, last.message)
    assert f"{len(held)} block(s) spent on this task, the ceiling" in last.message
    # the exact state: the gate's value, the loop against its ceiling, what is left
    assert "review not clean (no)" in last.message, last.message
    assert "of 2 repair loop(s) used" in last.message, last.message  # the rules' ceiling
    assert "unresolved: tests/test_calc.py::test_add" in last.message, last.message
    assert gated[0] == "no"
    assert gated[1] != 0
    if kind == "gemini":  # the one headless CLI that shows the user the state: on stderr
        assert last.message in run.stderr, run.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.parametrize("kind", CLIS)
def test_each_task_of_one_agent_session_is_held(kind: str, cli_bin: Path, tmp_path: Path) -> None:
    worker = Worker(MODULE, BASE)
    script = obedient(worker, [TASK_ADD, TASK_SUB, TASK_MUL], fix_at_once=False)
    server, cli, repo = start(kind, cli_bin, tmp_path, script)
    paths: list[list[str]] = []
    reports: list[str] = []
    runs: list[realclis.Run] = []
    with server:
        for n, what in enumerate(("add()", "sub()", "mul()")):
            before = len(stops(cli))
            run = cli.turn(f"{PROMPT} make {what} read better", resume=n > 0)
            runs.append(run)
            assert run.code == 0, run.stderr[-3000:]
            paths.append([stop.path for stop in stops(cli)[before:]])
            report = json.loads((repo.path / ".bounded-review" / "report.json").read_text())
            reports.append(report["gate"]["review_clean"])
    assert not server.errors, server.errors
    found = stops(cli)
    gated = gate(repo)
    record(cli, "three tasks in one session", found, gated, runs)
    arrived(cli, found, script)
    assert paths == [["block", "block", "allow"]] * 3, paths
    assert reports == ["yes"] * 3
    assert gated == ("yes", 0)


@pytest.mark.slow
@pytest.mark.parametrize("kind", CLIS)
def test_a_repository_without_a_gitignore(kind: str, cli_bin: Path, tmp_path: Path) -> None:
    worker = Worker(MODULE, BASE)
    script = obedient(worker, [TASK_ADD], fix_at_once=True)
    server, cli, repo = start(kind, cli_bin, tmp_path, script, gitignore=False)
    with server:
        run = cli.turn(f"{PROMPT} make add() read better")
    assert run.code == 0, run.stderr[-3000:]
    assert not server.errors, server.errors
    assert list((repo.path / "calc").glob("__pycache__/*.pyc"))  # the agent's shell wrote some
    found = stops(cli)
    gated = gate(repo)
    record(cli, "no .gitignore", found, gated, [run])
    arrived(cli, found, script)
    assert [stop.path for stop in found] == ["block", "allow"], found
    assert gated == ("yes", 0)
