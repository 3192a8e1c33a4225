"""CPU per model call of the two async HTTP clients, as an episode actor uses them (run by hand).

    python -m bench.http_clients [--in-flight 64] [--latency 0.5] [--jobs 128]

`--in-flight` episodes on one event loop against `bench/stub_model.py`, each with its own client
(one per job, as in a sweep), 7 calls per episode with a growing history: httpx's AsyncClient (what
`acomplete` used before) against `runners/models/async_http.py` (aiohttp, what it uses now). Prints
this process's CPU milliseconds per call for each.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable

import httpx

from bench.sweep import start_stub
from runners.models.async_http import AsyncTransport
from runners.models.openai_compat import _tls_context

CALLS = 7
HEADERS = {"Content-Type": "application/json"}


async def _httpx_job(url: str) -> None:
    async with httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=30.0), verify=_tls_context()) as client:
        await _episode(lambda body: client.post(url, content=body, headers=HEADERS))


async def _aiohttp_job(url: str) -> None:
    transport = AsyncTransport(60.0, 30.0, _tls_context())
    try:
        await _episode(lambda body: transport.post(url, body, HEADERS, 1 << 24))
    finally:
        await transport.aclose()


async def _episode(post: Callable[[bytes], Awaitable[object]]) -> None:
    messages = [{"role": "system", "content": "s" * 4000}, {"role": "user", "content": "Sum the budget lines."}]
    for _ in range(CALLS):
        await post(json.dumps({"model": "stub", "messages": messages}).encode())
        messages.append({"role": "tool", "tool_call_id": "c", "content": "note 1: 37 euros\n" * 20})


async def cpu_ms_per_call(job: Callable[[str], Awaitable[None]], url: str, in_flight: int, jobs: int) -> float:
    """CPU of this process per model call while `in_flight` slots run `jobs` episodes of `CALLS` calls of `job(url)`."""
    async def slot() -> None:
        for _ in range(jobs // in_flight):
            await job(url)

    t0 = os.times()
    await asyncio.gather(*[slot() for _ in range(in_flight)])
    t1 = os.times()
    return 1000 * (t1.user + t1.system - t0.user - t0.system) / (jobs // in_flight * in_flight * CALLS)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=128)
    args = ap.parse_args()
    stub, port = start_stub(args.latency, tool_turns=CALLS)
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    try:
        for name, job in (("httpx", _httpx_job), ("aiohttp", _aiohttp_job)):
            start = time.monotonic()
            ms = asyncio.run(cpu_ms_per_call(job, url, args.in_flight, args.jobs))
            print(f"{name}: {ms:.2f} ms CPU per call ({time.monotonic() - start:.1f} s wall)")
    finally:
        stub.kill()


if __name__ == "__main__":
    main()
