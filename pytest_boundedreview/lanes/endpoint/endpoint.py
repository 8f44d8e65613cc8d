"""HTTP to an OpenAI-compatible endpoint: one deadline for the whole attempt, no redirects,
bounded answers, and the server's own reason when it refuses a request.

Every request of an attempt (the model list, the completion, its ``json_object`` fallback)
draws on one :class:`Deadline`, so an attempt never takes longer than the lane's ``timeout``
however many requests it makes. A refusal is raised as :class:`Failed` with the server's
message (its ``error.message``, truncated) and whether a retry could change it
(:mod:`.refusal`).
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from ..result import OUTPUT_CAP
from .refusal import judge, kind_of, shown

MESSAGE_CAP = 300  # the server's reason, as much as a row can show
_ERROR_BODY_CAP = 64 * 1024


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect could carry the API key to another host: refuse to follow any."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_LOOPBACK = re.compile(r"localhost|127(?:\.\d{1,3}){3}|::1|\[::1\]")


def _opener(url: str) -> urllib.request.OpenerDirector:
    """An opener for ``url`` with the proxies the environment names when it is asked (not
    when this module was imported), except for a server on this machine: that one is asked
    directly, since a proxy would see the key and could answer for a port nothing listens on."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if _LOOPBACK.fullmatch(host):
        return urllib.request.build_opener(_NoRedirects, urllib.request.ProxyHandler({}))
    return urllib.request.build_opener(_NoRedirects)


class Failed(Exception):
    """A request that got no usable answer: the failure kind, what to show, the status,
    whether no retry can change it, and what a refusal is about (:mod:`.refusal`)."""

    def __init__(
        self,
        kind: str,
        detail: str,
        status: int | None = None,
        final: bool = False,
        about: str = "",
    ) -> None:
        super().__init__(detail)
        self.kind, self.status, self.final, self.about = kind, status, final, about


class Deadline:
    """The one deadline of an attempt: ``seconds`` from now, shared by all its requests."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds

    def left(self, before: str) -> float:
        """The seconds left; a ``limit`` failure naming what was not reached when none are."""
        remaining = self.at - time.monotonic()
        if remaining <= 0:
            raise _late(self, before)
        return remaining


def server_message(raw: bytes, secret: str | None = None) -> str:
    """The reason a refusal's body gives (``error.message`` with its ``code`` or ``type``, a
    top-level ``message`` or ``detail``, else the text), on one line, truncated, with the API
    key taken out should the server echo it."""
    text = raw.decode("utf-8", "replace")
    try:
        document = json.loads(raw)
    except ValueError:
        document = None
    if isinstance(document, dict):
        error = document.get("error")
        found = error if isinstance(error, dict) else document
        message = found.get("message", error if isinstance(error, str) else found.get("detail"))
        if isinstance(message, str):
            code = found.get(
                "code"
            )  # OpenAI's code, else llama.cpp's type (its code is the status)
            label = code if isinstance(code, str) else found.get("type")
            named = isinstance(label, str) and label not in message
            text = message + (f" ({label})" if named else "")
    text = " ".join(text.split())
    if secret:
        text = text.replace(secret, "[redacted]")
    return text if len(text) <= MESSAGE_CAP else text[: MESSAGE_CAP - 1] + "…"


def request(url: str, key: str | None, deadline: Deadline, body: Any = None) -> Any:
    """``url``'s JSON answer (a GET, or a POST of ``body``) within what is left of
    ``deadline``; :class:`Failed` otherwise."""
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = None
    if body is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(body).encode()
    late = f"before {url} answered"
    # The exchange runs in a thread the attempt waits on for what is left of the deadline: a
    # socket's timeout bounds each read, not a server that sends its headers a byte at a time.
    # A thread still waiting then is abandoned: its answer is never read, and it ends when the
    # server stops sending or the process exits (its connection stays open until then).
    outcome: list[Any] = []
    worker = threading.Thread(
        target=_capture,
        args=(outcome, _exchange, url, key, deadline, late, data, headers),
        name="bounded-review-endpoint",
        daemon=True,
    )
    worker.start()
    worker.join(deadline.left(late))
    if not outcome:
        raise _late(deadline, late)
    kind, value = outcome[0]
    if kind == "raised":
        raise value
    return value


def _capture(outcome: list[Any], call: Any, *args: Any) -> None:
    try:
        outcome.append(("returned", call(*args)))
    except Exception as exc:  # handed to the waiting attempt, which raises it
        outcome.append(("raised", exc))


def _exchange(
    url: str,
    key: str | None,
    deadline: Deadline,
    late: str,
    data: bytes | None,
    headers: dict[str, str],
) -> Any:
    """One request and its JSON answer; :class:`Failed` naming why there is none."""
    try:
        with _opener(url).open(
            urllib.request.Request(url, data=data, headers=headers), timeout=deadline.left(late)
        ) as response:
            raw = _read(response, deadline, late)
    except urllib.error.HTTPError as exc:
        with exc:
            message = server_message(exc.read(_ERROR_BODY_CAP), key)
        refusal = judge(exc.code, message)
        detail = shown(url, exc.code, message, refusal)
        raise Failed(kind_of(refusal), detail, exc.code, refusal.final, refusal.about) from None
    except TimeoutError:
        raise _late(deadline, late) from None
    except http.client.HTTPException as exc:
        raise Failed("error", f"{url} broke the HTTP protocol: {type(exc).__name__}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, TimeoutError):
            raise _late(deadline, late) from None
        raise Failed("error", f"{url} unreachable: {reason}") from None
    if len(raw) > OUTPUT_CAP:
        raise Failed("limit", f"{url} answered more than {OUTPUT_CAP} bytes")
    try:
        return json.loads(raw)
    except ValueError:
        raise Failed("error", f"{url} did not answer JSON") from None


def _late(deadline: Deadline, late: str) -> Failed:
    return Failed("limit", f"the attempt's deadline ({deadline.seconds:g}s) passed {late}")


def _read(response: Any, deadline: Deadline, late: str) -> bytes:
    """The answer's bytes, each read bounded by what is left of the deadline (a server that
    sends a byte now and then cannot stretch it)."""
    sock = getattr(getattr(response.fp, "raw", None), "_sock", None)
    raw = b""
    while len(raw) <= OUTPUT_CAP:
        left = deadline.left(late)
        if sock is not None:
            sock.settimeout(left)
        chunk = response.read1(65536)
        if not chunk:
            break
        raw += chunk
    return raw
