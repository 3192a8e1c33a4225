"""A real OpenAI-compatible HTTP server on 127.0.0.1 for client tests: replies come from a queue
the test fills; every request is recorded; requests in flight are counted."""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One reply. `stream`: sent piece by piece instead of `body` (chunked transfer encoding, or
    `length` declared as its Content-Length), `pause_s` between pieces; the stub stops writing when
    the client hangs up."""

    status: int = 200
    body: Any = None  # dict -> JSON; str -> sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    stream: Iterable[bytes] | None = None
    pause_s: float = 0.0
    length: int | None = None


def trickle(body: dict[str, Any], pause_s: float) -> Reply:
    """A 200 whose body (its full length declared) arrives one byte every `pause_s` seconds."""
    payload = json.dumps(body).encode()
    return Reply(stream=(payload[i:i + 1] for i in range(len(payload))), pause_s=pause_s, length=len(payload))


def huge_completion(content_bytes: int, piece: int = 1 << 20) -> Iterator[bytes]:
    """A valid chat completion whose content is `content_bytes` of "x", made piece by piece (the
    stub never holds it whole)."""
    head, tail = json.dumps(completion("@")).encode().split(b"@")
    yield head
    left = content_bytes
    while left > 0:
        yield b"x" * min(piece, left)
        left -= piece
    yield tail


def completion(content: str | None = "ok", tool_calls: list[dict[str, Any]] | None = None,
               usage: tuple[int, int] = (10, 5), **message_extra: Any) -> dict[str, Any]:
    """A chat-completion body; `tool_calls` given as (name, raw arguments) dicts or full objects."""
    msg: dict[str, Any] = {"role": "assistant", "content": content, **message_extra}
    if tool_calls:
        msg["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if tool_calls else "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def tool_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


class StubServer:
    """`with StubServer() as s: s.push(Reply(...)); client(base_url=s.url)`."""

    def __init__(self, default: Reply | None = None):
        self.replies: deque[Reply] = deque()
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.sent_bytes = 0  # body bytes written by streamed replies
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)

    def push(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> StubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next(self) -> Reply:
        with self._lock:
            if self.replies:
                return self.replies.popleft()
        if self.default is None:
            return Reply(599, {"error": {"message": "stub: no scripted reply left"}})
        return self.default

    def _enter(self, record: dict[str, Any]) -> None:
        with self._lock:
            record["time"] = time.monotonic()
            self.requests.append(record)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _handler(stub: StubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall
        _answered = True  # a GET is never counted in flight; a POST sets it False

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._send(Reply(200, {"object": "list", "data": [{"id": "stub"}]}))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            stub._enter({"path": self.path, "headers": dict(self.headers), "body": json.loads(raw or b"null")})
            self._answered = False
            try:
                reply = stub._next()
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                self._send(reply)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)
            finally:
                self._answer()

        def _answer(self) -> None:
            """The request leaves the count before the reply's last write, once: a client that has
            its reply can send the next request before this thread runs again, and that request
            must not find this one still counted."""
            if not self._answered:
                self._answered = True
                stub._leave()

        def _send(self, reply: Reply) -> None:
            if reply.stream is not None:
                self._stream(reply)
                return
            data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
            payload = data.encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self._answer()
            self.wfile.write(payload)

        def _stream(self, reply: Reply) -> None:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            chunked = reply.length is None
            self.send_header(*(("Transfer-Encoding", "chunked") if chunked else ("Content-Length", str(reply.length))))
            self.end_headers()
            self.wfile.flush()
            pieces = iter(reply.stream or ())
            piece = next(pieces, None)
            while piece is not None:
                following = next(pieces, None)  # one ahead, lazily: a stream may be 100 MB
                if following is None and not chunked:
                    self._answer()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
                self.wfile.flush()
                with stub._lock:
                    stub.sent_bytes += len(piece)
                time.sleep(reply.pause_s)
                piece = following
            self._answer()
            if chunked:
                self.wfile.write(b"0\r\n\r\n")

    return Handler
