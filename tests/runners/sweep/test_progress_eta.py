"""The sweep's ETA (issue 38 item 4): fed a clock and job events, it must not grow while a long job
runs after the others have finished (it grew linearly: 7m30s, 10m, 12m30s, 15m)."""

from __future__ import annotations

import io

from rich.console import Console

from runners.core.record_types import Result
from runners.job.identity import JobSpec
from runners.sweep.progress import Progress
from runners.sweep.scheduler import Outcome
from tests.conftest import compose_root


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def progress(n: int, clock: Clock) -> tuple[Progress, list[JobSpec]]:
    cfg = compose_root(["model=scripted", "judge=none"])
    specs = [JobSpec(f"j{i}", cfg, f"t{i}") for i in range(n)]
    return Progress(specs, 0, console=Console(file=io.StringIO(), width=300), clock=clock), specs


def ok(spec: JobSpec, wall_s: float) -> Outcome:
    return Outcome(spec, "ok", 1, wall_s, result=Result("", "finished", sandbox="bwrap"))


def test_the_eta_does_not_grow_while_the_last_long_job_runs() -> None:
    clock = Clock()
    p, specs = progress(4, clock)
    for s in specs:
        p.start(s)
    clock.now += 150
    for s in specs[:3]:
        p.finish(ok(s, 150.0))
    etas = []
    for _ in range(4):  # the fourth job keeps running, 2m30s at a time
        clock.now += 150
        etas.append(p.eta_s())
        assert "ETA" in p.status()
    assert all(e is not None for e in etas)
    assert etas == sorted(etas, reverse=True), etas  # never grows while nothing else happens
    assert "past the mean" in p.status()  # says the job overran, rather than inventing a time


def test_the_eta_counts_queued_jobs_over_the_running_slots() -> None:
    clock = Clock()
    p, specs = progress(10, clock)
    for s in specs[:2]:
        p.start(s)
    clock.now += 60
    for s in specs[:2]:
        p.finish(ok(s, 60.0))
    for s in specs[2:4]:  # two slots busy, six jobs queued, a minute per job
        p.start(s)
    clock.now += 20
    eta = p.eta_s()
    assert eta is not None and abs(eta - (2 * 40 + 6 * 60) / 2) < 1e-6
    assert "ETA 3m40s" in p.status()
