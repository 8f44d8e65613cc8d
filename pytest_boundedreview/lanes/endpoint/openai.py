"""OpenAI-compatible lanes: the model must be an exact id the endpoint lists right now.

``GET {base_url}/models`` is the live capability list. The configured model is used when
listed, else the first listed entry of ``fallback_models``; with neither the lane is
unverified and says which models were listed — an id is never invented, and no retry asks
again. The packet goes as the prompt of one chat completion that must answer with the
lane-result JSON object, its length capped by ``max_output_tokens`` and its sampling fixed
(temperature 0 unless set). The whole attempt, the list included, has the lane's ``timeout``.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ...core.settings.tables import LaneConfig
from ...models.report import Usage
from ..prompt import system_prompt
from ..result import Attempt, read_result
from ..schema import lane_result_schema
from .endpoint import Deadline, Failed, request
from .refusal import CONTEXT_FIX

__all__ = ["Failed", "choose_model", "listed_models", "run_once"]

MAX_OUTPUT_TOKENS = 4096  # room for a verdict and a few findings with their evidence
# OpenAI's own API: its newer models take only `max_completion_tokens`, and their own temperature.
_OPENAI_HOSTS = ("api.openai.com",)


def listed(lane: LaneConfig, key: str | None, deadline: Deadline) -> dict[str, dict[str, Any]]:
    """The models the endpoint offers now, by id, with what it says of each."""
    url = f"{(lane.base_url or '').rstrip('/')}/models"
    answer = request(url, key, deadline)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        raise Failed("error", f"{url}: the model list has no `data` array")
    return {
        item["id"]: item
        for item in data
        if isinstance(item, dict) and isinstance(item.get("id"), str)
    }


def listed_models(lane: LaneConfig, key: str | None) -> list[str]:
    """The model ids the endpoint offers now."""
    return list(listed(lane, key, Deadline(lane.timeout)))


def choose_model(lane: LaneConfig, ids: list[str]) -> str | None:
    """The configured model if listed, else the first listed fallback, else ``None``."""
    for candidate in [lane.model, *lane.fallback_models]:
        if candidate in ids:
            return candidate
    return None


def context_size(entry: Mapping[str, Any]) -> tuple[int, str] | None:
    """The context a model list gives for one model, and the field it came from: vLLM's
    ``max_model_len``, ``context_length`` (OpenRouter, LM Studio), llama.cpp's ``meta.n_ctx``
    where listed, else its ``meta.n_ctx_train`` (the trained size, which the server's own
    context does not exceed unless stretched)."""
    found = entry.get("meta")
    meta: Mapping[str, Any] = found if isinstance(found, dict) else {}
    for where, value in (
        ("max_model_len", entry.get("max_model_len")),
        ("context_length", entry.get("context_length")),
        ("meta.n_ctx", meta.get("n_ctx")),
        ("meta.n_ctx_train", meta.get("n_ctx_train")),
    ):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value, where
    return None


def sampling(lane: LaneConfig) -> dict[str, Any]:
    """The request's bounds: the answer's length, and repeatable sampling."""
    host = urlsplit(lane.base_url or "").hostname or ""
    field = lane.output_tokens_key or (
        "max_completion_tokens" if host in _OPENAI_HOSTS else "max_tokens"
    )
    bounds: dict[str, Any] = {field: lane.max_output_tokens or MAX_OUTPUT_TOKENS}
    # OpenAI's reasoning models (o-series, gpt-5) refuse any temperature but their own: there
    # it is sent only when set; elsewhere a review samples at 0 unless told otherwise.
    openai_own = host in _OPENAI_HOSTS or bool(lane.reasoning)
    if lane.temperature is not None or not openai_own:
        bounds["temperature"] = lane.temperature or 0
    if lane.seed is not None:
        bounds["seed"] = lane.seed
    if lane.reasoning:
        bounds["reasoning_effort"] = lane.reasoning
    return bounds


def run_once(
    lane: LaneConfig, packet: bytes, lens: str, environ: Mapping[str, str] | None = None
) -> Attempt:
    """One chat completion: the lens prompt and the contract as the system message, the packet
    as the user's; never raises for the endpoint's failures."""
    environ = os.environ if environ is None else environ
    key = environ.get(lane.api_key_env) if lane.api_key_env else None
    deadline = Deadline(lane.timeout)
    try:
        models = listed(lane, key, deadline)
    except Failed as exc:
        return Attempt(None, exc.kind, str(exc), final=exc.final)  # type: ignore[arg-type]
    model = choose_model(lane, list(models))
    if model is None:
        shown = ", ".join(list(models)[:20]) or "none"
        why = f"model not available: {lane.model} (listed: {shown})"
        return Attempt(None, "error", why, final=True)
    attempt = _asked(lane, model, models[model], packet, lens, key, deadline)
    if model == lane.model:
        return attempt
    # A fallback is named with its reason however the attempt ended: the row and progress
    # show the model that answered.
    chose = f"{lane.model} is not listed: used fallback {model}"
    return dataclasses.replace(attempt, detail="; ".join(filter(None, (chose, attempt.detail))))


def _asked(
    lane: LaneConfig,
    model: str,
    entry: Mapping[str, Any],
    packet: bytes,
    lens: str,
    key: str | None,
    deadline: Deadline,
) -> Attempt:
    """The completion of ``model`` (listed as ``entry``), read as a lane result."""
    system = system_prompt(lens)
    too_big = _cannot_fit(lane, model, entry, (system, packet), key, deadline)
    if too_big:
        return Attempt(None, "limit", too_big, model, final=True)
    body: dict[str, Any] = {
        "model": model,
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": packet.decode("utf-8")},
        ],
        **sampling(lane),
    }
    url = f"{(lane.base_url or '').rstrip('/')}/chat/completions"
    try:
        answer, fallback = _complete(url, key, deadline, body)
    except Failed as exc:
        return Attempt(None, exc.kind, str(exc), model, final=exc.final)  # type: ignore[arg-type]
    usage = _usage(answer)
    try:
        choice = answer["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        why = "the completion has no choices[0].message.content"
        return Attempt(None, "error", why, model, usage)
    if not isinstance(content, str):
        return Attempt(None, "error", "the completion content is not text", model, usage)
    attempt = read_result(content.encode("utf-8"), model=model)
    if not attempt.ok and isinstance(choice, dict) and choice.get("finish_reason") == "length":
        return _cut(lane, model, usage)
    detail = "; ".join(part for part in (fallback, attempt.detail) if part)
    return Attempt(attempt.result, attempt.failure, detail, model, usage)


def _cannot_fit(
    lane: LaneConfig,
    model: str,
    entry: Mapping[str, Any],
    prompt: tuple[str, bytes],
    key: str | None,
    deadline: Deadline,
) -> str:
    """Why the prompt cannot fit the model's listed context, or ``""``. A token is at least a
    byte, so a prompt of no more bytes than the context fits; a longer one is counted by the
    server's own tokenizer where it has one (llama.cpp's and vLLM's ``/tokenize``): the text
    alone, fewer tokens than the chat template makes of it. Without a count the server
    decides (its refusal is final, with the fix)."""
    known = context_size(entry)
    system, packet = prompt
    if known is None or len(system.encode()) + len(packet) <= known[0]:
        return ""
    tokens, where = known
    counted = _counted(lane, model, f"{system}\n{packet.decode('utf-8')}", key, deadline)
    if counted is None or counted <= tokens:
        return ""
    return (
        f"not sent: the prompt is {counted} tokens by the server's own count "
        f"({_packet_parts(packet)}), and the model's context is {tokens} tokens (`{where}` in "
        f"the model list); {CONTEXT_FIX}"
    )


def _counted(
    lane: LaneConfig, model: str, text: str, key: str | None, deadline: Deadline
) -> int | None:
    """``text``'s tokens by the server's ``/tokenize`` (beside ``/v1``), or ``None``."""
    root = (lane.base_url or "").rstrip("/").removesuffix("/v1")
    body = {"content": text, "prompt": text, "model": model}  # llama.cpp's key, vLLM's keys
    try:
        counted = request(f"{root}/tokenize", key, deadline, body)
    except Failed:
        return None
    if isinstance(counted, dict):
        if isinstance(counted.get("count"), int):
            return int(counted["count"])
        if isinstance(counted.get("tokens"), list):
            return len(counted["tokens"])
    return None


def _packet_parts(packet: bytes) -> str:
    """What makes the packet large: its diff and its instruction files, in bytes."""
    try:
        document = json.loads(packet)
        diff = len(str(document.get("diff", "")).encode())
        named = sum(len(str(r.get("text", "")).encode()) for r in document.get("requirements", []))
    except (ValueError, AttributeError, TypeError):
        return "the packet"
    return f"the diff {diff} bytes, the instruction files {named} bytes"


def _cut(lane: LaneConfig, model: str, usage: Usage | None) -> Attempt:
    """An answer the server cut at the token cap (``finish_reason: "length"``): at
    temperature 0 a retry writes the same answer again, so it is final there."""
    cap = lane.max_output_tokens or MAX_OUTPUT_TOKENS
    wrote = f" after {usage.output_tokens} tokens" if usage and usage.output_tokens else ""
    why = (
        f"the answer was cut{wrote} (finish_reason length) before it was a lane result: "
        f"`max_output_tokens` is {cap}, or the server's context filled; raise "
        f"`max_output_tokens` or the server's context, or use a model that keeps to the format"
    )
    return Attempt(None, "limit", why, model, usage, final=sampling(lane).get("temperature") == 0)


def _complete(
    url: str, key: str | None, deadline: Deadline, body: dict[str, Any]
) -> tuple[Any, str]:
    """The completion with the strict lane-result schema as ``response_format``; when the
    endpoint refuses that, and its message is about the response format, once more with
    ``json_object``, and a note."""
    schema = {"name": "lane_result", "strict": True, "schema": lane_result_schema()}
    strict = {"type": "json_schema", "json_schema": schema}
    try:
        return request(url, key, deadline, {**body, "response_format": strict}), ""
    except Failed as exc:
        if exc.about != "format":
            raise
        note = f"the endpoint refused json_schema ({exc}): fell back to json_object"
    try:
        answer = request(url, key, deadline, {**body, "response_format": {"type": "json_object"}})
    except Failed as exc:
        raise Failed(exc.kind, f"{note}; {exc}", exc.status, exc.final, exc.about) from None
    return answer, note


def _usage(answer: Any) -> Usage | None:
    tokens = answer.get("usage") if isinstance(answer, dict) else None
    if not isinstance(tokens, dict):
        return None
    counts = {}
    for ours, theirs in (("input_tokens", "prompt_tokens"), ("output_tokens", "completion_tokens")):
        value = tokens.get(theirs)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            counts[ours] = value
    return Usage(**counts) if counts else None
