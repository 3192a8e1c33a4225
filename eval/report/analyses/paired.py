"""Paired statistics of a method against a reference on the same tasks and seeds: is the gain real?

The unit of pairing is the (task, seed) pair, both jobs scored. For the pass rates the pairing goes
down to the rubric: only rubrics both jobs carry (task × rubric index) count, so each pair has one
denominator and the difference is (rubrics gained − rubrics lost) / rubrics compared. For the
Rubric Pass Rate those are the rubrics both judges judged (a row in both); extra rows, which are no
rubric's, cannot be paired and are left out of the comparison (Table 1's value counts them).

- The interval is a **hierarchical bootstrap**: draw tasks with replacement, then, within each drawn
  task, draw its seeds with replacement (seeds are repeated runs of one task, not new tasks); the
  difference of the pooled metric is recomputed from sums, and the 2.5% and 97.5% percentiles
  kept. Resampling both levels is slightly conservative when seed noise dominates (see
  docs/report.md for the coverage measured).
- The p-value is a **paired permutation test**: under "no difference", the two arms' labels are
  exchangeable within a task, so each task's sums are swapped between arms (a sign flip of that
  task's difference) — every flip pattern when there are at most `EXACT_TASKS` tasks, else
  `FLIPS` random ones — and p is the share of patterns whose difference is at least as far from 0.

Both are deterministic given `seed`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from eval.report.analyses.stats import parts
from eval.report.load import Job

SAMPLES = 2000
FLIPS = 10000
EXACT_TASKS = 14
SEED = 0
_BATCH_CELLS = 2_000_000  # bootstrap draws are made in batches of at most this many (task, seed) cells


@dataclass(frozen=True)
class Pairs:
    """One metric's (task, seed) pairs: `values[i]` = method numerator, denominator, reference
    numerator, denominator of pair i; `task[i]` indexes `tasks`."""

    tasks: list[str]
    task: np.ndarray  # (n,) int
    values: np.ndarray  # (n, 4) float
    gained: int = 0  # rubric pass rate only: (task, rubric, seed) the method passed and the reference failed
    lost: int = 0

    @property
    def n(self) -> int:
        return len(self.task)

    def per_task(self) -> np.ndarray:
        """(tasks, 4) sums of each task's pairs."""
        out = np.zeros((len(self.tasks), 4))
        np.add.at(out, self.task, self.values)
        return out

    def arms(self) -> tuple[float, float]:
        s = self.values.sum(axis=0)
        return float(s[0] / s[1]), float(s[2] / s[3])

    def diff(self) -> float:
        m, r = self.arms()
        return m - r


def make_pairs(rows: Sequence[tuple[str, float, float, float, float]]) -> Pairs:
    """Pairs from (task, method num, den, reference num, den) rows (synthetic data, tests)."""
    tasks = sorted({r[0] for r in rows})
    index = {t: i for i, t in enumerate(tasks)}
    return Pairs(tasks, np.array([index[r[0]] for r in rows], dtype=int), np.array([r[1:] for r in rows], dtype=float).reshape(-1, 4))


RUBRIC_PAIRED = ("rubric_pass_rate", "pass_rate", "pass_rate_judged")


def _rubrics(scores: dict[str, Any], metric: str) -> dict[Any, bool]:
    """Each rubric's pass by index; for the rates over rows or judged rubrics, the judged ones only."""
    items = [i for i in scores.get("items", []) if i.get("kind") == "rubric"]
    judged_only = metric != "pass_rate"
    return {i.get("index", k): i.get("passed") is True for k, i in enumerate(items) if not judged_only or i.get("judged", True)}


def pairs_of(method: Sequence[Job], reference: Sequence[Job], metric: str) -> Pairs | None:
    """The (task, seed) pairs both arms scored on `metric`; None without any (or an empty denominator)."""
    a = {(j.task_id, j.seed): j.scores for j in method if j.scores is not None and not j.errored}
    b = {(j.task_id, j.seed): j.scores for j in reference if j.scores is not None and not j.errored}
    rows, gained, lost = [], 0, 0
    for key in sorted(a.keys() & b.keys()):
        if metric in RUBRIC_PAIRED:
            ra, rb = _rubrics(a[key], metric), _rubrics(b[key], metric)
            common = sorted(ra.keys() & rb.keys(), key=str)
            if not common:
                continue
            pa, pb = sum(ra[i] for i in common), sum(rb[i] for i in common)
            gained += sum(ra[i] and not rb[i] for i in common)
            lost += sum(rb[i] and not ra[i] for i in common)
            rows.append((key[0], float(pa), float(len(common)), float(pb), float(len(common))))
        else:
            pa_, pb_ = parts(a[key]), parts(b[key])
            if metric in pa_ and metric in pb_:
                rows.append((key[0], *pa_[metric], *pb_[metric]))
    if not rows:
        return None
    p = make_pairs(rows)
    s = p.values.sum(axis=0)
    if s[1] == 0 or s[3] == 0:
        return None
    return Pairs(p.tasks, p.task, p.values, gained, lost)


