"""The client for every OpenAI-compatible endpoint: API providers, vLLM and llama.cpp servers.

Plain HTTP (aiohttp: runners/models/async_http.py says why), so that retries are ours alone:
exponential backoff with jitter on 429, 5xx, timeouts and connection errors, honouring Retry-After;
never on a context-length error. A whole call — its attempts, their waits for a slot and the waits
between them — ends within `call_timeout_s` and within the job's remaining time
(`runners/core/deadline.py`), whatever the server sends and however slowly; a reply is read only
up to `max_reply_bytes`. The API key is read from the environment at call time, sent only in the
Authorization header, and scrubbed from any error text; it is never stored on the object.

`acomplete` is the sweep's episodes' call (one connection pool per event loop); `complete`, for
callers without a loop (the judges, the probe), runs the same call on a loop of its own.

Per call, only what is new is encoded: each message's JSON is kept while the message object stays
in the list (the loop's context view keeps unchanged messages the same objects), the rest of the
body's JSON (model, tools, sampling fields) while the tools list is the same, and the body is
assembled from those pieces, byte for byte what `json.dumps` of the whole body gives. The TLS context (loading the CA bundle costs ~40 ms of CPU)
is made once per process and shared by every client.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import json
import logging
import os
import ssl
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any

import httpx

from envs.names import json_utf8
from runners.core import deadline
from runners.core.messages import (
    AssistantMessage,
    ContextLengthError,
    ModelError,
    OutOfTime,
)
from runners.models import async_http
from runners.models.config import ApiModelConfig
from runners.models.endpoint_slots import AsyncEndpointSlot, thread_slot
from runners.models.rate_limit import Gate, GatedTransport
from runners.models.retry import (
    RETRY_STATUS,
    backoff_s,
    is_context_length,
    retry_after_s,
)
from runners.models.wire import MalformedReply, parse_reply, request_body, wire_messages

log = logging.getLogger(__name__)

_dumps = functools.partial(
    json.dumps, ensure_ascii=False, separators=(",", ":"), allow_nan=False
)  # as httpx's json=


class _Retry(Exception):
    """One failed attempt worth repeating; `wait_s` set when the server said how long to wait."""

    def __init__(self, reason: str, wait_s: float | None = None):
        super().__init__(reason)
        self.wait_s = wait_s


class _Secret:
    """The key in transit: shows as [REDACTED] in reprs and tracebacks that print locals."""

    __slots__ = ("value",)

    def __init__(self, value: str):
        self.value = value

    def __repr__(self) -> str:
        return "[REDACTED]"

    __str__ = __repr__


class OpenAICompatModel:
    """`Model` over POST {base_url}/chat/completions."""

    def __init__(self, cfg: ApiModelConfig, base_url: str | None = None):
        url = base_url or cfg.base_url
        if not url:
            raise ValueError(
                f"model {cfg.name!r} (kind {cfg.kind}) has no endpoint: set model.base_url, "
                "e.g. https://api.openai.com/v1"
            )
        if not url.startswith(("http://", "https://")):
            raise ValueError(f"model {cfg.name!r}: base_url {url!r} must start with http:// or https://")
        self.cfg = cfg
        self.name = cfg.name
        self.base_url = url.rstrip("/")
        self._ids = itertools.count(1)
        self._ahttp: tuple[asyncio.AbstractEventLoop, async_http.AsyncTransport] | None = None
        self._sent: dict[int, tuple[dict[str, Any], str]] = {}  # id(message) -> (message, its JSON)
        self._frame: tuple[list[dict[str, Any]], str | None, str | None] | None = None  # (tools, body before the messages, after)
        self.gate: Gate | None = None  # the provider's limiter each awaited attempt asks (runners/models/rate_limit.py)

    def __repr__(self) -> str:
        return f"OpenAICompatModel(name={self.name!r}, base_url={self.base_url!r}, key_env={self.cfg.api_key_env!r})"

    async def aclose(self) -> None:
        if self._ahttp is not None:
            await self._ahttp[1].aclose()

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        """`acomplete` for a caller without an event loop: the same call on a loop and a connection
        of its own, both closed when it returns. The deadline set around it still applies (the loop
        runs in the caller's context).

        A message dict must not be changed in place once passed (its JSON is reused); pass a new one."""
        return asyncio.run(self._call_on_own_loop(messages, tools))

    async def _call_on_own_loop(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        transport = self._transport()
        try:
            return await self._call(messages, tools, transport, lambda: thread_slot(self.base_url, self.cfg.concurrency))
        finally:
            await transport.aclose()

    async def acomplete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AssistantMessage:
        """One assistant turn, after up to `max_retries` retries; latency counts retries and waits.
        The episode holds no thread while the server thinks."""
        transport = self._aclient()
        return await self._call(messages, tools, transport, lambda: AsyncEndpointSlot(self.base_url, self.cfg.concurrency))

    async def _call(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        transport: async_http.AsyncTransport,
        slot: Callable[[], AbstractAsyncContextManager[None]],
    ) -> AssistantMessage:
        key = self._api_key()
        body = self._encode(messages, tools)
        start = time.monotonic()
        ends, job_limit = self._ends(start)
        for attempt in itertools.count():
            try:
                left = ends - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                async with asyncio.timeout(left):
                    with self._slot_errors(key):
                        async with slot():
                            resp = await transport.post(self._url(), body, _headers(key), self.cfg.max_reply_bytes)
                return self._reply(resp, key, start)
            except TimeoutError:
                raise self._late(job_limit, f"no complete reply within {time.monotonic() - start:.1f} s") from None
            except _Retry as r:
                wait = self._wait(attempt, r)
                if time.monotonic() + wait >= ends:
                    raise self._late(job_limit, f"{r}; no time left for retry {attempt + 1} in {wait:.1f} s") from None
                log.warning("%s: %s; retry %d in %.1fs", self._where(), r, attempt + 1, wait)
                await asyncio.sleep(wait)
        raise AssertionError("unreachable")

    def _ends(self, start: float) -> tuple[float, bool]:
        """When this call must have ended, and whether that is the job's deadline (not `call_timeout_s`)."""
        own = start + self.cfg.call_timeout_s
        job = deadline.deadline()
        return (job, True) if job is not None and job < own else (own, False)

    def _late(self, job_limit: bool, what: str) -> ModelError:
        if job_limit:
            return OutOfTime(f"{self._where()}: {what}: the call ran into the job's remaining time")
        return ModelError(f"{self._where()}: {what}: the call ran past model.call_timeout_s={self.cfg.call_timeout_s:g}")

    def _wait(self, attempt: int, r: _Retry) -> float:
        """How long to wait before the next attempt; ModelError once the retries are used up."""
        if attempt >= self.cfg.max_retries:
            raise ModelError(f"{self._where()}: gave up after {attempt + 1} attempts; last: {r}") from None
        return r.wait_s if r.wait_s is not None else backoff_s(attempt, self.cfg.backoff_base_s, self.cfg.backoff_max_s)

    def _aclient(self) -> async_http.AsyncTransport:
        """The transport of the running loop (its connections belong to one loop)."""
        loop = asyncio.get_running_loop()
        if self._ahttp is None or self._ahttp[0] is not loop:
            transport = self._transport()
            if self.gate is not None:
                transport = GatedTransport(transport, self.gate, self.cfg.max_tokens, self.cfg.tpm > 0)
            self._ahttp = (loop, transport)
        return self._ahttp[1]

    def _transport(self) -> async_http.AsyncTransport:
        return async_http.AsyncTransport(self.cfg.timeout_s, min(self.cfg.timeout_s, 30.0), _tls_context())

    def _url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def _encode(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> bytes:
        """The request body as JSON bytes, encoding only the messages not sent before: the rest of
        the body (model, tools, sampling fields, `extra_body`) is the same for every call with the
        same tools list, and is kept as the text before and after the messages."""
        frame = self._frame  # locals only from here: concurrent calls may swap the caches
        if frame is None or frame[0] is not tools:
            frame = self._frame = (tools, *self._frame_text(tools))
        if frame[1] is None:  # `extra_body` sets the messages or a key that is not text: the whole body, as json.dumps gives it
            return json_utf8(_dumps(request_body(self.cfg, messages, tools)))
        sent: dict[int, tuple[dict[str, Any], str]] = {}
        for m in messages:
            hit = self._sent.get(id(m))
            if hit is None or hit[0] is not m:
                hit = (m, _dumps(wire_messages([m], self.cfg.echo_extra)[0]))
            sent[id(m)] = hit
        self._sent = sent  # only the messages of this call: what a compaction replaced is dropped
        return json_utf8(frame[1] + ",".join(sent[id(m)][1] for m in messages) + frame[2])  # a lone surrogate as its escape

    def _frame_text(self, tools: list[dict[str, Any]]) -> tuple[str, str] | tuple[None, None]:
        """The body's JSON before and after the messages' items (None: it cannot be split there)."""
        body = request_body(self.cfg, [], tools)
        if "messages" in self.cfg.extra_body or not all(isinstance(k, str) for k in body):
            return None, None
        keys = list(body)
        at = keys.index("messages")
        head = "{" + "".join(f"{_dumps(k)}:{_dumps(body[k])}," for k in keys[:at]) + '"messages":['
        tail = "]" + "".join(f",{_dumps(k)}:{_dumps(body[k])}" for k in keys[at + 1:]) + "}"
        return head, tail

    @contextlib.contextmanager
    def _slot_errors(self, key: _Secret | None) -> Iterator[None]:
        """The transport's failures of one attempt as ours: timeouts and lost connections are retried."""
        try:
            yield
        except async_http.Timeout:
            raise _Retry(f"no reply within {self.cfg.timeout_s:g}s") from None
        except async_http.Unreachable as e:
            raise _Retry(f"connection error ({_scrub(str(e), key)})") from None
        except async_http.TooLarge as e:
            raise ModelError(f"{self._where()}: the reply is over model.max_reply_bytes={self.cfg.max_reply_bytes} ({e}): "
                             "not read further; raise model.max_reply_bytes if its replies are meant to be this long") from None
        except async_http.Failure as e:
            raise ModelError(f"{self._where()}: {type(e).__name__}: {_scrub(str(e), key)}") from None

    def _reply(self, resp: async_http.HttpReply, key: _Secret | None, start: float) -> AssistantMessage:
        """The assistant message of one HTTP reply; _Retry for what is worth another attempt."""
        text = _scrub(resp.text, key)
        if resp.status_code != 200:
            self._raise_for(resp.status_code, text, resp.headers)
        try:
            data = json.loads(text)
        except ValueError:
            raise _Retry(f"reply is not JSON: {text[:200]!r}") from None
        if isinstance(data, dict) and data.get("error") and not data.get("choices"):
            self._raise_for(_error_status(data["error"]), text, {})
        try:
            reply = parse_reply(data, self.cfg, lambda: f"call_{next(self._ids)}")
        except MalformedReply as e:
            raise _Retry(str(e)) from None
        reply.latency_s = time.monotonic() - start
        return reply

    def _raise_for(self, status: int, text: str, headers: Any) -> None:
        if is_context_length(status, text):
            raise ContextLengthError(
                f"{self._where()}: context length exceeded (HTTP {status}): {text[:500]}"
            )
        if status in RETRY_STATUS:
            raise _Retry(f"HTTP {status}: {text[:300]}", retry_after_s(headers))
        raise ModelError(f"{self._where()}: HTTP {status}: {text[:1000]}")

    def _api_key(self) -> _Secret | None:
        env = self.cfg.api_key_env
        if not env:
            return None
        key = os.environ.get(env, "").strip()
        if not key:
            raise ModelError(
                f"model {self.name!r} needs an API key: set the environment variable {env} "
                f"(model.api_key_env names the variable that holds the key)"
            )
        if not key.isascii() or any(ch.isspace() or not ch.isprintable() for ch in key):
            # said without the value: the HTTP library would put it in its exception
            raise ModelError(
                f"the value of {env} is not a valid API key (non-ASCII, space or control characters)"
            )
        return _Secret(key)

    def _where(self) -> str:
        return f"model {self.name!r} at {self.base_url}"


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """httpx's default TLS context (certifi, or SSL_CERT_FILE/SSL_CERT_DIR), made once per process."""
    return httpx.create_ssl_context()


def _headers(key: _Secret | None) -> dict[str, str]:
    # built in the call, never kept: no local of the caller's frame holds the key (tracebacks print locals)
    return {"Content-Type": "application/json", **({"Authorization": f"Bearer {key.value}"} if key else {})}


def _error_status(error: Any) -> int:
    """The HTTP status hidden in a 200 reply's `error` object (OpenRouter does this); else 500."""
    code = error.get("code") if isinstance(error, dict) else None
    if isinstance(code, str) and code.isdigit():
        code = int(code)
    return code if isinstance(code, int) and 400 <= code < 600 else 500


def _scrub(text: str, key: _Secret | None) -> str:
    """Remove the key from text a server echoed back (some 401 bodies quote the header)."""
    return text.replace(key.value, "[REDACTED]") if key else text
