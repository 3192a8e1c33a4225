"""An OpenAI-compatible chat server with a fixed latency per call, for the sweep benchmark.

    python -m bench.stub_model --latency 2.0 [--tool-turns 6] [--jitter 0.5]

Prints `port=N` when it listens on 127.0.0.1. Each request waits `--latency` seconds (asyncio, so
thousands wait at once on one core), or with `--jitter J` a time drawn evenly from latency × (1 ± J)
(the same mean; seeded, so runs draw alike), as a real API's calls vary; then it answers the episode's next turn: `bash` tool calls
alternating `cat notes.txt` and `ls` for the first `--tool-turns` turns, then a final answer.
`GET /stats` returns the arrival time of every request and this process's CPU seconds, so the
benchmark can subtract the server's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import time
from collections.abc import Iterator

from aiohttp import web

COMMANDS = ("cat notes.txt", "ls")


def reply(turn: int, tool_turns: int, arg: str = "command") -> bytes:
    """The assistant message for the episode's `turn`-th call (0-based); `arg` names bash's parameter."""
    if turn < tool_turns:
        args = json.dumps({arg: COMMANDS[turn % 2]})
        call = {"id": f"call_{turn}", "type": "function", "function": {"name": "bash", "arguments": args}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    else:
        message = {"role": "assistant", "content": "Done. <FINAL_ANSWER>0</FINAL_ANSWER>"}
    body = {"id": "stub", "object": "chat.completion", "model": "stub",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
    return json.dumps(body).encode()


def delays(latency: float, jitter: float, seed: int = 0) -> Iterator[float]:
    """Each call's wait: `latency`, or drawn evenly from latency × (1 ± jitter)."""
    rng = random.Random(seed)
    while True:
        yield latency * (1 + rng.uniform(-jitter, jitter)) if jitter else latency


def jitter_problem(jitter: float) -> str | None:
    """What is wrong with a `--jitter` (the stub's and the sweep bench's), None when nothing."""
    if 0 <= jitter < 1:
        return None
    return f"--jitter {jitter}: give a fraction of the latency, at least 0 and below 1 (0.5: waits of 1–3 s at 2 s)"


def app(latency: float, tool_turns: int, arg: str = "command", jitter: float = 0.0) -> web.Application:
    times: list[float] = []
    waits = delays(latency, jitter)

    async def chat(request: web.Request) -> web.Response:
        times.append(time.time())
        body = await request.read()
        turn = body.count(b'"role":"assistant"') + body.count(b'"role": "assistant"')
        await asyncio.sleep(next(waits))
        return web.Response(body=reply(turn, tool_turns, arg), content_type="application/json")

    async def stats(request: web.Request) -> web.Response:
        cpu = os.times()
        return web.json_response({"times": times, "cpu_s": cpu.user + cpu.system})

    application = web.Application(client_max_size=64 << 20)
    application.router.add_post("/v1/chat/completions", chat)
    application.router.add_get("/stats", stats)
    return application


async def serve(latency: float, tool_turns: int, arg: str, jitter: float) -> None:
    runner = web.AppRunner(app(latency, tool_turns, arg, jitter), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, backlog=4096)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"port={port}", flush=True)
    await asyncio.Event().wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--latency", type=float, required=True)
    ap.add_argument("--tool-turns", type=int, default=6)
    ap.add_argument("--arg", default="command", help="the bash tool's parameter name (Inspect AI's is cmd)")
    ap.add_argument("--jitter", type=float, default=0.0, help="each wait drawn from latency × (1 ± J), 0 ≤ J < 1")
    args = ap.parse_args()
    if (problem := jitter_problem(args.jitter)) is not None:
        ap.error(problem)
    asyncio.run(serve(args.latency, args.tool_turns, args.arg, args.jitter))


if __name__ == "__main__":
    main()
