"""Running job specs as Ray actors: bounded in flight, one `ray.wait` loop, outcomes as they finish.

Each job runs in an actor of its own while it runs (actors are reused for later jobs), so a job that
crashes its process or overruns its limit is isolated and can be killed without touching the
others. Infrastructure failures (the actor died, its node was lost) are retried; a job's own
failure is already in its record and is never retried. On a multi-node cluster a node that dies
takes its actors with it: their jobs count as lost and run again on the nodes left; each outcome
says which node ran it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayError

from runners.config import ClusterConfig
from runners.grid import JobSpec
from runners.record import RESULT, write_json

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """What became of one job: `ok`, `error` (its record ends in env_error/model_error), `failed`
    (died after retries, or an error outside the record) or `timeout`."""

    spec: JobSpec
    status: str
    attempts: int
    wall_s: float
    result: dict[str, Any] | None = None
    scores: dict[str, Any] | None = None
    error: str | None = None
    node: str | None = None  # the Ray node id of its last attempt's actor (None: it never came up)


@dataclass
class _Running:
    spec: JobSpec
    actor: Any
    started: float
    attempt: int
    url: str | None = None
    ready: bool = True
    node: str | None = None


class JobActor:
    """The plain class each job actor hosts (Ray is applied by the scheduler)."""

    def node(self) -> str:
        """The Ray node this actor lives on; the scheduler's first call, so also its readiness probe."""
        return ray.get_runtime_context().get_node_id()

    def run(self, spec: JobSpec, job_dir: str, model_url: str | None) -> dict[str, Any]:
        from runners.run import run_and_score

        return run_and_score(spec.cfg, spec.task_id, Path(job_dir), spec.job_id, model_url)


def run_all(
    specs: list[JobSpec],
    sweep_dir: Path,
    cluster: ClusterConfig,
    urls: dict[str, Any],
    on_start: Callable[[JobSpec], None],
    on_done: Callable[[Outcome], None],
    actor_cls: type = JobActor,
) -> list[Outcome]:
    """Run every spec; calls `on_start`/`on_done` as jobs start and finish. Ctrl-C kills what runs.

    Actors are reused from job to job (starting a Python worker costs about a second of CPU, more
    than a job's own bookkeeping); an actor that died or ran past a job's limit is replaced.
    """
    from runners.replicas import ReplicaPool

    pool = ReplicaPool(urls)
    remote = ray.remote(actor_cls).options(num_cpus=cluster.job_cpus, max_restarts=0, max_task_retries=0)
    pending = list(reversed(specs))
    attempts: dict[str, int] = {}
    running: dict[Any, _Running] = {}
    idle: list[tuple[Any, str | None]] = []  # (actor, its node)
    outcomes: list[Outcome] = []

    def launch(spec: JobSpec) -> None:
        attempts[spec.job_id] = attempts.get(spec.job_id, 0) + 1
        if idle:
            actor, node = idle.pop()
            job = _Running(spec, actor, time.monotonic(), attempts[spec.job_id], node=node)
            submit(job)
        else:  # the job's clock starts once its new actor is up, not while a worker process starts
            actor = remote.remote()
            job = _Running(spec, actor, time.monotonic(), attempts[spec.job_id], ready=False)
            running[actor.node.remote()] = job
        on_start(spec)

    def submit(job: _Running) -> None:
        job.url = pool.acquire(job.spec.cfg.model.id)
        job.ready, job.started = True, time.monotonic()
        running[job.actor.run.remote(job.spec, str(sweep_dir / job.spec.job_id), job.url)] = job

    def free_idle() -> None:
        """Stop an idle actor for each job still waiting for its new one once nothing is left to hand
        out. With more jobs in flight than the cluster has slots (a small cluster, or after losing a
        node) Ray cannot place the new actors while idle ones hold the resources they wait for."""
        waiting = 0 if pending else sum(not job.ready for job in running.values())
        for _ in range(min(waiting, len(idle))):
            ray.kill(idle.pop()[0])

    def finish(outcome: Outcome) -> None:
        outcomes.append(outcome)
        on_done(outcome)

    try:
        while pending or running:
            while pending and len(running) < cluster.max_in_flight:
                launch(pending.pop())
            free_idle()
            ready, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
            for ref in ready:
                job = running.pop(ref)
                if not job.ready and (node := _node(ref)):
                    job.node = node
                    submit(job)
                    continue
                pool.release(job.spec.cfg.model.id, job.url)
                outcome, alive = _collect(ref, job, cluster)
                if alive:
                    idle.append((job.actor, job.node))
                else:
                    ray.kill(job.actor)
                if outcome is None:  # infrastructure failure: a new actor tries again
                    pending.append(job.spec)
                else:
                    finish(outcome)
            for ref, job in list(running.items()):
                limit = _limit(job.spec, cluster)
                if job.ready and time.monotonic() - job.started > limit:
                    running.pop(ref)
                    pool.release(job.spec.cfg.model.id, job.url)
                    ray.kill(job.actor)
                    finish(_timed_out(job, sweep_dir, limit))
    finally:
        for actor in [*(a for a, _ in idle), *(job.actor for job in running.values())]:
            ray.kill(actor)
    return outcomes


