"""Table 1: per benchmark × model × method, each metric as mean ± std over seeds (best marked), and
each method against DCI over the same tasks and seeds (difference with a bootstrap 95% interval)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from eval.metrics import counts
from eval.report.load import Job, Sweep, method_key
from eval.report.section import Section, Skip, Table, fmt, pct
from eval.report.stats import metric_names, over_seeds, paired_diff

REFERENCE = "dci"


def cells(jobs: list[Job]) -> dict[tuple[str, str, str], list[Job]]:
    """Scored jobs by (benchmark, model, method)."""
    out: dict[tuple[str, str, str], list[Job]] = defaultdict(list)
    for j in jobs:
        if j.scores is not None:
            out[(j.benchmark, j.model, j.method)].append(j)
    return out


def results_table(name: str, title: str, groups: dict[tuple[str, str, str], list[Job]]) -> Table:
    """Mean ± std over seeds per group, the best mean of each metric per (benchmark, model) in bold."""
    keys = sorted(groups, key=lambda k: (k[0], k[1], method_key(k[2])))
    metrics = metric_names([j for js in groups.values() for j in js])
    columns = ["benchmark", "model", "method", "seeds", "jobs"]
    for m in metrics:
        columns += [m, f"{m}_std"]
    columns.append("best")
    rows, shown = [], []
    stats = {k: over_seeds(groups[k]) for k in keys}
    best_of: dict[tuple[str, str, str], float] = {}
    for (b, mo, _), st in stats.items():
        for m, s in st.items():
            best_of[(b, mo, m)] = max(best_of.get((b, mo, m), s.mean), s.mean)
    best: set[tuple[int, int]] = set()
    for i, k in enumerate(keys):
        st, n_seeds = stats[k], len({j.seed for j in groups[k]})
        row: list = [*k, n_seeds, len(groups[k])]
        cells_ = [*k, str(n_seeds), str(len(groups[k]))]
        winners = []
        for m in metrics:
            s = st.get(m)
            row += [pct(s.mean), pct(s.std)] if s else [None, None]
            cells_.append(f"{fmt(pct(s.mean))} ± {fmt(pct(s.std))}" if s else "")
            if s and abs(s.mean - best_of[(k[0], k[1], m)]) < 1e-12:
                winners.append(m)
                best.add((i, 5 + metrics.index(m)))
        row.append(";".join(winners))
        rows.append(row)
        shown.append(cells_)
    display = (["benchmark", "model", "method", "seeds", "jobs", *metrics], shown)
    return Table(name, title, columns, rows, display=display, best=best)


def paired_table(groups: dict[tuple[str, str, str], list[Job]]) -> Table:
    columns = ["benchmark", "model", "method", "metric", "pairs", "tasks", "method_value", "dci_value", "diff", "ci_low", "ci_high"]
    rows = []
    for b, mo, me in sorted(groups, key=lambda k: (k[0], k[1], method_key(k[2]))):
        ref = groups.get((b, mo, REFERENCE))
        if me == REFERENCE or not ref:
            continue
        for m in metric_names(groups[(b, mo, me)]):
            p = paired_diff(groups[(b, mo, me)], ref, m)
            if p is not None:
                rows.append([b, mo, me, m, p.pairs, p.tasks, pct(p.method), pct(p.reference), pct(p.diff), pct(p.low), pct(p.high)])
    shown = [[*r[:6], fmt(r[6]), fmt(r[7]), f"{r[8]:+.2f}", f"[{r[9]:+.2f}, {r[10]:+.2f}]"] for r in rows]
    display = (["benchmark", "model", "method", "metric", "pairs", "tasks", "method", "DCI", "Δ", "95% CI"], shown)
    title = "Table 1 (paired): each method minus DCI on the same tasks and seeds (points, bootstrap 95% CI over tasks)"
    return Table("table1_vs_dci", title, columns, rows, display=display)


def build(sweep: Sweep, out: Path) -> Section:
    groups = cells(sweep.jobs)
    if not groups:
        raise Skip("no scored jobs (no scores.json in any job directory)")
    main = results_table("table1", "Table 1: main results (%, mean ± std over seeds; best per benchmark and model in bold)", groups)
    section = Section("table1", "Table 1: main results", tables=[main])
    unscored = [j for j in sweep.jobs if j.scores is None]
    if unscored:
        main.notes.append(f"{len(unscored)} job(s) have no scores.json and are left out")
    for (b, mo, me), js in sorted(groups.items()):
        seeds, tasks = {j.seed for j in js}, {j.task_id for j in js}
        if len(js) < len(seeds) * len(tasks):
            main.notes.append(f"{b} · {mo} · {me}: {len(js)} scored jobs for {len(seeds)} seeds × {len(tasks)} tasks; "
                              "seeds average different task sets (the paired comparison uses common pairs only)")  # fmt: skip
    for b in sorted({k[0] for k in groups}):
        c = counts([j.scores for k, js in groups.items() if k[0] == b for j in js])
        if c["unjudged"] or c["judge_failures"]:
            main.notes.append(f"{b}: {c['unjudged']} of {c['rubrics']} rubrics never judged (counted as failed), {c['judge_failures']} failed judge call(s)")
    rules = sorted({j.scores["rule"] for js in groups.values() for j in js if "rule" in j.scores})
    if rules:
        main.notes.append("answers scored by " + ", ".join(rules))
    if any(k[2] == REFERENCE for k in groups):
        section.tables.append(paired_table(groups))
    else:
        section.notes.append("paired comparison skipped: the sweep has no DCI jobs")
    return section
