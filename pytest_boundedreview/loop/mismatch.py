"""The ``model-mismatch`` trigger, for both faces: one lane raising one defect class at new
places in each of three rounds means the fixes treat symptoms of a wrong model. The loop then
asks for a model review: the next round hears the model-review lane (an architecture lane)
before correctness rounds resume, or stops as ``deadlock`` when the loop has none."""

from __future__ import annotations

from collections.abc import Sequence

from ..models.loop import LoopState, ModelReview, RoundState

NO_REVIEWER = "model review needed: no architecture lane configured"


def _places(round_: RoundState) -> dict[tuple[str, str], set[str]]:
    seen: dict[tuple[str, str], set[str]] = {}
    for lane in round_.lanes:
        for mark in lane.findings:
            seen.setdefault((lane.name, mark.category), set()).add(mark.fingerprint)
    return seen


def mismatched(rounds: Sequence[RoundState]) -> tuple[str, str] | None:
    """The (lane, category) raised at new places in each of the last three ``rounds``."""
    if len(rounds) < 3:
        return None
    places = [_places(r) for r in rounds[-3:]]
    for key in sorted(places[0].keys() & places[1].keys() & places[2].keys()):
        a, b, c = (p[key] for p in places)
        if b - a and c - (a | b):
            return key
    return None


def after_round(state: LoopState, rounds: Sequence[RoundState], reviewer: str | None) -> LoopState:
    """``state`` with a model review asked for when ``rounds`` (the loop's, the last one just
    completed) show a mismatch since the last model review was answered."""
    last = state.model_review
    if last is not None and last.pending:
        return state
    since = last.answered_round if last is not None else 0
    found = mismatched([r for r in rounds if r.number > (since or 0)])
    if found is None:
        return state
    review = ModelReview(
        lane=found[0], category=found[1], flagged_round=rounds[-1].number, reviewer=reviewer
    )
    flags = state.flags if "model-mismatch" in state.flags else [*state.flags, "model-mismatch"]
    return state.model_copy(update={"model_review": review, "flags": flags})


def answered(state: LoopState, round_number: int, lane: str) -> LoopState:
    """``state`` with a pending model review answered when ``lane`` is its reviewer and
    answered in a round after the one that asked for it."""
    review = state.model_review
    if review is None or not review.pending or review.reviewer != lane:
        return state
    if round_number <= review.flagged_round:
        return state
    done = review.model_copy(update={"answered_round": round_number})
    return state.model_copy(update={"model_review": done})


def why_required(review: ModelReview) -> str:
    return (
        f"lane {review.lane!r} raised {review.category!r} findings at new places in each of "
        f"three rounds up to round {review.flagged_round}"
    )
