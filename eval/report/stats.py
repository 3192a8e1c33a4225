"""Seed statistics and the paired bootstrap, over the metrics `eval.metrics.aggregate` defines.

Every benchmark metric is a ratio of sums over jobs: the pooled Rubric Pass Rate is passed rubrics
over rubrics, and the others are a per-task value over a count of tasks. `parts()` gives each job's
numerator and denominator, so that a bootstrap resample is two sums instead of re-aggregating.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.metrics import METRICS, aggregate
from eval.report.load import Job

BOOTSTRAP_SAMPLES = 2000
BOOTSTRAP_SEED = 0


def metric_names(jobs: Sequence[Job]) -> list[str]:
    """The metrics these jobs' scores carry, in the canonical order."""
    found = {m for j in jobs if j.scores for m in aggregate([j.scores])}
    return [m for m in METRICS if m in found]


def per_seed(jobs: Sequence[Job]) -> dict[int, dict[str, float]]:
    """Aggregate metrics per seed (pooled over that seed's tasks)."""
    by_seed: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for j in jobs:
        if j.scores is not None:
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
    out: dict[str, tuple[float, float]] = {}
    rubrics = [i for i in scores.get("items", []) if i.get("kind") == "rubric"]
    if rubrics:
        out["pass_rate"] = (float(sum(1 for i in rubrics if i.get("passed") is True)), float(len(rubrics)))
    for m in METRICS[1:]:
        if m in scores.get("metrics", {}):
            out[m] = (float(scores["metrics"][m]), 1.0)
    return out


@dataclass
class Paired:
    """A method minus a reference over the same (task, seed) pairs, with a bootstrap 95% interval."""

    metric: str
    pairs: int
    tasks: int
    method: float
    reference: float
    diff: float
    low: float
    high: float


def paired_diff(
    method: Sequence[Job], reference: Sequence[Job], metric: str, samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED
) -> Paired | None:
    """`method` minus `reference` on the (task, seed) pairs both scored; None without such pairs.

    The bootstrap resamples tasks with replacement (all seeds of a drawn task together, since runs
    of one task are not independent) and takes the 2.5% and 97.5% percentiles of the difference.
    """
    a = {(j.task_id, j.seed): parts(j.scores) for j in method if j.scores is not None}
    b = {(j.task_id, j.seed): parts(j.scores) for j in reference if j.scores is not None}
    keys = sorted(k for k in a.keys() & b.keys() if metric in a[k] and metric in b[k])
    if not keys:
        return None
    tasks = sorted({t for t, _ in keys})
    index = {t: i for i, t in enumerate(tasks)}
    sums = np.zeros((len(tasks), 4))  # per task: method num, den; reference num, den
    for k in keys:
        row = sums[index[k[0]]]
        row += (*a[k][metric], *b[k][metric])
    total = sums.sum(axis=0)
    if total[1] == 0 or total[3] == 0:
        return None
    m_val, r_val = total[0] / total[1], total[2] / total[3]
    draws = np.random.default_rng(seed).integers(0, len(tasks), size=(samples, len(tasks)))
    s = sums[draws].sum(axis=1)  # (samples, 4)
    ok = (s[:, 1] > 0) & (s[:, 3] > 0)
    diffs = s[ok, 0] / s[ok, 1] - s[ok, 2] / s[ok, 3]
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Paired(metric, len(keys), len(tasks), float(m_val), float(r_val), float(m_val - r_val), float(low), float(high))


def median(values: Sequence[float]) -> float | None:
    return float(statistics.median(values)) if values else None
