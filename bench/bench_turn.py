"""Where the CPU of an agent turn goes: one episode of K turns against a zero-latency stub server.

    .venv/bin/python bench/bench_turn.py [--turns 50] [--methods dci,runningtab] [--sandboxes bwrap,none]
                                         [--profile] [--repeat 3]

Each turn is one model call (the stub replies with a tool call: `cat` of a workspace file, `ls` of
a folder, or `read` of a file, in rotation) and one tool call. The stub runs in its own process, so
this process's CPU (time.process_time) is the runner's alone. CPU is split by phase, each phase
exclusive of the phases nested in it:

- model: the model client's `complete` (request body, JSON encode/decode, httpx, reply parsing);
- tool: the tool call in this process (bash: spawn, pipe, wait; read: the file read);
- capture: the plugins' observation of each tool result (the tab's capture and status line);
- context: context management and the message view sent to the model;
- record: appending each message to trajectory.jsonl;
- other: the rest of the episode (the loop, argument checks).

`children_ms` is the CPU of the tool subprocesses (bwrap or the reaper, bash, cat/ls), from
getrusage(RUSAGE_CHILDREN). `job_ms` is the once-per-job remainder (materialize, evaluator view,
tab record, deliverable diff), not per turn. The medians of `--repeat` episodes are reported; the
last line sums the configurations' median per-turn numbers for the first method/sandbox pair.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

PHASES = ("model", "tool", "capture", "context", "record")

_STUB = """
import itertools, json, sys, time
sys.path.insert(0, sys.argv[1])
from tests.helpers.http_stub import Reply, StubServer, completion, tool_call
calls = itertools.cycle([
    ("bash", {"command": "cat docs/notes.txt"}),
    ("bash", {"command": "ls -la docs"}),
    ("read", {"path": "docs/report.md"}),
])
class Cycling(StubServer):
    def _next(self):
        name, args = next(calls)
        return Reply(body=completion(None, [tool_call("c", name, json.dumps(args))]))
with Cycling() as s:
    print(s.url, flush=True)
    sys.stdin.read()
