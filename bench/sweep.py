"""Sweep throughput against a local OpenAI-compatible server with a fixed latency per model call.

    python -m bench.sweep --in-flight 256 --latency 2.0 --jobs 1024 [--method dci] [--against REV]

Each job is one episode of 7 model calls: 6 `bash` calls (`cat notes.txt`, `ls`, in the job's own
workspace), then an answer. The real sweep entry point runs them (`python -m runners.sweep`, local
Ray, episode actors) against `bench/stub_model.py`, a separate process not counted below.

The sweep runs as a user's would: every setting the bench does not pin is the sweep's default — the
model-call cache (`read_write`, in `<out>/.cache/calls`, so a fresh, empty cache each run: every call
a miss that is stored), the sweep's governor, the benchmark's own judge, W&B, each job's pages and the
shown log, bubblewrap when it works. Pinned, because a bench must: the benchmark, its one grid cell
and the stub model (what is measured); `out`, `agent.work_dir` and `tracker.dir` under the bench's
temp folder, `$RUNNINGTAB_CALL_CACHE` unset and W&B offline (a bench leaves nothing behind, shares no
cache with earlier runs and uploads nothing); `agent.max_turns` (room for the episode);
`cluster.max_in_flight` (the load). `--sandbox`, `--shell-session` and `--actors` are passed only
when given. Measured over the middle 80% of model calls (the steady state):

- calls_per_s, against the ideal in_flight / latency (the model's own limit);
- peak_rss_mb: the RSS of every process of the sweep (driver, Ray's processes, the actors, their
  bash commands), summed at each sample, its peak;
- cpu_ms_per_call: the CPU time of those processes (their reaped children included) per call;
- peak_pss_mb: the same processes' proportional set size (smaps_rollup, read every `PSS_EVERY`th
  sample), its peak: RSS summed over processes counts a shared page (libc, a shell's text) once per
  process, so with a shell session per job (bubblewrap and its `sh`, ~1.8 MB RSS each, ~0.15 MB of it
  their own) the RSS sum is mostly the same pages counted again; PSS counts each page once in all.

Before it, the memory by process kind at each peak, and where a turn's time goes besides the model's
latency (bench/turn_timeline.py, from the records' message times). The last line is
`in_flight=N calls_per_s=X ideal=Y pct=Z peak_rss_mb=M cpu_ms_per_call=C peak_pss_mb=P`.
`--jitter J` draws each call's wait evenly from latency × (1 ± J), the same mean, as a real API's
vary: without it the jobs, all alike, start and end in waves of `--in-flight`, which a sweep of
real tasks does not. `--against REV` runs the same workload over another revision too (`git archive REV` into the temp
folder, the same venv, its folder first on PYTHONPATH), and `--inspect PATH` through Inspect AI
(bench/inspect/sweep.py: PATH is its `inspect`, in a venv of its own), alternating them `--rounds`
times, and prints each run's line and the ratios (this checkout / the other): compare figures taken
side by side, in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench import stub_model, turn_timeline

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
NOTES = "".join(f"note {i}: the budget line {i} is {i * 37 % 1000} euros\n" for i in range(20))


def write_benchmark(root: Path, jobs: int) -> Path:
    """A native benchmark of `jobs` tasks sharing one small workspace. Each prompt names its task, so
    no two jobs make the same call (the model-call cache would answer the repeats)."""
    (root / "workspaces" / "w").mkdir(parents=True)
    (root / "workspaces" / "w" / "notes.txt").write_text(NOTES)
    tasks = [
        {"id": f"t{i}", "prompt": f"Task {i}: sum the budget lines in notes.txt.", "workspace": "w", "answer": "0"}
        for i in range(jobs)
    ]
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    return root


PSS_EVERY = 4  # PSS (smaps_rollup, costly for ~2,000 processes) is read at every 4th sample


def kind(comm: str) -> str:
    """The process kind a breakdown groups by: its name, the episode actors' and Ray's workers' as one each."""
    if comm.startswith("ray::EpisodeA"):
        return "episode actor"
    if comm.startswith("ray::"):
        return "ray worker (" + comm[5:] + ")"
    return comm


