"""The scheduler under failure, on real local Ray: a job that raises, an actor process that dies, a
job past its limit, an actor that stops answering — each recorded as such while the rest of the
sweep completes. Jobs share a few episode actors, so a crash costs exactly that actor's in-flight
jobs, which run again."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from pathlib import Path
from typing import Any

import pytest
import ray

from runners.config.runner import ClusterConfig
from runners.core.job_record import JobRecord
from runners.core.record_files import read_json
from runners.core.record_types import Result
from runners.job.identity import JobSpec, job_id
from runners.job.run import JobDone
from runners.sweep import scheduler
from runners.sweep.actors import EpisodeActor
from runners.sweep.grid import benchmark_tasks
from runners.sweep.scheduler import Outcome, run_all
from tests.conftest import compose_root, write_script
from tests.helpers import shared_ray

pytestmark = pytest.mark.slow
SLEEP = f"60.{secrets.randbelow(10**6):06d}"  # this session's: the test looks for it among the machine's processes


class Flaky(EpisodeActor):
    """Misbehaves by task id; otherwise leaves a small record after a while."""

    async def run(self, spec: JobSpec, job_dir: str, model_url: str | None, limit_s: float) -> JobDone:
        d = Path(job_dir)
        tries = d.parent / f"{d.name}.tries"
        tries.write_text(tries.read_text() + "x" if tries.exists() else "x")
        if not spec.job_id.startswith("job-"):  # a real job
            if spec.cfg.seed == 7 and len(tries.read_text()) == 1:  # finishes its record, then its node goes
                d.mkdir()
                (d / "result.json").write_text('{"stop_reason": "finished", "turns": 1}')
                os._exit(1)
            return await super().run(spec, job_dir, model_url, limit_s)
        d.mkdir(parents=True, exist_ok=True)
        if spec.task_id == "die-once" and len(tries.read_text()) == 1:
            await asyncio.sleep(0.5)  # its neighbours are in flight by now
            os._exit(1)
        if spec.task_id == "die-always":
            os._exit(1)
        if spec.task_id == "raise":
            raise RuntimeError("boom in the job")
        if spec.task_id == "block":
            time.sleep(60)  # holds the actor's loop: only killing the actor stops it
        await asyncio.sleep(1.5)
        return JobDone(Result(spec.job_id, "finished"), None)


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address=shared_ray.ensure(), log_to_driver=False)  # the session's local Ray
    yield
    ray.shutdown()


def specs_for(tmp_path: Path, names: list[str], seed: int = 0) -> list[JobSpec]:
    """Fake jobs by name; "real" is a real builtin job whose agent runs `sleep 60.<its own digits>`
    (another run of this test on the machine sleeps with other digits)."""
    script = write_script(
        tmp_path / "s.jsonl", [{"tool_calls": [{"name": "bash", "arguments": {"command": f"sleep {SLEEP}"}}]}]
    )
    cfg = compose_root(
        ["model=scripted", f"model.script={script}", "judge=none", "benchmark=builtin", f"seed={seed}"]
    )
    task = benchmark_tasks(cfg)[0].id
    return [
        JobSpec(f"job-{n}" if n != "real" else job_id(cfg, task), cfg, n if n != "real" else task)
        for n in names
    ]


def run(specs: list[JobSpec], tmp_path: Path, **cluster: Any) -> tuple[dict[str, Outcome], list[str]]:
    started: list[str] = []
    outcomes = run_all(specs, tmp_path, ClusterConfig(**cluster), {}, lambda s: started.append(s.job_id), lambda o: None,
                       actor_cls=Flaky)
    by = {o.spec.job_id: o for o in outcomes}
    assert len(by) == len(outcomes) == len(specs)  # every job exactly once
    return by, started


def test_a_crash_costs_only_its_actors_in_flight_jobs(local_ray, tmp_path: Path) -> None:
    specs = specs_for(tmp_path, ["ok1", "die-once", "raise", "ok2", "ok3", "ok4", "ok5"])
    by, started = run(specs, tmp_path, actors=2, max_in_flight=6, retries=1)
    assert by["job-raise"].status == "failed" and "boom in the job" in by["job-raise"].error
    assert started.count("job-raise") == 1  # a job's own failure is not retried
    assert by["job-die-once"].status == "ok" and by["job-die-once"].attempts == 2
    retried = {j for j, o in by.items() if o.attempts > 1}
    assert "job-die-once" in retried and len(retried) >= 2  # its neighbours on that actor ran again…
    assert len(retried) <= 3  # …and no job of the other actor did (3 jobs per actor)
    assert all(by[j].status == "ok" for j in retried)
    assert {j: started.count(j) for j in by} == {j: o.attempts for j, o in by.items()}


def test_a_job_that_always_kills_its_actor_fails_after_its_retries(local_ray, tmp_path: Path) -> None:
    by, started = run(
        specs_for(tmp_path, ["die-always", "ok1"]), tmp_path, actors=2, max_in_flight=2, retries=1
    )
    assert by["job-die-always"].status == "failed" and "actor died" in by["job-die-always"].error
    assert started.count("job-die-always") == 2
    assert by["job-ok1"].status == "ok"


def test_a_real_episode_past_its_limit_is_stopped_and_its_command_killed(local_ray, tmp_path: Path) -> None:
    """The scripted agent runs `sleep 60`; the sweep's limit (3 s) cancels the episode in its actor:
    the command is killed, the record says time_limit and keeps the trajectory, the actor goes on."""
    specs = specs_for(tmp_path, ["real", "ok1", "ok2"])
    t0 = time.monotonic()
    by, _ = run(specs, tmp_path, actors=1, max_in_flight=3, retries=0, job_timeout_s=3)
    hang = by[specs[0].job_id]
    assert hang.status == "timeout" and hang.attempts == 1
    assert by["job-ok1"].status == by["job-ok2"].status == "ok"  # same actor, not disturbed
    assert time.monotonic() - t0 < 30  # not the 60 s of the command
    result = read_json(tmp_path / specs[0].job_id / "result.json")
    assert result["stop_reason"] == "time_limit" and "exceeding its limit of 3 s" in result["error"]
    roles = [m["role"] for m in JobRecord(tmp_path / specs[0].job_id).trajectory()]
    assert roles[:3] == ["system", "user", "assistant"]
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit() and _cmdline(p) == f"sleep\0{SLEEP}\0".encode()]


def test_an_actor_that_stops_answering_is_killed_and_its_other_jobs_rerun(
    local_ray, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(scheduler, "BACKSTOP_S", 2.0)
    by, _ = run(
        specs_for(tmp_path, ["block", "ok1"]), tmp_path, actors=1, max_in_flight=2, retries=1, job_timeout_s=2
    )
    assert by["job-block"].status == "timeout"
    assert read_json(tmp_path / "job-block" / "result.json")["stop_reason"] == "time_limit"
    assert (
        by["job-ok1"].status == "ok" and by["job-ok1"].attempts == 2
    )  # lost with the killed actor, run again


def test_a_record_finished_just_before_its_actor_was_lost_is_kept_not_rerun(
    local_ray, tmp_path: Path
) -> None:
    """The actor wrote the complete record, then its process (or node) went down before the driver
    heard back: the retry finds the record and returns it instead of failing on it or re-running."""
    [spec] = specs_for(tmp_path, ["real"], seed=7)
    by, started = run([spec], tmp_path, actors=1, max_in_flight=1, retries=1)
    assert by[spec.job_id].status == "ok" and by[spec.job_id].attempts == 2, by[spec.job_id].error
    assert read_json(tmp_path / spec.job_id / "result.json") == {"stop_reason": "finished", "turns": 1}
    assert not (tmp_path / spec.job_id / "trajectory.jsonl").exists()  # not run a second time


def _cmdline(p: Path) -> bytes:
    try:
        return (p / "cmdline").read_bytes()
    except OSError:
        return b""
