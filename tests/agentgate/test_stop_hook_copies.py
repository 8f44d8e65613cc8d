"""Two copies of the stop hook on one stop: Claude Code runs its plugin's copy and the one
``init --agent claude`` wrote in the project settings, each with the same event on stdin, one
after the other. The second repeats the first's answer to the same event bytes on the same
tree, uncounted, once, shortly after; anything else is decided afresh, and nothing the agent
writes in a settings file silences either copy. Run with bytecode written and not."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import warmstart
from agenthooks import BROKEN, FIXED, event, hook, make_repo, review
from gitrepo import GitRepo, clean_env

pytestmark = pytest.mark.slow  # every test here takes seconds (the fast loop leaves them out)

PLUGIN = {"CLAUDE_PLUGIN_ROOT": "/plugins/bounded-review"}
COMMAND = "bounded-review hook stop --agent claude"


@pytest.fixture
def repo(tmp_path: Path, bytecode: bool) -> GitRepo:
    project = make_repo(tmp_path / "repo")
    warmstart.run(
        [sys.executable, "-m", "pytest_boundedreview", "init", "--agent", "claude", "--write"],
        cwd=project.path,
        env=clean_env(),
        capture_output=True,
        check=True,
    )
    project.commit(message="the project's hooks")
    return project


def blocks(repo: GitRepo) -> int:
    """The blocks counted in the current task of session ``s1``."""
    state = json.loads((repo.path / ".bounded-review/agents/claude-s1.json").read_text())
    return int(state["blocks"])


def both(repo: GitRepo, data: bytes) -> tuple[object, object]:
    """One stop as Claude Code runs it with both copies installed: the plugin's, then the
    project's, the same event bytes on stdin."""
    plugin = hook(repo, "claude", raw=data, env=PLUGIN)
    project = hook(repo, "claude", raw=data)
    return plugin, project


def stop_event(repo: GitRepo, active: bool = False) -> bytes:
    return json.dumps(event("claude", repo.path, "s1") | {"stop_hook_active": active}).encode()


def test_both_copies_give_one_stop_the_same_answer_counted_once(repo: GitRepo) -> None:
    hook(repo, "claude", kind="start", env=PLUGIN)
    hook(repo, "claude", kind="start")
    repo.write("app.py", BROKEN)
    plugin, project = both(repo, stop_event(repo))
    assert plugin == project  # the same block, word for word
    assert project.blocked
    assert "No review of this tree" in project.instruction
    assert blocks(repo) == 1
    review(repo)
    plugin, project = both(repo, stop_event(repo, active=True))
    assert plugin == project
    assert project.blocked
    assert "not clean" in project.instruction
    assert blocks(repo) == 2
    repo.write("app.py", FIXED + "# fixed\n")
    review(repo)
    plugin, project = both(repo, stop_event(repo, active=True))
    assert (plugin.out, project.out) == ("", "")  # clean: both let go, silently


def test_the_same_stop_asked_later_or_on_another_tree_is_decided_afresh(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    data = stop_event(repo)
    assert hook(repo, "claude", raw=data, env=PLUGIN).blocked
    repo.write("app.py", BROKEN + "# another tree\n")
    assert hook(repo, "claude", raw=data).blocked  # a new tree: a new block, counted
    assert blocks(repo) == 2
    state = repo.path / ".bounded-review/agents/claude-s1.json"
    kept = json.loads(state.read_text())
    state.write_text(json.dumps(kept | {"heard_at": kept["heard_at"] - 600}))
    later = hook(repo, "claude", raw=data, env=PLUGIN)  # ten minutes later: no repeat
    assert not later.blocked
    assert later.message.startswith("stop allowed: no progress since the last block")


def test_a_repeat_is_given_once(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    data = stop_event(repo)
    plugin, project = both(repo, data)
    assert plugin == project
    third = hook(repo, "claude", raw=data, env=PLUGIN)  # decided: no progress
    assert not third.blocked
    assert blocks(repo) == 0  # that allowed stop ended the task


def test_a_stop_the_agent_asks_on_a_clean_tree_lets_no_broken_tree_go(repo: GitRepo) -> None:
    hook(repo, "claude", kind="start")
    data = stop_event(repo)
    crafted = hook(repo, "claude", raw=data)  # run by the agent itself: nothing changed yet
    assert not crafted.blocked
    repo.write("app.py", BROKEN)
    plugin, project = both(repo, data)  # the real stop, with the very same bytes
    assert plugin == project
    assert project.blocked


@pytest.mark.parametrize(
    "settings",
    [
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": COMMAND}]}]}}),
        json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "prompt", "command": COMMAND}]}]}}),
        f'{{"n": NaN, "hooks": {{"Stop": [{{"hooks": [{{"command": "{COMMAND}"}}]}}]}}}}',
    ],
    ids=["a project hook written mid-session", "another type of handler", "a rejected file"],
)
def test_a_settings_file_naming_the_hook_silences_no_copy(repo: GitRepo, settings: str) -> None:
    repo.write(".claude/settings.local.json", settings)
    repo.write("app.py", BROKEN)
    assert hook(repo, "claude", env=PLUGIN).blocked


def test_the_plugin_alone_holds_the_agent(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "alone")
    repo.write("app.py", BROKEN)
    assert hook(repo, "claude", env=PLUGIN).blocked  # no project hook: the plugin's answers
    repo.write("app.py", FIXED + "# harmless\n")
    review(repo)
    assert hook(repo, "claude", env=PLUGIN).out == ""
