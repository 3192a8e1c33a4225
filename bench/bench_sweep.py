"""Sweep throughput against a local OpenAI-compatible server with a fixed latency per call.

    .venv/bin/python bench/bench_sweep.py [--jobs 64] [--in-flight 32] [--latency 0.5] [--turns 10]

Every reply is a `bash true` tool call after `--latency` seconds, so each job makes `--turns` calls.
Reports achieved model calls per second against the ideal (in_flight / latency), measured over the
middle 80% of requests, and the runner's own CPU time per agent turn (one in-process job against a
zero-latency server, bash included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import compose_root, write_native  # noqa: E402
from tests.http_stub import Reply, StubServer, completion, tool_call  # noqa: E402


def bash_true() -> Reply:
    return Reply(body=completion(None, [tool_call("c", "bash", json.dumps({"command": "true"}))]))


def throughput(args: argparse.Namespace, bench: Path, out: Path) -> None:
    reply = bash_true()
    reply.delay_s = args.latency
    with StubServer(default=reply) as stub:
        cmd = [
            sys.executable, "-m", "runners.sweep", "experiment=demo", "benchmark=native", f"benchmark.path={bench}", "benchmark.limit=null",
            "grid.benchmark=[native]", "grid.method=[dci]", "model=openai", f"model.base_url={stub.url}",
            "model.name=stub", "judge=none", "tracker=none", f"out={out}", "sweep=bench",
            f"agent.max_turns={args.turns}", f"cluster.max_in_flight={args.in_flight}", "cluster.job_cpus=0.01",
            f"env.sandbox={args.sandbox}",
        ]  # fmt: skip
        t0 = time.monotonic()
        subprocess.run(cmd, cwd=REPO, check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(REPO)})
        wall = time.monotonic() - t0
        times = sorted(r["time"] for r in stub.requests)
    n = len(times)
    lo, hi = times[n // 10], times[n * 9 // 10]
    rate = (n * 8 // 10) / (hi - lo)
    ideal = args.in_flight / args.latency
    print(f"{n} model calls in {wall:.1f} s wall (incl. Ray start-up and actor creation)")
    print(f"steady state: {rate:.1f} calls/s of an ideal {ideal:.1f} ({100 * rate / ideal:.0f}%)")


def cpu_per_turn(bench: Path, out: Path, turns: int, sandbox: str) -> None:
    from runners.grid import job_id
    from runners.run import run_and_score

    with StubServer(default=bash_true()) as stub:
        cfg = compose_root(["benchmark=native", f"benchmark.path={bench}", "model=openai", f"model.base_url={stub.url}",
                            "model.name=stub", "judge=none", f"agent.max_turns={turns}", f"env.sandbox={sandbox}"])  # fmt: skip
        task = "t0"
        jid = job_id(cfg, task)
        c0, t0 = time.process_time(), time.monotonic()
        run_and_score(cfg, task, out / jid, jid, None)
        cpu, wall = time.process_time() - c0, time.monotonic() - t0
    print(f"runner CPU per agent turn: {1000 * cpu / turns:.2f} ms (wall {1000 * wall / turns:.2f} ms per turn incl. bash)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=64)
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--sandbox", default="auto", help="env.sandbox for the jobs: auto | bwrap | none")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        tasks = [{"id": f"t{i}", "prompt": "Do nothing.", "workspace": "w", "answer": "0"} for i in range(args.jobs)]
        bench = write_native(tmp_path / "bench", tasks, {"w/readme.txt": "hello\n"})
        cpu_per_turn(bench, tmp_path / "single", 50, args.sandbox)
        throughput(args, bench, tmp_path / "out")


if __name__ == "__main__":
    main()
