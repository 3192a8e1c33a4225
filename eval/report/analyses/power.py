"""How many tasks × seeds make a gain detectable, from a pilot sweep's variance of the paired difference.

    python -m eval.report.analyses.power outputs/PILOT --effect 2 [--alpha 0.05] [--power 0.8]
        [--method runningtab] [--reference dci] [--metric rubric_pass_rate] [--seeds 1,2,3,5,10]

The effect is in the tables' units (points of percentage). Per benchmark × model of the pilot, the
paired difference of each (task, seed) pair (`eval.report.analyses.paired`, errored jobs left out) is split
into the spread of the true gain between tasks and the spread between seeds of one task (one-way
random effects, method of moments). A design of T tasks × S seeds then has a standard error of
sqrt(between² / T + within² / (T·S)); its power is that of a two-sided test over tasks at `alpha`
(a t test with T−1 degrees of freedom, its noncentral distribution by Johnson and Welch's normal
approximation), which is what the report's paired permutation test over tasks comes close to. Why: seeds only average away seed noise, while tasks also
average away the task-to-task spread of the gain, so the table says which of the two to buy.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np

from eval.report.analyses.paired import Pairs, pairs_of
from eval.report.analyses.stats import metric_names
from eval.report.analyses.table1 import cells, setting_name
from eval.report.load import load_sweep

MAX_TASKS = 100_000
_NORMAL = NormalDist()


@dataclass
class Components:
    """A pilot's paired difference (shares, not points): its mean and variance components."""

    tasks: int
    pairs: int
    diff: float
    between: float  # variance of the true per-task gain
    within: float  # variance of one seed's gain around its task's mean
    separable: bool  # False when no task has two seeds: `within` is then folded into `between`


def components(p: Pairs) -> Components:
    """Variance components of the per-pair difference (scaled so that their mean is the pooled Δ)."""
    scale = float(p.values[:, [1, 3]].mean())
    x = (p.values[:, 0] - p.values[:, 2]) / scale
    by_task = [x[p.task == t] for t in range(len(p.tasks))]
    k = np.array([len(v) for v in by_task])
    means = np.array([v.mean() for v in by_task])
    dof = int((k - 1).sum())
    within = float(sum(((v - v.mean()) ** 2).sum() for v in by_task) / dof) if dof else 0.0
    spread = float(means.var(ddof=1)) if len(means) > 1 else 0.0
    between = max(0.0, spread - within * float((1.0 / k).mean()))
    return Components(len(p.tasks), p.n, p.diff(), between, within, dof > 0)


def t_quantile(q: float, dof: int) -> float:
    """Student's t quantile (Cornish-Fisher expansion around the normal; close for dof >= 3)."""
    z = _NORMAL.inv_cdf(q)
    v = max(dof, 1)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    return z + g1 / v + g2 / v**2 + g3 / v**3


def power(effect: float, c: Components, tasks: int, seeds: int, alpha: float = 0.05) -> float:
    """Power of the paired test over `tasks` tasks × `seeds` seeds to detect `effect` (a share)."""
    se = math.sqrt(c.between / tasks + c.within / (tasks * seeds))
    if se == 0:
        return 1.0 if effect else alpha
    dof = max(tasks - 1, 1)
    crit, shift = t_quantile(1 - alpha / 2, dof), abs(effect) / se
    # Johnson-Welch: a noncentral t with shift d is below t with probability about
    # Phi((t (1 - 1/(4 dof)) - d) / sqrt(1 + t^2 / (2 dof))); at d = 0 this gives back about alpha.
    scale, spread = 1 - 1 / (4 * dof), math.sqrt(1 + crit**2 / (2 * dof))
    return 1 - _NORMAL.cdf((crit * scale - shift) / spread) + _NORMAL.cdf((-crit * scale - shift) / spread)


def tasks_needed(effect: float, c: Components, seeds: int, alpha: float = 0.05, target: float = 0.8) -> int | None:
    """The fewest tasks (at least 2) reaching `target` power with `seeds` seeds; None past MAX_TASKS."""
    if power(effect, c, MAX_TASKS, seeds, alpha) < target:
        return None
    low, high = 2, 2
    while power(effect, c, high, seeds, alpha) < target:
        low, high = high, high * 2
    while low < high:
        mid = (low + high) // 2
        if power(effect, c, mid, seeds, alpha) >= target:
            high = mid
        else:
            low = mid + 1
    return high


