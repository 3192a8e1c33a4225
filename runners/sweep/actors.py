"""The episode actor: one long-lived process that runs many jobs at once as asyncio tasks.

Episodes spend their time waiting on models, so an in-flight job costs an event-loop task and its
record's open files, not a process. Blocking steps (tool subprocesses, copying workspaces, judging)
run in the loop's worker threads, one per job at most, so a job never waits for another's thread.
A job's exception is its own (the driver records it); a job over the sweep's limit is cancelled
here and recorded as `time_limit` with its trajectory so far. Ray is applied by the scheduler.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ray

from runners.core import deadline
from runners.job.identity import JobSpec

if TYPE_CHECKING:
    from runners.job.run import JobDone

THREADS_PER_JOB = 1  # a job runs one blocking step at a time
SPARE_THREADS = 4  # for steps of jobs that were cancelled and are still finishing


class EpisodeActor:
    """Hosts up to `capacity` jobs at a time (the plain class; `run` is what the driver calls)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._benchmarks: dict[str, Any] = {}  # loaded once per actor, not once per job
        self._loading = threading.Lock()  # the jobs that start together wait for one load

    async def start(self) -> str:
        """Set up the worker threads; returns the Ray node this actor lives on (its readiness probe)."""
        threads = self.capacity * THREADS_PER_JOB + SPARE_THREADS
        asyncio.get_running_loop().set_default_executor(
            ThreadPoolExecutor(threads, thread_name_prefix="episode")
        )
        return ray.get_runtime_context().get_node_id()

    async def run(self, spec: JobSpec, job_dir: str, model_url: str | None, limit_s: float) -> JobDone:
        """One job to its record; stopped after `limit_s` seconds with a `time_limit` result."""
        from runners.job.run import JobDone, record_time_limit, run_and_score_async

        started = time.monotonic()
        task = await asyncio.to_thread(self._task, spec)
        limit = asyncio.timeout(limit_s)
        try:
            with deadline.until(started + limit_s):  # the model calls' too, the judge's included
                async with limit:
                    return await run_and_score_async(spec.cfg, task, Path(job_dir), spec.job_id, model_url)
        except TimeoutError:
            if not limit.expired():  # a TimeoutError of the job's own, not the sweep's limit
                raise
            wall = time.monotonic() - started
            result = await asyncio.to_thread(record_time_limit, Path(job_dir), spec.job_id, limit_s, wall)
            return JobDone(result, None, timed_out=True)

    def _task(self, spec: JobSpec) -> Any:
        from eval.benchmarks import load_benchmark

        key = json.dumps(asdict(spec.cfg.benchmark), sort_keys=True, default=str)
        benchmark = self._benchmarks.get(key)
        if benchmark is None:
            with self._loading:  # a sweep's first jobs all start at once, each in its own thread
                benchmark = self._benchmarks.get(key)
                if benchmark is None:
                    benchmark = self._benchmarks[key] = load_benchmark(spec.cfg.benchmark)
        return benchmark.task(spec.task_id)
