"""The 20,000-job benchmark's paths at a few hundred jobs (bench/sweep_20k.py does the large run by
hand): a real scripted sweep with tracker=wandb (offline) is SIGKILLed mid-way and resumed; every
job is in the ledger exactly once and W&B has one run per grid cell plus the summary run."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.sweep_20k import ledger_ids, run, setup, sweep_cmd, wandb_runs
from runners.core.job_record import read_result
from tests.helpers import shared_ray

pytestmark = pytest.mark.slow

TASKS, SEEDS = 50, 2  # 200 jobs in 4 cells


def test_killed_and_resumed_sweep_runs_each_job_once_and_logs_one_wandb_run_per_cell(tmp_path: Path) -> None:
    bench, script = setup(tmp_path, TASKS)
    cmd = sweep_cmd(tmp_path, bench, script, SEEDS, in_flight=32)
    sdir = tmp_path / "out" / "s20k"
    jobs = TASKS * 2 * SEEDS
    _, _, killed = run(cmd, tmp_path / "run1.log", jobs // 3, sdir)
    assert killed, "the first run finished before it could be killed"
    assert shared_ray.alive(), "killing the sweep killed another Ray of this machine (the tests' shared one)"
    first = len(ledger_ids(sdir))
    assert 0 < first < jobs
    run(cmd, tmp_path / "run2.log", None, sdir)
    ids = ledger_ids(sdir)
    assert len(ids) == len(set(ids)) == jobs  # each job exactly once, none lost
    dirs = [d for d in sdir.iterdir() if d.is_dir() and (d / "job.json").exists()]
    assert len(dirs) == jobs
    assert all(r is not None and r.stop_reason == "finished" for r in map(read_result, dirs))
    assert len(wandb_runs(tmp_path)) == 2 * SEEDS + 1  # one per grid cell and the sweep's summary
    assert "already complete" in (tmp_path / "run2.log").read_text()
