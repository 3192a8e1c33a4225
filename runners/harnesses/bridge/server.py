"""One job's model endpoint for a production harness: the API its harness speaks (`wire`, a module of
this package: `messages_wire` for Claude Code, `responses_wire` for Codex CLI, `gemini_wire` for
Gemini CLI, `chat_wire` for mini-swe-agent), streamed, answered by the job's own `Model`. The server
serves the paths its wire names (`PATHS`: each path's kind, `answer`, `stream` for a path that always
streams, or `count_tokens`) and reads the job's token where its wire says (`KEY_HEADERS`); it knows no
API itself.

So every model call of a production harness goes through the same client as our own harness's: the
governor, the budget, the call cache, key redaction, deadlines and reply caps apply unchanged, and
tokens and cost are counted by us. The harness never sees a provider key: it holds a token made for
this job, valid only here, and the endpoint listens on loopback alone.

A model stop that ends the job (budget, time limit, context length, a model error after retries) is
kept in `stop` and answered with an error the harness does not retry; the runner then ends the
harness, and the job's stop reason is ours, not the harness's.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import importlib
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from runners.core.messages import (
    AssistantMessage,
    ContextLengthError,
    Model,
    ModelError,
    complete_async,
)
from runners.core.record_files import parse_json
from runners.harnesses.bridge.wire_parts import WireError

MAX_BODY_BYTES = 64 << 20  # a long conversation's request; anything larger is refused, never read whole


@dataclass
class Exchange:
    """One model call the harness made through the bridge: what the model was sent and what it said."""

    wire: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    reply: AssistantMessage
    latency_s: float


Answer = Callable[[list[dict[str, Any]], list[dict[str, Any]]], Awaitable[AssistantMessage]]


def new_token() -> str:
    """A job's endpoint token: valid only at that job's endpoint, which closes with the job."""
    return f"rt-job-{secrets.token_urlsafe(24)}"


def plain(model: Model) -> Answer:
    """The model's own answer to each request, with nothing of a method in between."""
    return lambda messages, tools: complete_async(model, messages, tools)


@dataclass
class ModelBridge:
    """The endpoint of one job. `answer` gives the reply to a request (the model's, or the method's
    conversation around it: `runners/harnesses/conversation.py`); `url` once started; `exchanges` in
    call order; `stop` once the model ended the job (its exception)."""

    answer: Answer
    wire: str = "messages_wire"  # the API the harness speaks: a module of runners/harnesses/bridge/
    token: str = field(default_factory=new_token)
    model_name: str = "runningtab-job-model"
    exchanges: list[Exchange] = field(default_factory=list)
    stop: ModelError | None = None
    url: str = ""

    def __post_init__(self) -> None:
        self._runner: web.AppRunner | None = None
        self._lock = asyncio.Lock()  # one call at a time: a harness's turns are sequential, sub-calls wait

    async def start(self, host: str = "127.0.0.1") -> str:
        """Listen on a free port of `host` (loopback); returns the base URL."""
        site = web.TCPSite(await self._setup(), host, 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://{host}:{port}"
        return self.url

    async def start_unix(self, path: str) -> None:
        """Listen on a Unix socket: the sandbox, which has no network, reaches it through a forwarder
        inside its own namespaces (`forwarder.py`), so the harness's network is this endpoint alone."""
        await web.UnixSite(await self._setup(), path).start()
        self.url = f"unix:{path}"

    async def _setup(self) -> web.AppRunner:
        app = web.Application(client_max_size=MAX_BODY_BYTES)
        wire = importlib.import_module(f"runners.harnesses.bridge.{self.wire}")
        for path, kind in wire.PATHS.items():
            serve = self._count_tokens if kind == "count_tokens" else functools.partial(self._serve, stream=kind == "stream")
            app.router.add_post(path, functools.partial(serve, wire=wire))
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        return self._runner

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _authorized(self, request: web.Request, wire: Any) -> bool:
        """The job's token, in the header its API carries a key in (`wire.KEY_HEADERS`)."""
        offered = next((request.headers[h] for h in wire.KEY_HEADERS if h in request.headers), "").removeprefix("Bearer ")
        return hmac.compare_digest(offered.encode(), self.token.encode())

    async def _body(self, request: web.Request) -> dict[str, Any]:
        """The request's JSON, nested no deeper than a record may be (the wires recurse through it)."""
        try:
            body = parse_json(await request.read())
        except (ValueError, UnicodeDecodeError) as e:
            raise WireError(f"the request body is not JSON we take: {e}") from None
        if not isinstance(body, dict):
            raise WireError("the request body must be a JSON object")
        return body

    async def _count_tokens(self, request: web.Request, wire: Any) -> web.Response:
        if not self._authorized(request, wire):
            return web.json_response(wire.error_body("authentication_error", "invalid job token"), status=401)
        return web.json_response({"input_tokens": max(1, request.content_length or 0) // 4})

    async def _serve(self, request: web.Request, wire: Any, stream: bool = False) -> web.StreamResponse:
        """One model call; streamed when its path always streams (`stream`) or the body asks for it."""
        if not self._authorized(request, wire):
            return web.json_response(wire.error_body("authentication_error", "invalid job token"), status=401)
        if self.stop is not None:
            return web.json_response(wire.error_body("invalid_request_error", f"the job has ended: {self.stop}"), status=400)
        try:
            body = await self._body(request)
            messages, tools = wire.chat_request(body)
        except WireError as e:
            return web.json_response(wire.error_body("invalid_request_error", str(e)), status=400)
        start = time.monotonic()
        async with self._lock:
            try:
                reply = await self.answer(messages, tools)
            except WireError as e:  # not the continuation of the job's conversation: refused (and recorded)
                return web.json_response(wire.error_body("invalid_request_error", str(e)), status=400)
            except ContextLengthError as e:
                self.stop = e
                return web.json_response(wire.error_body("invalid_request_error", f"prompt is too long: {e}"), status=400)
            except ModelError as e:
                self.stop = e
                return web.json_response(wire.error_body("invalid_request_error", f"the job's model stopped: {e}"), status=400)
        self.exchanges.append(Exchange(self.wire, messages, tools, reply, time.monotonic() - start))
        if not (stream or body.get("stream")):
            return web.json_response(wire.reply_body(reply, self.model_name))
        out = web.StreamResponse(headers={"content-type": "text/event-stream", "cache-control": "no-cache"})
        await out.prepare(request)
        for event in wire.events(reply, self.model_name):
            await out.write(event)
        await out.write_eof()
        return out
