"""Which of two configurations holds, key by key: a change may tighten the rules of its own
review at once, but a change that relaxes them is reviewed under the base's value, and what it
proposes applies after merge.

:data:`RULES` is the one table: each key that can relax the gate, and how its two values are
compared; the keys that choose where the session writes and how it exits are the base's
whatever the change says (:data:`BASE_ONLY`). Every other key of the table is in
:data:`NOT_RULED`, with the reason it needs no rule. Ceilings of lane attempts
(``max_repair_loops``, ``max_retries``) relax when raised: each round or retry is one more draw
at a clean verdict, while a lower ceiling only stops the review sooner, which never makes the
gate ``yes``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

from ...models.record import record
from ..ceilings import HARD_CEILINGS
from .config import Settings


@record(frozen=True)
class Proposal:
    """A relaxing value the change gives ``key``: kept out of this review, applied after merge."""

    key: str  # "allow_partial", "scans.secrets", "checks.lint" ...
    base: str  # the value that holds, as shown
    head: str  # the value the change proposes
    why: str  # how it would relax the gate


Rule = Callable[[str, Any, Any], tuple[Any, list[Proposal]]]


def show(value: object) -> str:
    """A value as TOML would spell it, for people."""
    if value is None:
        return "unset"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    return json.dumps(value, sort_keys=True).replace(": ", " = ") if value != "" else '""'


def _kept(key: str, base: object, head: object, why: str) -> tuple[Any, list[Proposal]]:
    return base, [Proposal(key, show(base), show(head), why)]


def _true_relaxes(why: str) -> Rule:
    def rule(key: str, base: bool, head: bool) -> tuple[Any, list[Proposal]]:
        return _kept(key, base, head, why) if head and not base else (head, [])

    return rule


def _false_relaxes(why: str) -> Rule:
    def rule(key: str, base: bool, head: bool) -> tuple[Any, list[Proposal]]:
        return _kept(key, base, head, why) if base and not head else (head, [])

    return rule


def _ordered(strictness: Callable[[Any], float], why: str) -> Rule:
    """A value ordered by how strict it is: a less strict one keeps the base's."""

    def rule(key: str, base: object, head: object) -> tuple[Any, list[Proposal]]:
        if strictness(head) < strictness(base):
            return _kept(key, base, head, why)
        return head, []

    return rule


def _unchanged(why: str) -> Rule:
    """A value with no order: any change keeps the base's."""

    def rule(key: str, base: object, head: object) -> tuple[Any, list[Proposal]]:
        return _kept(key, base, head, why) if head != base else (head, [])

    return rule


def _ceiling(name: str) -> Callable[[int | None], float]:
    hard = HARD_CEILINGS._asdict()[name]
    return lambda value: hard if value is None else value


_LEVELS = {"off": 0, "advisory": 1, "blocking": 2}


def _scans(key: str, base: Any, head: Any) -> tuple[Any, list[Proposal]]:
    """Per scan: off < advisory < blocking; a lower level keeps the base's."""
    held: dict[str, str] = {}
    proposals = []
    for field in dataclasses.fields(base):
        was, now = getattr(base, field.name), getattr(head, field.name)
        if _LEVELS[now] < _LEVELS[was]:
            held[field.name] = was
            why = f"lowers the `{field.name}` scan from {was} to {now}"
            proposals.append(Proposal(f"{key}.{field.name}", show(was), show(now), why))
    return dataclasses.replace(head, **held), proposals


def _named(key: str, base: Sequence[Any], head: Sequence[Any]) -> tuple[Any, list[Proposal]]:
    """Checks or lanes by name: one the base defines keeps the base's definition when the
    change removes or alters it (a check may only become required); a new one applies."""
    theirs = {entry.name: entry for entry in head}
    kept: list[Any] = []
    proposals = []
    for entry in base:
        now = theirs.get(entry.name)
        if now is None:
            kept.append(entry)
            why = f"removes the {key[:-1]} {entry.name!r}"
            proposals.append(Proposal(f"{key}.{entry.name}", show(entry), "unset", why))
            continue
        holds = entry
        if getattr(now, "required", False) and not getattr(entry, "required", True):
            holds = dataclasses.replace(entry, required=True)  # made required: tightening
        kept.append(now if now == holds else holds)
        if now != holds:
            relaxed = getattr(entry, "required", False) and not getattr(now, "required", True)
            why = f"makes the check {entry.name!r} not required" if relaxed else ""
            why = why or f"changes the {key[:-1]} {entry.name!r}"
            proposals.append(Proposal(f"{key}.{entry.name}", show(entry), show(now), why))
    known = {entry.name for entry in base}
    return [*kept, *(entry for entry in head if entry.name not in known)], proposals


def _more(key: str, base: list[str], head: list[str]) -> tuple[Any, list[Proposal]]:
    """A list that only tightens as it grows: one the change shortens keeps the base's entries."""
    gone = [value for value in base if value not in head]
    if not gone:
        return head, []
    why = f"drops {', '.join(gone)}"
    return [*base, *(v for v in head if v not in base)], [
        Proposal(key, show(base), show(head), why)
    ]


def _fewer(key: str, base: list[str], head: list[str]) -> tuple[Any, list[Proposal]]:
    """A list that only relaxes as it grows: entries the change adds wait for the merge."""
    added = [value for value in head if value not in base]
    if not added:
        return head, []
    why = f"adds {', '.join(added)}"
    return [v for v in head if v in base], [Proposal(key, show(base), show(head), why)]


def _suite(key: str, base: list[str], head: list[str]) -> tuple[Any, list[Proposal]]:
    """The declared suite: removing it runs everything (tightening); any other change may
    narrow it and keeps the base's."""
    if head == base or not head:
        return head, []
    return _kept(key, base, head, "changes the declared suite, which may narrow it")


