"""Heat maps as HTML tables: the leaderboard (benchmark × harness × method by model) and the per-task
view (tasks × methods, each seed's job a coloured link to its side-by-side page).

Colours are `colors.py`'s classes (a value: light to dark blue; a gain: red below 0, blue above).
The number is always written in the cell: the colour guides the eye, the text is the value. A job without a result (errored, unscored, unfinished) is grey and says so.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from eval.report.analyses.per_task import TaskGrid, value
from eval.report.load import Job
from eval.report.pages.colors import gain_level, level
from eval.report.pages.viewer_compare import compare_name
from eval.report.section import Table, fmt, signed


def leaderboard_heatmap(table: Table) -> str:
    """The leaderboard table (`leaderboard.leaderboard`) as a heat map: the same rows, columns and bold."""
    models = table.columns[4:]
    harnesses = len({r[2] for r in table.rows}) > 1
    head = ["benchmark", "metric", *["harness"] * harnesses, "method", *models]
    out = ['<table class="heat" id="leaderboard-heat"><thead><tr>', *(f"<th>{html.escape(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for i, r in enumerate(table.rows):
        axes = [r[0], r[1], *[r[2]] * harnesses, r[3]]
        out.append(f'<tr data-benchmark="{html.escape(r[0])}" data-harness="{html.escape(r[2])}" data-method="{html.escape(r[3])}">')
        out += [f"<th>{html.escape(str(a))}</th>" for a in axes]
        for c, v in enumerate(r[4:], 4):
            best = " top" if (i, c) in table.best else ""
            if v is None:
                out.append('<td class="num na" title="no result">–</td>')
            else:
                tip = f"{r[0]} · {r[2]} · {r[3]} · {models[c - 4]}: {r[1]} {v:.2f}% (mean over seeds)"
                out.append(f'<td class="num {level(v / 100)}{best}" title="{html.escape(tip)}">{fmt(v, 1)}</td>')
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def _href(job: Job, partner: Job | None, baseline: str) -> str:
    """The side-by-side page of the job and its partner (the baseline's job, or the compared
    method's for a baseline job), else the job's own page."""
    if partner is None:
        return f"jobs/{quote(job.job_id)}.html"
    a, b = (job, partner) if job.method == baseline else (partner, job)
    return f"compare/{quote(compare_name(a, b))}"


def _chip(job: Job, metric: str, partner: Job | None, baseline: str) -> str:
    v = value(job, metric)
    what = "errored" if job.errored else "unfinished" if job.result is None else "unscored" if job.scores is None else None
    vs = f"side by side with {partner.method}" if partner is not None else "its page"
    if v is None:
        tip = f"seed {job.seed}: {what or 'no ' + metric} ({vs})"
        return f'<a class="na" href="{html.escape(_href(job, partner, baseline))}" title="{html.escape(tip)}">{"err" if job.errored else "–"}</a>'
    tip = f"seed {job.seed}: {metric} {100 * v:.1f}% ({vs})"
    return f'<a class="{level(v)}" href="{html.escape(_href(job, partner, baseline))}" title="{html.escape(tip)}">{100 * v:.0f}</a>'


def per_task_heatmap(grid: TaskGrid) -> str:
    """A grid's tasks × methods: the gain column, then each method's jobs, a chip per seed."""
    gain_head = f"{grid.compared} − {grid.baseline}" if grid.compared else "gain"
    head = ["task", gain_head, *grid.methods]
    out = [f'<div class="scroll"><table class="heat per-task" data-benchmark="{html.escape(grid.benchmark)}" '
           f'data-harness="{html.escape(grid.harness)}" data-model="{html.escape(grid.model)}"><thead><tr>',
           *(f"<th>{html.escape(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in grid.rows:
        out.append(f'<tr data-task="{html.escape(row.task)}"><td class="task" title="{html.escape(row.task)}">{html.escape(row.task)}</td>')
        if row.gain is None:
            out.append('<td class="num na" title="no seed both methods scored">–</td>')
        else:
            out.append(f'<td class="num {gain_level(100 * row.gain)}">{signed(100 * row.gain, 1)}</td>')
        base = {j.seed: j for j in row.cells[grid.baseline].jobs} if grid.baseline in row.cells else {}
        compared = {j.seed: j for j in row.cells[grid.compared].jobs} if grid.compared in row.cells else {}
        for m in grid.methods:
            cell = row.cells.get(m)
            if cell is None:
                out.append('<td class="na" title="not run">not run</td>')
                continue
            partners = compared if m == grid.baseline else base
            chips = "".join(_chip(j, grid.metric, partners.get(j.seed), grid.baseline or "") for j in cell.jobs)
            out.append(f'<td data-method="{html.escape(m)}"><span class="chips">{chips}</span></td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)
