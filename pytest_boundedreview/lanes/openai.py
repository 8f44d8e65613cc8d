"""OpenAI-compatible lanes: the model must be an exact id the endpoint lists right now.

``GET {base_url}/models`` is the live capability list. The configured model is used when
listed, else the first listed entry of ``fallback_models``; with neither the lane is
unverified and says which models were listed — an id is never invented. The packet goes as
the prompt of one chat completion that must answer with the lane-result JSON object.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from ..core.tables import LaneConfig
from ..models.report import Usage
from .prompt import system_prompt
from .result import OUTPUT_CAP, Attempt, read_result
from .schema import lane_result_schema


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect could carry the API key to another host: refuse to follow any."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirects)


class Failed(Exception):
    def __init__(self, kind: str, detail: str, status: int | None = None) -> None:
        super().__init__(detail)
        self.kind = kind
        self.status = status


def _request(url: str, key: str | None, timeout: float, body: Any = None) -> Any:
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers=headers)
    deadline = time.monotonic() + timeout
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            raw = b""
            while len(raw) <= OUTPUT_CAP:  # the timeout bounds the whole answer, not a read
                if time.monotonic() > deadline:
                    raise TimeoutError
                chunk = response.read1(65536)
                if not chunk:
                    break
                raw += chunk
    except urllib.error.HTTPError as exc:
        raise Failed("error", f"{url} answered HTTP {exc.code}", exc.code) from None
    except TimeoutError:
        raise Failed("limit", f"{url} did not answer within {timeout:g}s") from None
    except http.client.HTTPException as exc:
        raise Failed("error", f"{url} broke the HTTP protocol: {type(exc).__name__}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise Failed("limit", f"{url} did not answer within {timeout:g}s") from None
        raise Failed("error", f"{url} unreachable: {reason}") from None
    if len(raw) > OUTPUT_CAP:
        raise Failed("limit", f"{url} answered more than {OUTPUT_CAP} bytes")
    try:
        return json.loads(raw)
    except ValueError:
        raise Failed("error", f"{url} did not answer JSON") from None


def listed_models(lane: LaneConfig, key: str | None) -> list[str]:
    """The model ids the endpoint offers now."""
    answer = _request(f"{(lane.base_url or '').rstrip('/')}/models", key, lane.timeout)
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        raise Failed("error", "the model list has no `data` array")
    return [
        item["id"] for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)
    ]


def choose_model(lane: LaneConfig, listed: list[str]) -> str | None:
    """The configured model if listed, else the first listed fallback, else ``None``."""
    for candidate in [lane.model, *lane.fallback_models]:
        if candidate in listed:
            return candidate
    return None


def run_once(
    lane: LaneConfig, packet: bytes, lens: str, environ: Mapping[str, str] | None = None
) -> Attempt:
    """One chat completion: the lens prompt and the contract as the system message, the packet
    as the user's; never raises for the endpoint's failures."""
    environ = os.environ if environ is None else environ
    key = environ.get(lane.api_key_env) if lane.api_key_env else None
    base = (lane.base_url or "").rstrip("/")
    try:
        listed = listed_models(lane, key)
        model = choose_model(lane, listed)
        if model is None:
            shown = ", ".join(listed[:20]) or "none"
            return Attempt(None, "error", f"model not available: {lane.model} (listed: {shown})")
        body: dict[str, Any] = {
            "model": model,
            "messages": [
                {"role": "system", "content": system_prompt(lens)},
                {"role": "user", "content": packet.decode("utf-8")},
            ],
        }
        if lane.reasoning:
            body["reasoning_effort"] = lane.reasoning
        answer, fallback = _complete(f"{base}/chat/completions", key, lane.timeout, body)
    except Failed as exc:
        return Attempt(None, exc.kind, str(exc))  # type: ignore[arg-type]
    usage = _usage(answer)
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        why = "the completion has no choices[0].message.content"
        return Attempt(None, "error", why, model, usage)
    if not isinstance(content, str):
        return Attempt(None, "error", "the completion content is not text", model, usage)
    attempt = read_result(content.encode("utf-8"), model=model)
    detail = "; ".join(part for part in (fallback, attempt.detail) if part)
    return Attempt(attempt.result, attempt.failure, detail, model, usage)


def _complete(url: str, key: str | None, timeout: float, body: dict[str, Any]) -> tuple[Any, str]:
    """The completion with the strict lane-result schema as ``response_format``; when the
    endpoint refuses that (HTTP 400 or 422), once more with ``json_object``, and a note."""
    schema = {"name": "lane_result", "strict": True, "schema": lane_result_schema()}
    strict = {"type": "json_schema", "json_schema": schema}
    try:
        return _request(url, key, timeout, {**body, "response_format": strict}), ""
    except Failed as exc:
        if exc.status not in (400, 422):
            raise
        refused = exc.status
    note = f"the endpoint refused json_schema (HTTP {refused}): fell back to json_object"
    try:
        answer = _request(url, key, timeout, {**body, "response_format": {"type": "json_object"}})
    except Failed as exc:
        raise Failed(exc.kind, f"{note}; {exc}", exc.status) from None
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