def pss_of(pid: int) -> int:
    """The process's proportional set size in bytes (shared pages split among their sharers), 0 when gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Tree:
    """Samples the RSS and CPU time of a process and all its descendants (from /proc), and every
    `PSS_EVERY`th sample their PSS; keeps the breakdown by process kind at each peak."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_rss = 0
        self.peak_pss = 0
        self.rss_kinds: dict[str, tuple[int, int]] = {}  # at the RSS peak: kind -> (processes, bytes)
        self.pss_kinds: dict[str, tuple[int, int]] = {}  # at the PSS peak
        self.cpu: dict[int, float] = {}  # pid -> its last seen CPU seconds (own + reaped children)
        self.samples: list[tuple[float, float]] = []  # (time, total CPU seconds)

    def sample(self) -> None:
        stats = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                try:
                    with open(f"/proc/{name}/stat") as f:
                        head, tail = f.read().rsplit(")", 1)
                except OSError:
                    continue
                stats[int(name)] = [head.split("(", 1)[1], *tail.split()]
        children: dict[int, list[int]] = {}
        for pid, fields in stats.items():
            children.setdefault(int(fields[2]), []).append(pid)
        with_pss = len(self.samples) % PSS_EVERY == 0
        todo, rss, pss = [self.pid], 0, 0
        rss_kinds: dict[str, tuple[int, int]] = {}
        pss_kinds: dict[str, tuple[int, int]] = {}
        while todo:
            pid = todo.pop()
            if pid in stats:
                f = stats[pid]
                self.cpu[pid] = sum(int(x) for x in f[12:16]) / TICK  # utime stime cutime cstime
                k = "driver" if pid == self.pid else kind(f[0])
                n, b = rss_kinds.get(k, (0, 0))
                rss_kinds[k] = (n + 1, b + int(f[22]) * PAGE)
                rss += int(f[22]) * PAGE
                if with_pss:
                    p = pss_of(pid)
                    n, b = pss_kinds.get(k, (0, 0))
                    pss_kinds[k] = (n + 1, b + p)
                    pss += p
            todo += children.get(pid, [])
        if rss > self.peak_rss:
            self.peak_rss, self.rss_kinds = rss, rss_kinds
        if pss > self.peak_pss:
            self.peak_pss, self.pss_kinds = pss, pss_kinds
        self.samples.append((time.time(), sum(self.cpu.values())))

    def breakdown(self) -> str:
        """The peaks by process kind: processes, RSS MB at the RSS peak, PSS MB at the PSS peak."""
        kinds = sorted(set(self.rss_kinds) | set(self.pss_kinds), key=lambda k: -self.rss_kinds.get(k, (0, 0))[1])
        return "\n".join(f"  {k:<34} {self.rss_kinds.get(k, (0, 0))[0]:>5} processes  rss {self.rss_kinds.get(k, (0, 0))[1] / 2**20:8.0f} MB"
                         f"  pss {self.pss_kinds.get(k, (0, 0))[1] / 2**20:8.0f} MB" for k in kinds)

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


def start_stub(latency: float, tool_turns: int, arg: str = "command", jitter: float = 0.0) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "bench.stub_model", f"--latency={latency}", f"--tool-turns={tool_turns}",
                             f"--arg={arg}", f"--jitter={jitter}"], cwd=REPO, stdout=subprocess.PIPE, text=True)
    line = proc.stdout.readline() if proc.stdout else ""
    if not line.startswith("port="):
        proc.kill()
        raise SystemExit(f"the stub server did not start: {line!r}")
    return proc, int(line.strip().split("=")[1])


def stub_times(port: int) -> list[float]:
    """When each model call reached the stub, in order."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats") as r:
        return sorted(json.load(r)["times"])


@dataclass
class Result:
    """One run's figures, over the middle 80% of its model calls (the steady state)."""

    in_flight: int
    calls_per_s: float
    ideal: float
    peak_rss_mb: float
    cpu_ms_per_call: float
    peak_pss_mb: float

    @property
    def pct(self) -> float:
        return 100 * self.calls_per_s / self.ideal

    def line(self) -> str:
        return (f"in_flight={self.in_flight} calls_per_s={self.calls_per_s:.1f} ideal={self.ideal:.1f} pct={self.pct:.0f} "
                f"peak_rss_mb={self.peak_rss_mb:.0f} cpu_ms_per_call={self.cpu_ms_per_call:.1f} peak_pss_mb={self.peak_pss_mb:.0f}")


