"""Model routing for command lanes against a real models command."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from pytest_boundedreview.core.settings.tables import LaneConfig, RoutingConfig
from pytest_boundedreview.lanes.routing import UNVERIFIED_NOTE, parse_listing, route, tier_models
from pytest_boundedreview.models.plain import validate_data


def lister(tmp_path: Path, output: str, code: int = 0) -> list[str]:
    script = tmp_path / "models.py"
    script.write_text(f"import sys\nsys.stdout.write({output!r})\nsys.exit({code})\n")
    return [sys.executable, str(script)]


def lane(**extra: object) -> LaneConfig:
    return validate_data(
        LaneConfig,
        {"name": "r", "lens": "correctness", "command": ["reviewer"], "model": "m-large", **extra},
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('["a", "b"]', {"a": set(), "b": set()}),
        ('[{"id": "a", "reasoning": ["low", "high"]}]', {"a": {"low", "high"}}),
        ("a\nllama3:70b\n\n", {"a": set(), "llama3:70b": set()}),
        ('{"data": [{"id": "a"}, {"id": "b", "reasoning": ["low"]}]}', {"a": set(), "b": {"low"}}),
        ('[{"id": "a", "reasoning": 5}, {"id": "b", "reasoning": "high"}, 7]', {}),
    ],
)
def test_listings(text: str, expected: dict[str, set[str]]) -> None:
    assert parse_listing(text) == expected


def test_listed_model_and_fallback(tmp_path: Path) -> None:
    listing = lister(tmp_path, json.dumps(["m-small", "m-large"]))
    assert route(lane(models_command=listing), RoutingConfig(), tmp_path).model == "m-large"
    gone = lane(model="m-gone", fallback_models=["m-nope", "m-small"])
    routed = route(gone, RoutingConfig(models_command=listing), tmp_path)
    assert (routed.model, routed.problem) == ("m-small", None)


def test_nothing_listed_and_unoffered_reasoning_are_problems(tmp_path: Path) -> None:
    listing = lister(tmp_path, json.dumps([{"id": "m-large", "reasoning": ["low"]}, "m-small"]))
    routed = route(lane(model="m-gone"), RoutingConfig(models_command=listing), tmp_path)
    assert routed.model is None
    assert routed.problem == "model not available: m-gone (listed: m-large, m-small)"
    routed = route(lane(reasoning="high"), RoutingConfig(models_command=listing), tmp_path)
    assert routed.problem == "reasoning 'high' not offered by m-large (low)"


def test_a_broken_models_command(tmp_path: Path) -> None:
    routed = route(lane(models_command=lister(tmp_path, "", 3)), RoutingConfig(), tmp_path)
    assert routed.problem == "the model list could not be read: exit 3"


def test_without_a_list_the_model_passes_unchecked_and_says_so(tmp_path: Path) -> None:
    routed = route(lane(), RoutingConfig(), tmp_path)
    assert (routed.model, routed.note) == ("m-large", UNVERIFIED_NOTE)


def test_routing_tiers() -> None:
    routing = RoutingConfig(routine=["small"], complex=["large", "small"], arbitration=["best"])
    assert list(tier_models(routing, "complex")) == ["large", "small"]


def test_a_lane_without_a_model_takes_its_routing_tier(tmp_path: Path) -> None:
    routing = RoutingConfig(
        routine=["m-gone", "m-small"],
        complex=["m-large"],
        models_command=lister(tmp_path, "m-small\nm-large\n"),
    )
    bare = lane(model=None)
    assert route(bare, routing, tmp_path, tier="routine").model == "m-small"
    assert route(bare, routing, tmp_path, tier="complex").model == "m-large"
    assert route(bare, RoutingConfig(), tmp_path).note == (
        "no model configured: the reviewer picks its own"
    )
