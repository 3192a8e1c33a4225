"""Seed statistics over the metrics `eval.judges.metrics.aggregate` defines (paired ones: `paired.py`).

Every benchmark metric is a ratio of sums over jobs: the pooled Rubric Pass Rate is passed rows
over the rows the judge wrote (its variants: over every rubric, over judged rubrics), and the others are a per-task value over a count of tasks. `parts()` gives each job's
numerator and denominator, so that a bootstrap resample is two sums instead of re-aggregating.
Errored jobs (`Job.errored`) are not results and never enter these numbers.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eval.judges.metrics import METRICS, aggregate, rubric_parts
from eval.report.load import Job


def job_metrics(job: Job) -> dict[str, float]:
    """The job's own aggregate (its metrics as Table 1 pools them), once a job: every table asks."""
    return job.derived("metrics", lambda: aggregate([job.scores]) if job.scores else {})


def metric_names(jobs: Sequence[Job]) -> list[str]:
    """The metrics these jobs' scores carry, in the canonical order."""
    found = {m for j in jobs if j.scores for m in job_metrics(j)}
    return [m for m in METRICS if m in found]


def per_seed(jobs: Sequence[Job]) -> dict[int, dict[str, float]]:
    """Aggregate metrics per seed (pooled over that seed's tasks), errored jobs left out."""
    by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for j in jobs:
        if j.scores is not None and not j.errored:
            by_seed[j.seed].append(j.scores)
    return {s: aggregate(scores) for s, scores in sorted(by_seed.items())}


@dataclass
class SeedStat:
    mean: float
    std: float  # sample standard deviation over seeds (0 with one seed)
    n: int


def over_seeds(jobs: Sequence[Job]) -> dict[str, SeedStat]:
    """Mean ± std over seeds of each metric's per-seed aggregate."""
    seeds = per_seed(jobs)
    out = {}
    for m in METRICS:
        vals = [s[m] for s in seeds.values() if m in s]
        if vals:
            out[m] = SeedStat(statistics.fmean(vals), statistics.stdev(vals) if len(vals) > 1 else 0.0, len(vals))
    return out


def parts(scores: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Each metric of one job as (numerator, denominator) such that sums over jobs give `aggregate`."""
    out = rubric_parts(scores)
    for m in METRICS[1:]:
        if m in scores.get("metrics", {}):
            out[m] = (float(scores["metrics"][m]), 1.0)
    return out


def median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None
