"""An OpenAI-compatible chat server with a fixed latency per call, for the sweep benchmark.

    python -m bench.stub_model --latency 2.0 [--tool-turns 6]

Prints `port=N` when it listens on 127.0.0.1. Each request waits `--latency` seconds (asyncio, so
thousands wait at once on one core), then answers the episode's next turn: `bash` tool calls
alternating `cat notes.txt` and `ls` for the first `--tool-turns` turns, then a final answer.
`GET /stats` returns the arrival time of every request and this process's CPU seconds, so the
benchmark can subtract the server's own cost.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time

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


def app(latency: float, tool_turns: int, arg: str = "command") -> web.Application:
    times: list[float] = []

    async def chat(request: web.Request) -> web.Response:
        times.append(time.time())
        body = await request.read()
        turn = body.count(b'"role":"assistant"') + body.count(b'"role": "assistant"')
        await asyncio.sleep(latency)
        return web.Response(body=reply(turn, tool_turns, arg), content_type="application/json")

    async def stats(request: web.Request) -> web.Response:
        cpu = os.times()
        return web.json_response({"times": times, "cpu_s": cpu.user + cpu.system})

    application = web.Application(client_max_size=64 << 20)
    application.router.add_post("/v1/chat/completions", chat)
    application.router.add_get("/stats", stats)
    return application


async def serve(latency: float, tool_turns: int, arg: str) -> None:
    runner = web.AppRunner(app(latency, tool_turns, arg), access_log=None)
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
    args = ap.parse_args()
    asyncio.run(serve(args.latency, args.tool_turns, args.arg))


if __name__ == "__main__":
    main()
