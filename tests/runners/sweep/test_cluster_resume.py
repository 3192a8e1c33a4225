"""A sweep on a Ray cluster of three nodes on loopback with storage=s3 (moto), its driver SIGKILLed
and resumed: bench/sweep_cluster.py's paths at a couple of hundred jobs (the bench runs 100,000 by
hand). Every job is in the ledger exactly once, W&B has one run per grid cell plus the summary, the
bucket lists every job, and the jobs ran on more than one node. Its records are packed (`storage.pack_from=0`): what the killed driver left in folders is packed on resume,
and the records take well under one file a job."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.ray_nodes import LocalCluster
from bench.sweep import start_stub
from bench.sweep_20k import ledger_ids, run, wandb_runs
from bench.sweep_cluster import (
    CREDS,
    SWEEP,
    inode_parts,
    listing_s,
    start_s3,
    sweep_cmd,
    sweep_env,
    write_benchmark,
)
from runners.core.job_record import JobRecord, record_ids
from runners.sweep.ledger import Ledger

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("own_ray")]

TASKS, SEEDS, NODES = 40, 2, 3  # 160 jobs in 4 cells


def test_a_killed_driver_on_three_nodes_resumes_each_job_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in CREDS.items():
        monkeypatch.setenv(k, v)
    bench = write_benchmark(tmp_path / "bench", TASKS)
    jobs = TASKS * 2 * SEEDS
    s3, s3_url = start_s3()
    stub, port = start_stub(0.05, 1)
    try:
        with LocalCluster(NODES) as cluster:
            cmd = sweep_cmd(tmp_path, bench, SEEDS, 24, cluster.address, port, s3_url, "storage.pack_from=0")
            env = sweep_env(cluster)
            sdir = tmp_path / "out" / SWEEP
            _, _, killed = run(cmd, tmp_path / "run1.log", jobs // 3, sdir, env)
            assert killed, "the first run finished before it could be killed"
            first = len(ledger_ids(sdir))
            assert 0 < first < jobs
            _, stored = listing_s(s3_url)
            assert 0 < stored < jobs  # what the first run uploaded, no more
            run(cmd, tmp_path / "run2.log", None, sdir, env)
            assert listing_s(s3_url)[1] == jobs  # the bucket holds every job
    finally:
        stub.kill()
        s3.kill()
    ids = ledger_ids(sdir)
    assert len(ids) == len(set(ids)) == jobs  # each job exactly once, none lost
    assert len(wandb_runs(tmp_path)) == 2 * SEEDS + 1  # one per grid cell and the sweep's summary
    assert "already complete" in (tmp_path / "run2.log").read_text()
    assert len(record_ids(sdir)) == jobs and not [j for j in record_ids(sdir) if (sdir / j).exists()]  # all packed, none lost
    assert all(JobRecord(sdir / j).scored for j in record_ids(sdir))
    parts = inode_parts(tmp_path)
    assert parts["records"] <= jobs // 4, parts  # 4 cells: a pack and an index each (unpacked: ~11 a job)
    nodes = {e.get("node") for e in Ledger(sdir).entries() if not e.get("reconciled")}
    # more than one node ran jobs (which of the three a loaded machine brings up first is its scheduler's business)
    assert len(nodes) >= 2, f"jobs ran on {len(nodes)} of the {NODES} nodes"
