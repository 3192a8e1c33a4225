"""The scheduler under failure, on real local Ray: a job that raises, an actor that dies, a job past
its limit — each recorded as such while the rest of the sweep completes."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
import ray

from runners.config import ClusterConfig
from runners.grid import JobSpec
from runners.record import read_json
from runners.scheduler import JobActor, run_all
from tests.conftest import compose_root

pytestmark = pytest.mark.slow


class Flaky(JobActor):
    """Misbehaves by task id; otherwise runs the real job."""

    def run(self, spec: JobSpec, job_dir: str, model_url: str | None) -> dict[str, Any]:
        if spec.task_id == "die":
            os._exit(1)
        if spec.task_id == "hang":
            Path(job_dir).mkdir(parents=True, exist_ok=True)
            (Path(job_dir) / "trajectory.jsonl").write_text("{}\n")
            time.sleep(120)
        if spec.task_id == "raise":
            raise RuntimeError("boom in the job")
        Path(job_dir).mkdir(parents=True, exist_ok=True)
        return {"result": {"stop_reason": "finished"}, "scores": None}


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_failures_are_recorded_and_the_rest_completes(local_ray, tmp_path: Path) -> None:
    cfg = compose_root(["model=scripted", "judge=none"])
    specs = [JobSpec(f"job-{t}", cfg, t) for t in ("ok1", "die", "raise", "hang", "ok2")]
    started: list[str] = []
    cluster = ClusterConfig(job_cpus=0.1, max_in_flight=5, retries=1, job_timeout_s=8)
    outcomes = run_all(specs, tmp_path, cluster, {}, lambda s: started.append(s.task_id), lambda o: None, actor_cls=Flaky)
    by = {o.spec.task_id: o for o in outcomes}
    assert set(by) == {"ok1", "die", "raise", "hang", "ok2"}
    assert by["ok1"].status == by["ok2"].status == "ok"
    assert by["die"].status == "failed" and by["die"].attempts == 2 and "actor died" in by["die"].error
    assert started.count("die") == 2  # retried once, as configured
    assert by["raise"].status == "failed" and "boom in the job" in by["raise"].error
    assert started.count("raise") == 1  # a job's own failure is not retried
    assert by["hang"].status == "timeout"
    result = read_json(tmp_path / "job-hang" / "result.json")
    assert result["stop_reason"] == "time_limit" and "exceeding its limit" in result["error"]
    assert (tmp_path / "job-hang" / "trajectory.jsonl").exists()
