"""An orchestrator driving ``bounded-review loop`` in-process, for the loop command tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_boundedreview import cli


def tree(digit: str) -> str:
    """A revision as the engine takes it: ``tree:`` and 40 hex digits."""
    return "tree:" + digit * 40


T0 = tree("0")
T1 = tree("1")
T2 = tree("2")
T3 = tree("3")
T4 = tree("4")
T9 = tree("9")


class Orchestrator:
    """Drives ``bounded-review loop`` in-process; remembers the attempt ids the engine issues,
    and checks that every refused mutation left the state's bytes as they were."""

    def __init__(self, folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.folder = folder
        self.capsys = capsys
        self.ops = 0
        self.admitted: dict[str, str] = {}  # lane -> the attempt id to run next

    @property
    def state_file(self) -> Path:
        return self.folder / "state" / "loops" / "L" / "state.json"

    def state_bytes(self) -> bytes | None:
        return self.state_file.read_bytes() if self.state_file.exists() else None

    def __call__(self, command: str, *args: str, op: str | None = None) -> tuple[int, Any]:
        argv = ["loop", command, "--loop-id", "L", "--state-dir", str(self.folder / "state")]
        if command not in ("show", "validate"):
            self.ops += 1
            argv += ["--operation-id", op or f"op{self.ops}"]
        before = self.state_bytes()
        code = cli.main([*argv, *args])
        out, err = self.capsys.readouterr()
        if code != 0:
            assert self.state_bytes() == before, f"{command} was refused but changed the state"
            return code, err.strip()
        receipt = json.loads(out)
        for item in receipt.get("admitted", []):
            self.admitted[item["lane"]] = item["attempt_id"]
        if command == "admit-retry":
            self.admitted[receipt["lane"]] = receipt["attempt_id"]
        return code, receipt

    def result(self, name: str, **document: Any) -> str:
        path = self.folder / f"{name}.json"
        path.write_text(json.dumps({"schema": "bounded-review/lane-result/v1", **document}))
        return str(path)

    def start(self, lane: str, revision: str) -> str:
        attempt = self.admitted[lane]
        code, out = self.on_attempt("mark-running", lane, attempt, revision)
        assert code == 0, out
        return attempt

    def on_attempt(self, command: str, lane: str, attempt: str, revision: str, *rest: str) -> Any:
        """``command`` for one attempt of ``lane``, echoing ``revision``."""
        options = ["--lane", lane, "--attempt-id", attempt, "--revision", revision]
        return self(command, *options, *rest)

    def record(self, lane: str, attempt: str, revision: str, **document: Any) -> tuple[int, Any]:
        path = self.result(f"{attempt}-{self.ops}", **document)
        return self.on_attempt("record-result", lane, attempt, revision, "--result", path)

    def fail(self, lane: str, attempt: str, revision: str, kind: str = "error") -> tuple[int, Any]:
        return self.on_attempt("record-failure", lane, attempt, revision, "--kind", kind)

    def answer(self, lane: str, revision: str, **document: Any) -> Any:
        code, out = self.record(lane, self.start(lane, revision), revision, **document)
        assert code == 0, out
        return out


def begin(
    run: Orchestrator,
    *extra: str,
    lanes: tuple[str, ...] = ("rev:correctness", "scout:scope:scout"),
) -> Any:
    """Round 1 of loop L on T1 with ``lanes`` (NAME:LENS[:ROLE])."""
    flags = [arg for lane in lanes for arg in ("--lane", lane)]
    code, out = run("begin", "--target-kind", "pr", "--revision", T1, *flags, *extra)
    assert code == 0, out
    return out


# What a revise names: a revise without a finding is not a lane result.
BUG = {
    "path": "a.py",
    "line": 1,
    "severity": "blocking",
    "category": "correctness",
    "failure_mode": "returns the wrong value",
    "evidence": "e",
    "quote": "x = 1",
    "remediation": "r",
}
STYLE = {
    "path": "a.py",
    "line": 1,
    "severity": "advisory",
    "category": "style",
    "failure_mode": "f",
    "evidence": "e",
    "quote": "x = 1",
    "remediation": "r",
}
