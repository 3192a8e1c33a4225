"""The leaderboard: harness × model on each benchmark's headline metric, as Workspace-Bench's site
shows its own (rows the agents, columns the models), here with a row per harness and method, so
that each harness's gain from the tab is read down a column.

Written beside Table 1 (`leaderboard.md`, `.csv`) and shown in the report when the sweep ran more
than one harness (`grid.agent=[dci,claude_code,codex]`); a sweep of one harness has no leaderboard.
The numbers are Table 1's: the mean over seeds of the metric pooled over the cell's tasks, errored
jobs left out. A cell with no result is blank, never a zero.
"""

from __future__ import annotations

from eval.report.analyses.stats import metric_names, over_seeds
from eval.report.load import Job
from eval.report.method_names import harness_key, method_key
from eval.report.section import Table, fmt, pct

Key = tuple[str, str, str, str]  # benchmark, harness, model, method (`table1.Key`)

# The benchmark's headline metric, the first of these its scores carry: Workspace-Bench's Rubric
# Pass Rate, TheAgentCompany's Score, OfficeQA's Acc@0%; else the first metric (`METRICS` order).
HEADLINE = ("rubric_pass_rate", "score", "acc0")


def headline(jobs: list[Job]) -> str | None:
    return headline_of(metric_names(jobs))


def headline_of(names: list[str]) -> str | None:
    """The headline among metric names in the tables' order (`metric_names`)."""
    return next((m for m in HEADLINE if m in names), names[0] if names else None)


def leaderboard(groups: dict[Key, list[Job]], min_harnesses: int = 2) -> Table | None:
    """Rows (benchmark, harness, method), a column per model, each cell the headline metric (%, mean
    over seeds); the best of each benchmark's column in bold when one row alone has it. None when
    the groups hold fewer than `min_harnesses` harnesses (Table 1's section shows it from two; the
    report's first screen draws it as a heat map from one)."""
    if len({k[1] for k in groups}) < max(1, min_harnesses):
        return None
    models = sorted({k[2] for k in groups})
    columns = ["benchmark", "metric", "harness", "method", *models]
    rows: list[list] = []
    shown: list[list[str]] = []
    best: set[tuple[int, int]] = set()
    for bench in sorted({k[0] for k in groups}):
        metric = headline([j for k, js in groups.items() if k[0] == bench for j in js])
        if metric is None:
            continue
        settings = sorted({(k[1], k[3]) for k in groups if k[0] == bench}, key=lambda hm: (harness_key(hm[0]), method_key(hm[1])))
        first = len(rows)
        for harness, method in settings:
            values = []
            for model in models:
                stat = over_seeds(groups.get((bench, harness, model, method), [])).get(metric)
                values.append(pct(stat.mean) if stat else None)
            rows.append([bench, metric, harness, method, *values])
            shown.append([bench, metric, harness, method, *(fmt(v) for v in values)])
        for c, _ in enumerate(models):
            column = [(i, r[4 + c]) for i, r in enumerate(rows[first:], first) if r[4 + c] is not None]
            top = max((v for _, v in column), default=None)
            winners = [i for i, v in column if top is not None and abs(v - top) < 1e-9]
            if len(winners) == 1:
                best.add((winners[0], 4 + c))
    if not rows:
        return None
    title = "Leaderboard: harness × model (the benchmark's headline metric, %, mean over seeds; the best of a column in bold)"
    table = Table("leaderboard", title, columns, rows, display=(columns, shown), best=best)
    table.notes.append("each cell is Table 1's mean over seeds for that benchmark, harness, method and model; blank: no result")
    return table
