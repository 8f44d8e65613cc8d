"""The Claude Code plugin in this repository (`.claude-plugin/marketplace.json` and
`claude-plugin/bounded-review/`): it runs the same hooks `bounded-review init --agent claude`
writes, ships the packaged skill unchanged, carries the package's version, and passes
`claude plugin validate --strict` with the Claude Code pinned in tests/agentclis."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from agentclis.realclis import agent_cli

from pytest_boundedreview import __version__
from pytest_boundedreview.agentgate.agentsettings import AGENTS
from pytest_boundedreview.agentgate.agentsetup import skill_text

ROOT = Path(__file__).resolve().parents[1]
MARKETPLACE = ROOT / ".claude-plugin" / "marketplace.json"
PLUGIN = ROOT / "claude-plugin" / "bounded-review"


def _json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_plugin_skill_is_the_packaged_skill() -> None:
    assert (PLUGIN / "skills" / "bounded-review" / "SKILL.md").read_bytes() == skill_text()


def test_the_plugin_hooks_are_the_ones_init_writes_for_claude_code() -> None:
    hooks = _json(PLUGIN / "hooks" / "hooks.json")
    assert set(hooks) == {"description", "hooks"}
    assert hooks["hooks"] == AGENTS["claude"].document(list(AGENTS["claude"].entries()))["hooks"]
    commands = [
        h["command"] for groups in hooks["hooks"].values() for g in groups for h in g["hooks"]
    ]
    assert sorted(commands) == [
        "bounded-review hook start --agent claude",
        "bounded-review hook stop --agent claude",
    ]


def test_the_marketplace_lists_the_plugin_at_the_package_version() -> None:
    market = _json(MARKETPLACE)
    manifest = _json(PLUGIN / ".claude-plugin" / "plugin.json")
    (entry,) = market["plugins"]
    assert entry["name"] == manifest["name"] == "bounded-review"
    assert (ROOT / entry["source"]).resolve() == PLUGIN
    assert entry["version"] == manifest["version"] == market["metadata"]["version"] == __version__
    assert entry["description"] == manifest["description"]


@pytest.mark.slow
@pytest.mark.parametrize("target", [MARKETPLACE, PLUGIN], ids=["marketplace", "plugin"])
def test_claude_code_validates_it_strictly(target: Path, tmp_path: Path) -> None:
    claude = agent_cli("claude")
    if claude is None:
        pytest.skip("claude is not pinned in tests/agentclis")
    done = subprocess.run(
        [claude, "plugin", "validate", "--strict", str(target)],
        env={"PATH": str(Path(claude).parent) + ":/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout
