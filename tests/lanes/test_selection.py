from __future__ import annotations

from pathlib import Path

import pytest

from pytest_boundedreview.core.errors import ConfigError
from pytest_boundedreview.core.settings.config import load_settings
from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.selection import select, size_of
from pytest_boundedreview.models.plain import validate_data


def lane(
    name: str, lens: str, role: str = "verdict", targets: list[str] | None = None
) -> LaneConfig:
    data: dict[str, object] = {"name": name, "lens": lens, "role": role, "command": ["x"]}
    if targets is not None:
        data["targets"] = targets
    return validate_data(LaneConfig, data)


LANES = [
    lane("sec", "security"),
    lane("cor", "correctness"),
    lane("cor2", "correctness"),
    lane("arch", "architecture"),
    lane("perf", "performance"),
    lane("feas", "feasibility", targets=["plan"]),
    lane("acc", "acceptance", targets=["plan"]),
]


@pytest.mark.parametrize(
    ("kind", "lines", "expected"),
    [
        ("pr", 10, "small"),
        ("pr", 50, "small"),
        ("pr", 51, "normal"),
        ("local-diff", 401, "large"),
        ("plan", 1, "plan"),
    ],
)
def test_size_classes(kind: str, lines: int, expected: str) -> None:
    assert size_of(kind, lines, small_lines=50, large_lines=400) == expected


def names(chosen: list[LaneConfig]) -> list[str]:
    return [c.name for c in chosen]


def test_small_gets_one_correctness_lane() -> None:
    chosen, skipped = select(LANES, "pr", "small", security_relevant=True, max_lanes=3)
    assert names(chosen) == ["cor"]
    reasons = {ln.name: why for ln, why in skipped}
    assert reasons["cor2"] == "lens 'correctness' is already covered by lane 'cor'"
    assert reasons["sec"] == "the security lens is not needed: a small target"
    assert reasons["perf"] == "a small target gets one correctness lane"
    assert reasons["feas"] == "configured for plan targets, not pr"


def test_normal_adds_security_only_when_relevant() -> None:
    chosen, _ = select(LANES, "pr", "normal", security_relevant=True, max_lanes=3)
    assert names(chosen) == ["cor", "sec", "perf"]
    chosen, skipped = select(LANES, "pr", "normal", security_relevant=False, max_lanes=3)
    assert names(chosen) == ["cor", "perf"]
    assert ("sec", "the security lens is not needed: not security-relevant") in [
        (ln.name, why) for ln, why in skipped
    ]


def test_large_adds_architecture_and_the_ceiling_caps() -> None:
    chosen, skipped = select(LANES, "pr", "large", security_relevant=True, max_lanes=3)
    assert names(chosen) == ["cor", "sec", "arch"]
    assert ("perf", "over the lane ceiling of 3") in [(ln.name, why) for ln, why in skipped]
    chosen, _ = select(LANES, "pr", "large", security_relevant=True, max_lanes=1)
    assert names(chosen) == ["cor"]


def test_plans_get_feasibility_and_acceptance_and_scouts_go_first() -> None:
    lanes = [*LANES, lane("scout", "scope", role="scout", targets=["plan", "pr"])]
    chosen, _ = select(lanes, "plan", "plan", security_relevant=False, max_lanes=3)
    assert names(chosen) == ["scout", "feas", "acc"]
    chosen, _ = select(lanes, "pr", "normal", security_relevant=False, max_lanes=2)
    assert names(chosen) == ["scout", "cor"]


def test_every_configured_lane_is_either_chosen_or_skipped() -> None:
    for size in ("small", "normal", "large", "plan"):
        chosen, skipped = select(LANES, "pr", size, security_relevant=True, max_lanes=2)  # type: ignore[arg-type]
        assert sorted(names(chosen) + [ln.name for ln, _ in skipped]) == sorted(names(LANES))
        assert len({c.lens for c in chosen}) == len(chosen)


def test_thresholds_are_configurable_and_checked(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.bounded-review.selection]\nsmall_lines = 10\nlarge_lines = 100\n"
    )
    settings, _ = load_settings(tmp_path, tmp_path)
    assert (settings.selection.small_lines, settings.selection.large_lines) == (10, 100)
    (tmp_path / "pyproject.toml").write_text(
        "[tool.bounded-review.selection]\nsmall_lines = 100\nlarge_lines = 10\n"
    )
    with pytest.raises(ConfigError, match=r"large_lines \(10\) must be above small_lines"):
        load_settings(tmp_path, tmp_path)


def test_a_scout_never_takes_the_last_verdict_slot() -> None:
    lanes = [lane("scout", "scope", role="scout"), lane("cor", "correctness")]
    chosen, skipped = select(lanes, "pr", "small", security_relevant=False, max_lanes=1)
    assert names(chosen) == ["cor"]
    assert [(ln.name, why) for ln, why in skipped] == [
        ("scout", "the lane ceiling of 1 leaves no room for a scout")
    ]
    chosen, _ = select(lanes, "pr", "small", security_relevant=False, max_lanes=2)
    assert names(chosen) == ["scout", "cor"]
