"""What one W&B run of a grid cell (benchmark × harness × method × model × seed) holds, from its job records.

Pure functions over plain dicts, so the W&B tracker (runners/tracking/wandb_runs.py) only moves data:
a row per task, a row per rubric/checkpoint/question, the cell's summary metrics and its config
keys (the axes and the tab's ablation switches, so the W&B UI can group and filter by them).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.judges.metrics import aggregate, counts
from runners.core.job_record import JobRecord
from runners.core.record_types import Cell, Result, tab_config_of
from tab.config import SWITCHES as TAB_SWITCHES
from tab.stats import tab_summary

RESULT_COLUMNS = ("stop_reason", "turns", "tokens_in", "tokens_out", "cost", "spend", "cached_calls", "wall_s", "chars_read",
                  "attempt", "errored")
ITEM_TABLES = {"rubric": "rubrics", "checkpoint": "checkpoints", "answer": "questions"}
Table = tuple[list[str], list[list[Any]]]


@dataclass
class CellRow:
    """What a cell's run needs from one job: its record's result, scores and tab statistics."""

    job_id: str
    task_id: str
    result: Result
    scores: dict[str, Any] | None
    stats: dict[str, float] = field(default_factory=dict)


def read_row(job_dir: Path, scores: dict[str, Any] | None = None, stats: dict[str, float] | None = None) -> CellRow | None:
    """The job's row from its record (None when the record has no result); `scores`/`stats`, when
    the driver already has them, spare reading them again."""
    record = JobRecord(job_dir)
    if not record.finished:
        return None
    if stats is None:
        stats = tab_stats(record)
    meta = record.meta
    return CellRow(meta.job_id, meta.task_id, record.result, record.scores if scores is None else scores, stats)


def cell_config(cell: Cell, job_config: dict[str, Any], sweep: str, partial: bool) -> dict[str, Any]:
    """Top-level keys to group/filter by, and the resolved job config (names of secret variables,
    never their values) under `job`."""
    tab = tab_config_of(job_config)
    settings = tab.settings() if tab is not None else dict.fromkeys(TAB_SWITCHES)
    keys: dict[str, Any] = {"sweep": sweep, "benchmark": cell.benchmark, "harness": cell.harness, "method": cell.method,
                            "model": cell.model, "seed": cell.seed, "tab": tab is not None, "partial": partial}
    keys.update({f"tab_{s}": v for s, v in settings.items()})
    keys["ablation"] = tab is not None and not all(settings.values())
    return {**keys, "job": job_config}


def task_table(rows: list[CellRow]) -> Table:
    """One row per task: its metrics, what result.json says, and the tab statistics."""
    metrics = sorted({m for r in rows for m in ((r.scores or {}).get("metrics") or {})})
    stats = sorted({s for r in rows for s in r.stats})
    columns = ["job_id", "task_id", *metrics, *RESULT_COLUMNS, *(f"tab/{s}" for s in stats)]
    data = []
    for r in rows:
        m = (r.scores or {}).get("metrics") or {}
        data.append([r.job_id, r.task_id, *(m.get(k) for k in metrics), *(getattr(r.result, k) for k in RESULT_COLUMNS),
                     *(r.stats.get(s) for s in stats)])
    return columns, [[cell_value(v) for v in row] for row in data]


def item_tables(rows: list[CellRow]) -> dict[str, Table]:
    """One table per kind of scored item (rubrics, checkpoints, questions), a row per item."""
    by_kind: dict[str, list[tuple[CellRow, dict[str, Any]]]] = {}
    for r in rows:
        for it in (r.scores or {}).get("items") or []:
            by_kind.setdefault(str(it.get("kind", "item")), []).append((r, it))
    out = {}
    for kind, pairs in by_kind.items():
        keys = sorted({k for _, it in pairs for k in it} - {"kind"})
        data = [[cell_value(v) for v in (r.task_id, r.job_id, *(it.get(k) for k in keys))] for r, it in pairs]
        out[ITEM_TABLES.get(kind, kind)] = (["task_id", "job_id", *keys], data)
    return out


def cell_summary(rows: list[CellRow], expected: int | None) -> dict[str, Any]:
    """The cell's metrics: the benchmark's aggregate over scored tasks, means and totals of turns,
    tokens, cost, spend (what was paid: cached replies cost nothing) and wall time, the spend expected
    once every job of the cell ran, stop-reason counts and tab-statistic means."""
    scored = [r.scores for r in rows if r.scores is not None and not r.result.errored]
    out: dict[str, Any] = {"jobs": len(rows), "jobs_expected": expected, "partial": expected is not None and len(rows) < expected}
    out.update(aggregate(scored))
    out.update({f"n_{k}": v for k, v in counts(scored).items()})
    for key in ("turns", "tokens_in", "tokens_out", "cost", "spend", "wall_s"):
        values = [float(v) for r in rows if isinstance(v := getattr(r.result, key), (int, float))]
        if values:
            out[f"{key}_total"] = sum(values)
            out[f"{key}_mean"] = sum(values) / len(values)
    if rows and expected:  # what the cell will have paid once all its jobs ran, at its mean so far
        out["spend_expected"] = out["spend_mean"] * max(expected, len(rows))
    for reason, n in Counter(r.result.stop_reason for r in rows).items():
        out[f"stop/{reason}"] = n
    for s in sorted({s for r in rows for s in r.stats}):
        values = [r.stats[s] for r in rows if s in r.stats]
        out[f"tab/{s}_mean"] = sum(values) / len(values)
    return out


def cell_value(v: Any) -> Any:
    """A W&B table cell: scalars as they are, anything else as JSON."""
    return v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v, default=str)


def tab_stats(record: JobRecord) -> dict[str, float]:
    """Table 3's per-job numbers from the tab's record (empty when the job had no tab)."""
    tab = record.plugin("tab")
    if tab is None:
        return {}
    return {k: v for k, v in tab_summary(tab).items() if v is not None}
