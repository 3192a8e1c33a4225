"""Figure 5: the gain of RunningTab over DCI by reading volume (thirds of the tasks), per model.

A task's reading volume is the mean `chars_read` (characters the agent received from `read` and
`bash`) over its DCI and RunningTab jobs with that model, so both arms decide the split equally.
Tasks are sorted by volume (ties by id) and cut into thirds as equal as possible (the lighter thirds
take the remainder). A third's metric is aggregated over all its jobs (every task and seed).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path

from eval.judges.metrics import aggregate
from eval.report.analyses.plots import grouped_bars
from eval.report.analyses.stats import metric_names
from eval.report.load import Job, Sweep
from eval.report.method_names import label
from eval.report.section import Figure, Section, Skip, Table, pct
from runners.core.harness_names import is_own_loop

THIRDS = ("light", "middle", "heavy")


def thirds(volume: dict[str, float]) -> list[list[str]]:
    """Task ids cut into three groups by volume (sizes differ by at most one)."""
    ordered = sorted(volume, key=lambda t: (volume[t], t))
    n, out, start = len(ordered), [], 0
    for i in range(3):
        size = n // 3 + (1 if i < n % 3 else 0)
        out.append(ordered[start : start + size])
        start += size
    return out


def _pairs(sweep: Sweep) -> dict[tuple[str, str], dict[str, list[Job]]]:
    """(benchmark, model) -> method -> scored jobs, for the two methods compared; a production
    harness's jobs are compared among themselves (their model shown after the harness)."""
    out: dict[tuple[str, str], dict[str, list[Job]]] = defaultdict(lambda: defaultdict(list))
    BASE, TREATED = sweep.baseline, sweep.treatment  # noqa: N806
    for j in sweep.jobs:
        if j.method in (BASE, TREATED) and j.scores is not None and not j.errored and j.result is not None:
            out[(j.benchmark, j.model if is_own_loop(j.harness) else f"{j.harness} · {j.model}")][j.method].append(j)
    return {k: v for k, v in sorted(out.items()) if BASE in v and TREATED in v}


def build(sweep: Sweep, out: Path) -> Section:
    pairs = _pairs(sweep)
    BASE, TREATED = sweep.baseline, sweep.treatment  # noqa: N806
    if not pairs:
        raise Skip(f"needs scored {label(BASE)} and {label(TREATED)} jobs with the same benchmark and model")
    columns = ["benchmark", "model", "third", "tasks", "min_chars", "max_chars", "metric", BASE, TREATED, "gain"]
    rows, notes = [], []
    for (bench, model), by in pairs.items():
        tasks = {j.task_id for j in by[BASE]} & {j.task_id for j in by[TREATED]}
        if len(tasks) < 3:
            notes.append(f"{bench} · {model}: {len(tasks)} task(s) with both methods; thirds need at least 3")
            continue
        reads: dict[str, list[int]] = defaultdict(list)  # per task, in the order the jobs come (one pass, not one per task)
        for m in (BASE, TREATED):
            for j in by[m]:
                if j.task_id in tasks:
                    reads[j.task_id].append(j.chars_read or 0)
        volume = {t: statistics.fmean(reads[t]) for t in tasks}
        for name, group in zip(THIRDS, thirds(volume), strict=True):
            members = set(group)
            base = [j.scores for j in by[BASE] if j.task_id in members]
            treated = [j.scores for j in by[TREATED] if j.task_id in members]
            a, b = aggregate(base), aggregate(treated)
            lo, hi = min(volume[t] for t in group), max(volume[t] for t in group)
            for m in metric_names([j for j in by[BASE] if j.task_id in members]):
                if m in a and m in b:
                    rows.append([bench, model, name, len(group), lo, hi, m, pct(a[m]), pct(b[m]), pct(b[m] - a[m])])
    if not rows:
        raise Skip("; ".join(notes))
    table = Table("figure5", f"Figure 5: {label(TREATED)} minus {label(BASE)} by reading-volume third (points)", columns, rows, notes=notes)
    section = Section("figure5", f"Figure 5: gain over {label(BASE)} by reading volume", tables=[table])
    for bench in sorted({r[0] for r in rows}):
        primary = next(r[6] for r in rows if r[0] == bench)
        models = sorted({r[1] for r in rows if r[0] == bench})
        gain = {(r[1], r[2]): r[9] for r in rows if r[0] == bench and r[6] == primary}
        series = {m: [gain.get((m, t)) for t in THIRDS] for m in models}
        path = grouped_bars(out / f"figure5_{bench}.png", f"{bench}: {primary} gain of {label(TREATED)} over {label(BASE)}",
                            list(THIRDS), series, "gain (points)", scale=(-10.0, 10.0))
        if path is None:
            section.notes.append(f"{bench}: no gain to draw (no third has both methods)")
        else:
            section.figures.append(Figure(f"figure5_{bench}", f"Figure 5 ({bench})", path))
    return section
