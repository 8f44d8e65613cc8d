"""The model server ``bounded-review init`` finds for an ``openai`` lane: the endpoint
``OPENAI_BASE_URL`` names, else one on a loopback port the common local servers listen on by
default. Nothing beyond loopback is asked unless the user's variable names it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from ..models.record import record

# The default address of each local server (their documentation): loopback only.
LOOPBACK = (
    ("http://127.0.0.1:8080/v1", "llama.cpp's server"),
    ("http://127.0.0.1:11434/v1", "Ollama"),
    ("http://127.0.0.1:8000/v1", "vLLM"),
    ("http://127.0.0.1:1234/v1", "LM Studio"),
)
PROBE_SECONDS = 2  # per endpoint; a loopback port nobody listens on refuses at once


@record(frozen=True)
class Found:
    """An endpoint that listed at least one model, and what found it."""

    base_url: str
    models: list[str]
    where: str  # "OPENAI_BASE_URL" or the server whose default port answered
    key_env: str | None = None


def _listed(base_url: str, key: str | None) -> list[str]:
    """The model ids ``base_url`` lists, as an ``openai`` lane would read them."""
    from ..core.settings.tables import LaneConfig
    from ..lanes.endpoint.openai import (
        listed_models,  # only init probes: keep the CLI's start light
    )
    from ..models.plain import validate_data

    probe = {"name": "probe", "lens": "correctness", "kind": "openai", "model": "probe"}
    lane = validate_data(LaneConfig, {**probe, "base_url": base_url, "timeout": PROBE_SECONDS})
    return listed_models(lane, key)


def find_server(
    environ: Mapping[str, str], candidates: Sequence[tuple[str, str]] = LOOPBACK
) -> tuple[Found | None, str | None]:
    """The first endpoint that lists a model, and why ``OPENAI_BASE_URL`` (when set) was
    passed over."""
    from ..lanes.endpoint.openai import Failed

    passed_over = None
    named = environ.get("OPENAI_BASE_URL", "").strip().rstrip("/")
    if named:
        key_env = "OPENAI_API_KEY" if environ.get("OPENAI_API_KEY") else None
        try:
            models = _listed(named, environ.get(key_env) if key_env else None)
        except Failed as exc:
            passed_over = str(exc)
        else:
            if models:
                return Found(named, models, "OPENAI_BASE_URL", key_env), None
            passed_over = f"{named}/models lists no model"
    for base_url, server in candidates:
        try:
            models = _listed(base_url, None)  # a key is never sent to a port we guessed
        except Failed:
            continue
        if models:
            return Found(base_url, models, f"{server}'s default port"), passed_over
    return None, passed_over


def lane_text(name: str, lens: str, found: Found) -> str:
    """A lane of the proposed table on ``found``: its first listed model, marked in a comment
    as a local endpoint the user should check."""
    shown = ", ".join(json.dumps(model) for model in found.models[:5])
    more = f" and {len(found.models) - 5} more" if len(found.models) > 5 else ""
    lines = [
        "",
        "[[tool.bounded-review.lanes]]",
        f"# A model server found by init ({found.where}), listing {shown}{more}:",
        "# a local endpoint; check that its model can review code before trusting its verdict.",
        f"name = {json.dumps(name)}",
        f"lens = {json.dumps(lens)}",
        'kind = "openai"',
        f"base_url = {json.dumps(found.base_url)}",
        f"model = {json.dumps(found.models[0])}",
    ]
    if found.key_env:
        lines.append(f"api_key_env = {json.dumps(found.key_env)}")
    lines.append("timeout = 900")
    return "\n".join(lines) + "\n"
