"""A scripted coding agent held by the stop hook, over a real repository: it writes its change,
tries to stop, and follows each block's instruction as an obedient agent would (run the review,
apply its next fix, run the review again), until the hook lets it stop.

The five agents' protocols are driven in lockstep over one repository: each stop is asked of
every agent's hook (each with its own event shape and its own session, so its own block
counter), the answers must agree once read in each protocol, and the worker follows the one
instruction they give. Each protocol thus runs every path end to end, at the cost of one.

    python tests/agentloop.py   # the table of every path for every agent, in Markdown

The reviewer is a real command lane that flags every line of ``app.py`` holding ``BUG``; the
review is a real ``pytest --bounded-review`` session under the standard tier (two repair loops).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from agenthooks import AGENTS, Said, hook, named_command, review
from gitrepo import GitRepo

REVIEWER = """
import json, sys
json.load(sys.stdin)
lines = open("app.py").read().splitlines()
findings = [
    {"path": "app.py", "line": n, "severity": "blocking", "category": "correctness",
     "failure_mode": "a known bug is still there", "evidence": "the line says so",
     "quote": text, "remediation": "remove the bug"}
    for n, text in enumerate(lines, 1) if "BUG" in text
]
print(json.dumps({"schema": "bounded-review/lane-result/v1",
                  "verdict": "revise" if findings else "pass",
                  "rationale": "looked at app.py", "findings": findings}))
"""
# Agents whose continuation after a block starts as a new turn: Gemini CLI 0.61.0 fires
# BeforeAgent again (its bundle resets `hasFiredBeforeAgent` and re-sends); Cursor submits the
# follow-up and Copilot enqueues the reason as the next user message, so theirs may too.
START_AGAIN = ("gemini", "cursor", "copilot")
MOST_STOPS = 12  # a loop the hook failed to end; never reached when it works


@dataclass
class Outcome:
    """How one path ended for one agent."""

    blocks: int
    final: str  # clean, or the state the hook told the user
    instructions: list[str] = field(default_factory=list)
    reviews: int = 0


def _text(said: Said) -> str:
    """What the answer says, with the agent's own state file named alike."""
    text = said.instruction if said.blocked else said.message
    return text.replace(f"{said.agent}-sim.", "AGENT-sim.")


@dataclass
class Agent:
    """An agent that obeys the hook: on "run the review" it runs it, on blockers it applies
    its next scripted fix and runs the review again; without fixes left it changes nothing."""

    names: tuple[str, ...]
    repo: GitRepo
    fixes: list[str]
    reviews: int = 0
    command: list[str] | None = None  # the review command the hook named, run as named

    def review(self) -> dict[str, object]:
        self.reviews += 1
        return review(self.repo, self.command)

    def follow(self, instruction: str) -> None:
        self.command = named_command(instruction) or self.command
        if "not clean" in instruction and self.fixes:  # the report's blockers
            self.repo.write("app.py", self.fixes.pop(0))
        elif "Run `" in instruction:
            if self.review()["gate"] == {"review_clean": "yes", "reasons": []} or not self.fixes:
                return
            self.repo.write("app.py", self.fixes.pop(0))
        else:
            return  # nothing it knows how to do: it stops again as it is
        self.review()

    def stop(self) -> Said:
        """Ask every agent's hook; they must agree (blocked, and the same text)."""
        answers = [hook(self.repo, name, "sim") for name in self.names]
        said = answers[0]
        for other in answers[1:]:
            assert other.blocked == said.blocked, (said, other)
            assert _text(other) == _text(said), (said, other)
        return said

    def turn(self, change: str, before_stop: Callable[[], None] | None = None) -> Outcome:
        """One user turn: the hook notes the start, the agent writes ``change``, then tries to
        stop until the hook lets it."""
        for name in self.names:
            hook(self.repo, name, "sim", kind="start")
        self.repo.write("app.py", change)
        if before_stop is not None:
            before_stop()
        outcome = Outcome(0, "")
        for _ in range(MOST_STOPS):
            said = self.stop()
            if not said.blocked:
                outcome.final = said.message or "clean"
                outcome.reviews = self.reviews
                return outcome
            outcome.blocks += 1
            outcome.instructions.append(said.instruction)
            for name in set(self.names) & set(START_AGAIN):
                hook(self.repo, name, "sim", kind="start")
            self.follow(said.instruction)
        raise AssertionError(f"the hook never let the agent stop: {outcome}")


