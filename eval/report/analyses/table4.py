"""Table 4: each ablation of the tab against the full tab and DCI (mean ± std over seeds, the
difference of means from the full tab, and the paired difference on the same tasks and seeds with
its hierarchical-bootstrap 95% interval and permutation p-value, `paired.py`), per benchmark, harness
and model that ran an ablation (the harness column only when a production harness ran).

A job is an ablation when its tab has a switch off (`tab.json` settings, else the job config); the
full tab is method `runningtab`. Errored jobs are left out of every number and counted per row.
"""

from __future__ import annotations

from pathlib import Path

from eval.report.analyses import paired
from eval.report.analyses.stats import metric_names, over_seeds
from eval.report.analyses.table1 import (
    Key,
    any_harness,
    cells,
    errored_cells,
    order,
    record_notes,
    setting_name,
)
from eval.report.load import Job, Sweep
from eval.report.method_names import method_key
from eval.report.section import Section, Skip, Table, fmt, p_text, pct, signed
from tab.config import SWITCHES


def _paired_text(p: paired.Paired | None) -> str:
    if p is None:
        return ""
    return f"{signed(pct(p.diff))} [{signed(pct(p.low))}, {signed(pct(p.high))}], p {p_text(p.p)}"


def build(sweep: Sweep, out: Path) -> Section:
    groups, errored = cells(sweep.jobs), errored_cells(sweep.jobs)
    FULL, REFERENCE = sweep.treatment, sweep.baseline  # noqa: N806
    pool: dict[Key, list[Job]] = {k: groups.get(k, []) + errored.get(k, []) for k in set(groups) | set(errored)}
    ablated = sorted({k[:3] for k, js in pool.items() if any(j.is_ablation for j in js)}, key=lambda s: order((*s, "")))
    if not ablated:
        raise Skip("no ablation jobs (no job with a tab switch off, e.g. method=runningtab_no_review)")
    metrics = metric_names([j for k, js in groups.items() if k[:3] in ablated for j in js])
    harnesses = any_harness(pool)
    columns = ["benchmark", *["harness"] * harnesses, "model", "method", *SWITCHES, "seeds", "errored"]
    for m in metrics:
        columns += [m, f"{m}_std", f"{m}_vs_full", f"{m}_paired_vs_full", f"{m}_ci_low", f"{m}_ci_high", f"{m}_p", f"{m}_pairs"]
    rows, shown = [], []
    for setting in ablated:
        b, h, mo = setting
        methods = sorted({k[3] for k in pool if k[:3] == setting}, key=method_key)
        keep = [me for me in methods if me in (FULL, REFERENCE) or any(j.is_ablation for j in pool[(*setting, me)])]
        stats = {me: over_seeds(groups.get((*setting, me), [])) for me in keep}
        full, full_jobs = stats.get(FULL, {}), groups.get((*setting, FULL), [])
        for me in keep:
            jobs, settings = groups.get((*setting, me), []), pool[(*setting, me)][0].tab_settings
            switches = ["on" if settings[k] else "off" for k in SWITCHES] if settings else ["—"] * len(SWITCHES)
            n_err = len(errored.get((*setting, me), []))
            axes = [b, *[h] * harnesses, mo, me]
            row: list = [*axes, *switches, len({j.seed for j in jobs}), n_err]
            cells_ = [*axes, *switches, str(len({j.seed for j in jobs})), str(n_err)]
            for m in metrics:
                s = stats[me].get(m)
                delta = s.mean - full[m].mean if s and m in full else None
                p = paired.compare(jobs, full_jobs, m) if me != FULL and jobs and full_jobs else None
                row += [pct(s.mean), pct(s.std), pct(delta)] if s else [None, None, None]
                row += [pct(p.diff), pct(p.low), pct(p.high), p.p, p.pairs] if p else [None] * 5
                cells_ += [f"{fmt(pct(s.mean))} ± {fmt(pct(s.std))}" if s else "", signed(pct(delta)), _paired_text(p)]
            rows.append(row)
            shown.append(cells_)
    display_cols = columns[:9 + harnesses] + [c for m in metrics for c in (m, f"Δ {m} vs full", f"paired Δ {m} vs full [95% CI], p")]
    title = "Table 4: ablations of the tab (%, mean ± std over seeds; Δ = points from the full tab)"
    table = Table("table4", title, columns, rows, display=(display_cols, shown))
    table.notes.append("paired Δ: on the (task, seed) pairs both scored; 95% CI: bootstrap over tasks, then seeds; "
                       "p: paired permutation test (as in Table 1 paired)")
    table.notes += record_notes(
        {k: js for k, js in groups.items() if k[:3] in ablated}, {k: js for k, js in errored.items() if k[:3] in ablated}
    )
    missing_full = [setting_name(*s) for s in ablated if (*s, FULL) not in groups]
    if missing_full:
        table.notes.append(f"no full-tab ({FULL}) results for {', '.join(missing_full)}: differences left blank")
    return Section("table4", "Table 4: ablations", tables=[table])
