"""The prompt library: each lens prompt, assembled with a fixed packet and the contract, is
compared byte for byte with ``tests/golden/prompts/``. After an intended change of a prompt,
regenerate with ``UPDATE_GOLDEN=1 pytest tests/lanes/test_prompts.py`` and review the diff."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.prompt import (
    STANDARD_PROMPTS,
    builtin,
    contract,
    full_prompt,
    lens_prompt,
    system_prompt,
)
from pytest_boundedreview.models.plain import validate_data

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "prompts"
PACKET = b'{"schema": "bounded-review/packet/v1", "lane": {"name": "l"}, "diff": "+x = 2"}'
LANES = [
    *({"lens": lens} for lens in STANDARD_PROMPTS),
    {"lens": "facts", "role": "scout"},
    {"lens": "house-rules"},
]


def _name(spec: dict[str, str]) -> str:
    return "scout" if spec.get("role") == "scout" else spec["lens"]


@pytest.mark.parametrize("spec", LANES, ids=_name)
def test_each_lens_prompt_matches_its_golden_file(spec: dict[str, str], tmp_path: Path) -> None:
    lane = validate_data(LaneConfig, {"name": "l", "kind": "claude", **spec})
    prompt = full_prompt(PACKET, lens_prompt(lane, tmp_path))
    path = GOLDEN / f"{_name(spec)}.md"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(prompt, encoding="utf-8")
    assert prompt == path.read_text(encoding="utf-8")


def test_a_tool_less_lanes_system_prompt_matches_its_golden_file(tmp_path: Path) -> None:
    """What an ``openai`` lane hears besides the packet: the lens, then the contract for a
    reviewer with the packet alone."""
    lane = validate_data(LaneConfig, {"name": "l", "kind": "claude", "lens": "correctness"})
    prompt = system_prompt(lens_prompt(lane, tmp_path))
    path = GOLDEN / "openai-correctness.md"
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.write_text(prompt, encoding="utf-8")
    assert prompt == path.read_text(encoding="utf-8")


def test_each_reviewer_is_told_where_it_stands() -> None:
    """An agent works in its copy of the snapshot with its tools; a tool-less lane is told it
    has only the packet, how the diff numbers the new file's lines and how to quote them."""
    agents, packet_only = contract(tools=True), contract(tools=False)
    assert "{setting}" not in agents + packet_only
    assert "in your working directory" in agents
    assert "working directory" not in packet_only.replace("no working directory", "")
    assert "You have the packet and nothing else" in packet_only
    assert "@@ -a,b +c,d @@" in packet_only
    for text in (agents, packet_only):
        assert "`scope[].added_lines`" in text
        assert "without the diff's `+`, `-` or space marker" in text
        assert "numbered as in the new file" in text


def test_every_prompt_carries_the_rules_that_triage_enforces() -> None:
    contract = builtin("contract")
    for rule in ("`quote`", "`reproduce`", "`reconciliation`", "`advisory`", "scope", "`pass`"):
        assert rule in contract
    assert "never a blocking one" in contract  # a pass with a blocker is refused
    assert "counts as advisory" in contract  # an unchecked blocker does not block
    for lens in ("feasibility", "acceptance"):
        assert "`verification_adequate`" in builtin(lens)  # plans owe the three assurances
    assert "null" in builtin("scout")  # a scout casts no verdict


def test_a_custom_lens_is_named_in_its_prompt(tmp_path: Path) -> None:
    lane = validate_data(LaneConfig, {"name": "l", "lens": "house-rules", "kind": "codex"})
    assert lens_prompt(lane, tmp_path).startswith("# Lens: house-rules\n")
