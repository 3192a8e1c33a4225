"""Figure 4. Left: of the values failed rubrics expect that were shown to the agent yet are missing
from the deliverable, the share the read log holds. Right: the recovery probe's results
(`python -m eval.probe`), the share of masked values the model recovers per condition."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.report.analyses.fates import fates, unshown, unshown_note
from eval.report.analyses.plots import grouped_bars
from eval.report.analyses.stats import median
from eval.report.load import Job, Sweep
from eval.report.method_names import method_key
from eval.report.section import Figure, Section, Skip, Table, pct

PROBE_FILE = Path("probe") / "probe.jsonl"
CONDITIONS = ("none", "review", "read_log")
CONDITION_LABELS = {"none": "nothing more", "review": "review + tab_show", "read_log": "whole read log"}


def with_read_log(sweep: Sweep) -> list[Job]:
    """Scored jobs whose tab captured a read log."""
    out = []
    for j in sweep.jobs:
        settings = j.tab_settings
        if j.scores is not None and not j.errored and j.has_tab and settings and settings["capture"]:
            out.append(j)
    return out


def captured(sweep: Sweep) -> dict[tuple[str, str, str], list[Job]]:
    """Scored jobs whose tab captured a read log and that have fates, by (benchmark, method, model)."""
    out: dict[tuple[str, str, str], list[Job]] = defaultdict(list)
    for j in with_read_log(sweep):
        if fates(j):
            out[(j.benchmark, j.harness_method, j.model)].append(j)  # a production harness's method apart
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0], method_key(kv[0][1]), kv[0][2])))


def held_table(g: dict[tuple[str, str, str], list[Job]]) -> Table:
    columns = ["benchmark", "method", "model", "missing", "in_read_log", "in_read_log_pct",
               "numeric_missing", "numeric_in_read_log", "numeric_in_read_log_pct"]
    rows = []
    for key, jobs in g.items():
        n = defaultdict(int)
        for j in jobs:
            for f in fates(j):
                if f.passed:
                    continue
                logged = {v.key for v in f.in_log}
                for v in f.missing:
                    n["missing"] += 1
                    n["held"] += v.key in logged
                    if v.number is not None:
                        n["num"] += 1
                        n["num_held"] += v.key in logged
        rows.append([*key, n["missing"], n["held"], _share(n["held"], n["missing"]), n["num"], n["num_held"], _share(n["num_held"], n["num"])])
    title = "Figure 4 (left): values of failed rubrics shown to the agent but missing from the deliverable, held by the read log"
    return Table("figure4_left", title, columns, rows)


def _share(part: int, whole: int) -> float | None:
    return pct(part / whole) if whole else None


def load_probe(sweep: Sweep) -> list[dict[str, Any]]:
    path = sweep.dir / PROBE_FILE
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def probe_table(records: list[dict[str, Any]]) -> Table:
    """Per (benchmark, method, model, condition): values probed, recovered, share, context characters."""
    cells: dict[tuple[str, str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        cells[(r["benchmark"], r["method"], r["model"], r["condition"])].append(r)
    order = lambda k: (k[0], method_key(k[1]), k[2], CONDITIONS.index(k[3]) if k[3] in CONDITIONS else 99)  # noqa: E731
    columns = ["benchmark", "method", "model", "condition", "requirements", "values", "recovered", "recovered_pct",
               "median_context_chars", "mean_context_chars"]
    rows = []
    for key in sorted(cells, key=order):
        rs = cells[key]
        values, recovered = sum(r["values"] for r in rs), sum(r["recovered"] for r in rs)
        chars = [r["context_chars"] for r in rs]
        rows.append([*key, len(rs), values, recovered, pct(recovered / values) if values else None,
                     median(chars), sum(chars) / len(chars)])
    title = "Figure 4 (right): masked values the same model recovers, per condition (and the context it used)"
    return Table("figure4_right", title, columns, rows)


def build(sweep: Sweep, out: Path) -> Section:
    section = Section("figure4", "Figure 4: does the tab hold, and give back, what the deliverable missed?")
    g = captured(sweep)
    left_out = unshown(with_read_log(sweep))
    if left_out:
        section.notes.append(f"left part: {unshown_note(left_out)}")
    if g:
        left = held_table(g)
        section.tables.append(left)
        rows = [r for r in left.rows if r[3]]
        if rows:
            path = grouped_bars(out / "figure4_left.png", "Shown-but-missing values held by the read log",
                                [f"{r[2]}\n{r[1]}" for r in rows], {"all values": [r[5] for r in rows],
                                "numeric values": [r[8] for r in rows]}, "% held by the read log")
            if path is not None:
                section.figures.append(Figure("figure4_left", "Figure 4 (left)", path))
    else:
        section.notes.append("left part skipped: no scored job with a captured read log and rubric items")
    loaded = load_probe(sweep)
    records = [r for r in loaded if not r.get("error")]
    if len(records) < len(loaded):
        section.notes.append(f"{len(loaded) - len(records)} probe call(s) failed and are left out (see probe/probe.jsonl)")
    if records:
        right = probe_table(records)
        section.tables.append(right)
        models = sorted({(r[0], r[1], r[2]) for r in right.rows}, key=lambda k: (k[0], method_key(k[1]), k[2]))
        by = {(r[0], r[1], r[2], r[3]): r[7] for r in right.rows}
        series = {CONDITION_LABELS[c]: [by.get((*m, c)) for m in models] for c in CONDITIONS}
        path = grouped_bars(out / "figure4_right.png", "Recovery probe: masked values recovered",
                            [f"{m[2]}\n{m[1]}" for m in models], series, "% of values recovered")
        if path is None:
            section.notes.append("right part: no probed value to draw (every condition probed none)")
        else:
            section.figures.append(Figure("figure4_right", "Figure 4 (right)", path))
    else:
        section.notes.append(f"right part skipped: no probe results ({PROBE_FILE}); run `python -m eval.probe {sweep.dir}`")
    if not section.tables:
        raise Skip("; ".join(section.notes))
    return section
