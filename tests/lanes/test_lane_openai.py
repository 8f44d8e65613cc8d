"""OpenAI-compatible lanes against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pytest_boundedreview.core.tables import LaneConfig
from pytest_boundedreview.lanes.openai import run_once
from pytest_boundedreview.lanes.prompt import builtin
from pytest_boundedreview.models.plain import validate_data

LENS = builtin("security")

FINDING = {
    "path": "app.py",
    "line": 1,
    "severity": "blocking",
    "category": "correctness",
    "failure_mode": "returns the wrong sum",
    "evidence": "add(1, 2) is -1",
    "remediation": "use +",
}
RESULT = {
    "schema": "bounded-review/lane-result/v1",
    "verdict": "revise",
    "rationale": "r",
    "findings": [FINDING],
}


class Endpoint:
    """What the fake endpoint answers, and what it was asked."""

    def __init__(self) -> None:
        self.models = ["gpt-small", "gpt-large"]
        self.content: Any = json.dumps(RESULT)
        self.status = 200
        self.delay = 0.0
        self.raw: bytes | None = None
        self.garbage = False
        self.redirect_to: str | None = None
        self.refuse_schema = False  # answer 400 to a json_schema response_format
        self.post_status: int | None = None  # answer every completion with this status
        self.usage: Any = {"prompt_tokens": 1500, "completion_tokens": 60, "total_tokens": 1560}
        self.requests: list[tuple[str, dict[str, Any] | None, str | None]] = []


@pytest.fixture
def endpoint() -> Iterator[tuple[Endpoint, str]]:
    state = Endpoint()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _answer(self, body: Any) -> None:
            time.sleep(state.delay)
            if state.garbage:
                self.wfile.write(b"GARBAGE\r\n\r\n")
                return
            if state.redirect_to:
                self.send_response(302)
                self.send_header("Location", state.redirect_to)
                self.end_headers()
                return
            payload = state.raw if state.raw is not None else json.dumps(body).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            state.requests.append((self.path, None, self.headers.get("Authorization")))
            self._answer({"data": [{"id": m, "object": "model"} for m in state.models]})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append((self.path, body, self.headers.get("Authorization")))
            refused = state.refuse_schema and body["response_format"]["type"] == "json_schema"
            if refused or state.post_status:
                refusal = json.dumps({"error": {"message": "response_format json_schema"}})
                self.send_response(state.post_status or 400)
                self.send_header("Content-Length", str(len(refusal)))
                self.end_headers()
                self.wfile.write(refusal.encode())
                return
            message = {"role": "assistant", "content": state.content}
            self._answer({"choices": [{"message": message}], "usage": state.usage})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state, f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def lane(url: str, model: str = "gpt-large", **extra: Any) -> LaneConfig:
    return validate_data(
        LaneConfig,
        {
            "name": "o",
            "lens": "security",
            "kind": "openai",
            "base_url": url,
            "model": model,
            "api_key_env": "REVIEW_KEY",
            "timeout": 2,
            **extra,
        },
    )


def test_a_listed_model_is_used(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    attempt = run_once(lane(url, reasoning="high"), b'{"packet": 1}', LENS, {"REVIEW_KEY": "k"})
    assert attempt.ok, attempt.detail
    assert attempt.model == "gpt-large"
    assert attempt.result is not None
    assert attempt.result.verdict == "revise"
    (get_path, _, auth), (post_path, body, _) = state.requests
    assert (get_path, post_path, auth) == ("/v1/models", "/v1/chat/completions", "Bearer k")
    assert body is not None
    assert body["model"] == "gpt-large"
    assert body["reasoning_effort"] == "high"
    assert body["messages"][1]["content"] == '{"packet": 1}'
    system = body["messages"][0]["content"]
    assert system.startswith(LENS)  # the lens prompt, then the contract
    assert system.endswith(builtin("contract"))


def test_an_unlisted_model_falls_back_to_the_first_listed_fallback(
    endpoint: tuple[Endpoint, str],
) -> None:
    _, url = endpoint
    chosen = lane(url, model="gpt-gone", fallback_models=["gpt-missing", "gpt-small"])
    attempt = run_once(chosen, b"{}", LENS, {})
    assert attempt.ok
    assert attempt.model == "gpt-small"


def test_nothing_listed_is_unverified_and_no_id_is_invented(
    endpoint: tuple[Endpoint, str],
) -> None:
    state, url = endpoint
    attempt = run_once(lane(url, model="gpt-gone", fallback_models=["also-gone"]), b"{}", LENS, {})
    assert (attempt.ok, attempt.failure) == (False, "error")
    assert attempt.detail == "model not available: gpt-gone (listed: gpt-small, gpt-large)"
    assert [path for path, _, _ in state.requests] == ["/v1/models"]  # no completion asked


@pytest.mark.slow
@pytest.mark.parametrize(
    ("setup", "failure", "detail"),
    [
        ({"status": 500}, "error", "answered HTTP 500"),
        ({"delay": 3.0}, "limit", "did not answer within 2s"),
        ({"raw": b"<html>oops</html>"}, "error", "did not answer JSON"),
        ({"content": "sure! here is my review"}, "error", "invalid JSON"),
        ({"garbage": True}, "error", "broke the HTTP protocol"),
        ({"redirect_to": "http://localhost:9/v1/models"}, "error", "answered HTTP 302"),
        (
            {"content": json.dumps({"schema": "bounded-review/lane-result/v1", "verdict": "pass"})},
            "error",
            "bare verdict",
        ),
    ],
    ids=["500", "slow", "non-json", "prose", "garbage", "redirect", "bare"],
)
def test_endpoint_failures(
    endpoint: tuple[Endpoint, str], setup: dict[str, Any], failure: str, detail: str
) -> None:
    state, url = endpoint
    for key, value in setup.items():
        setattr(state, key, value)
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert (attempt.ok, attempt.failure) == (False, failure)
    assert detail in attempt.detail


def test_an_unreachable_endpoint() -> None:
    attempt = run_once(lane("http://127.0.0.1:9/v1"), b"{}", LENS, {})
    assert attempt.failure == "error"
    assert "unreachable" in attempt.detail


def test_the_strict_schema_goes_as_response_format_and_usage_is_kept(
    endpoint: tuple[Endpoint, str],
) -> None:
    state, url = endpoint
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert attempt.ok, attempt.detail
    (_, body, _) = state.requests[-1]
    assert body is not None
    form = body["response_format"]
    assert (form["type"], form["json_schema"]["name"], form["json_schema"]["strict"]) == (
        "json_schema",
        "lane_result",
        True,
    )
    assert form["json_schema"]["schema"]["additionalProperties"] is False
    assert attempt.detail == ""
    assert attempt.usage is not None
    assert (attempt.usage.input_tokens, attempt.usage.output_tokens) == (1500, 60)


def test_a_refused_schema_falls_back_to_json_object_once_and_says_so(
    endpoint: tuple[Endpoint, str],
) -> None:
    state, url = endpoint
    state.refuse_schema = True
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert attempt.ok, attempt.detail
    posts = [body for path, body, _ in state.requests if path.endswith("/chat/completions")]
    assert [b["response_format"]["type"] for b in posts if b] == ["json_schema", "json_object"]
    assert attempt.detail == "the endpoint refused json_schema (HTTP 400): fell back to json_object"


def test_other_errors_are_not_retried_without_the_schema(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.post_status = 500
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert not attempt.ok
    assert attempt.detail.endswith("answered HTTP 500")
    posts = [p for p, _, _ in state.requests if p.endswith("/chat/completions")]
    assert len(posts) == 1


def test_usage_without_counts_is_not_invented(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.usage = {"total_tokens": "many"}
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert attempt.ok
    assert attempt.usage is None
