"""The per-hook trust ``init --agent codex`` keeps in the user's Codex configuration, without
Codex: the hash for known entries (checked against Codex 0.171.0's ``hooks/list``; the real
loader is asked in ``test_agent_setup_agents.py`` where ``codex`` is on PATH), and the edit of
the configuration file, which keeps every other byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from gitrepo import GitRepo
from test_agent_setup import init

from pytest_boundedreview.agentgate import codextrust
from pytest_boundedreview.core.errors import UsageError

STOP = {"type": "command", "command": "bounded-review hook stop --agent codex", "timeout": 30}
# What `codex app-server` `hooks/list` reported as `currentHash` for these entries.
STOP_HASH = "sha256:40a242903a5ae920976ff0b120ad722a65a6862253c4f1b228eace7f139e1b0c"
START = {**STOP, "command": "bounded-review hook start --agent codex"}
START_HASH = "sha256:75a4cd98ea5282c2103a079205cff54c34c2a3105da6ac91459e5132459f495f"


def test_the_hash_is_codexs() -> None:
    assert codextrust.hook_hash("Stop", STOP) == STOP_HASH
    assert codextrust.hook_hash("UserPromptSubmit", START) == START_HASH
    assert codextrust.hook_hash("Stop", {**STOP, "timeout": 31}) != STOP_HASH


def test_the_configuration_is_edited_in_place(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    key = "/r/.codex/hooks.json:stop:0:0"
    other = '# mine\nmodel = "x"\n\n[hooks.state."/r/.codex/hooks.json:stop:0:0"]\n'
    path.write_text(other + 'trusted_hash = "sha256:old"\nenabled = true\n[tui]\nx = 1\n')
    _, after = codextrust.trust_change(path, {key: STOP_HASH})
    assert after.decode() == other + f'trusted_hash = "{STOP_HASH}"\nenabled = true\n[tui]\nx = 1\n'
    path.write_bytes(after)
    assert codextrust.trust_change(path, {key: STOP_HASH}) == (after, after)
    path.write_text("model = \n")
    with pytest.raises(UsageError, match=r"(?s)not valid TOML .*trusted_hash = "):
        codextrust.trust_change(path, {key: STOP_HASH})


def test_without_write_nothing_is_written_outside_the_repository(repo: GitRepo) -> None:
    config = repo.path.parent / ".codex" / "config.toml"
    shown = init(repo, "--agent", "codex")
    assert shown.returncode == 0, shown.stderr
    assert not config.exists()
    assert f"+++ b/{config}" in shown.stdout
    assert f'+trusted_hash = "{STOP_HASH}"' in shown.stdout
    assert "does not trust" in shown.stdout  # the project trust is printed, never written
