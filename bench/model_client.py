"""CPU per model call of the model client alone, as an episode actor uses it (run by hand).

    python -m bench.model_client [--in-flight 64] [--latency 0.5] [--jobs 256] [--rounds 3]

`--in-flight` episodes on one event loop against `bench/stub_model.py`, each with a client of its own
(`OpenAICompatModel`, one per job as in a sweep), 7 calls an episode with a growing history and the
bench's tools: the request's encoding, the HTTP exchange, the reply's parsing and its cost. No cache,
gate or governor (their own stages). Prints this process's CPU milliseconds per call, once per round.
"""

from __future__ import annotations

import argparse
import asyncio
import time

from bench.http_clients import CALLS, cpu_ms_per_call
from bench.sweep import start_stub
from runners.models.config import ApiModelConfig
from runners.models.openai_compat import OpenAICompatModel

TOOLS = [{"type": "function", "function": {"name": "bash", "description": "Run a command. " * 20,
          "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}]


async def _job(base_url: str) -> None:
    model = OpenAICompatModel(ApiModelConfig(name="stub", base_url=base_url, max_tokens=512), base_url)
    messages: list[dict] = [{"role": "system", "content": "s" * 4000}, {"role": "user", "content": "Sum the budget lines."}]
    try:
        for _ in range(CALLS):
            reply = await model.acomplete(messages, TOOLS)
            messages = [*messages, reply.to_message(),
                        *({"role": "tool", "tool_call_id": c.id, "content": "note 1: 37 euros\n" * 20} for c in reply.tool_calls)]
    finally:
        await model.aclose()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=256)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    stub, port = start_stub(args.latency, tool_turns=CALLS)
    try:
        for _ in range(args.rounds):
            start = time.monotonic()
            ms = asyncio.run(cpu_ms_per_call(_job, f"http://127.0.0.1:{port}/v1", args.in_flight, args.jobs))
            print(f"model client: {ms:.3f} ms CPU per call ({time.monotonic() - start:.1f} s wall)", flush=True)
    finally:
        stub.kill()


if __name__ == "__main__":
    main()
