"""Each agent's protocol, end to end on real repositories: the event as the agent sends it, the
answer as its schema reads it (``data/agents``), the same decisions for all five; and the
turn-start hook that lets a turn which changed nothing stop at once."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import jsonschema
import pytest
from agenthooks import AGENTS, BROKEN, FIXED, event, hook, make_repo, review, schema
from gitrepo import GitRepo

from pytest_boundedreview.agentgate import agentprotocol, agentsettings


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path / "repo")


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> GitRepo:
    """A harmless change with its clean review (one session shared by the agents)."""
    project = make_repo(tmp_path_factory.mktemp("reviewed") / "repo")
    project.write("app.py", FIXED + "\n# a harmless comment\n")
    review(project)
    return project


def test_every_agent_init_sets_up_is_one_the_hook_speaks_to() -> None:
    assert set(agentsettings.AGENTS) == set(agentprotocol.AGENTS) == set(AGENTS)


def test_copilot_running_the_claude_hooks_keeps_its_own_session(repo: GitRepo) -> None:
    # Copilot CLI runs .claude/settings.json's hooks too, with its camelCase event
    repo.write("app.py", BROKEN)
    copilot_event = json.dumps(event("copilot", repo.path, "cp1")).encode()
    said = hook(repo, "claude", raw=copilot_event)
    assert said.blocked
    assert (repo.path / ".bounded-review" / "agents" / "claude-cp1.json").is_file()


def test_the_events_used_here_are_the_agents_own() -> None:
    jsonschema.validate(
        event("codex", Path("/r"), "s"), schema("codex-0.171.0-stop.command.input.schema.json")
    )


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_no_review_blocks_then_lets_go_with_the_state(repo: GitRepo, agent: str) -> None:
    repo.write("app.py", BROKEN)
    with repo.untouched():
        first = hook(repo, agent)
        second = hook(repo, agent)  # stopped again with nothing done
    assert first.blocked
    assert f"Run `{sys.executable} -m pytest --bounded-review`" in first.instruction
    assert not second.blocked
    assert second.message.startswith("stop allowed: no progress since the last block")


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_a_clean_review_of_this_tree_lets_the_agent_stop_silently(
    reviewed: GitRepo, agent: str
) -> None:
    said = hook(reviewed, agent, session=f"clean-{agent}")
    assert not said.blocked
    assert said.message == ""
    assert said.err == ""


def test_cursor_finds_the_repository_in_its_workspace_roots(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", BROKEN)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert hook(repo, "cursor", cwd=elsewhere).blocked  # the event, not the hook's folder


def test_a_turn_the_user_aborted_in_cursor_is_not_held(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    aborted = event("cursor", repo.path, "s1") | {"status": "aborted"}
    said = hook(repo, "cursor", raw=json.dumps(aborted).encode())
    assert not said.blocked
    assert said.out.strip() == "{}"


def test_copilot_has_no_message_field_so_the_state_goes_to_stderr(repo: GitRepo) -> None:
    repo.write("app.py", BROKEN)
    hook(repo, "copilot")
    said = hook(repo, "copilot")
    assert said.parsed == {}  # a reason without a block is refused by the runtime
    assert "no progress since the last block" in said.err


@pytest.mark.slow
@pytest.mark.parametrize("agent", AGENTS)
def test_a_turn_that_changed_nothing_stops_at_once(repo: GitRepo, agent: str) -> None:
    repo.write("app.py", BROKEN)  # left unreviewed by an earlier turn (or by the user)
    with repo.untouched():
        started = hook(repo, agent, kind="start")
        said = hook(repo, agent)  # a question answered, no file written
    assert started.err == ""
    assert started.out.strip() in ("", "{}", '{"continue": true}')  # nothing added, nothing refused
    assert not said.blocked
    assert said.message == ""


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["claude", "cursor"])
def test_a_turn_that_wrote_code_is_held_though_it_started_dirty(repo: GitRepo, agent: str) -> None:
    repo.write("app.py", BROKEN)
    hook(repo, agent, kind="start")
    repo.write("app.py", BROKEN + "# touched in this turn\n")
    assert hook(repo, agent).blocked
    repo.write("app.py", BROKEN)  # and one that restores the turn's start is not new work
    assert not hook(repo, agent, session="s1").blocked


def test_an_agent_cannot_declare_its_own_turn_start(repo: GitRepo) -> None:
    # the start hook records what it computes; nothing in the event names a tree
    repo.write("app.py", BROKEN)
    forged = event("claude", repo.path, "s1", stop=False) | {"turn_tree": "0" * 40}
    hook(repo, "claude", kind="start", raw=json.dumps(forged).encode())
    repo.write("app.py", BROKEN + "# more\n")
    assert hook(repo, "claude").blocked


def test_the_start_hook_never_holds_up_a_prompt(repo: GitRepo) -> None:
    said = hook(repo, "claude", kind="start", raw=b"not json")
    assert said.out == ""
    assert "could not record the turn's start" in said.err
    codex = hook(repo, "codex", kind="start", raw=b"not json")
    assert codex.parsed == {}
