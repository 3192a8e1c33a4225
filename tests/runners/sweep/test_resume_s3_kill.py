"""The driver SIGKILLed mid-sweep with storage=s3 while the endpoint is down, then resumed: every
job runs exactly once, and the ledger, the tracker and the bucket all hold every job (issue 16)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from eval.benchmarks import load_benchmark
from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from runners.sweep.ledger import Ledger
from tests.conftest import compose_root, write_script
from tests.helpers.s3_server import s3_client, start_s3
from tests.helpers.server_procs import MARK, new_mark, wait_marked

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("own_ray")]  # their sweeps start their own local Ray
REPO = Path(__file__).resolve().parents[3]
CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def moto(port: int) -> Any:
    return start_s3(port)[0]


def ledger_lines(sdir: Path) -> list[dict]:
    return Ledger(sdir).entries() if (sdir / "jobs.jsonl").exists() else []


def test_sigkill_with_s3_down_then_resume(tmp_path: Path, monkeypatch) -> None:
    for k, v in CREDS.items():
        monkeypatch.setenv(k, v)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = moto(port)
    client = s3_client(url)
    client.create_bucket(Bucket="runs")
    tasks = [t.id for t in load_benchmark(compose_root(["benchmark=builtin"]).benchmark).tasks()][:3]
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "sleep 2"}}]},
                                                 {"content": "done"}])
    work = tmp_path / "ws"
    work.mkdir()
    out = tmp_path / "out"
    cmd = [
        sys.executable, "-m", "runners.sweep", "experiment=demo", "model=scripted", f"model.script={script}",
        "grid.benchmark=[builtin]", "benchmark.limit=null", "grid.method=[dci,runningtab]", "grid.seed=[0]",
        f"grid.tasks=[{','.join(tasks)}]", f"out={out}", "sweep=k", "cluster.max_in_flight=2", f"agent.work_dir={work}",
        "storage=s3", "storage.bucket=runs", "storage.prefix=exp", f"storage.endpoint_url={url}", "storage.retries=1",
        "storage.timeout_s=2", "tracker=jsonl",
    ]
    mark = new_mark()  # the killed sweep's own Ray (not the tests' shared one) carries it to its actors
    env = {**os.environ, "PYTHONPATH": str(REPO), MARK: mark}
    sdir = out / "k"
    proc = subprocess.Popen(cmd, cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not ledger_lines(sdir):  # the first job is logged (and uploaded): now the endpoint goes down
            assert proc.poll() is None and time.monotonic() < deadline, "the sweep ended or stalled before the kill"
            time.sleep(0.1)
        server.stop()
        while len(ledger_lines(sdir)) < 3:  # jobs finish (their uploads fail) while the bucket is down
            assert proc.poll() is None and time.monotonic() < deadline, "scheduling stalled while the endpoint was down"
            time.sleep(0.1)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    wait_marked(mark, 60, gone=True)  # its orphaned actors may still be finishing a job and its scratch
    assert any("upload_error" in e for e in ledger_lines(sdir))  # the outage was real
    server = moto(port)  # the endpoint is back (the same in-process store)
    try:
        again = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr[-3000:]
        jobs = sorted(d.name for d in sdir.iterdir() if (d / "job.json").exists())
        assert len(jobs) == 6
        for j in jobs:  # every job ran exactly once, to the end
            assert read_json(sdir / j / "result.json")["stop_reason"] == "finished"
            assert sum(m["role"] == "system" for m in JobRecord(sdir / j).trajectory()) == 1
        lines = ledger_lines(sdir)
        assert {e["job_id"] for e in lines if e["status"] == "ok"} == set(jobs)  # the ledger holds every job
        ran = Counter(e["job_id"] for e in lines if e["status"] == "ok" and not e.get("reconciled"))
        assert max(ran.values()) == 1
        tracked = Counter(json.loads(x)["job_id"] for x in (sdir / "tracker.jsonl").read_text().splitlines()
                          if json.loads(x)["kind"] == "job")
        assert tracked == Counter(jobs)  # the tracker holds every job, once
        keys = {o["Key"] for o in client.list_objects_v2(Bucket="runs", Prefix="exp/k/")["Contents"]}
        for j in jobs:  # the bucket holds every job
            assert {f"exp/k/{j}/result.json", f"exp/k/{j}/scores.json", f"exp/k/{j}/trajectory.jsonl"} <= keys, j
        assert not list(work.iterdir())  # no job's scratch is left behind

        # a second machine reading the bucket runs nothing
        shutil.rmtree(sdir)
        other = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
        assert other.returncode == 0, other.stderr[-3000:]
        assert "6 already complete, 0 to run" in other.stderr, other.stderr[-3000:]
    finally:
        server.stop()
