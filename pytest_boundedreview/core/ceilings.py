"""The bounds of every review: each risk tier's ceilings (CONTRACT §6), and the hard ones that
configuration may lower but never raise."""

from __future__ import annotations

from typing import Literal, NamedTuple

Tier = Literal["economy", "standard", "strict"]


class Ceilings(NamedTuple):
    max_lanes: int
    max_concurrent: int
    max_repair_loops: int


TIER_CEILINGS: dict[Tier, Ceilings] = {
    "economy": Ceilings(max_lanes=1, max_concurrent=1, max_repair_loops=1),
    "standard": Ceilings(max_lanes=2, max_concurrent=2, max_repair_loops=2),
    "strict": Ceilings(max_lanes=3, max_concurrent=2, max_repair_loops=3),
}
# The highest value any tier allows: configuration may lower a ceiling, never raise it.
HARD_CEILINGS = Ceilings(*(max(values) for values in zip(*TIER_CEILINGS.values(), strict=True)))
MAX_RETRIES = 3


def effective_budget(
    tier: Tier,
    mode: Literal["review-only", "review-and-fix"],
    lowered: Ceilings | None = None,
) -> Ceilings:
    """The tier's ceilings, lowered by configuration; ``review-only`` allows no repair loop."""
    ceilings = TIER_CEILINGS[tier]
    if lowered is not None:
        ceilings = Ceilings(*(min(a, b) for a, b in zip(ceilings, lowered, strict=True)))
    if mode == "review-only":
        ceilings = ceilings._replace(max_repair_loops=0)
    return ceilings