def result(times: list[float], tree: Tree, in_flight: int, latency: float) -> Result:
    n = len(times)
    lo, hi = times[n // 10], times[n * 9 // 10]
    calls = n * 8 // 10
    cpu_ms = 1000 * (tree.cpu_at(hi) - tree.cpu_at(lo)) / calls
    return Result(in_flight, calls / (hi - lo), in_flight / latency, tree.peak_rss / 2**20, cpu_ms, tree.peak_pss / 2**20)


def sweep_command(args: argparse.Namespace, bench: Path, tmp: Path, port: int) -> list[str]:
    """The sweep's command line: only what the bench pins (see the docstring); the rest is the default."""
    return [
        sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "benchmark.limit=null",
        "grid.benchmark=[native]", f"grid.method=[{args.method}]", "grid.model=[openai]", "model=openai",
        f"model.base_url=http://127.0.0.1:{port}/v1", "model.name=stub", f"out={tmp / 'out'}", "sweep=bench",
        f"agent.work_dir={tmp / 'work'}", f"tracker.dir={tmp / 'wandb'}", f"agent.max_turns={args.tool_turns + 4}",
        f"cluster.max_in_flight={args.in_flight}",
        *([f"env.sandbox={args.sandbox}"] if args.sandbox else []),
        *([f"env.shell_session={args.shell_session}"] if args.shell_session else []),
        *([f"cluster.actors={args.actors}"] if args.actors else []),
    ]


def sweep_env(checkout: Path) -> dict[str, str]:
    """The sweep's environment: this one, with `checkout` first on PYTHONPATH, no shared call cache, W&B offline."""
    env = {k: v for k, v in os.environ.items() if k != "RUNNINGTAB_CALL_CACHE"}
    return {**env, "PYTHONPATH": str(checkout), "WANDB_MODE": "offline", "WANDB_SILENT": "true"}


@contextmanager
def launched(args: argparse.Namespace, tmp: Path, checkout: Path) -> Iterator[tuple[subprocess.Popen, int]]:
    """The workload's benchmark written into `tmp`, its model stub up, and the sweep over `checkout`
    launched (stderr in `tmp/sweep.log`): (the sweep's process, the stub's port). The stub stops on leaving."""
    bench = write_benchmark(tmp / "bench", args.jobs)
    stub, port = start_stub(args.latency, args.tool_turns, jitter=args.jitter)
    try:
        with open(tmp / "sweep.log", "w") as log:
            sweep = subprocess.Popen(sweep_command(args, bench, tmp, port), cwd=checkout, stdout=subprocess.DEVNULL,
                                     stderr=log, env=sweep_env(checkout))
        yield sweep, port
    finally:
        stub.kill()
        stub.wait()


def run(args: argparse.Namespace, tmp: Path, checkout: Path = REPO) -> Result:
    """One sweep of the workload over the code in `checkout`, in the fresh folder `tmp`."""
    tmp.mkdir(parents=True)
    with launched(args, tmp, checkout) as (sweep, port):
        tree = Tree(sweep.pid)
        wall = tree.follow(sweep)
        if sweep.returncode != 0:
            raise SystemExit(f"the sweep in {checkout} failed (exit {sweep.returncode}):\n{(tmp / 'sweep.log').read_text()[-3000:]}")
        times = stub_times(port)
    print(f"{args.jobs} jobs, {len(times)} model calls in {wall:.1f} s wall (Ray start-up and the report included)", flush=True)
    print(f"memory by process kind, at the peaks:\n{tree.breakdown()}", flush=True)
    print(turn_timeline.summary(tmp / "out", args.latency), flush=True)
    if len(times) != args.jobs * (args.tool_turns + 1):
        print(f"warning: {args.jobs * (args.tool_turns + 1)} model calls expected: see the records in {tmp / 'out'}", flush=True)
    return result(times, tree, args.in_flight, args.latency)


def checkout_of(rev: str, into: Path) -> Path:
    """`rev` of this repository as files in `into` (git archive), checked to be what its sweep imports."""
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], capture_output=True, check=False)
    if archive.returncode != 0:
        raise SystemExit(f"--against {rev}: git archive failed: {archive.stderr.decode().strip()} (give a commit, branch or tag of {REPO})")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    probe = subprocess.run([sys.executable, "-c", "import runners; print(runners.__file__)"], cwd=into, env=sweep_env(into),
                           capture_output=True, text=True, check=False)
    if not probe.stdout.strip().startswith(str(into)):
        raise SystemExit(f"--against {rev}: its sweep would import runners from {probe.stdout.strip() or probe.stderr.strip()!r}, not {into}")
    return into


