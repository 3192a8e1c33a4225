"""The report's first screen, and the per-task view below it: does the tab help, by how much, how
sure, where?

- At a glance: the forest plot of each method's paired gain over the baseline (the paired table's
  rows, each benchmark's headline metric first, the other metrics one click away), then the
  leaderboard (headline metric, benchmark × harness × method by model) as a heat map.
- Per task: for each benchmark × harness × model, tasks × methods with each seed's job a coloured
  link to its side-by-side page, sorted by the gain (`analyses/per_task.py`); the rubrics that fail
  most are linked from it.

Both are functions of the sweep and the analyses' sections, written into `index.html` above the
tables, which follow unchanged.
"""

from __future__ import annotations

import html

from eval.report.analyses.accounting import Accounting, Key, by_row
from eval.report.analyses.leaderboard import leaderboard
from eval.report.analyses.per_task import grids
from eval.report.analyses.table1 import cells, setting_name
from eval.report.load import Sweep
from eval.report.method_names import label
from eval.report.pages.forest import (
    COLORS,
    SHORT,
    ForestRow,
    counts_tip,
    forest_rows,
    forest_svg,
    headline_first,
)
from eval.report.pages.heatmap import leaderboard_heatmap, per_task_heatmap
from eval.report.section import Section, Table

GLANCE, PER_TASK = "glance", "per-task"


def _section(sections: list[Section], name: str) -> Section | None:
    return next((s for s in sections if s.name == name), None)


def _table(section: Section | None, name: str) -> Table | None:
    return next((t for t in section.tables if t.name == name), None) if section is not None else None


def _legend() -> str:
    keys = (("gain", "interval above 0"), ("loss", "interval below 0"), ("unsure", "interval includes 0"))
    return " ".join(f'<span style="color:{COLORS[k]}">■</span> {t}' for k, t in keys)


def _forest(sweep: Sweep, sections: list[Section]) -> str:
    ref = sweep.baseline
    table1 = _section(sections, "table1")
    paired = _table(table1, f"table1_vs_{ref}")
    counts = by_row(sweep)
    if paired is None:
        why = next((n for n in (table1.notes if table1 else []) if n.startswith("paired comparison skipped")), None)
        if table1 is not None and table1.skipped:
            why = f"no results yet ({table1.skipped})"
        return (f'<h2>At a glance</h2><p class="skip">No paired comparison to draw: {html.escape(why or "no method ran beside " + label(ref))}.</p>'
                + _unpaired(counts, [], ref))
    rows = forest_rows(paired)
    if not rows:
        return (f'<h2>At a glance</h2><p class="skip">No paired comparison to draw: no (task, seed) that a method and {html.escape(label(ref))} both scored.</p>'
                + _unpaired(counts, [], ref))
    head, other = headline_first(rows)
    short = any(counts[r.key].not_results for r in rows if r.key in counts)
    out = [f"<h2>At a glance: the paired gain over {html.escape(label(ref))} on each benchmark's headline metric</h2>",
           f'<div class="wide" id="forest-headline">{forest_svg(head, label(ref), "forest-headline", counts, ref)}</div>',
           f'<p class="note">{_legend()}. Each row: the method minus {html.escape(label(ref))} on the (task, seed) pairs both '
           f'scored within one benchmark, harness and model, with its 95% interval and p, as in the '
           f'<a href="#{html.escape(paired.name)}">paired table</a> below; then how many of the method\'s planned jobs '
           f'are results{_short_legend() if short else ""}.</p>', _unpaired(counts, rows, ref)]
    if other:
        out.append(f'<details id="forest-other"><summary>The other metrics ({len(other)} row{"s" * (len(other) != 1)})</summary>'
                   f'<div class="wide">{forest_svg(other, label(ref), "forest-other", counts, ref)}</div></details>')
    return "".join(out)


def _short_legend() -> str:
    return (f' (<span style="color:{SHORT};font-weight:bold">in this colour</span> when some are not: errored, unscored, '
            "unfinished or not started, by kind in the row's tooltip and in <a href=\"#table1\">Table 1</a>)")


def _unpaired(counts: dict[Key, Accounting], rows: list[ForestRow], ref: str) -> str:
    """The methods with planned jobs but no row: not one (task, seed) both they and the baseline
    scored, so nothing to draw; each named with where its jobs went, never dropped unsaid."""
    drawn = {r.key for r in rows}
    missing = [(k, a) for k, a in sorted(counts.items()) if k[3] != ref and k not in drawn]
    if not missing:
        return ""
    items = "".join(f"<li>{html.escape(setting_name(b, h, mo))} · {html.escape(me)}: {html.escape(counts_tip(a))}</li>"
                    for (b, h, mo, me), a in missing)
    return (f'<div class="note" id="forest-unpaired">No row (no (task, seed) that the method and {html.escape(label(ref))} '
            f"both have as a result):<ul>{items}</ul></div>")


def _heatmap(sweep: Sweep) -> str:
    board = leaderboard(cells(sweep.jobs), min_harnesses=1)
    if board is None:
        return ""
    return ("<h3>Leaderboard: each benchmark's headline metric (%, mean over seeds), by model</h3>"
            f'<div class="wide">{leaderboard_heatmap(board)}</div>'
            '<p class="note">The best of a benchmark\'s column is framed; – : no result (never 0). '
            'The numbers are Table 1\'s (<a href="#table1">below</a>).</p>')


def glance_html(sweep: Sweep, sections: list[Section]) -> str:
    """The first screen: the forest plot, then the leaderboard as a heat map."""
    return (f'<section id="{GLANCE}">{_forest(sweep, sections)}{_heatmap(sweep)}'
            f'<p><a href="#{PER_TASK}">Per task: where each method wins and loses ↓</a></p></section>')


def per_task_html(sweep: Sweep, sections: list[Section]) -> str:
    """Every benchmark × harness × model's tasks × methods, the first open."""
    found = grids(sweep)
    out = [f'<section id="{PER_TASK}"><h2>Per task: where each method wins and loses</h2>']
    if not found:
        out.append('<p class="skip">No scored job yet.</p></section>')
        return "".join(out)
    failing = _section(sections, "failing")
    rubrics = ('; what they miss: <a href="#failing">the rubrics that fail most</a>'
               if failing is not None and not failing.skipped else "")
    out.append(f'<p class="note">Each seed\'s job is a cell coloured by the benchmark\'s headline metric (%), linking to its '
               f'side-by-side page with the baseline; tasks sorted by the gain, largest first{rubrics}.</p>')
    for n, g in enumerate(found):
        wins = sum(1 for r in g.rows if r.gain is not None and r.gain > 0)
        losses = sum(1 for r in g.rows if r.gain is not None and r.gain < 0)
        sort = (f"sorted by {html.escape(g.compared)} − {html.escape(g.baseline or '')} ({wins} won, {losses} lost)"
                if g.compared else "no baseline to sort by")
        summary = f"{html.escape(setting_name(g.benchmark, g.harness, g.model))}: {len(g.rows)} task{'s' * (len(g.rows) != 1)} on {html.escape(g.metric)}, {sort}"
        out.append(f'<details{" open" if n == 0 else ""}><summary>{summary}</summary>{per_task_heatmap(g)}</details>')
    out.append("</section>")
    return "".join(out)