"""


class Phases:
    """Exclusive CPU time per phase: a phase entered inside another is not counted in the outer one."""

    def __init__(self) -> None:
        self.ms: dict[str, float] = dict.fromkeys(PHASES, 0.0)
        self._stack: list[list[float]] = []

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        frame = [time.process_time(), 0.0]  # start, CPU of nested phases
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            spent = time.process_time() - frame[0]
            self.ms[name] += 1000 * (spent - frame[1])
            if self._stack:
                self._stack[-1][1] += spent

    def wrap(self, owner: Any, attr: str, name: str, static: bool = False) -> None:
        """Replace `owner.attr` with a timed version (process-wide: this is a bench, not a library)."""
        inner: Callable[..., Any] = getattr(owner, attr)

        def timed(*a: Any, **k: Any) -> Any:
            with self.phase(name):
                return inner(*a, **k)

        setattr(owner, attr, staticmethod(timed) if static else timed)


def instrument(ph: Phases) -> None:
    import envs.context
    import runners.agent.loop
    from envs.bash_tool import BashTool
    from envs.environment import WorkspaceEnv
    from runners.core.job_record import Trajectory
    from runners.models.openai_compat import OpenAICompatModel

    ph.wrap(OpenAICompatModel, "complete", "model")
    ph.wrap(BashTool, "run", "tool")
    ph.wrap(WorkspaceEnv, "_read", "tool")
    ph.wrap(WorkspaceEnv, "_observe", "capture", static=True)
    if hasattr(runners.agent.loop, "_model_view"):  # before the incremental view
        ph.wrap(runners.agent.loop, "_model_view", "context")
    if hasattr(envs.context, "ContextView"):
        ph.wrap(envs.context.ContextView, "__call__", "context")
    ph.wrap(Trajectory, "__call__", "record")


def workspace() -> dict[str, str]:
    notes = "".join(f"note {i}: the budget line {i} is {i * 37} EUR\n" for i in range(60))
    report = "# Report\n\n" + "".join(f"Paragraph {i}. " + "Words of the report. " * 8 + "\n\n" for i in range(40))
    files = {"w/docs/notes.txt": notes, "w/docs/report.md": report}
    files.update({f"w/docs/extra_{i}.txt": f"extra {i}\n" for i in range(20)})
    return files


def episode(bench: Path, out: Path, url: str, method: str, sandbox: str, turns: int, ph: Phases,
            prof: cProfile.Profile | None) -> dict[str, float]:
    from eval.benchmarks import load_benchmark
    from runners.job.identity import job_id
    from runners.job.run import run_job
    from tests.conftest import compose_root

    cfg = compose_root([
        "benchmark=native", f"benchmark.path={bench}", f"method={method}", "model=openai", f"model.base_url={url}",
        "model.name=stub", "judge=none", f"agent.max_turns={turns}", f"env.sandbox={sandbox}", "agent.context_level=3",
    ])
    task = load_benchmark(cfg.benchmark).task("t0")
    jid = job_id(cfg, "t0")
    ph.ms = dict.fromkeys(PHASES, 0.0)
    ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    c0, t0 = time.process_time(), time.monotonic()
    if prof is not None:
        prof.enable()
    ep_cpu = [0.0]
    import runners.job.run

    inner = runners.job.run.run_episode_async

    async def timed_episode(*a: Any, **k: Any) -> Any:
        e0 = time.process_time()
        try:
            return await inner(*a, **k)
        finally:
            ep_cpu[0] = time.process_time() - e0

    runners.job.run.run_episode_async = timed_episode
    try:
        result = run_job(cfg, task, out / f"{method}-{sandbox}-{time.monotonic_ns()}" / jid, jid)
    finally:
        runners.job.run.run_episode_async = inner
        if prof is not None:
            prof.disable()
    cpu, wall = time.process_time() - c0, time.monotonic() - t0
    ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    n = result["turns"]
    if result["stop_reason"] != "turn_budget" or n != turns:
        raise SystemExit(f"episode ended early: {result['stop_reason']} after {n} turns ({result['error']})")
    per = {k: v / n for k, v in ph.ms.items()}
    episode_ms = 1000 * ep_cpu[0] / n
    per["other"] = episode_ms - sum(per.values())
    per["cpu_ms_per_turn"] = episode_ms
    per["children_ms"] = 1000 * ((ch1.ru_utime - ch0.ru_utime) + (ch1.ru_stime - ch0.ru_stime)) / n
    per["wall_ms"] = 1000 * wall / n
    per["job_ms"] = 1000 * (cpu - ep_cpu[0])
    return per


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=50)
    ap.add_argument("--methods", default="runningtab,dci")
    ap.add_argument("--sandboxes", default="none,bwrap")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="print the top functions by cumulative time")
    args = ap.parse_args()

    from tests.conftest import write_native

    ph = Phases()
    instrument(ph)
    prof = cProfile.Profile() if args.profile else None
    stub = subprocess.Popen([sys.executable, "-c", _STUB, str(REPO)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert stub.stdout is not None
    url = stub.stdout.readline().strip()
    first: dict[str, float] | None = None
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tmp_path = Path(tmp)
            tasks = [{"id": "t0", "prompt": "Summarize the notes.", "workspace": "w", "answer": "0"}]
            bench = write_native(tmp_path / "bench", tasks, workspace())
            for method in args.methods.split(","):
                for sandbox in args.sandboxes.split(","):
                    episode(bench, tmp_path, url, method, sandbox, 3, ph, None)  # warm: imports, caches
                    runs = [episode(bench, tmp_path, url, method, sandbox, args.turns, ph, prof) for _ in range(args.repeat)]
                    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
                    first = first or med
                    print(f"method={method} sandbox={sandbox} " + " ".join(f"{k}={v:.2f}" for k, v in med.items()))
    finally:
        assert stub.stdin is not None
        stub.stdin.close()
        stub.wait()
    if prof is not None:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
        print(s.getvalue())
    assert first is not None
    keys = ("cpu_ms_per_turn", "model", "tool", "capture", "context", "record")
    print(" ".join(f"{k if k == 'cpu_ms_per_turn' else k + '_ms'}={first[k]:.2f}" for k in keys))


if __name__ == "__main__":
    main()
