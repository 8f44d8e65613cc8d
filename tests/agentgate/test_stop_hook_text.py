"""What the stop hook says, end to end: every text it prints (the block's instruction, the
user's message, stderr) arrives escaped for each agent (no ESC, OSC 52, BEL, CR, no line that
starts a CI runner's command, from a finding, a test id, a reason, a path); each blocker is
listed once; "no progress" is keyed on what the hook decides on, not the report's bytes; and
edits in embedded repositories and submodules without a ``.gitmodules`` entry count as changes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from agenthooks import AGENTS, BROKEN, Said, hook, make_repo, review
from gitrepo import GitRepo

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

HOSTILE = "\x1b[31mred\x1b]52;c;cHduZWQ=\x07\rover\n::error::pwned ##[error]x\u202e"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo")


def inert(text: str) -> None:
    """No terminal control and no CI runner command can come out of ``text``."""
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", text), repr(text)
    assert not re.search(r"(?m)^\s*::", text), repr(text)
    assert "##[" not in text, repr(text)


def everything(said: Said) -> str:
    """Every text the hook printed, decoded as the agent reads it."""
    parsed = said.parsed
    return "\n".join([*[str(v) for v in parsed.values()], said.err])


def hostile_report(repo: GitRepo) -> None:
    """A real report of this tree, its reviewer-given text made hostile."""
    repo.write("app.py", BROKEN)
    review(repo)
    path = repo.path / ".bounded-review" / "report.json"
    data = json.loads(path.read_text())
    data["findings"]["blocking"].append(
        {"path": f"app{HOSTILE}.py", "line": 1, "failure_mode": HOSTILE, "remediation": HOSTILE}
    )
    for failure in data["tests"]["target_related"]:
        failure |= {"nodeid": f"test_app.py::test_{HOSTILE}", "reason": HOSTILE}
    data["gate"]["reasons"].append(f"a reason {HOSTILE}")
    data["next_action"] = HOSTILE
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("agent", AGENTS)
def test_reviewer_text_arrives_escaped_on_every_path(repo: GitRepo, agent: str) -> None:
    hostile_report(repo)
    blocked = hook(repo, agent)
    assert blocked.blocked
    assert "\\x1b]52;c;cHduZWQ=\\x07" in blocked.instruction  # shown, not sent
    let_go = hook(repo, agent)  # nothing done: let go with the state
    assert not let_go.blocked
    assert "no progress" in let_go.message
    for said in (blocked, let_go):
        inert(everything(said))


@pytest.mark.parametrize("agent", ["claude", "cursor"])
def test_an_error_naming_a_hostile_path_arrives_escaped(tmp_path: Path, agent: str) -> None:
    # a folder name may hold any byte but "/" (git cannot name a root holding a newline)
    repo = make_repo(tmp_path / f"r{HOSTILE.replace(chr(10), '')}")
    repo.write("app.py", BROKEN)
    state = repo.path / ".bounded-review" / "agents"
    state.mkdir(parents=True)
    (state / f"{agent}-s1.json").write_text("{torn")
    start = hook(repo, agent, kind="start")
    first, second = hook(repo, agent), hook(repo, agent)
    for said in (start, first, second):
        assert "could not" in everything(said)  # never silence
        inert(everything(said))


def test_each_blocker_is_listed_once(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    review(repo)
    lines = hook(repo, "claude").instruction.splitlines()
    listed = [line for line in lines if "test_app.py::test_add" in line and line.startswith("-")]
    assert listed == ["- test test_app.py::test_add: passes at base"]


def test_a_review_run_again_on_the_same_tree_is_no_progress(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    review(repo)
    assert hook(repo, "claude").blocked
    path = repo.path / ".bounded-review" / "report.json"
    before = path.read_bytes()
    review(repo)  # the same tree, the same blockers; a new timestamp (unless in one second)
    data = json.loads(path.read_text())
    data["generated_at"] = "2000-01-01T00:00:00+00:00"
    path.write_text(json.dumps(data, indent=2))
    assert path.read_bytes() != before
    said = hook(repo, "claude")
    assert not said.blocked
    assert said.message.startswith("stop allowed: no progress since the last block")


def test_a_fix_that_changes_the_blockers_is_progress(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    assert hook(repo, "claude").blocked  # no review
    review(repo)
    said = hook(repo, "claude")  # the same tree, now with its blockers: progress
    assert said.blocked
    assert "not clean" in said.instruction


def nested(path: Path) -> GitRepo:
    inner = GitRepo.init(path)
    inner.commit({"lib.py": "X = 1\n"}, "lib")
    return inner


def test_an_edit_in_an_embedded_repository_is_a_change(repo: GitRepo) -> None:
    inner = nested(repo.path / "vendor")  # no .gitmodules entry: the tree records its HEAD
    hook(repo, "claude", kind="start")
    assert not hook(repo, "claude").blocked  # untouched: nothing to review
    inner.write("lib.py", "X = 2\n")
    said = hook(repo, "claude")
    assert said.blocked
    assert "vendor (embedded repository with uncommitted files)" in said.instruction


def test_an_edit_in_a_submodule_without_gitmodules_is_a_change(repo: GitRepo) -> None:
    inner = nested(repo.path / "vendor")
    repo.git("add", "vendor")  # a gitlink, and no .gitmodules
    repo.commit(message="vendor")
    hook(repo, "claude", kind="start")
    assert not hook(repo, "claude").blocked
    inner.write("lib.py", "X = 3\n")
    said = hook(repo, "claude", session="s2")
    assert said.blocked
    assert "vendor (submodule with uncommitted files)" in said.instruction
