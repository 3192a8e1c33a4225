"""Hand-run benchmark of W&B tracking at sweep scale (numbers go in docs/measurements.md, "W&B tracking").

    .venv/bin/python bench/bench_wandb.py                          # 20,000 jobs in 135 cells
    .venv/bin/python bench/bench_wandb.py --jobs 2000 --cells 20 --per-job 20

Writes fabricated job records (job.json, result.json, scores.json with 15 rubrics, tab.json) into a
temporary sweep, then feeds them to the W&B tracker (offline) the way the driver does, and prints
the driver-side time per job (`runners.sweep.bookkeeping.track`, what the scheduling loop pays, and the share
of it in the tracker's `log_job`), how long the background
writer took for all cell runs, and the summary run. `--per-job K` also times K runs of the old
one-run-per-job logging for comparison. `track` reads job.json, scores.json and tab.json, as the
driver does for every finished job.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from runners.config.runner import TrackerConfig
from runners.core.record_types import Cell


def write_jobs(sdir: Path, jobs: int, cells: int) -> dict[str, Cell]:
    plan = {}
    per_cell = -(-jobs // cells)
    for i in range(jobs):
        c, t = divmod(i, per_cell)
        cell = Cell("bench", f"method{c % 5}", f"model{c // 5 % 3}", c // 15)
        job_id = f"{cell.name}__task{t:04d}"
        plan[job_id] = cell
        d = sdir / job_id
        d.mkdir(parents=True)
        cfg = {"method": {"name": cell.method, "tab": {"capture": True}}, "model": {"api_key_env": "OPENAI_API_KEY"}}
        (d / "job.json").write_text(json.dumps({"job_id": job_id, "benchmark": cell.benchmark, "task_id": f"task{t:04d}",
                                                "method": cell.method, "model": cell.model, "seed": cell.seed, "config": cfg}))
        (d / "result.json").write_text(json.dumps({"job_id": job_id, "stop_reason": "finished", "turns": 12, "tokens_in": 40000,
                                                   "tokens_out": 900, "cost": 0.004, "wall_s": 31.5, "attempt": 1}))
        items = [{"kind": "rubric", "index": k, "text": f"rubric {k} of task {t}", "passed": (t + k) % 3 > 0} for k in range(15)]
        (d / "scores.json").write_text(json.dumps({"metrics": {"pass_rate": 0.6, "tcr70": 0.0}, "items": items}))
        (d / "tab.json").write_text(json.dumps({"requirements": [{}] * 8, "read_log": [{"path": "a.md", "chars": 900}] * 20}))
    return plan


def bench_cells(sdir: Path, plan: dict[str, Cell]) -> dict[str, Any]:
    from runners.sweep.bookkeeping import track
    from runners.tracking.wandb_runs import WandbTracker

    tracker = WandbTracker(TrackerConfig(kind="wandb", mode="offline"), "bench", sdir, plan)
    driver = in_log_job = 0.0
    log_job = tracker.log_job

    def timed(*a: Any) -> None:
        nonlocal in_log_job
        t = time.perf_counter()
        log_job(*a)
        in_log_job += time.perf_counter() - t

    tracker.log_job = timed  # type: ignore[method-assign]
    start = time.perf_counter()
    for job_id in plan:
        t = time.perf_counter()
        track(sdir / job_id, tracker, None)
        driver += time.perf_counter() - t
    fed = time.perf_counter()
    tracker.wait()
    written = time.perf_counter()
    tracker.log_summary({"table1": (["method", "pass_rate"], [[f"method{i}", 0.5] for i in range(5)])})
    return {"driver_ms_per_job": 1000 * driver / len(plan), "log_job_us_per_job": 1e6 * in_log_job / len(plan), "feed_s": fed - start, "cells_written_s": written - start,
            "summary_s": time.perf_counter() - written, "runs": len(list((sdir / "wandb").glob("offline-run-*")))}


def bench_per_job(sdir: Path, plan: dict[str, Cell], k: int) -> float:
    """Seconds per job of the old logging: a run per job with its metrics and its rubric table."""
    import wandb

    ids = list(plan)[:k]
    start = time.perf_counter()
    for job_id in ids:
        job = json.loads((sdir / job_id / "job.json").read_text())
        scores = json.loads((sdir / job_id / "scores.json").read_text())
        run = wandb.init(project="runningtab", group="bench-old", dir=str(sdir / "old"), mode="offline", name=job_id,
                         job_type=job["method"], config=job["config"], reinit="create_new",
                         settings=wandb.Settings(silent=True, console="off", disable_git=True, x_disable_stats=True))
        run.log(scores["metrics"])
        cols = sorted({c for it in scores["items"] for c in it})
        run.log({"items": wandb.Table(columns=cols, data=[[it.get(c) for c in cols] for it in scores["items"]])})
        run.finish()
    return (time.perf_counter() - start) / len(ids)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--cells", type=int, default=135)
    ap.add_argument("--per-job", type=int, default=0, help="also time this many runs of one-run-per-job logging")
    args = ap.parse_args()
    os.environ.setdefault("WANDB_MODE", "offline")
    sdir = Path(tempfile.mkdtemp(prefix="bench_wandb_")) / "bench"
    try:
        t = time.perf_counter()
        plan = write_jobs(sdir, args.jobs, args.cells)
        print(f"wrote {args.jobs} records in {time.perf_counter() - t:.1f} s")
        r = bench_cells(sdir, plan)
        if args.per_job:
            r["old_s_per_job"] = bench_per_job(sdir, plan, args.per_job)
        print(" ".join(f"{k}={v:.3f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()))
    finally:
        shutil.rmtree(sdir.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
