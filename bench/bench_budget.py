"""Budgets, rate limits and the cache, measured (run by hand; numbers in docs/measurements.md):

    python -m bench.bench_budget limiter [--calls 20000] [--remote-calls 4000]
    python -m bench.bench_budget cache [--turns 50] [--episodes 20]
    python -m bench.bench_budget sweep [--tasks 250] [--seeds 2] [--keep DIR]
    python -m bench.bench_budget spend [--remote-calls 4000]

`limiter`: the overhead of asking a provider's limiter before a call and answering it after — in
this process (`runners.job`), and through a lease of the sweep's governor (runners/models/lease.py:
a Ray round trip only at a renewal), from one caller and from 64 concurrent ones in one episode actor. `cache`: the model-call cache's hit path
per call (the key over a growing episode, reading the entry) against its miss path (key, the model,
storing the entry), over episodes of `--turns` calls with ~2 KB tool results. `sweep`: a real
scripted sweep of tasks × dci, runningtab × seeds (1,000 jobs by default) run once, then again into a
new folder from its cache: wall time and spend of each. `spend`: what the sweep budget's check
before each paid call costs a job (runners/models/governor.py `SweepSpend`: payments reported in batches,
the check in-process while the job holds an allowance) against reporting alone, back to back with no model
time in between (the worst case: a real call takes seconds, by which time the answer is back).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


def limiter(calls: int, remote_calls: int) -> None:
    from runners.models.rate_limit import AsyncLimiter, Limits, LocalGate

    async def local() -> float:
        gate = LocalGate(AsyncLimiter(Limits(concurrency=64, rpm=10**9, tpm=10**12)), 600)
        t0 = time.perf_counter()
        for _ in range(calls):
            g = await gate.acquire(1000)
            gate.release(g, 1200, 200, None)
        return (time.perf_counter() - t0) / calls

    print(f"local limiter: {1e6 * asyncio.run(local()):.1f} µs per call (acquire + release, one caller)")

    import ray

    from runners.models import governor
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as sweep:
            handle = governor.start(Path(sweep))
            caller = ray.remote(_Caller).options(num_cpus=0, max_concurrency=200).remote()
            for concurrent in (1, 64):
                ray.get(caller.run.remote(handle, 200, concurrent))  # warm up
                per_call, wall = ray.get(caller.run.remote(handle, remote_calls, concurrent))
                print(f"governor limiter, {concurrent} concurrent caller(s): {1e3 * per_call:.2f} ms per call (latency), "
                      f"{remote_calls / wall:,.0f} calls/s through one governor")
            governor.stop(handle)
    finally:
        ray.shutdown()


class _Caller:
    """An actor that asks the governor as an episode actor's jobs do."""

    async def run(self, handle: Any, calls: int, concurrent: int) -> tuple[float, float]:
        from runners.models.lease import leased_gate
        from runners.models.rate_limit import Limits

        gate = leased_gate(handle, "http://bench/v1 [KEY]", Limits(concurrency=256, rpm=10**9), 600)
        latencies: list[float] = []

        async def one(n: int) -> None:
            for _ in range(n):
                t0 = time.perf_counter()
                g = await gate.acquire(1000)
                latencies.append(time.perf_counter() - t0)
                gate.release(g, 1200, 200, None)

        t0 = time.perf_counter()
        await asyncio.gather(*(one(calls // concurrent) for _ in range(concurrent)))
        return statistics.median(latencies), time.perf_counter() - t0


def spend(remote_calls: int) -> None:
    import ray

    from runners.config.runner import BudgetConfig
    from runners.models import governor

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        with tempfile.TemporaryDirectory() as sweep:
            handle = governor.start(Path(sweep), BudgetConfig(sweep_usd=1e9, estimate_usd=1.0))
            payer = ray.remote(_Payer).options(num_cpus=0, max_concurrency=200).remote()
            for checked in (False, True):
                for concurrent in (1, 64):
                    ray.get(payer.run.remote(handle, 200, concurrent, checked))  # warm up
                    per_call, wall = ray.get(payer.run.remote(handle, remote_calls, concurrent, checked))
                    what = "report + check" if checked else "report only"
                    print(f"{what}, {concurrent} concurrent job(s): {1e3 * per_call:.3f} ms per paid call (median), "
                          f"{remote_calls / wall:,.0f} paid calls/s through one governor")
            governor.stop(handle)
    finally:
        ray.shutdown()


class _Payer:
    """An actor whose jobs pay for calls back to back, as `Paid` does around each model call."""

    async def run(self, handle: Any, calls: int, concurrent: int, checked: bool) -> tuple[float, float]:
        from runners.models.governor import SweepSpend

        latencies: list[float] = []

        async def job(n: int, j: int) -> None:
            spend = SweepSpend(handle, f"job{j}", "cell")
            for _ in range(n):
                t0 = time.perf_counter()
                if checked:
                    await spend.check()
                spend.paid(0.001)
                latencies.append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        await asyncio.gather(*(job(calls // concurrent, j) for j in range(concurrent)))
        return statistics.median(latencies), time.perf_counter() - t0


def cache(turns: int, episodes: int) -> None:
    from runners.core.messages import AssistantMessage, Usage
    from runners.models.caching import CachingModel
    from runners.models.call_cache import CallCache, CallKeys, agent_identity
    from runners.models.config import ApiModelConfig

    mc = ApiModelConfig(kind="openai", name="m", base_url="http://x/v1", temperature=0.7)
    tools = [{"type": "function", "function": {"name": n, "description": "d" * 300, "parameters": {}}} for n in ("read", "bash")]

    class Model:
        name = "m"

        def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
            return AssistantMessage(content=None, usage=Usage(1000, 50, 0.001), extra={"finish_reason": "tool_calls"})

    def episode(store: CallCache, seed: int) -> list[float]:
        model = CachingModel(Model(), store, CallKeys(agent_identity(mc, seed), []), "read_write")
        history: list[dict[str, Any]] = [{"role": "system", "content": "s" * 4000}, {"role": "user", "content": "task"}]
        times = []
        for t in range(turns):
            t0 = time.perf_counter()
            reply = model.complete(history, tools)
            times.append(time.perf_counter() - t0)
            history.append({**reply.to_message(), "extra": reply.extra})
            history.append({"role": "tool", "tool_call_id": f"c{t}", "content": f"line {t}\n" * 250})
        return times

    with tempfile.TemporaryDirectory() as root:
        store = CallCache(Path(root))
        miss = [x for e in range(episodes) for x in episode(store, e)]
        hit = [x for e in range(episodes) for x in episode(store, e)]
    print(f"cache, {episodes} episodes of {turns} calls (~2 KB tool results): miss path (key, model, store) "
          f"{1e3 * statistics.median(miss):.2f} ms median per call; hit path (key, read) {1e3 * statistics.median(hit):.3f} ms "
          f"median, {1e3 * max(hit):.2f} ms max")


def sweep(tasks: int, seeds: int, keep: Path | None) -> None:
    root = keep or Path(tempfile.mkdtemp(prefix="bench-budget-"))
    bench = root / "bench"
    (bench / "workspaces" / "w").mkdir(parents=True, exist_ok=True)
    (bench / "workspaces" / "w" / "notes.txt").write_text("the budget is 42 euros\n")
    (bench / "tasks.jsonl").write_text("".join(json.dumps({"id": f"t{i:04d}", "prompt": f"What is budget {i}?", "workspace": "w",
                                                           "answer": "42"}) + "\n" for i in range(tasks)))
    usage = {"input_tokens": 2000, "output_tokens": 100, "cost": 0.002}
    script = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cat notes.txt"}}], "usage": usage},
              {"content": "Done. <FINAL_ANSWER>42</FINAL_ANSWER>", "usage": usage}]
    (root / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in script))
    for name in ("first", "again"):
        cmd = [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "model=scripted",
               f"model.script={root / 'script.jsonl'}", "grid.method=[dci,runningtab]", f"grid.seed=[{','.join(map(str, range(seeds)))}]",
               "judge=rule", "tracker=none", f"out={root / 'out'}", f"sweep={name}", f"model.cache_dir={root / 'cache'}",
               "cluster.max_in_flight=64", f"agent.work_dir={root / 'work'}", "report.live_every=0"]
        t0 = time.monotonic()
        r = subprocess.run(cmd, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True)
        wall = time.monotonic() - t0
        if r.returncode != 0:
            raise SystemExit(r.stderr[-3000:])
        results = [json.loads(p.read_text()) for p in (root / "out" / name).glob("*/result.json")]
        spend = json.loads((root / "out" / name / "spend.json").read_text())["spent"]
        print(f"sweep {name}: {len(results)} jobs in {wall:.0f} s, spend ${spend:.2f}, "
              f"{sum(r['cached_calls'] for r in results)} calls from the cache, cost recorded ${sum(r['cost'] for r in results):.2f}")
    print(f"dir={root}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    p = sub.add_parser("limiter")
    p.add_argument("--calls", type=int, default=20000)
    p.add_argument("--remote-calls", type=int, default=4000)
    p = sub.add_parser("cache")
    p.add_argument("--turns", type=int, default=50)
    p.add_argument("--episodes", type=int, default=20)
    p = sub.add_parser("sweep")
    p.add_argument("--tasks", type=int, default=250)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--keep", type=Path)
    p = sub.add_parser("spend")
    p.add_argument("--remote-calls", type=int, default=4000)
    args = ap.parse_args()
    if args.what == "limiter":
        limiter(args.calls, args.remote_calls)
    elif args.what == "cache":
        cache(args.turns, args.episodes)
    elif args.what == "spend":
        spend(args.remote_calls)
    else:
        sweep(args.tasks, args.seeds, args.keep)


if __name__ == "__main__":
    main()
