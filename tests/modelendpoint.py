"""A scripted OpenAI-compatible server on 127.0.0.1 that answers as llama.cpp's server, vLLM
and OpenAI do (their model lists, their refusals, a completion cut at the token cap), and
records every request it saw."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PASS = {
    "schema": "bounded-review/lane-result/v1",
    "verdict": "pass",
    "rationale": "the change holds",
}


@dataclass
class Reply:
    """One answer: a status and a JSON body (or raw bytes), after ``delay`` seconds."""

    status: int = 200
    body: Any = None
    delay: float = 0.0


def answer(content: Any = None, finish_reason: str = "stop", completion_tokens: int = 60) -> Reply:
    """A chat completion whose message is ``content`` (the passing lane result by default)."""
    text = json.dumps(PASS) if content is None else content
    return Reply(
        200,
        {
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 900, "completion_tokens": completion_tokens},
        },
    )


def llama_context(n_prompt: int = 2116, n_ctx: int = 1024) -> Reply:
    """llama.cpp's server refusing a prompt over its context."""
    message = f"request ({n_prompt} tokens) exceeds the available context size ({n_ctx} tokens)"
    error = {"code": 400, "message": message, "type": "exceed_context_size_error"}
    return Reply(400, {"error": {**error, "n_prompt_tokens": n_prompt, "n_ctx": n_ctx}})


def vllm_context() -> Reply:
    """vLLM refusing a prompt over ``max_model_len``."""
    message = (
        "This model's maximum context length is 1024 tokens. However, you requested 2116 "
        "tokens (2016 in the messages, 100 in the completion). Please reduce the length of "
        "the messages or completion."
    )
    return Reply(400, {"object": "error", "message": message, "type": "BadRequestError"})


def openai_context() -> Reply:
    """OpenAI refusing a prompt over the model's context."""
    message = "This model's maximum context length is 8192 tokens. Please reduce the length."
    error = {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}
    return Reply(400, {"error": {**error, "param": "messages"}})


def openai_schema_refused() -> Reply:
    """OpenAI refusing the strict ``json_schema`` response format for a model."""
    message = "Invalid parameter: 'response_format' of type 'json_schema' is not supported."
    return Reply(400, {"error": {"message": message, "type": "invalid_request_error"}})


def refusal(status: int, message: str) -> Reply:
    """Any refusal in OpenAI's error shape."""
    return Reply(status, {"error": {"message": message, "type": "invalid_request_error"}})


@dataclass
class Script:
    """What the server answers, and what it was asked."""

    models: list[dict[str, Any]] = field(
        default_factory=lambda: [{"id": "reviewer", "object": "model"}]
    )
    listing: Reply | None = None  # else the models above
    completions: list[Reply] = field(default_factory=lambda: [answer()])  # the last repeats
    tokens: int | None = None  # what `POST /tokenize` counts (llama.cpp's shape); else 404
    seen: list[tuple[str, str, dict[str, Any] | None]] = field(default_factory=list)
    auth: list[str | None] = field(default_factory=list)  # each request's Authorization

    def paths(self) -> list[str]:
        return [f"{method} {path}" for method, path, _ in self.seen]

    def posts(self) -> list[dict[str, Any]]:
        return [
            body
            for method, path, body in self.seen
            if method == "POST" and path != "/tokenize" and body is not None
        ]


@contextmanager
def serve(script: Script) -> Iterator[str]:
    """The server, answering ``script``: yields its base URL (``http://127.0.0.1:N/v1``)."""
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, reply: Reply) -> None:
            time.sleep(reply.delay)
            raw = reply.body if isinstance(reply.body, bytes) else json.dumps(reply.body).encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except OSError:  # the client gave up (its deadline): nothing to tell it
                pass

        def do_GET(self) -> None:
            with lock:
                script.seen.append(("GET", self.path, None))
                script.auth.append(self.headers.get("Authorization"))
            self._send(script.listing or Reply(200, {"object": "list", "data": script.models}))

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with lock:
                script.seen.append(("POST", self.path, body))
                script.auth.append(self.headers.get("Authorization"))
                posted = len([p for m, p, _ in script.seen if m == "POST" and p != "/tokenize"])
            if self.path == "/tokenize":
                counted = Reply(200, {"tokens": [0] * script.tokens}) if script.tokens else None
                self._send(counted or Reply(404, {"error": "Not Found"}))
                return
            self._send(script.completions[min(posted, len(script.completions)) - 1])

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
