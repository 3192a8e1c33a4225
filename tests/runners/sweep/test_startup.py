"""A small sweep starts only what it needs (issue 38.5): as many episode actors as it has jobs, not
one per half CPU (each is a process that imports the project), and its records are the same, by
content, whatever the number of actors that ran them."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import ray

from runners.config.runner import BudgetConfig, ClusterConfig
from runners.core.record_types import Result
from runners.job.identity import JobSpec
from runners.job.run import JobDone
from runners.sweep.actors import EpisodeActor
from runners.sweep.scheduler import run_all
from runners.sweep.watch import SweepWatch
from tests.conftest import compose_root, write_script
from tests.helpers import shared_ray

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[3]
VOLATILE = {"time", "wall_s", "latency_s"}  # when, and how long: never what a job did


class Counted(EpisodeActor):
    """Leaves one file per actor process started in `RT_TEST_ACTORS` (a folder), and runs nothing."""

    async def start(self) -> str:
        Path(os.environ["RT_TEST_ACTORS"], str(os.getpid())).touch()
        return await super().start()

    async def run(self, spec: JobSpec, job_dir: str, model_url: str | None, limit_s: float) -> JobDone:
        return JobDone(Result(spec.job_id, "finished"), None)


def test_a_sweep_of_two_jobs_starts_two_actors(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    seen = tmp_path / "actors"
    seen.mkdir()
    cfg = compose_root(["model=scripted", "judge=none", "benchmark=builtin"])
    specs = [JobSpec(f"job-{n}", cfg, f"t{n}") for n in range(2)]
    ray.init(address=shared_ray.ensure(), log_to_driver=False,
             runtime_env={"env_vars": {"RT_TEST_ACTORS": str(seen), "PYTHONPATH": str(REPO)}})
    try:
        assert ray.available_resources().get("CPU", 0) >= 2  # room for 4 actors of 0.5 CPU: the old count
        with caplog.at_level(logging.INFO, logger="runners.sweep.scheduler"):
            outcomes = run_all(specs, tmp_path, ClusterConfig(), {}, lambda s: None, lambda o: None, actor_cls=Counted)
    finally:
        ray.shutdown()
    assert sorted(o.status for o in outcomes) == ["ok", "ok"]
    assert "2 episode actor(s) of 0.5 CPU" in caplog.text  # not 4: one per half CPU free
    assert 1 <= len(list(seen.iterdir())) <= 2  # those started before both jobs were done


class Governed(EpisodeActor):
    """Runs nothing; a job's result says whether it found the sweep's governor up when it started."""

    async def run(self, spec: JobSpec, job_dir: str, model_url: str | None, limit_s: float) -> JobDone:
        from runners.models import governor

        found = governor.find(Path(job_dir).parent)
        return JobDone(Result(spec.job_id, "finished" if found is not None else "no governor"), None)


def test_the_governor_starts_beside_the_actors_and_before_any_job(tmp_path: Path) -> None:
    cfg = compose_root(["model=scripted", "judge=none", "benchmark=builtin"])
    specs = [JobSpec(f"job-{n}", cfg, f"t{n}") for n in range(2)]
    ray.init(address=shared_ray.ensure(), log_to_driver=False, runtime_env={"env_vars": {"PYTHONPATH": str(REPO)}})
    try:
        with SweepWatch(tmp_path, BudgetConfig(), specs, specs) as watch:
            starting = watch.handle is None  # the governor's process starts while the actors' do
            outcomes = run_all(specs, tmp_path, ClusterConfig(), {}, lambda s: None, lambda o: None,
                               actor_cls=Governed, admit=watch.admit)
            up = ray.get(watch.handle.snapshot.remote(), timeout=30)
    finally:
        ray.shutdown()
    assert starting, "SweepWatch waited for its governor before the episode actors were started"
    assert [o.result.stop_reason for o in outcomes if o.result] == ["finished", "finished"]  # each job found it up
    assert "providers" in up


def sweep(out: Path, script: Path, *extra: str) -> dict[str, dict[str, Any]]:
    cmd = [sys.executable, "-m", "runners.sweep", "model=scripted", f"model.script={script}", "grid.benchmark=[builtin]",
           "benchmark.limit=1", "grid.method=[dci,runningtab]", "judge=rule", "model.cache=off", "tracker=jsonl", f"out={out}", "sweep=s", *extra]
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return {d.name: {f.name: content(f) for f in sorted(d.iterdir()) if f.is_file()}
            for d in sorted((out / "s").iterdir()) if (d / "job.json").is_file()}


def content(path: Path) -> Any:
    """A record file without its times: JSON by value, JSON lines line by line, else its text."""
    text = path.read_text()
    if path.suffix == ".json":
        return timeless(json.loads(text))
    if path.suffix == ".jsonl":
        return [timeless(json.loads(line)) for line in text.splitlines()]
    return text


def timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: timeless(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [timeless(v) for v in value]
    return value


def test_the_records_of_a_small_sweep_do_not_depend_on_how_many_actors_ran_it(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [
        {"tool_calls": [{"name": "bash", "arguments": {"command": "ls && head -c 200 *.md"}}]},
        {"content": "Done."},
    ])
    fewer = sweep(tmp_path / "fewer", script)  # 2 jobs: 2 actors (each sweep calls the model: no call cache)
    one_per_half_cpu = sweep(tmp_path / "more", script, "cluster.actors=4")  # the count before issue 38.5
    assert len(fewer) == 2 and all("scores.json" in files for files in fewer.values())
    assert fewer == one_per_half_cpu
