"""S3 storage against a real S3-compatible server on 127.0.0.1, and W&B offline runs, through a real sweep."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from eval.benchmarks import load_benchmark
from tests.conftest import compose_root, write_script
from tests.helpers.s3_server import s3_client, start_s3

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("own_ray")]  # their sweeps start their own local Ray
REPO = Path(__file__).resolve().parents[3]
SECRET = "sk-test-NEVER-IN-WANDB-91ab"


@pytest.fixture
def s3(monkeypatch):
    server, url = start_s3()
    creds = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
    for k, v in creds.items():
        monkeypatch.setenv(k, v)
    client = s3_client(url)
    client.create_bucket(Bucket="runs")
    yield url, client
    server.stop()


def test_s3_upload_resume_and_wandb_offline(s3, tmp_path: Path) -> None:
    url, client = s3
    tasks = [t.id for t in load_benchmark(compose_root(["benchmark=builtin"]).benchmark).tasks()][:2]
    script = write_script(tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}}]}])
    out = tmp_path / "out"
    cmd = [
        sys.executable, "-m", "runners.sweep", "experiment=demo", "model=scripted", f"model.script={script}",
        "grid.benchmark=[builtin]", "benchmark.limit=null", "grid.method=[runningtab]", f"grid.tasks=[{','.join(tasks)}]", f"out={out}", "sweep=s3sweep",
        "storage=s3", "storage.bucket=runs", "storage.prefix=exp", f"storage.endpoint_url={url}", "tracker=wandb",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": SECRET, "WANDB_MODE": "offline"}
    r = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    sdir = out / "s3sweep"
    jobs = sorted(d.name for d in sdir.iterdir() if (d / "job.json").exists())
    assert len(jobs) == 2

    keys = {o["Key"] for o in client.list_objects_v2(Bucket="runs", Prefix="exp/s3sweep/")["Contents"]}
    for job in jobs:
        for name in ("job.json", "trajectory.jsonl", "result.json", "scores.json", "tab.json", "evaluator_view.json"):
            assert f"exp/s3sweep/{job}/{name}" in keys
    body = client.get_object(Bucket="runs", Key=f"exp/s3sweep/{jobs[0]}/result.json")["Body"].read()
    assert json.loads(body) == json.loads((sdir / jobs[0] / "result.json").read_text())

    runs = sorted((sdir / "wandb").glob("offline-run-*"))
    assert len(runs) == 2  # the grid cell's run (both jobs) and the sweep's summary run
    logged = b"".join(p.read_bytes() for run in runs for p in run.glob("run-*.wandb"))
    logged += b"".join(p.read_bytes() for p in (sdir / "wandb").rglob("*.table.json"))
    assert b"pass_rate" in logged and b"tab/read_log_entries" in logged and b"runningtab" in logged
    tables = [json.loads(p.read_text()) for p in (sdir / "wandb").rglob("*.table.json")]
    assert any(t["columns"] and t["data"] for t in tables)
    for p in sdir.rglob("*"):
        if p.is_file():
            assert SECRET.encode() not in p.read_bytes(), p

    # the local records are gone; resume reads what the bucket holds and runs nothing
    shutil.rmtree(sdir)
    again = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "2 already complete, 0 to run" in again.stderr
