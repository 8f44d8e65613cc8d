"""OpenAI-compatible lanes against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from pytest_boundedreview.core.settings.tables import LaneConfig
from pytest_boundedreview.lanes.endpoint.openai import run_once
from pytest_boundedreview.lanes.prompt import builtin, contract
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
    assert system.endswith(contract(tools=False))


def test_an_unlisted_model_falls_back_to_the_first_listed_fallback(
    endpoint: tuple[Endpoint, str],
) -> None:
    _, url = endpoint
    chosen = lane(url, model="gpt-gone", fallback_models=["gpt-missing", "gpt-small"])
    attempt = run_once(chosen, b"{}", LENS, {})
    assert attempt.ok
    assert attempt.model == "gpt-small"
    assert attempt.detail == "gpt-gone is not listed: used fallback gpt-small"  # the reason


def test_the_configured_model_when_listed_has_no_note(endpoint: tuple[Endpoint, str]) -> None:
    _, url = endpoint
    attempt = run_once(lane(url, fallback_models=["gpt-small"]), b"{}", LENS, {})
    assert (attempt.ok, attempt.model, attempt.detail) == (True, "gpt-large", "")


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
        ({"delay": 3.0}, "limit", "deadline (2s) passed before"),
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
    assert attempt.detail == (
        f"the endpoint refused json_schema ({url}/chat/completions answered HTTP 400: "
        "response_format json_schema): fell back to json_object"
    )


def test_other_errors_are_not_retried_without_the_schema(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.post_status = 500
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert not attempt.ok
    assert attempt.detail.endswith("answered HTTP 500: response_format json_schema")
    assert not attempt.final  # a server error may pass: retried
    posts = [p for p, _, _ in state.requests if p.endswith("/chat/completions")]
    assert len(posts) == 1


def test_usage_without_counts_is_not_invented(endpoint: tuple[Endpoint, str]) -> None:
    state, url = endpoint
    state.usage = {"total_tokens": "many"}
    attempt = run_once(lane(url), b"{}", LENS, {})
    assert attempt.ok
    assert attempt.usage is None


def test_one_deadline_for_the_whole_attempt(
    endpoint: tuple[Endpoint, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model list, the strict request and the fallback each get what is left of the
    attempt's `timeout`, not a fresh one."""
    from pytest_boundedreview.lanes.endpoint import endpoint as http

    state, url = endpoint
    state.refuse_schema = True
    handed: list[float] = []
    opener = http._opener

    class Recording:
        def __init__(self, url: str) -> None:
            self.url = url

        def open(self, request: Any, timeout: float) -> Any:
            handed.append(timeout)
            time.sleep(0.05)  # some time passes in each request
            return opener(self.url).open(request, timeout=timeout)

    monkeypatch.setattr(http, "_opener", Recording)
    attempt = run_once(lane(url, timeout=30), b"{}", LENS, {})
    assert attempt.ok, attempt.detail
    assert len(handed) == 3  # list, json_schema, json_object
    assert handed == sorted(handed, reverse=True)
    assert len(set(handed)) == 3
    assert all(t <= 30 for t in handed)


@pytest.mark.parametrize(
    ("status", "message", "final", "about"),
    [
        (400, "request (2116 tokens) exceeds the available context size (1024 tokens)", 1, ""),
        (500, "the request exceeds the available context size, try increasing it", 1, ""),
        (
            400,
            "'max_tokens' is too large: 4096. This model's maximum context length is 4096",
            1,
            "",
        ),
        (400, "Invalid schema for response_format 'lane_result': ...", 0, "format"),
        (422, "json_schema is not supported by this backend", 0, "format"),
        (401, "Invalid API key", 1, ""),
        (404, "model 'x' not found", 1, ""),
        (400, "Unsupported parameter: 'seed'", 1, ""),
        (429, "rate limited", 0, ""),
        (429, "Tokens per minute limit exceeded - too many tokens processed.", 0, ""),
        (503, "Loading model", 0, ""),
    ],
)
def test_what_a_refusal_means(status: int, message: str, final: int, about: str) -> None:
    from pytest_boundedreview.lanes.endpoint.refusal import judge

    refusal = judge(status, message)
    assert refusal.final == bool(final)
    assert (refusal.about == "format") == (about == "format")