def ratios(here: Result, there: Result) -> str:
    return " ".join(f"{k}={getattr(here, k) / getattr(there, k):.2f}" for k in ("calls_per_s", "pct", "peak_rss_mb", "cpu_ms_per_call", "peak_pss_mb"))


def contenders(args: argparse.Namespace, tmp: Path) -> list[tuple[str, Callable[[Path], Result]]]:
    """What each round runs, by label: this checkout, `--against REV`'s, Inspect AI (`--inspect`)."""
    out: list[tuple[str, Callable[[Path], Result]]] = [("this checkout", lambda d: run(args, d))]
    if args.against is not None:
        other = checkout_of(args.against, tmp / "against")
        out.append((args.against, lambda d: run(args, d, other)))
    if args.inspect is not None:
        from bench.inspect.sweep import run as run_inspect

        out.append(("Inspect AI", lambda d: run_inspect(args, d, args.inspect)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=None, help="default: 4 per slot in flight")
    ap.add_argument("--tool-turns", type=int, default=6, help="bash calls per episode before its answer")
    ap.add_argument("--jitter", type=float, default=0.0,
                    help="each model call waits latency × (1 ± J), drawn evenly (the same mean): jobs fall out of step")
    ap.add_argument("--method", default="dci", help="the method of every job (e.g. dci, runningtab)")
    ap.add_argument("--sandbox", default=None, help="env.sandbox: auto | bwrap | none (default: the sweep's, auto)")
    ap.add_argument("--actors", type=int, default=None, help="cluster.actors (default: the sweep's, one per free half CPU)")
    ap.add_argument("--shell-session", choices=("true", "false"), default=None,
                    help="env.shell_session: true (one sandbox per job) | false (one per bash call) (default: the sweep's, true)")
    ap.add_argument("--against", metavar="REV", default=None, help="also run the workload over revision REV of this repository")
    ap.add_argument("--inspect", metavar="PATH", type=Path, default=None,
                    help="also run the workload through Inspect AI: its `inspect` executable, in a venv of its own (bench/inspect/sweep.py)")
    ap.add_argument("--rounds", type=int, default=1, help="with --against or --inspect: how many times to run each, alternating")
    args = ap.parse_args()
    if (problem := stub_model.jitter_problem(args.jitter)) is not None:
        ap.error(problem)
    args.jobs = args.jobs or 4 * args.in_flight
    args.max_subprocesses = None
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        runs = contenders(args, tmp)
        if len(runs) == 1:
            print(run(args, tmp / "run").line())
            return
        got: dict[str, list[Result]] = {label: [] for label, _ in runs}
        for i in range(args.rounds):
            for j, (label, go) in enumerate(runs[:: 1 if i % 2 == 0 else -1]):
                got[label].append(go(tmp / f"run{i}_{j}"))
            here = got["this checkout"][-1]
            for label, _ in runs:
                print(f"round {i + 1}: {label}: {got[label][-1].line()}")
            for label, _ in runs[1:]:
                print(f"round {i + 1}: ratio (this checkout / {label}): {ratios(here, got[label][-1])}", flush=True)
        if args.rounds > 1:
            keys = ("calls_per_s", "ideal", "peak_rss_mb", "cpu_ms_per_call", "peak_pss_mb")
            mean = {label: Result(args.in_flight, *(statistics.mean(getattr(r, k) for r in rs) for k in keys)) for label, rs in got.items()}
            for label, _ in runs:
                print(f"mean: {label}: {mean[label].line()}")
            for label, _ in runs[1:]:
                print(f"mean: ratio (this checkout / {label}): {ratios(mean['this checkout'], mean[label])}")


if __name__ == "__main__":
    main()
