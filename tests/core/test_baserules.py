"""The table of which value holds: for every key that can relax the gate, the relaxing value
keeps the base's and is proposed; the tightening one applies at once."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pytest_boundedreview.core.settings.baserules import BASE_ONLY, NOT_RULED, RULES, govern
from pytest_boundedreview.core.settings.config import Settings
from pytest_boundedreview.core.settings.tables import (
    CheckConfig,
    RiskRules,
    ScanConfig,
    SelectionConfig,
)
from pytest_boundedreview.models.plain import validate_data

CHECK = {"name": "lint", "command": ["ruff"]}

# key: (base value, relaxing value, tightening value)
CASES: dict[str, tuple[Any, Any, Any]] = {
    "max_lanes": (3, 1, None),
    "max_concurrent": (2, 1, None),
    "max_repair_loops": (1, 3, 0),
    "max_retries": (1, 2, 0),
    "reruns": (1, 3, 0),
    "require_reproduction": (False, True, False),
    "require_confidence": (False, True, False),
    "min_confidence": (0.5, 0.9, 0.2),
    "require_assurances": (True, False, True),
    "protected_categories": (["style"], [], ["style", "naming"]),
    "allow_partial": (False, True, False),
    "suite": (["-m", "not slow"], ["-m", "not slow and not db"], []),
    "waivers_file": ("a.toml", "b.toml", "a.toml"),
    "waivers_from": ("base", "head", "base"),
    "no_lanes": (False, True, False),
    "risk": ("standard", "economy", "strict"),
    "risk_rules": ({}, {"trivial_lines": 50}, {}),
    "selection": ({}, {"settle_trivial": True}, {}),
    "blocked_plugins": (["a"], ["a", "b"], []),
    "scans": ({"secrets": "blocking"}, {"secrets": "advisory"}, {"debugger": "blocking"}),
    "checks": ([CHECK], [{**CHECK, "required": False}], [CHECK, {**CHECK, "name": "new"}]),
    "lanes": (
        [{"name": "r", "lens": "correctness", "command": ["r"]}],
        [],
        [
            {"name": "r", "lens": "correctness", "command": ["r"]},
            {"name": "s", "lens": "x", "command": ["s"]},
        ],
    ),
    "mode": ("review-only", "review-and-fix", "review-only"),
    "max_base_reruns": (50, 100, 10),
    "instructions": (["AGENTS.md"], [], ["AGENTS.md"]),
    "routing": ({}, {"routine": ["small-model"]}, {}),
    "loop": ({}, {"systemic_share": 0.9}, {}),
    # chosen by the base whatever the change says: the "tightening" value is the base's own
    "base": ("main", "HEAD", "main"),
    "target": ("pr", "staged", "pr"),
    "state_dir": (".bounded-review", ".elsewhere", ".bounded-review"),
    "shard": (False, True, False),
    "report": (None, "out.json", None),
    "markdown": (None, "out.md", None),
    "sarif": (None, "out.sarif", None),
    "reset": (False, True, False),
}


def settings(**values: Any) -> Settings:
    return validate_data(Settings, values)


def test_every_rule_has_a_case() -> None:
    assert set(RULES) == set(CASES)


def test_every_key_of_the_table_has_a_decision() -> None:
    """A new key fails here until it is given a rule, or a reason it needs none."""
    keys = {field.name for field in dataclasses.fields(Settings)}
    assert set(RULES) | set(NOT_RULED) == keys
    assert not set(RULES) & set(NOT_RULED)
    assert set(BASE_ONLY) <= set(RULES)


@pytest.mark.parametrize("key", sorted(CASES))
def test_a_relaxing_value_keeps_the_base_and_is_proposed(key: str) -> None:
    base_value, relaxed, _ = CASES[key]
    base, head = settings(**{key: base_value}), settings(**{key: relaxed})
    governed = govern(base, head)
    assert getattr(governed.settings, key) == getattr(base, key)
    assert [p.key.partition(".")[0] for p in governed.proposals] == [key]


@pytest.mark.parametrize("key", sorted(CASES))
def test_a_tightening_value_applies_at_once(key: str) -> None:
    base_value, _, tighter = CASES[key]
    base, head = settings(**{key: base_value}), settings(**{key: tighter})
    governed = govern(base, head)
    assert getattr(governed.settings, key) == getattr(head, key)
    assert governed.proposals == []


def test_a_check_changed_and_made_required_keeps_its_base_command_required() -> None:
    base = settings(checks=[{**CHECK, "required": False}])
    head = settings(checks=[{"name": "lint", "command": ["true"], "required": True}])
    governed = govern(base, head)
    assert governed.settings.checks == [CheckConfig(name="lint", command=["ruff"], required=True)]
    assert [p.key for p in governed.proposals] == ["checks.lint"]


def test_scans_are_held_one_by_one() -> None:
    base = settings()
    head = settings(scans={"secrets": "off", "debugger": "blocking"})
    governed = govern(base, head)
    assert governed.settings.scans == ScanConfig(secrets="blocking", debugger="blocking")
    assert [p.key for p in governed.proposals] == ["scans.secrets"]


def test_unordered_tables_hold_whole() -> None:
    governed = govern(settings(), settings(risk_rules={"trivial_lines": 0}))
    assert governed.settings.risk_rules == RiskRules()
    assert governed.settings.selection == SelectionConfig()


def test_keys_outside_the_table_take_the_change_s_value() -> None:
    governed = govern(settings(), settings(base_timeout=5, full=True))
    assert (governed.settings.base_timeout, governed.settings.full) == (5, True)
    assert governed.proposals == []