def project(folder: Path) -> GitRepo:
    repo = GitRepo.init(folder)
    script = folder.parent / "reviewer.py"
    script.write_text(REVIEWER)
    command = json.dumps([sys.executable, str(script)])
    config = (
        '[tool.bounded-review]\nmode = "review-and-fix"\nrisk = "standard"\nbase = "main"\n'
        '[[tool.bounded-review.lanes]]\nname = "rev"\nlens = "correctness"\n'
        f"command = {command}\n"
    )
    repo.commit(
        {
            ".gitignore": ".bounded-review/\n__pycache__/\n.pytest_cache/\n",
            "pyproject.toml": config,
            "app.py": "x = 1\n",
            "test_app.py": "def test_a():\n    pass\n",
        },
        "base",
    )
    repo.git("checkout", "--quiet", "-b", "feature")
    return repo


def clean_after_one_fix(repo: GitRepo, agents: tuple[str, ...]) -> Outcome:
    return Agent(agents, repo, ["x = 2\n"]).turn("x = 2  # BUG\n")


def deadlock_at_the_ceiling(repo: GitRepo, agents: tuple[str, ...]) -> Outcome:
    fixes = [f"x = {n}  # BUG {n}\n" for n in range(3, 9)]  # every fix keeps a bug
    return Agent(agents, repo, fixes).turn("x = 2  # BUG 2\n")


def fix_without_progress(repo: GitRepo, agents: tuple[str, ...]) -> Outcome:
    return Agent(agents, repo, []).turn("x = 2  # BUG\n")


def hook_crashes(repo: GitRepo, agents: tuple[str, ...]) -> Outcome:
    def tear_the_state() -> None:
        for agent in agents:
            state = repo.path / ".bounded-review" / "agents" / f"{agent}-sim.json"
            state.write_text("{torn")

    return Agent(agents, repo, ["x = 2\n"]).turn("x = 2  # BUG\n", tear_the_state)


def stale_report(repo: GitRepo, agents: tuple[str, ...]) -> Outcome:
    scripted = Agent(agents, repo, ["x = 3\n"])

    def review_then_edit() -> None:
        scripted.review()  # a clean review of the first version...
        repo.write("app.py", "x = 3  # BUG\n")  # ...then one more edit, not reviewed

    return scripted.turn("x = 2\n", review_then_edit)


PATHS: dict[str, Callable[[GitRepo, tuple[str, ...]], Outcome]] = {
    "clean after one fix": clean_after_one_fix,
    "deadlock at the ceiling, blockers left": deadlock_at_the_ceiling,
    "a fix that makes no progress": fix_without_progress,
    "the hook crashes (torn state)": hook_crashes,
    "a report made stale by an edit after the review": stale_report,
}


def table() -> str:
    """Path x agent: the blocks each agent's hook gave, and the state it ended in."""
    lines = ["| path | " + " | ".join(AGENTS) + " | final state |"]
    lines.append("| --- |" + " ---: |" * len(AGENTS) + " --- |")
    for name, path in PATHS.items():
        with tempfile.TemporaryDirectory() as scratch:
            outcome = path(project(Path(scratch) / "repo"), AGENTS)
        cells = [f"{outcome.blocks}" for _ in AGENTS]  # lockstep: each counted its own
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {outcome.final} |")
    return "\n".join(lines)


if __name__ == "__main__":
    subprocess.run(["git", "--version"], check=True, capture_output=True)
    print(table())
