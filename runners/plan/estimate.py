"""The plan's sums: jobs, cost and job time per benchmark, per model and in all, and the sweep's wall time.

The wall time is the jobs' time over what runs at once: `cluster.max_in_flight` jobs, and no more of
one provider's than its `model.concurrency` calls (a job has one call in flight at a time), nor of
a served model's than its replicas' slots; never less than one job's own time. A job's time is its
calls × `plan.latency_s`, a stated model latency (the tool's run is small beside it).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from runners.config.schema import AXES, RootConfig
from runners.plan.figures import ZERO, Pilot, Span, per_job, read_pilot
from runners.plan.tasks import TaskCount, count_tasks


@dataclass
class Row:
    """One benchmark of the grid: its tasks, its cells, and (when counted) its jobs, cost and job time."""

    benchmark: str
    tasks: TaskCount
    cells: int
    usd: Span = ZERO
    job_s: Span = ZERO  # the sum of its jobs' own time

    @property
    def jobs(self) -> int | None:
        return None if self.tasks.n is None else self.tasks.n * self.cells


@dataclass
class Plan:
    rows: list[Row]
    by_model: dict[str, Span]
    wall_s: Span
    calls: Span  # a job's model calls, over the counted cells
    in_flight: int
    bound: str  # what holds the wall time: the cluster's jobs in flight, or a provider's concurrency
    latency_s: float
    bases: dict[str, list[str]] = field(default_factory=dict)  # source: the entries of it used
    notes: list[str] = field(default_factory=list)  # what the sums leave out
    pilot: Pilot | None = None

    @property
    def jobs(self) -> int:
        return sum(r.jobs or 0 for r in self.rows)

    @property
    def usd(self) -> Span:
        total = ZERO
        for r in self.rows:
            total = total + r.usd
        return total


def make_plan(axes: dict[str, list[str]], seeds: list[int], configs: Sequence[RootConfig]) -> Plan:
    """The plan of the grid whose cells are `configs` (in `runners.sweep.grid.cells` order)."""
    root = configs[0]
    pilot = read_pilot(root.plan.pilot) if root.plan.pilot else None
    keys = list(itertools.product(*(axes[a] for a in AXES), seeds))
    rows: dict[str, Row] = {}
    by_model: dict[str, Span] = defaultdict(lambda: ZERO)
    load: dict[str, Span] = defaultdict(lambda: ZERO)  # job seconds by what caps them (a provider, a served model)
    caps: dict[str, int] = {}
    bases: dict[str, dict[str, None]] = defaultdict(dict)
    notes: dict[str, None] = {}
    calls: list[Span] = []
    longest = ZERO
    for key, cfg in zip(keys, configs, strict=True):
        axis = key[0]
        if axis not in rows:
            rows[axis] = Row(axis, count_tasks(axis, cfg), 0)
        row = rows[axis]
        row.cells += 1
        if row.tasks.n is None:
            continue
        job = per_job(cfg, pilot)
        bases[job.basis][job.entry] = None
        if job.note:
            notes[job.note] = None
        calls.append(job.calls)
        n = row.tasks.n
        job_s = job.calls * root.plan.latency_s
        longest = Span(max(longest.lo, job_s.lo), max(longest.hi, job_s.hi))
        row.usd, row.job_s = row.usd + job.usd * n, row.job_s + job_s * n
        by_model[cfg.model.id] = by_model[cfg.model.id] + job.usd * n
        cap_key, cap = _cap(cfg)
        if cap is not None:
            load[cap_key], caps[cap_key] = load[cap_key] + job_s * n, cap
    counted = [r for r in rows.values() if r.jobs]
    total_s = sum((r.job_s for r in counted), ZERO)
    in_flight = max(1, min(root.cluster.max_in_flight, sum(r.jobs or 0 for r in counted) or 1))
    wall, bound = total_s * (1 / in_flight), f"{in_flight} jobs in flight (cluster.max_in_flight={root.cluster.max_in_flight})"
    for k, s in load.items():
        if s.hi / caps[k] > wall.hi:
            wall, bound = s * (1 / caps[k]), f"{k}'s {caps[k]} calls at once"
    wall = Span(max(wall.lo, longest.lo), max(wall.hi, longest.hi))
    span = Span(min((c.lo for c in calls), default=0.0), max((c.hi for c in calls), default=0.0))
    return Plan(list(rows.values()), dict(by_model), wall, span, in_flight, bound, root.plan.latency_s,
                {b: list(e) for b, e in bases.items()}, list(notes), pilot)


def _cap(cfg: RootConfig) -> tuple[str, int | None]:
    """What limits the jobs of this cell's model running at once, and to how many (None: nothing of the model's)."""
    from runners.models.server import ServedModelConfig, needs_server

    m = cfg.model
    if needs_server(m) and isinstance(m, ServedModelConfig):
        from runners.sweep.model_servers import (
            replica_slots,  # (imports Ray: only for a served model)
        )

        slots = replica_slots(m)
        return f"model {m.id}'s replicas", None if slots is None else slots * m.server.replicas
    concurrency = getattr(m, "concurrency", None)
    base_url = getattr(m, "base_url", None)
    if not base_url or not concurrency:
        return m.id, None
    return f"{base_url.split('//')[-1].split('/')[0]} (model.concurrency)", int(concurrency)
