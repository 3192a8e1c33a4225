"""Where a small sweep's seconds go (issue 38.5): runs `python -m runners.sweep OVERRIDES…` in a
child process whose driver steps are timed, and prints when each began and ended, in seconds since
the command was launched.

    python bench/startup_timeline.py model=scripted model.script=S.jsonl grid.benchmark=[builtin] \
        benchmark.limit=1 'grid.method=[dci,runningtab]' judge=rule model.cache=off out=/tmp/t sweep=s

Run it from the checkout to measure (its `runners` is imported from the working directory, so it
also times another revision: `cd /tmp/base && PYTHONPATH=. python /work/…/bench/startup_timeline.py`).
The wrappers only time; they change nothing the sweep does."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from typing import Any

T0 = "RT_TIMELINE_T0"


def _mark(what: str) -> None:
    print(f"@timeline {time.time() - float(os.environ[T0]):7.2f} s  {what}", file=sys.stderr, flush=True)


def _timed(owner: Any, name: str, label: str, once: bool = False) -> None:
    """Wrap `owner.name` so that its calls mark `label` begun and ended (`once`: the first end only)."""
    inner = getattr(owner, name)
    seen: list[bool] = []

    @functools.wraps(inner)
    def wrapper(*a: Any, **k: Any) -> Any:
        if not once:
            _mark(f"{label} ...")
        out = inner(*a, **k)
        if not (once and seen):
            _mark(f"{label} done")
            seen.append(True)
        return out

    setattr(owner, name, wrapper)


def child() -> None:
    _mark("interpreter up")
    import atexit

    atexit.register(_mark, "exit handlers done (Ray's shutdown among them)")  # registered first, runs last
    import ray

    from runners.sweep import driver, grid, model_servers, progress, scheduler, watch
    from runners.tracking import tracker

    _mark("driver imports done")
    _timed(driver, "run_sweep", "sweep (Hydra compose before it)")
    _timed(grid, "expand", "grid, benchmark and preflight")
    _timed(tracker, "build_tracker", "tracker (W&B) init")
    _timed(ray, "init", "ray.init")
    _timed(model_servers.ModelServers, "__enter__", "model servers")
    _timed(watch.SweepWatch, "__enter__", "governor start")
    if hasattr(watch.SweepWatch, "_start_governor"):  # started beside the actors, on the watch's thread
        _timed(watch.SweepWatch, "_start_governor", "governor up (its own thread)")
    _timed(scheduler, "run_all", "run_all (actors start, jobs)")
    _timed(scheduler._Fleet, "came_up", "an actor up", once=True)
    _timed(progress.Progress, "start", "first job started", once=True)
    _timed(progress.Progress, "finish", "a job finished")
    _timed(driver, "_report", "report")
    _timed(ray, "shutdown", "ray.shutdown")
    from runners.preflight.command_line import run_cli
    from runners.sweep.show import show_if_asked

    sys.argv = ["runners.sweep", *sys.argv[2:]]
    profile = os.environ.get("RT_TIMELINE_PROFILE")  # a file: the driver's cProfile, for `pstats`
    try:
        if profile:
            import cProfile

            cProfile.runctx("run_cli(main, 'runners.sweep', show=show)", {"run_cli": run_cli}, {"main": driver.main, "show": show_if_asked}, profile)
        else:
            run_cli(driver.main, "runners.sweep", show=show_if_asked)
    finally:
        _mark("main returned")


def main() -> None:
    if sys.argv[1:2] == ["--child"]:
        child()
        return
    env = {**os.environ, T0: repr(time.time()), "WANDB_MODE": os.environ.get("WANDB_MODE", "offline")}
    r = subprocess.run([sys.executable, __file__, "--child", *sys.argv[1:]], env=env, stderr=subprocess.PIPE, text=True)
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("@timeline")]
    print("\n".join(ln.removeprefix("@timeline ") for ln in lines))
    print(f"{time.time() - float(env[T0]):7.2f} s  process exited ({r.returncode})")
    if r.returncode:
        print(r.stderr[-3000:], file=sys.stderr)


if __name__ == "__main__":
    main()