def _node(ready_ref: Any) -> str | None:
    """The node of an actor that came up (None: its start failed, collected like a death and retried)."""
    try:
        return ray.get(ready_ref, timeout=0)
    except RayError:
        return None


def _collect(ref: Any, job: _Running, cluster: ClusterConfig) -> tuple[Outcome | None, bool]:
    """The job's outcome (None: retry it) and whether its actor can take another job."""
    wall = time.monotonic() - job.started
    try:
        out = ray.get(ref, timeout=0)
    except (RayActorError, GetTimeoutError) as e:
        if job.attempt <= cluster.retries:
            log.warning("job %s: actor on node %s lost (%s); retrying (attempt %d)",
                        job.spec.job_id, job.node or "(starting)", type(e).__name__, job.attempt + 1)  # fmt: skip
            return None, False
        return Outcome(job.spec, "failed", job.attempt, wall, error=f"actor died: {e}"[:2000], node=job.node), False
    except RayError as e:  # the job raised outside its own record keeping; its actor is fine
        return Outcome(job.spec, "failed", job.attempt, wall, error=str(e)[:2000], node=job.node), True
    result, scores = out["result"], out.get("scores")
    if result.get("errored"):  # recorded, but not a result: counted apart and retried on resume
        return Outcome(job.spec, "error", job.attempt, wall, result, scores, result.get("error"), job.node), True
    return Outcome(job.spec, "ok", job.attempt, wall, result=result, scores=scores, node=job.node), True


def _limit(spec: JobSpec, cluster: ClusterConfig) -> float:
    """The sweep's hard limit: the job's own time limit plus room for one bash timeout and scoring."""
    if cluster.job_timeout_s is not None:
        return cluster.job_timeout_s
    return spec.cfg.agent.time_limit_s + spec.cfg.env.bash_timeout + 300


def _timed_out(job: _Running, sweep_dir: Path, limit: float) -> Outcome:
    """Record a job the sweep had to stop: its trajectory so far stays; the result says why."""
    result = {
        "job_id": job.spec.job_id,
        "stop_reason": "time_limit",
        "turns": None,
        "final_answer": "",
        "wall_s": round(time.monotonic() - job.started, 3),
        "error": f"stopped by the sweep after exceeding its limit of {limit:.0f} s",
    }
    job_dir = sweep_dir / job.spec.job_id
    if job_dir.is_dir():
        write_json(job_dir / RESULT, result)
    return Outcome(job.spec, "timeout", job.attempt, result["wall_s"], result=result, error=result["error"], node=job.node)
