"""A scripted model on 127.0.0.1 that real coding-agent CLIs talk to instead of a provider.

It speaks the streaming wire of each CLI (Anthropic Messages for Claude Code, OpenAI Responses
for Codex, the Gemini API's ``streamGenerateContent`` for Gemini CLI) and answers every agent
request with the next move of a ``Model``: tool calls (a shell command, a file edit) or a final
text. It records every request, so a test can read what the agent sent back: the stop hook's
block arrives as the model's next user message.

Requests that are not the agent's own turn (a title, a quota probe: no tools offered) are
answered with a short text, a token count with a number; neither is shown to the ``Model``.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Shell:
    """Run ``command`` in the agent's shell."""

    command: str


@dataclass(frozen=True)
class Write:
    """Replace the file ``path`` (relative to the repository) with ``content``."""

    path: str
    content: str
    old: str = ""  # the file's content before (Claude Code edits by replacing a string)


@dataclass(frozen=True)
class Say:
    """End the turn with ``text``."""

    text: str


Move = list[Shell | Write] | Say
# A model: given the text of the last user message it received (a prompt, or a hook's block)
# and whether the request carries the results of its own tool calls, its next move.
Model = Callable[["Request"], Move]


@dataclass
class Request:
    """One agent request as the server saw it."""

    wire: str  # "anthropic" | "responses" | "gemini"
    body: dict[str, Any]
    user_text: str  # the text of the last message from the user's side that is not a tool result
    after_tools: bool  # the request ends with results of the model's tool calls
    tools: list[str] = field(default_factory=list)


def _anthropic_request(body: dict[str, Any]) -> Request:
    texts: list[str] = []
    after_tools = False
    for message in body.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content
        said = [p.get("text", "") for p in parts if p.get("type") == "text"]
        after_tools = any(p.get("type") == "tool_result" for p in parts)
        if said and not after_tools:
            texts = said
        elif said:
            texts = said  # a block may ride along with a tool result's message
    tools = [t.get("name", "") for t in body.get("tools", [])]
    return Request("anthropic", body, "\n".join(texts), after_tools, tools)


def _responses_request(body: dict[str, Any]) -> Request:
    texts: list[str] = []
    after_tools = False
    for item in body.get("input", []):
        kind = item.get("type", "message")
        if kind in ("function_call_output", "custom_tool_call_output"):
            after_tools = True
        elif kind == "message" and item.get("role") == "user":
            parts = item.get("content", [])
            texts = [p.get("text", "") for p in parts if p.get("type") == "input_text"]
            after_tools = False
        elif kind in ("function_call", "custom_tool_call", "message"):
            after_tools = False
    tools = [t.get("name", t.get("type", "")) for t in body.get("tools", [])]
    return Request("responses", body, "\n".join(texts), after_tools, tools)


def _gemini_request(body: dict[str, Any]) -> Request:
    texts: list[str] = []
    after_tools = False
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        if content.get("role") != "user":
            after_tools = False
        elif any("functionResponse" in part for part in parts):
            after_tools = True
        else:
            texts = [part["text"] for part in parts if "text" in part]
            after_tools = False
    declared = [tool.get("functionDeclarations", []) for tool in body.get("tools", [])]
    tools = [d.get("name", "") for group in declared for d in group]
    return Request("gemini", body, "\n".join(texts), after_tools, tools)


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


def _anthropic_reply(move: Move, n: int, root: str) -> bytes:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-x"}
    message |= {"content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    blocks: list[tuple[dict[str, Any], dict[str, Any]]] = []
    if isinstance(move, Say):
        blocks.append(({"type": "text", "text": ""}, {"type": "text_delta", "text": move.text}))
    else:
        for i, call in enumerate(move):
            if isinstance(call, Shell):
                name, data = "Bash", {"command": call.command, "description": "run"}
            else:  # Claude Code edits only a file it has read
                read = {"type": "tool_use", "id": f"toolu_{n}_{i}r", "name": "Read", "input": {}}
                path = {"file_path": f"{root}/{call.path}"}
                blocks.append(
                    (read, {"type": "input_json_delta", "partial_json": json.dumps(path)})
                )
                name = "Edit"
                data = {
                    "file_path": f"{root}/{call.path}",
                    "old_string": call.old,
                    "new_string": call.content,
                }
            block = {"type": "tool_use", "id": f"toolu_{n}_{i}", "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(data)}
            blocks.append((block, delta))
    for i, (block, delta) in enumerate(blocks):
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": block},
            )
        )
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta})
        )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = "end_turn" if isinstance(move, Say) else "tool_use"
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def _patch(call: Write) -> str:
    """``call`` as an apply_patch envelope (the whole file replaced)."""
    lines = ["*** Begin Patch", f"*** Update File: {call.path}", "@@"]
    lines += [f"-{line}" for line in call.old.splitlines()]
    lines += [f"+{line}" for line in call.content.splitlines()]
    return "\n".join([*lines, "*** End Patch"]) + "\n"