def test_the_servers_message_is_one_truncated_line_without_the_key() -> None:
    from pytest_boundedreview.lanes.endpoint.endpoint import MESSAGE_CAP, server_message

    body = {"error": {"message": "bad key sk-secret\n" + "x" * 1000, "code": "invalid_api_key"}}
    shown = server_message(json.dumps(body).encode(), "sk-secret")
    assert "sk-secret" not in shown
    assert "\n" not in shown
    assert len(shown) == MESSAGE_CAP
    assert shown.endswith("…")
    assert server_message(b'{"detail": "Not Found"}') == "Not Found"  # FastAPI's shape
    assert server_message(b"<html>502</html>") == "<html>502</html>"


@pytest.mark.parametrize(
    ("key", "value"), [("max_output_tokens", 100), ("temperature", 1), ("seed", 7)]
)
def test_answer_bounds_belong_to_openai_lanes(key: str, value: int) -> None:
    with pytest.raises(ValueError, match=f"`{key}` is sent only by the openai kind"):
        validate_data(
            LaneConfig, {"name": "c", "lens": "correctness", "command": ["x"], key: value}
        )


def test_the_openai_host_is_sent_max_completion_tokens() -> None:
    from pytest_boundedreview.lanes.endpoint.openai import sampling

    hosted = sampling(lane("https://api.openai.com/v1", reasoning="high"))
    assert hosted == {"max_completion_tokens": 4096, "reasoning_effort": "high"}
    assert sampling(lane("http://127.0.0.1:8080/v1")) == {"max_tokens": 4096, "temperature": 0}
    # OpenAI's gpt-5 and o-series refuse temperature 0: none is sent there unless set.
    assert sampling(lane("https://api.openai.com/v1")) == {"max_completion_tokens": 4096}
    set_there = lane("https://api.openai.com/v1", temperature=0.5)
    assert sampling(set_there)["temperature"] == 0.5


def _proxies(opener: Any) -> dict[str, str]:
    handlers = [h for h in opener.handlers if isinstance(h, urllib.request.ProxyHandler)]
    return dict(handlers[0].proxies) if handlers else {}


def test_a_server_on_this_machine_is_asked_without_the_environment_s_proxy(
    endpoint: tuple[Endpoint, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A proxy would see the key, and could answer for a port nothing here listens on. The
    environment's proxy is the one set when the request is made, not at import."""
    import subprocess
    import sys

    from pytest_boundedreview.lanes.endpoint import endpoint as http

    for name in [n for n in os.environ if n.lower().endswith("_proxy")]:
        monkeypatch.delenv(name)  # the machine's own, if any
    monkeypatch.setenv("https_proxy", "http://proxy.invalid:3128")
    for here in ("http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "http://[::1]:8000/v1"):
        assert _proxies(http._opener(here)) == {}
    assert _proxies(http._opener("https://api.openai.com/v1")) == {
        "https": "http://proxy.invalid:3128"
    }
    # End to end: a dead proxy in the environment, a loopback server that answers.
    state, url = endpoint
    code = (
        "from pytest_boundedreview.lanes.endpoint.endpoint import Deadline, request; "
        f"print(request({url + '/models'!r}, 'sk-k', Deadline(10))['data'][0]['id'])"
    )
    env = {**os.environ, "http_proxy": "http://127.0.0.1:9", "no_proxy": "", "NO_PROXY": ""}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.stdout.strip() == "gpt-small", done.stderr
    assert state.requests == [("/v1/models", None, "Bearer sk-k")]


def test_a_server_that_drips_its_headers_cannot_stretch_the_deadline() -> None:
    """Each byte arrives well within a socket timeout, the whole answer long after the
    attempt's `timeout`: the attempt ends at its deadline, while the server is still sending."""
    answer = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
        b'{"data":[]}'
    )
    sent = {"bytes": 0}
    stop = threading.Event()
    listener = socket.create_server(("127.0.0.1", 0))

    def drip() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            for byte in answer:
                if stop.wait(0.1):
                    return
                connection.sendall(bytes([byte]))
                sent["bytes"] += 1

    server = threading.Thread(target=drip, daemon=True)
    server.start()
    try:
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        attempt = run_once(lane(url, timeout=1), b"{}", LENS, {})
        cut_at = sent["bytes"]
    finally:
        stop.set()
        server.join(10)
        listener.close()
    assert not attempt.ok
    assert "deadline (1s) passed before" in attempt.detail, attempt.detail
    assert cut_at < answer.index(b"\r\n\r\n")  # ended while the headers were arriving
