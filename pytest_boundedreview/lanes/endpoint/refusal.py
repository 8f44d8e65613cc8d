"""What an endpoint's refusal means, read from its status and its own message: whether it is
about the response format (the one refusal a ``json_object`` request may get past), the
context, the key, a missing model or path, and whether any retry could change it.

The messages read here are the servers' own: llama.cpp ("request (2116 tokens) exceeds the
available context size (1024 tokens)", type ``exceed_context_size_error``; older builds answer
HTTP 500 "the request exceeds the available context size"), vLLM ("This model's maximum
context length is 1024 tokens", "'max_tokens' is too large"), OpenAI (code
``context_length_exceeded``; "Invalid schema for response_format", "'response_format' of type
'json_schema' is not supported with this model").
"""

from __future__ import annotations

import re
from typing import Literal

from ...models.record import record

CONTEXT_FIX = (
    "the prompt and the answer do not fit the model's context: give the server a bigger "
    "context (llama.cpp: --ctx-size; vLLM: --max-model-len), lower the lane's "
    "`max_output_tokens`, review a smaller change, or name fewer or shorter `instructions` files"
)
_CONTEXT = re.compile(
    r"context_length_exceeded|exceed_context_size|exceeds the available context size|"
    r"maximum context length|context length (?:is|of|exceeded)|context window|"
    r"'max_tokens' is too large|prompt is too long|too many tokens",
    re.IGNORECASE,
)
_FORMAT = re.compile(
    r"response_format|response format|json_schema|json schema|\bschema\b|structured output|"
    r"guided_json|grammar",
    re.IGNORECASE,
)
# Statuses a later identical request may get past: a timeout, a conflict, too early, too many.
_PASSING = (408, 409, 425, 429)

About = Literal["format", "context", "key", "missing", "request", "server"]


@record(frozen=True)
class Refusal:
    """What a refusal is about, whether no retry can change it, and the fix to name."""

    about: About
    final: bool
    hint: str = ""


def judge(status: int, message: str) -> Refusal:
    """The meaning of HTTP ``status`` with the server's ``message``."""
    if status in _PASSING:  # a rate limit says "too many tokens" too: it passes later
        return Refusal("server", False)
    if _CONTEXT.search(message):  # whatever other status: llama.cpp once said it with a 500
        return Refusal("context", True, CONTEXT_FIX)
    if status in (400, 422) and _FORMAT.search(message):
        return Refusal("format", False)
    if status in (401, 403):
        hint = "the key was refused: `api_key_env` must name a variable holding a key it takes"
        return Refusal("key", True, hint)
    if status == 404:
        hint = "check `base_url` (most servers answer under /v1) and `model`"
        return Refusal("missing", True, hint)
    if 400 <= status < 500 and status not in _PASSING:
        return Refusal("request", True, "the same request gets the same answer")
    return Refusal("server", False)


def shown(url: str, status: int, message: str, refusal: Refusal) -> str:
    """The line a row shows: who answered what, the server's words, and the fix."""
    said = f": {message}" if message else ""
    return f"{url} answered HTTP {status}{said}" + (f"; {refusal.hint}" if refusal.hint else "")


Kind = Literal["error", "limit"]


def kind_of(refusal: Refusal) -> Kind:
    """A refusal over the context is a limit; every other is an error."""
    return "limit" if refusal.about == "context" else "error"
