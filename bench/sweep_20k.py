"""A real sweep of 20,000 scripted jobs with `tracker=wandb` (offline), killed and resumed (run by hand).

    python -m bench.sweep_20k [--tasks 1000] [--seeds 10] [--kill-after 0.3] [--keep DIR]

Grid: a native benchmark of `--tasks` tasks × methods dci, runningtab × `--seeds` seeds (20,000
jobs, 20 grid cells by default); each job's scripted agent runs one sandboxed `bash cat` and
answers. The sweep is started with the real entry point, SIGKILLed (its whole process group) once
`--kill-after` of the jobs are in the ledger, and started again to completion. Checked at the end:
every job is in the ledger exactly once, and W&B has one run per grid cell plus one summary run.
Reported: wall time of each run, and the driver's own CPU time per job (its process alone, not
Ray's or the actors'), as the last line `jobs=N cells=C wandb_runs=R driver_ms_per_job=D …`.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runners.sweep.ledger import Ledger

REPO = Path(__file__).resolve().parent.parent
TICK = os.sysconf("SC_CLK_TCK")
SCRIPT = [{"tool_calls": [{"name": "bash", "arguments": {"command": "cat notes.txt"}}]},
          {"content": "Done. <FINAL_ANSWER>0</FINAL_ANSWER>"}]


def setup(root: Path, tasks: int) -> tuple[Path, Path]:
    ws = root / "bench" / "workspaces" / "w"
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text("the budget is 42 euros\n")
    lines = [
        {"id": f"t{i:05d}", "prompt": "What is the budget?", "workspace": "w", "answer": "42"}
        for i in range(tasks)
    ]
    (root / "bench" / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
    (root / "script.jsonl").write_text("".join(json.dumps(t) + "\n" for t in SCRIPT))
    return root / "bench", root / "script.jsonl"


def ledger_ids(sdir: Path) -> list[str]:
    return [e["job_id"] for e in Ledger(sdir).iter_entries()]


def driver_cpu_s(pid: int) -> float:
    """The driver process's own CPU seconds (utime + stime, not its children)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def kill_session(sid: int) -> None:
    """SIGKILL every process of session `sid`: the killed driver and the local Ray it started (its
    raylet, GCS and workers stay in the driver's session), and nothing else. `ray stop --force`, used
    here before, kills every Ray on the machine: another sweep's, or the test session's shared one."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                session = int(f.read().rsplit(")", 1)[1].split()[3])
        except (OSError, ValueError, IndexError):
            continue
        if session == sid:
            try:
                os.kill(int(name), signal.SIGKILL)
            except ProcessLookupError:
                pass


class LineCount:
    """The ledger's lines so far, counted on the bytes appended since the last look (reading and
    parsing every line each second costs the machine ~0.3 s a second at 100,000 jobs)."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.lines = path, 0, 0

    def __call__(self) -> int:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return 0
        self.offset += len(data)
        self.lines += data.count(b"\n")
        return self.lines


def run(cmd: list[str], log: Path, stop_at: int | None, sdir: Path, env: dict[str, str] | None = None) -> tuple[float, float, bool]:
    """Run the sweep (`env`: its environment, else this one's); SIGKILL it once `stop_at` ledger
    lines exist. Returns (wall, driver CPU, killed)."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=open(log, "w"), start_new_session=True,
                            env={**(os.environ if env is None else env), "PYTHONPATH": str(REPO), "WANDB_MODE": "offline"})
    cpu = 0.0
    lines = LineCount(sdir / "jobs.jsonl")
    while proc.poll() is None:
        try:
            cpu = driver_cpu_s(proc.pid)
        except OSError:
            pass
        if stop_at is not None and lines() >= stop_at:
            kill_session(proc.pid)
            proc.wait()
            return time.monotonic() - t0, cpu, True
        time.sleep(1.0)
    if proc.returncode != 0:
        raise SystemExit(f"the sweep failed (exit {proc.returncode}): {log.read_text()[-3000:]}")
    return time.monotonic() - t0, cpu, False


def sweep_cmd(root: Path, bench: Path, script: Path, seeds: int, in_flight: int) -> list[str]:
    """The sweep: the benchmark × dci, runningtab × `seeds` seeds, tracked to W&B offline under `root`."""
    return [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "benchmark.limit=null",
            "grid.benchmark=[native]", "grid.method=[dci,runningtab]", f"grid.seed=[{','.join(map(str, range(seeds)))}]",
            "grid.model=[scripted]", "model=scripted", f"model.script={script}", "model.cache=off", "tracker=wandb",
            f"tracker.dir={root / 'wandb-dir'}", f"out={root / 'out'}", "sweep=s20k", f"cluster.max_in_flight={in_flight}",
            f"agent.work_dir={root / 'work'}"]


def wandb_runs(root: Path) -> set[str]:
    """The W&B run ids written offline (a cell the kill interrupted is logged again under the same
    id: one run, two local folders)."""
    return {p.name.rsplit("-", 1)[1] for p in (root / "wandb-dir").rglob("offline-run-*") if p.is_dir()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=1000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--kill-after", type=float, default=0.3, help="fraction of jobs done before the SIGKILL")
    ap.add_argument("--in-flight", type=int, default=64)
    ap.add_argument(
        "--keep", type=Path, default=None, help="keep the sweep here (default: a temporary folder)"
    )
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="sweep20k-"))
    root.mkdir(parents=True, exist_ok=True)
    bench, script = setup(root, args.tasks)
    jobs = args.tasks * 2 * args.seeds
    cmd = sweep_cmd(root, bench, script, args.seeds, args.in_flight)
    sdir = root / "out" / "s20k"
    wall1, cpu1, killed = run(cmd, root / "run1.log", int(jobs * args.kill_after), sdir)
    done1 = len(ledger_ids(sdir))
    wall2, cpu2, _ = run(cmd, root / "run2.log", None, sdir)
    ids = ledger_ids(sdir)
    once = len(ids) == len(set(ids)) == jobs
    runs = wandb_runs(root)
    print(
        f"run 1: {wall1:.0f} s, killed={killed} with {done1} jobs in the ledger; run 2 (resume): {wall2:.0f} s"
    )
    print(f"ledger: {len(ids)} lines, {len(set(ids))} distinct jobs of {jobs}; each exactly once: {once}")
    print(f"jobs={jobs} cells={2 * args.seeds} wandb_runs={len(runs)} driver_ms_per_job={1000 * (cpu1 + cpu2) / jobs:.2f} "
          f"run1_s={wall1:.0f} run2_s={wall2:.0f} exactly_once={once} dir={root}")


if __name__ == "__main__":
    main()