def render(label: str, c: Components, effect: float, alpha: float, target: float, seeds: Sequence[int]) -> str:
    """One benchmark × model: the pilot's numbers and a table of tasks needed per seed count."""
    lines = [
        f"{label}: pilot {c.tasks} tasks, {c.pairs} (task, seed) pairs, Δ {100 * c.diff:+.2f} points",
        f"  sd of the gain between tasks {100 * math.sqrt(c.between):.2f} points, between seeds of a task "
        f"{100 * math.sqrt(c.within):.2f} points",
    ]
    if c.separable and c.between == 0:
        lines.append("  (the spread between tasks estimates to 0: the pilot cannot tell it from seed noise, so the "
                     "table is optimistic about buying seeds instead of tasks)")
    if not c.separable:
        lines.append("  (one seed per task in the pilot: seed noise cannot be told from task spread, so more seeds "
                     "are assumed not to help; run the pilot with 2+ seeds to tell)")
    lines += [f"  effect {100 * effect:+.2f} points, alpha {alpha:g} (two-sided), power {target:g}", "",
              f"| seeds | tasks needed | tasks × seeds (jobs per method) | power with the pilot's {c.tasks} tasks |",
              "|---|---|---|---|"]
    for s in seeds:
        n = tasks_needed(effect, c, s, alpha, target)
        need = "more than 100,000" if n is None else f"{n:,}"
        jobs = "" if n is None else f"{n * s:,}"
        lines.append(f"| {s} | {need} | {jobs} | {power(effect, c, max(c.tasks, 2), s, alpha):.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.report.analyses.power", description=__doc__.split("\n\n")[0])
    ap.add_argument("sweep_dir", type=Path, help="the pilot sweep, e.g. outputs/pilot")
    ap.add_argument("--effect", type=float, required=True, help="the gain to detect, in points of percentage (2 = +2.00)")
    ap.add_argument("--alpha", type=float, default=0.05, help="two-sided significance level (default 0.05)")
    ap.add_argument("--power", type=float, default=0.8, help="the power wanted (default 0.8)")
    ap.add_argument("--method", default="runningtab", help="the method (default runningtab)")
    ap.add_argument("--reference", default="dci", help="the baseline it is compared with (default dci)")
    ap.add_argument("--metric", default=None, help="the metric (default: each benchmark's first, e.g. rubric_pass_rate)")
    ap.add_argument("--seeds", default="1,2,3,5,10", help="seed counts to plan for (default 1,2,3,5,10)")
    args = ap.parse_args(argv)
    if not args.sweep_dir.is_dir():
        print(f"error: {args.sweep_dir} is not a directory (give a pilot sweep directory such as outputs/pilot)", file=sys.stderr)
        return 2
    if not (0 < args.alpha < 1 and 0 < args.power < 1) or args.effect == 0:
        print("error: --alpha and --power must be in (0, 1) and --effect non-zero", file=sys.stderr)
        return 2
    try:
        seeds = sorted({int(s) for s in args.seeds.split(",") if s.strip()})
    except ValueError:
        seeds = []
    if not seeds or seeds[0] < 1:
        print(f"error: --seeds must be positive integers separated by commas, not {args.seeds!r}", file=sys.stderr)
        return 2
    groups = cells(load_sweep(args.sweep_dir).jobs)
    blocks, tried = [], {}
    for b, h, mo in sorted({(b, h, mo) for b, h, mo, _ in groups}):
        method, reference = groups.get((b, h, mo, args.method)), groups.get((b, h, mo, args.reference))
        if not method or not reference:
            continue
        for metric in [args.metric] if args.metric else metric_names(method)[:1]:
            tried[setting_name(b, h, mo)] = metric
            p = pairs_of(method, reference, metric)
            if p is None or len(p.tasks) < 2:
                continue
            label = f"{setting_name(b, h, mo)}: {args.method} − {args.reference} on {metric}"
            blocks.append(render(label, components(p), args.effect / 100, args.alpha, args.power, seeds))
    if not blocks:
        print(f"error: {args.sweep_dir} has no 2+ tasks scored by both {args.method} and {args.reference} on the same seeds "
              f"{_metrics_said(tried, args.metric, groups)}", file=sys.stderr)
        return 2
    print("\n\n".join(blocks))
    return 0


def _metrics_said(tried: dict[str, str], asked: str | None, groups: dict) -> str:
    """Which metric the search used, where: the one asked for (`--metric`), else each setting's first."""
    found = ", ".join(sorted({me for *_, me in groups})) or "none"
    if not tried:
        return f"(no benchmark × model has results of both; methods with results: {found})"
    if asked:
        return f"with metric {asked} (--metric; methods with results: {found})"
    used = "; ".join(f"{setting}: {metric}" for setting, metric in tried.items())
    return f"with each benchmark's first metric ({used}; --metric NAME for another; methods with results: {found})"


if __name__ == "__main__":
    sys.exit(main())