def bootstrap(p: Pairs, samples: int = SAMPLES, seed: int = SEED) -> np.ndarray:
    """Differences of `samples` hierarchical resamples: tasks with replacement, then each drawn
    task's seeds with replacement (as many as it has). A resample is the count of times each pair
    was drawn, so its sums are one matrix product."""
    order = np.argsort(p.task, kind="stable")
    values = p.values[order]
    k = np.bincount(p.task, minlength=len(p.tasks))
    start = np.concatenate(([0], np.cumsum(k)[:-1]))
    n_tasks, width, n = len(k), int(k.max()), p.n
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_CELLS // (n_tasks * width))
    out = []
    for first in range(0, samples, batch):
        b = min(batch, samples - first)
        ti = rng.integers(0, n_tasks, size=(b, n_tasks))
        kk = k[ti][..., None]  # (b, T, 1): the drawn task's number of seeds
        draw = rng.random((b, n_tasks, width))
        np.multiply(draw, kk, out=draw)  # in place: at 1,000 tasks these arrays are tens of MB each
        si = draw.astype(np.intp)
        np.minimum(si, kk - 1, out=si)
        si += (np.arange(b)[:, None] * n + start[ti])[..., None]  # the pair's row in resample-major order
        ids = si.ravel() if width == k.min() else si[np.arange(width) < kk]  # a task with fewer seeds draws only as many as it has
        sums = np.bincount(ids, minlength=b * n).reshape(b, n).astype(float) @ values
        ok = (sums[:, 1] > 0) & (sums[:, 3] > 0)
        out.append(sums[ok, 0] / sums[ok, 1] - sums[ok, 2] / sums[ok, 3])
    return np.concatenate(out)


def interval(p: Pairs, samples: int = SAMPLES, seed: int = SEED) -> tuple[float, float]:
    """The hierarchical-bootstrap 95% percentile interval of the difference."""
    low, high = np.percentile(bootstrap(p, samples, seed), [2.5, 97.5])
    return float(low), float(high)


def flip_pvalue(p: Pairs, flips: int = FLIPS, seed: int = SEED) -> float:
    """Two-sided p-value of the paired permutation test (each task's arms swapped or not)."""
    sums = p.per_task()
    n_tasks = len(sums)
    # a swapped task moves its difference between the arms: each arm's sums are the unswapped ones
    # plus pattern @ (the other arm's - this arm's), one product instead of eight
    delta, base, observed = sums[:, [2, 3, 0, 1]] - sums, sums.sum(axis=0), abs(p.diff()) - 1e-12
    extreme, total = 0, 0
    for pattern in _patterns(n_tasks, flips, seed):
        m_num, m_den, r_num, r_den = (base + pattern @ delta).T
        with np.errstate(divide="ignore", invalid="ignore"):
            extreme += int(np.sum(np.abs(m_num / m_den - r_num / r_den) >= observed))
        total += len(pattern)
    if n_tasks <= EXACT_TASKS:
        return extreme / total  # the identity pattern is among them
    return (1 + extreme) / (1 + flips)


def _patterns(n_tasks: int, flips: int, seed: int) -> Iterator[np.ndarray]:
    """Every flip pattern (few tasks), else `flips` random ones drawn in batches of at most
    `_BATCH_CELLS` (the same draws as one call: the generator's stream does not depend on the batching)."""
    if n_tasks <= EXACT_TASKS:
        yield np.array(list(itertools.product((0.0, 1.0), repeat=n_tasks)))
        return
    rng, rows = np.random.default_rng(seed), max(1, _BATCH_CELLS // (4 * n_tasks))
    for first in range(0, flips, rows):
        yield rng.integers(0, 2, size=(min(rows, flips - first), n_tasks))


@dataclass
class Paired:
    """A method minus a reference over the same pairs: difference, 95% interval, permutation p."""

    metric: str
    pairs: int
    tasks: int
    method: float
    reference: float
    diff: float
    low: float
    high: float
    p: float
    gained: int | None  # rubric pass rate: rubric × seed instances only the method passed
    lost: int | None


def compare(method: Sequence[Job], reference: Sequence[Job], metric: str, seed: int = SEED) -> Paired | None:
    """`method` minus `reference` on `metric` (None without common scored pairs)."""
    p = pairs_of(method, reference, metric)
    if p is None:
        return None
    m, r = p.arms()
    low, high = interval(p, seed=seed)
    rubric = metric in RUBRIC_PAIRED
    return Paired(metric, p.n, len(p.tasks), m, r, m - r, low, high, flip_pvalue(p, seed=seed),
                  p.gained if rubric else None, p.lost if rubric else None)