def _responses_reply(move: Move, n: int, tools: list[str]) -> bytes:
    rid = f"resp_{n}"
    events: list[tuple[str, dict[str, Any]]] = [
        ("response.created", {"type": "response.created", "response": {"id": rid}})
    ]
    items: list[dict[str, Any]] = []
    if isinstance(move, Say):
        content = [{"type": "output_text", "text": move.text, "annotations": []}]
        items.append({"type": "message", "role": "assistant", "id": f"m_{n}", "content": content})
    else:
        for i, call in enumerate(move):
            call_id = f"call_{n}_{i}"
            if isinstance(call, Write):
                items.append(
                    {
                        "type": "custom_tool_call",
                        "name": "apply_patch",
                        "input": _patch(call),
                        "call_id": call_id,
                    }
                )
            elif "shell_command" in tools:
                args = {"command": call.command}
                items.append(
                    {
                        "type": "function_call",
                        "name": "shell_command",
                        "arguments": json.dumps(args),
                        "call_id": call_id,
                    }
                )
            else:
                args = {"cmd": call.command, "yield_time_ms": 300000}
                items.append(
                    {
                        "type": "function_call",
                        "name": "exec_command",
                        "arguments": json.dumps(args),
                        "call_id": call_id,
                    }
                )
    for item in items:
        events.append(
            ("response.output_item.done", {"type": "response.output_item.done", "item": item})
        )
    usage = {
        "input_tokens": 10,
        "input_tokens_details": None,
        "output_tokens": 5,
        "output_tokens_details": None,
        "total_tokens": 15,
    }
    events.append(
        (
            "response.completed",
            {"type": "response.completed", "response": {"id": rid, "usage": usage}},
        )
    )
    return _sse(events)


def _gemini_reply(move: Move, n: int, root: str) -> dict[str, Any]:
    """One ``GenerateContentResponse``: Gemini CLI's own tool names and arguments (its shell,
    and ``write_file``, which takes the whole new content)."""
    parts: list[dict[str, Any]] = []
    if isinstance(move, Say):
        parts.append({"text": move.text})
    else:
        for call in move:
            if isinstance(call, Shell):
                name, args = "run_shell_command", {"command": call.command, "description": "run"}
            else:
                name = "write_file"
                args = {"file_path": f"{root}/{call.path}", "content": call.content}
            parts.append({"functionCall": {"name": name, "args": args}})
    candidate = {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    return {"candidates": [candidate], "usageMetadata": usage, "responseId": f"r_{n}"}


class ModelServer:
    """The scripted model, serving on 127.0.0.1 in a thread from its creation until the
    ``with`` block ends; ``requests`` is every agent request it answered, in order."""

    def __init__(self, model: Model, root: str) -> None:
        self.model = model
        self.root = root  # the repository the agent works in
        self.requests: list[Request] = []
        self.errors: list[str] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # model lists and the like: nothing to offer
                self._send(200, "application/json", json.dumps({"data": [], "models": []}).encode())

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    reply = server.answer(self.path, json.loads(raw or b"{}"))
                except Exception as exc:  # shown by the test, never a hung agent
                    server.errors.append(f"{self.path}: {exc!r}")
                    self._send(500, "application/json", json.dumps({"error": str(exc)}).encode())
                    return
                if reply is None:
                    self._send(404, "application/json", b'{"error": "not here"}')
                    return
                self._send(200, *reply)

            def _send(self, code: int, kind: str, data: bytes) -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> ModelServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[str, bytes] | None:
        """The reply to one POST (its content type and bytes), or ``None`` when ``path`` is
        no model call."""
        route = path.split("?")[0]
        method = route.rpartition(":")[2] if "/models/" in route else ""
        if method == "countTokens":
            return "application/json", json.dumps({"totalTokens": 10}).encode()
        if route.endswith("/messages"):
            request = _anthropic_request(body)
        elif route.endswith("/responses"):
            request = _responses_request(body)
        elif method in ("streamGenerateContent", "generateContent"):
            request = _gemini_request(body)
        else:
            return None
        with self._lock:
            n = len(self.requests) + 1
            if not request.tools:  # not the agent's turn (a title, a probe)
                move: Move = Say("ok")
            else:
                self.requests.append(request)
                move = self.model(request)
        if request.wire == "anthropic":
            return "text/event-stream", _anthropic_reply(move, n, self.root)
        if request.wire == "responses":
            return "text/event-stream", _responses_reply(move, n, request.tools)
        reply = json.dumps(_gemini_reply(move, n, self.root))
        if method == "generateContent":
            return "application/json", reply.encode()
        return "text/event-stream", f"data: {reply}\r\n\r\n".encode()

    def agent_requests(self) -> Iterator[Request]:
        yield from self.requests
