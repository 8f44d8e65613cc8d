"""What a review ran under against what the rules of its repository ask: each option of the
invocation that made it less (lanes switched off, a lower risk tier, repair rounds), so that
the commit and push gate and the agent's stop hook accept only the whole review. Asked only
where lanes are configured: without lanes, these options change nothing a ``yes`` stands for.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from ..change.freeze import Target
from ..core.ceilings import Tier
from ..core.settings.config import Settings
from ..models.report import Reduction
from .build import assess_risk

OPTIONS = {
    "no_lanes": "--bounded-review-no-lanes",
    "risk": "--bounded-review-risk",
    "mode": "--bounded-review-mode",
}
_TIERS = ("economy", "standard", "strict")


def reductions(
    configured: Mapping[str, object], settings: Settings, target: Target, tier: Tier
) -> list[Reduction]:
    """The options behind ``settings`` that made the review (at risk ``tier``) less than the
    rules ask: ``configured`` holds the value the rules give each option that was given."""
    found = []
    if configured.get("no_lanes") is False and settings.no_lanes:
        why = "no reviewer lane ran: the deterministic gate only"
        found.append(_reduction("no_lanes", "false", "true", why))
    wanted_risk = configured.get("risk")
    if isinstance(wanted_risk, str) and wanted_risk != settings.risk:
        wanted = wanted_risk
        if wanted == "auto":
            wanted = assess_risk(dataclasses.replace(settings, risk="auto"), target)[0]
        if _TIERS.index(tier) < _TIERS.index(wanted):
            why = f"the {tier} tier selects fewer lanes than the {wanted} tier the rules give"
            found.append(
                _reduction("risk", f"{wanted_risk} ({wanted})", f"{settings.risk} ({tier})", why)
            )
    if configured.get("mode") == "review-only" and settings.mode == "review-and-fix":
        why = "repair rounds re-review only what changed, keeping the lanes that passed before"
        found.append(_reduction("mode", "review-only", "review-and-fix", why))
    return found


def _reduction(key: str, configured: str, used: str, why: str) -> Reduction:
    return Reduction(key=key, option=OPTIONS[key], configured=configured, used=used, why=why)
