"""Table 4: each ablation of the tab against the full tab and DCI (mean ± std over seeds, and the
difference of means from the full tab), per benchmark and model that ran an ablation.

A job is an ablation when its tab has a switch off (`tab.json` settings, else the job config); the
full tab is method `runningtab`.
"""

from __future__ import annotations

from pathlib import Path

from eval.report.load import Sweep, method_key
from eval.report.section import Section, Skip, Table, fmt, pct
from eval.report.stats import metric_names, over_seeds
from eval.report.table1 import cells

FULL, REFERENCE = "runningtab", "dci"


def build(sweep: Sweep, out: Path) -> Section:
    groups = cells(sweep.jobs)
    ablated = sorted({(b, mo) for (b, mo, me), js in groups.items() if any(j.is_ablation for j in js)})
    if not ablated:
        raise Skip("no ablation jobs (no job with a tab switch off, e.g. method=runningtab_no_review)")
    metrics = metric_names([j for (b, mo, _), js in groups.items() if (b, mo) in ablated for j in js])
    columns = ["benchmark", "model", "method", "capture", "review", "evidence_check", "finish_check", "seeds"]
    for m in metrics:
        columns += [m, f"{m}_std", f"{m}_vs_full"]
    rows, shown = [], []
    for b, mo in ablated:
        methods = sorted({me for (bb, mm, me) in groups if (bb, mm) == (b, mo)}, key=method_key)
        keep = [me for me in methods if me in (FULL, REFERENCE) or any(j.is_ablation for j in groups[(b, mo, me)])]
        stats = {me: over_seeds(groups[(b, mo, me)]) for me in keep}
        full = stats.get(FULL, {})
        for me in keep:
            jobs = groups[(b, mo, me)]
            settings = jobs[0].tab_settings
            switches = ["on" if settings[k] else "off" for k in columns[3:7]] if settings else ["—"] * 4
            row: list = [b, mo, me, *switches, len({j.seed for j in jobs})]
            cells_ = [b, mo, me, *switches, str(row[7])]
            for m in metrics:
                s = stats[me].get(m)
                delta = s.mean - full[m].mean if s and m in full else None
                row += [pct(s.mean), pct(s.std), pct(delta)] if s else [None, None, None]
                cells_ += [f"{fmt(pct(s.mean))} ± {fmt(pct(s.std))}" if s else "", "" if delta is None else f"{100 * delta:+.2f}"]
            rows.append(row)
            shown.append(cells_)
    display_cols = columns[:8] + [c for m in metrics for c in (m, f"Δ {m} vs full")]
    title = "Table 4: ablations of the tab (%, mean ± std over seeds; Δ = points from the full tab)"
    table = Table("table4", title, columns, rows, display=(display_cols, shown))
    missing_full = [f"{b} · {mo}" for b, mo in ablated if (b, mo, FULL) not in groups]
    if missing_full:
        table.notes.append(f"no full-tab (runningtab) jobs for {', '.join(missing_full)}: differences left blank")
    return Section("table4", "Table 4: ablations", tables=[table])
