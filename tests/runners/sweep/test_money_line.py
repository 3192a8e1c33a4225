"""Spent, cost and Table 1's `cost (USD)` name each other (issue 38 item 4): one sweep showed three
totals under three names, none naming the others."""

from __future__ import annotations

import json
from pathlib import Path

from runners.sweep.money import money_line


def result(sdir: Path, job_id: str, cost: float, spend: float, stop: str = "finished") -> str:
    (sdir / job_id).mkdir(parents=True)
    (sdir / job_id / "result.json").write_text(json.dumps({"job_id": job_id, "stop_reason": stop, "cost": cost, "spend": spend}))
    return job_id


def test_the_line_tells_what_was_paid_from_what_the_trajectories_cost(tmp_path: Path) -> None:
    jobs = [result(tmp_path, "cached", 1.0, 0.0), result(tmp_path, "paid", 1.0, 1.0),
            result(tmp_path, "errored", 0.5, 0.5, "model_error"), "unfinished"]
    line = money_line(tmp_path, jobs, None)
    assert line is not None and line.startswith("spent $1.50 (paid to providers by this sweep's runs; replies from the model-call cache are free)")
    assert "cost $2.50 (what the 3 recorded trajectories' replies cost at the model's prices, cached ones included; " in line
    assert "Table 1's cost (USD)" in line
    assert money_line(tmp_path, jobs, 4.25).startswith("spent $4.25 ")  # the watch's live count, lost attempts included


def test_nothing_priced_says_nothing(tmp_path: Path) -> None:
    assert money_line(tmp_path, [result(tmp_path, "free", 0.0, 0.0)], None) is None


def test_the_records_paid_is_read_alike_by_the_line_and_the_budget(tmp_path: Path) -> None:
    """Issue 49: the money line left out what a job's earlier errored attempts paid, which the budget
    counts (`runners/sweep/budget.py`): one reader (`Result.paid`) for both."""
    from runners.sweep.budget import _paid

    job = result(tmp_path, "retried", 1.0, 1.0)
    doc = json.loads((tmp_path / job / "result.json").read_text())
    doc["earlier_errors"] = [{"attempt": 1, "stop_reason": "model_error", "error": "503", "spend": 0.75}]
    (tmp_path / job / "result.json").write_text(json.dumps(doc))
    assert _paid(tmp_path / job) == 1.75
    assert money_line(tmp_path, [job], None).startswith("spent $1.75 ")
