"""Sweep throughput against a local OpenAI-compatible server with a fixed latency per model call.

    python -m bench.sweep --in-flight 256 --latency 2.0 --jobs 1024 [--method dci] [--sandbox auto]

Each job is one episode of 7 model calls: 6 `bash` calls (`cat notes.txt`, `ls`, in the job's own
workspace, sandboxed as in a real sweep), then an answer. The real sweep entry point runs them
(`python -m runners.sweep`, local Ray, episode actors) against `bench/stub_model.py`, a separate
process not counted below. Measured over the middle 80% of model calls (the steady state):

- calls_per_s, against the ideal in_flight / latency (the model's own limit);
- peak_rss_mb: the RSS of every process of the sweep (driver, Ray's processes, the actors, their
  bash commands), summed at each sample, its peak;
- cpu_ms_per_call: the CPU time of those processes (their reaped children included) per call.

The last line is `in_flight=N calls_per_s=X ideal=Y pct=Z peak_rss_mb=M cpu_ms_per_call=C`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
NOTES = "".join(f"note {i}: the budget line {i} is {i * 37 % 1000} euros\n" for i in range(20))


def write_benchmark(root: Path, jobs: int) -> Path:
    """A native benchmark of `jobs` tasks sharing one small workspace."""
    (root / "workspaces" / "w").mkdir(parents=True)
    (root / "workspaces" / "w" / "notes.txt").write_text(NOTES)
    tasks = [
        {"id": f"t{i}", "prompt": "Sum the budget lines in notes.txt.", "workspace": "w", "answer": "0"}
        for i in range(jobs)
    ]
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return root


class Tree:
    """Samples the RSS and CPU time of a process and all its descendants (from /proc)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_rss = 0
        self.cpu: dict[int, float] = {}  # pid -> its last seen CPU seconds (own + reaped children)
        self.samples: list[tuple[float, float]] = []  # (time, total CPU seconds)

    def sample(self) -> None:
        stats = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as f:
                        fields = f.read().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                stats[int(name)] = fields
        children: dict[int, list[int]] = {}
        for pid, fields in stats.items():
            children.setdefault(int(fields[1]), []).append(pid)
        todo, rss = [self.pid], 0
        while todo:
            pid = todo.pop()
            if pid in stats:
                f = stats[pid]
                self.cpu[pid] = sum(int(x) for x in f[11:15]) / TICK  # utime stime cutime cstime
                rss += int(f[21]) * PAGE
            todo += children.get(pid, [])
        self.peak_rss = max(self.peak_rss, rss)
        self.samples.append((time.time(), sum(self.cpu.values())))

    def follow(self, proc: subprocess.Popen) -> float:
        """Sample until `proc` exits; returns its wall time in seconds."""
        t0 = time.monotonic()
        while proc.poll() is None:
            self.sample()
            time.sleep(0.5)
        return time.monotonic() - t0

    def cpu_at(self, t: float) -> float:
        """Total CPU seconds at time `t` (linear between samples)."""
        prev = self.samples[0]
        for s in self.samples:
            if s[0] >= t:
                span = s[0] - prev[0]
                return prev[1] + (s[1] - prev[1]) * ((t - prev[0]) / span if span else 1.0)
            prev = s
        return prev[1]


def start_stub(latency: float, tool_turns: int, arg: str = "command") -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "bench.stub_model", f"--latency={latency}", f"--tool-turns={tool_turns}",
                             f"--arg={arg}"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("port="):
        proc.kill()
        raise SystemExit(f"the stub server did not start: {line!r}")
    return proc, int(line.strip().split("=")[1])


def stub_times(port: int) -> list[float]:
    """When each model call reached the stub, in order."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
        return sorted(json.load(r)["times"])


def result_line(times: list[float], tree: Tree, in_flight: int, latency: float) -> str:
    """The benchmark's last line, over the middle 80% of the calls (the steady state)."""
    n = len(times)
    lo, hi = times[n // 10], times[n * 9 // 10]
    calls = n * 8 // 10
    rate, ideal = calls / (hi - lo), in_flight / latency
    cpu_ms = 1000 * (tree.cpu_at(hi) - tree.cpu_at(lo)) / calls
    return (f"in_flight={in_flight} calls_per_s={rate:.1f} ideal={ideal:.1f} pct={100 * rate / ideal:.0f} "
            f"peak_rss_mb={tree.peak_rss / 2**20:.0f} cpu_ms_per_call={cpu_ms:.1f}")


def run(args: argparse.Namespace, tmp: Path) -> str:
    bench = write_benchmark(tmp / "bench", args.jobs)
    stub, port = start_stub(args.latency, args.tool_turns)
    cmd = [
        sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "benchmark.limit=null",
        "grid.benchmark=[native]", f"grid.method=[{args.method}]", "grid.model=[openai]", "model=openai",
        f"model.base_url=http://127.0.0.1:{port}/v1", "model.name=stub", "model.concurrency=0", "model.cache=off", "judge=none",
        "tracker=none", f"out={tmp / 'out'}", "sweep=bench", f"agent.max_turns={args.tool_turns + 4}",
        f"cluster.max_in_flight={args.in_flight}", f"env.sandbox={args.sandbox}", f"agent.work_dir={tmp / 'work'}",
        f"env.shell_session={str(args.shell_session).lower()}",
        *([f"cluster.actors={args.actors}"] if args.actors else []),
    ]
    try:
        sweep = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=open(tmp / "sweep.log", "w"),
                                 env={**os.environ, "PYTHONPATH": str(REPO)})
        tree = Tree(sweep.pid)
        wall = tree.follow(sweep)
        if sweep.returncode != 0:
            raise SystemExit(f"the sweep failed (exit {sweep.returncode}):\n{(tmp / 'sweep.log').read_text()[-3000:]}")
        times = stub_times(port)
    finally:
        stub.kill()
    print(f"{args.jobs} jobs, {len(times)} model calls in {wall:.1f} s wall (Ray start-up and the report included)")
    return result_line(times, tree, args.in_flight, args.latency)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=None, help="default: 4 per slot in flight")
    ap.add_argument("--tool-turns", type=int, default=6, help="bash calls per episode before its answer")
    ap.add_argument("--method", default="dci", help="the method of every job (e.g. dci, runningtab)")
    ap.add_argument("--sandbox", default="auto", help="env.sandbox: auto | bwrap | none")
    ap.add_argument("--actors", type=int, default=None, help="cluster.actors (default: one per free CPU)")
    ap.add_argument("--shell-session", type=lambda v: v.lower() in ("1", "true", "yes"), default=True,
                    help="env.shell_session: true (one sandbox per job) | false (one per bash call)")
    args = ap.parse_args()
    args.jobs = args.jobs or 4 * args.in_flight
    with tempfile.TemporaryDirectory() as tmp:
        print(run(args, Path(tmp)))


if __name__ == "__main__":
    main()
