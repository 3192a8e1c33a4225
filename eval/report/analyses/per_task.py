"""Where a method wins and loses: per benchmark, harness and model, each task under every method on
the benchmark's headline metric (each seed's job, and the mean over the seeds with a result), and
the gain of one method over the baseline on the seeds both scored; tasks sorted by that gain, the
largest first, tasks without one last.

The gain is the sweep's treatment's (`report.treatment`, default RunningTab) over its baseline when
the grid ran both, else the first other method's (in the tables' order). A job's value is its own
aggregate (`stats.job_metrics`: its scores pooled as Table 1 pools them); errored and
unscored jobs have none (shown, never counted as 0).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from eval.report.analyses.leaderboard import headline
from eval.report.analyses.stats import job_metrics
from eval.report.load import Job, Sweep
from eval.report.method_names import harness_key, method_key


@dataclass
class TaskCell:
    jobs: list[Job]  # the task's jobs of one method, by seed (errored and unscored included)
    mean: float | None  # the headline metric over the seeds with a result (a share, 0-1)


@dataclass
class TaskRow:
    task: str
    cells: dict[str, TaskCell]  # by method
    gain: float | None  # compared − baseline, mean over the seeds both have a result for (a share)


@dataclass
class TaskGrid:
    """One benchmark × harness × model: tasks × methods."""

    benchmark: str
    harness: str
    model: str
    metric: str
    methods: list[str]  # in the tables' order, the baseline first
    baseline: str | None  # None when the grid has no baseline job
    compared: str | None  # the method whose gain sorts the rows
    rows: list[TaskRow]


def value(job: Job, metric: str) -> float | None:
    """The job's headline metric, None when it is not a result (errored, unscored, or without it)."""
    if job.scores is None or job.errored:
        return None
    return job_metrics(job).get(metric)


def grids(sweep: Sweep) -> list[TaskGrid]:
    """Every benchmark × harness × model of the sweep as a tasks × methods grid."""
    by_setting: dict[tuple[str, str, str], list[Job]] = defaultdict(list)
    for j in sweep.jobs:
        by_setting[(j.benchmark, j.harness, j.model)].append(j)
    metrics = {b: headline([j for j in sweep.scored() if j.benchmark == b]) for b in {k[0] for k in by_setting}}
    out = []
    for (bench, harness, model), jobs in sorted(by_setting.items(), key=lambda kv: (kv[0][0], harness_key(kv[0][1]), kv[0][2])):
        metric = metrics[bench]
        if metric is None:
            continue
        out.append(_grid(bench, harness, model, metric, jobs, sweep.baseline, sweep.treatment))
    return out


def _grid(bench: str, harness: str, model: str, metric: str, jobs: list[Job], baseline: str, treatment: str) -> TaskGrid:
    methods = sorted({j.method for j in jobs}, key=lambda m: (m != baseline, method_key(m)))
    base = baseline if baseline in methods else None
    others = [m for m in methods if m != baseline]
    compared = None if base is None else (treatment if treatment in others else (others[0] if others else None))
    by_task: dict[str, dict[str, list[Job]]] = defaultdict(lambda: defaultdict(list))
    for j in jobs:
        by_task[j.task_id][j.method].append(j)
    rows = []
    for task, per_method in by_task.items():
        cells = {}
        for m, js in per_method.items():
            js.sort(key=lambda j: j.seed)
            vals = [v for v in (value(j, metric) for j in js) if v is not None]
            cells[m] = TaskCell(js, sum(vals) / len(vals) if vals else None)
        rows.append(TaskRow(task, cells, _gain(per_method, compared, base, metric)))
    rows.sort(key=lambda r: (r.gain is None, -(r.gain or 0.0), r.task))
    return TaskGrid(bench, harness, model, metric, methods, base, compared, rows)


def _gain(per_method: dict[str, list[Job]], compared: str | None, base: str | None, metric: str) -> float | None:
    if compared is None or base is None:
        return None
    a = {j.seed: value(j, metric) for j in per_method.get(compared, [])}
    b = {j.seed: value(j, metric) for j in per_method.get(base, [])}
    diffs = [a[s] - b[s] for s in a.keys() & b.keys() if a[s] is not None and b[s] is not None]
    if not diffs:
        return None
    gain = sum(diffs) / len(diffs)
    return 0.0 if abs(gain) < 1e-9 else gain  # equal shares that differ by rounding are no gain
