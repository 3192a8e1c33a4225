"""A tiny HTTP endpoint on a Unix socket through which sandboxed evaluators reach the judge LLM.

The evaluator's sandbox has no network; the socket's folder is bound into it, so this is its
only way out. The judge model, its cache and any API key stay in the scoring process.
POST {"messages": [...]} → {"content": "..."}; 503 when no judge model is configured. Each call
ends by the deadline of the job that opened the proxy (its request threads start with an empty
context, so the proxy carries it).
"""

from __future__ import annotations

import json
import socketserver
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from eval.judges.client import CachedLLM
from runners.core import deadline


class _UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True


class LLMProxy:
    """Context manager serving `llm` on the socket `socket_path`; counts failed calls in `self.errors`."""

    def __init__(self, llm: CachedLLM | None, socket_path: Path):
        self.llm = llm
        self.errors = 0
        self.calls = 0
        self.in_flight = 0  # calls being answered now (an evaluator stopped during one did not fail on its own)
        self._lock = threading.Lock()
        self.socket_path = socket_path
        self._server: _UnixHTTPServer | None = None
        self._deadline: float | None = None

    def __enter__(self) -> LLMProxy:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
                status, reply = proxy._answer(body)
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def address_string(self) -> str:
                return "evaluator"

            def log_message(self, *args: Any) -> None:
                pass

        self._deadline = deadline.deadline()
        self._server = _UnixHTTPServer(str(self.socket_path), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls += 1
        if self.llm is None:
            self.errors += 1
            return 503, {"error": "no judge model configured (judge.model is empty)"}
        with self._lock:
            self.in_flight += 1
        try:
            if self._deadline is None:
                return 200, {"content": self.llm.complete(body["messages"])}
            with deadline.until(self._deadline):
                return 200, {"content": self.llm.complete(body["messages"])}
        except Exception as e:  # noqa: BLE001 - reported to the evaluator, counted here
            self.errors += 1
            return 502, {"error": f"{type(e).__name__}: {e}"}
        finally:
            with self._lock:
                self.in_flight -= 1

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
