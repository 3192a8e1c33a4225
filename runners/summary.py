"""The sweep's results table, read back from the job records on disk (the source of truth)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.metrics import aggregate
from runners.progress import results_table
from runners.record import SCORES, read_json


def summarize(sweep_dir: Path, job_ids: list[str]) -> tuple[list[str], list[list[Any]]]:
    """Pool each (benchmark, method, model, seed)'s scored jobs, then mean ± std over seeds."""
    cells: dict[tuple[str, str, str, int], list[dict[str, Any]]] = defaultdict(list)
    for jid in job_ids:
        d = sweep_dir / jid
        if not (d / SCORES).exists():
            continue
        job = read_json(d / "job.json")
        cells[(job["benchmark"], job["method"], job["model"], job["seed"])].append(read_json(d / SCORES))
    rows = [
        {"benchmark": b, "method": m, "model": mo, "seed": s, "metrics": aggregate(scores)}
        for (b, m, mo, s), scores in cells.items()
    ]
    return results_table(rows)
