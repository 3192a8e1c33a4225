"""The sweep's line on money: what it paid (`spent`) beside what its trajectories cost (`cost`).

The two differ, and a third total, Table 1's `cost (USD)`, is the second one per cell:
- spent: what this sweep's runs paid providers (earlier runs' records and this run's calls, errored
  jobs, retried attempts and budget stops included); a reply from the model-call cache is free. The
  progress line's `$X spent` and `<sweep>/spend.json`'s `spent`.
- cost: what the recorded trajectories' replies cost at the model's prices, cached replies included,
  the same on every re-run (`result.json`'s `cost`).
- Table 1's `cost (USD)`: that cost summed over a cell's scored jobs (errored and unscored ones are
  left out of the table, and so of its cost).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from runners.core.job_record import read_result
from runners.core.record_types import RecordError


def money_line(sdir: Path, job_ids: Iterable[str], spent: float | None) -> str | None:
    """`spent $X (…) · cost $Y (…)`, naming each other and Table 1; None when nothing was priced.
    `spent` is the sweep's watch's total when it ran jobs, else the records' own spend is summed."""
    cost, paid, n = 0.0, 0.0, 0
    for job_id in job_ids:
        try:
            result = read_result(sdir / job_id)
        except (RecordError, OSError):
            continue
        if result is not None:
            cost, paid, n = cost + result.cost, paid + result.paid, n + 1
    spent = paid if spent is None else spent
    if not (spent or cost):
        return None
    return (f"spent ${spent:,.2f} (paid to providers by this sweep's runs; replies from the model-call cache are free) · "
            f"cost ${cost:,.2f} (what the {n} recorded trajectories' replies cost at the model's prices, cached ones "
            "included; Table 1's cost (USD) is this per cell, over its scored jobs)")
