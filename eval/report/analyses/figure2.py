"""Figure 2: for DCI and RunningTab, failed rubrics by where their expected values went (never shown,
shown but missing from the deliverable, present but judged wrong), and, over all rubrics, the share
of values shown to the agent that the deliverable lacks. Shown means in workspace content the agent
received (the shown log: `eval/report/analyses/fates.py`)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from eval.report.analyses.fates import (
    CATEGORIES,
    LABELS,
    Fate,
    fates,
    unshown,
    unshown_note,
)
from eval.report.analyses.plots import stacked_bars
from eval.report.load import Job, Sweep
from eval.report.method_names import label, method_key
from eval.report.section import Figure, Section, Skip, Table, pct


def groups(sweep: Sweep, methods: tuple[str, ...] | None = None) -> dict[tuple[str, str, str], list[Job]]:
    """Scored jobs with rubric items, by (benchmark, method, model), for the given methods (default:
    the sweep's baseline and treatment)."""
    methods = methods or (sweep.baseline, sweep.treatment)
    out: dict[tuple[str, str, str], list[Job]] = defaultdict(list)
    for j in sweep.jobs:
        if j.method in methods and j.scores is not None and not j.errored and fates(j):
            out[(j.benchmark, j.harness_method, j.model)].append(j)  # a production harness's method apart
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], method_key(kv[0][1]), kv[0][2])))


def _share(n: int, d: int) -> float | None:
    return n / d if d else None


def classification(g: dict[tuple[str, str, str], list[Job]]) -> Table:
    columns = ["benchmark", "method", "model", "failed", "no_values", "classified", *CATEGORIES, *(f"{c}_pct" for c in CATEGORIES)]
    rows = []
    for key, jobs in g.items():
        failed = [f for j in jobs for f in fates(j) if not f.passed]
        n = {c: sum(1 for f in failed if f.category == c) for c in CATEGORIES}
        classified = sum(n.values())
        rows.append([*key, len(failed), len(failed) - classified, classified, *n.values(),
                     *(pct(_share(n[c], classified)) for c in CATEGORIES)])
    title = "Figure 2: failed rubrics by where their expected values went (counts; % of failed rubrics with values)"
    return Table("figure2", title, columns, rows)


def value_shares(g: dict[tuple[str, str, str], list[Job]]) -> Table:
    """Value level, over all rubrics: of the values shown to the agent, how many the deliverable lacks."""
    columns = ["benchmark", "method", "model", "values", "shown", "shown_missing", "shown_missing_pct"]
    rows = []
    for key, jobs in g.items():
        fs: list[Fate] = [f for j in jobs for f in fates(j)]
        shown = sum(len(f.shown) for f in fs)
        missing = sum(len(f.missing) for f in fs)
        rows.append([*key, sum(len(f.values) for f in fs), shown, missing, pct(_share(missing, shown))])
    return Table("figure2_values", "Figure 2 (values): rubric values shown to the agent yet absent from the deliverable", columns, rows)


def build(sweep: Sweep, out: Path) -> Section:
    g = groups(sweep)
    methods = (sweep.baseline, sweep.treatment)
    left_out = unshown([j for j in sweep.jobs if j.method in methods and j.scores is not None and not j.errored])
    if not g:
        why = f"no scored {label(sweep.baseline)} or {label(sweep.treatment)} jobs with rubric items (Figure 2 needs rubric benchmarks)"
        raise Skip(f"{why}; {unshown_note(left_out)}" if left_out else why)
    table = classification(g)
    section = Section("figure2", "Figure 2: where the expected values of failed rubrics went", tables=[table, value_shares(g)])
    if left_out:
        section.notes.append(unshown_note(left_out))
    plotted = [r for r in table.rows if r[5]]
    if plotted:
        labels = [f"{r[0]} · {r[1]} · {r[2]}" for r in plotted]
        series = {LABELS[c]: [r[9 + i] for r in plotted] for i, c in enumerate(CATEGORIES)}
        path = stacked_bars(out / "figure2.png", "Failed rubrics by where their values went", labels, series, "% of failed rubrics with values")
        section.figures.append(Figure("figure2", "Figure 2", path, "Failed rubrics: never shown, shown but missing, present but judged wrong."))
    else:
        section.notes.append("no failed rubric has expected values; nothing to plot")
    return section