def _risk(key: str, base: str, head: str) -> tuple[Any, list[Proposal]]:
    """The risk tier: only ``strict`` is sure to be no lower (``auto`` may assess any)."""
    if head == "strict":
        return head, []
    return _kept(key, base, head, "may lower the risk tier, and the lanes it runs")


RULES: dict[str, Rule] = {
    "scans": _scans,
    "checks": _named,
    "lanes": _named,
    "max_lanes": _ordered(_ceiling("max_lanes"), "lowers the lanes per round"),
    "max_concurrent": _ordered(_ceiling("max_concurrent"), "lowers the lanes running at once"),
    "max_repair_loops": _ordered(
        lambda v: -_ceiling("max_repair_loops")(v), "raises the repair rounds of a loop"
    ),
    "max_retries": _ordered(lambda v: -v, "raises the retries of a failed lane attempt"),
    "reruns": _ordered(lambda v: -v, "raises the re-runs that call a failure flaky"),
    "require_reproduction": _true_relaxes("lets unreproduced blockers be advisory"),
    "require_confidence": _true_relaxes("lets blockers without a confidence be advisory"),
    "min_confidence": _ordered(
        lambda v: -(v or 0.0), "raises the confidence a lane's blocker needs"
    ),
    "require_assurances": _false_relaxes("accepts verdicts without their assurances"),
    "protected_categories": _more,
    "allow_partial": _true_relaxes("accepts a partial run as clean"),
    "suite": _suite,
    "waivers_file": _unchanged("reads the waivers from another file"),
    "waivers_from": _ordered(
        lambda v: 1 if v == "base" else 0, "applies the waivers the change itself adds"
    ),
    "no_lanes": _true_relaxes("runs no reviewer lanes"),
    "risk": _risk,
    "risk_rules": _unchanged("changes what makes a change strict"),
    "selection": _unchanged("changes which lanes a change's size selects"),
    "blocked_plugins": _fewer,
    "mode": _ordered(lambda v: 0 if v == "review-and-fix" else 1, "allows repair rounds"),
    "max_base_reruns": _ordered(
        lambda v: -v, "raises the failures re-run at the base before they are `unknown`"
    ),
    "instructions": _unchanged("changes what reviewers are given as the project's instructions"),
    "routing": _unchanged("changes which models review"),
    "loop": _unchanged("changes what counts as drift or as a systemic repair"),
}

# Keys the change never chooses for its own review: what is reviewed, where the session writes,
# how it exits, whether its loop starts anew.
# ``base`` and ``target`` choose the base itself: when the working tree names either, they are
# read first where the change cannot reach (change/baseconfig.py, ``chosen``).
BASE_ONLY = {
    "base": "reviews against another base",
    "target": "reviews another target",
    "state_dir": "moves the state folder (the loop's ledger, the base cache)",
    "shard": "records a shard only, whose session exits 0 without a gate",
    "report": "moves the report",
    "markdown": "writes the Markdown report elsewhere",
    "sarif": "writes the SARIF log elsewhere",
    "reset": "starts a new loop at every run, which its ceilings never stop",
}
RULES.update({key: _unchanged(why) for key, why in BASE_ONLY.items()})

# Every other key of the table, and why the change's value cannot relax its own review.
NOT_RULED = {
    "base_setup": "the base checkout runs the base's value (baseline/checkout/artefacts.py)",
    "full": "a full round dispatches every lane, more than a delta round",
    "base_timeout": "a re-run past it is `unknown`, which blocks",
    "reuse_base_checkout": "only where base checkouts wait between runs, keyed by base commit",
    "plan": "read by plan reviews only, which have no base",
    "review_command": "only what the agent hook asks the agent to run: the hook accepts no "
    "report but one of the review the rules call for",
}


@record(frozen=True)
class Governed:
    """The settings a review runs under, and what the change proposes for after merge."""

    settings: Settings
    proposals: list[Proposal]


def govern(base: Settings, head: Settings) -> Governed:
    """``head`` with every key of :data:`RULES` the change relaxes set back to the base's."""
    changes: dict[str, Any] = {}
    proposals: list[Proposal] = []
    for key, rule in RULES.items():
        was, now = getattr(base, key), getattr(head, key)
        if was == now:
            continue
        holds, proposed = rule(key, was, now)
        proposals += proposed
        if holds is not now:
            changes[key] = holds
    if not changes:
        return Governed(head, proposals)
    return Governed(dataclasses.replace(head, **changes), proposals)


# The options that can make a review less than its rules ask, with the values each may take:
# lanes switched off, a lower risk tier (fewer lanes), repair rounds that re-review only what
# changed. (``shard`` needs none: a shard's report is never clean.)
REDUCING: dict[str, tuple[object, ...]] = {
    "no_lanes": (False, True),
    "risk": ("auto", "economy", "standard", "strict"),
    "mode": ("review-only", "review-and-fix"),
}


def _raw(table: dict[str, Any] | None, key: str) -> object:
    """``key`` of a raw table, or the default where it is unset or not one of its values."""
    values = REDUCING[key]
    value = (table or {}).get(key, values[0])
    return value if type(value) is type(values[0]) and value in values else values[0]


def configured_values(
    given: dict[str, object], head: dict[str, Any], base: dict[str, Any] | None
) -> dict[str, object]:
    """The value the rules give (the change's table, held to the base's where :data:`RULES`
    says so), without the command line, of each key of :data:`REDUCING` in ``given``."""
    found = {}
    for key in given.keys() & REDUCING.keys():
        value = _raw(head, key)
        if base is not None and key in RULES:
            value = RULES[key](key, _raw(base, key), value)[0]
        found[key] = value
    return found
