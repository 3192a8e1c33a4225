"""One job, in-process: materialize the workspace, plug the method in, run the episode, write the record.

Plain coroutines with no Ray: the sweep's episode actors run many of them at once on one event
loop (runners/sweep/actors.py); `run_and_score` runs one for the single-job entry point. What blocks
(copying the workspace, starting the environment, judging) runs in the loop's worker threads, so
the loop only ever waits on models and tools.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from envs.config import EnvConfig
from envs.deliverable import diff_workspace
from envs.environment import WorkspaceEnv
from envs.sandbox import agent_root
from envs.workspace import materialize
from runners.agent.agent_texts import task_message
from runners.agent.episode import EpisodeResult
from runners.agent.harnesses import HARNESSES
from runners.agent.methods import build_plugins
from runners.config.schema import RootConfig, job_record_config
from runners.core.job_record import (
    JobRecord,
    RecordWriteError,
    Trajectory,
    is_job_dir,
    read_result,
    write_deliverable,
    write_meta,
    write_plugin_record,
    write_result,
    write_view,
)
from runners.core.record_types import JobMeta, Result
from runners.core.task import Task
from runners.job.model import JobModel, job_model
from runners.job.resume import Reruns, fresh_job_dir
from runners.job.scratch import job_scratch, remove_scratch

log = logging.getLogger(__name__)
T = TypeVar("T")


@dataclass(frozen=True)
class JobDone:
    """What an episode actor hands back for one job: its result, its scores (None when not judged),
    whether the sweep's time limit stopped it, and why it is unscored when its judge could not read
    the record for a reason that is not the agent's (an infrastructure failure: re-scorable)."""

    result: Result
    scores: dict[str, Any] | None
    timed_out: bool = False
    unscored: str | None = None


def run_job(
    cfg: RootConfig, task: Task, job_dir: Path, job_id: str, model_url: str | None = None
) -> Result:
    """`run_job_async` for a caller without an event loop."""
    return asyncio.run(run_job_async(cfg, task, job_dir, job_id, model_url))


async def run_job_async(
    cfg: RootConfig, task: Task, job_dir: Path, job_id: str, model_url: str | None = None
) -> Result:
    """Run `task` under `cfg` and write its complete record to `job_dir`; returns its result.

    Cancelled (the sweep's limit), it leaves the trajectory so far and no result: the caller says why.
    A record that cannot be written (a full disk) raises `RecordWriteError`: no result, so a resume
    runs the job again."""
    started = await asyncio.to_thread(_start_record, cfg, task, job_dir, job_id)
    return await _run_started(cfg, task, job_dir, model_url, started)


@dataclass(frozen=True)
class _Started:
    """A job whose record is begun (its job.json, its earlier attempts' errors, its open trajectory)
    and its scratch folder made."""

    meta: JobMeta
    earlier: list[Any]
    traj: Trajectory
    scratch: Path


def _start_record(cfg: RootConfig, task: Task, job_dir: Path, job_id: str) -> _Started:
    """Clear what a killed run left, write job.json, open the trajectory and make the scratch folder
    (in a worker thread: `tempfile.mkdtemp`'s name and system calls were the loop's)."""
    earlier = fresh_job_dir(job_dir)
    meta = JobMeta(job_id, cfg.benchmark.label, task.id, cfg.method.name, cfg.model.id, cfg.seed, job_record_config(cfg),
                   harness=cfg.agent.harness)
    write_meta(job_dir, meta)
    traj = Trajectory(job_dir)
    return _Started(meta, earlier, traj, job_scratch(job_id, cfg.agent.work_dir))


async def _run_started(cfg: RootConfig, task: Task, job_dir: Path, model_url: str | None, job: _Started) -> Result:
    """The episode of a begun record, and the record finished. Each blocking step that can go with
    another runs in the same worker-thread hop (a hop costs the loop ~40-90 us of CPU)."""
    job_id = job.meta.job_id
    started = time.time()
    try:
        try:
            res, extra = await _episode(cfg, task, job_dir, job.meta, job.scratch / "workspace", model_url, job.traj)
        except RecordWriteError:
            raise
        except Exception as e:  # setting up the job failed: the record says so instead of vanishing
            log.exception("job %s failed outside the episode", job_id)
            res, extra = EpisodeResult(stop_reason="env_error", error=f"{type(e).__name__}: {e}"), {}
    except BaseException:  # a record that cannot be written, or the sweep's limit: no result
        job.traj.close()
        await asyncio.to_thread(remove_scratch, job.scratch)
        raise
    job.traj.close()
    return await asyncio.to_thread(_finish, job_dir, job, res, started, extra)


def _finish(job_dir: Path, job: _Started, res: EpisodeResult, started: float, extra: dict[str, Any]) -> Result:
    """The scratch folder removed, then the record's last write."""
    remove_scratch(job.scratch)
    result = _result(job.meta.job_id, res, job.earlier, started, extra)
    write_result(job_dir, result)
    return result


def _result(
    job_id: str, res: EpisodeResult, earlier: list[Any], started: float, extra: dict[str, Any]
) -> Result:
    """The episode's totals as they are, but its cost rounded and the job's own wall time (the
    workspace and the record included), with what the job adds."""
    return Result(
        job_id=job_id,
        attempt=len(earlier) + 1,
        earlier_errors=earlier,
        **res.totals() | {"cost": round(res.cost, 6), "wall_s": round(time.time() - started, 3)},
        **extra,
    )


def record_time_limit(job_dir: Path, job_id: str, limit_s: float, wall_s: float) -> Result:
    """The result of a job the sweep had to stop: its trajectory so far stays; the result says why."""
    result = Result(
        job_id=job_id,
        stop_reason="time_limit",
        wall_s=round(wall_s, 3),
        error=f"stopped by the sweep after exceeding its limit of {limit_s:.0f} s",
    )
    if is_job_dir(job_dir):
        result = dataclasses.replace(result, sandbox=JobRecord(job_dir).meta.sandbox)
    if job_dir.is_dir():
        write_result(job_dir, result)
    return result


async def _episode(
    cfg: RootConfig, task: Task, job_dir: Path, meta: JobMeta, ws: Path, model_url: str | None, traj: Trajectory
) -> tuple[EpisodeResult, dict[str, Any]]:
    harness = HARNESSES.get(cfg.agent.harness)  # our own loop or a production harness (runners/agent/harnesses.py)
    setup = harness.setup(cfg.env)
    try:
        env, plugins = await asyncio.to_thread(_environment, cfg, setup.env_config(cfg.env), task, job_dir, meta, ws)
        try:
            model = job_model(cfg, task.id, model_url, job_dir.parent, meta.job_id)  # limiter, cache, spend, budget
            prompt = task_message(task, env.agent_root, cfg.method.texts)
        except BaseException:
            await asyncio.to_thread(env.close)  # its scratch, its cgroup
            raise
        try:
            res, record = await harness.run(setup, model.model, env, prompt, cfg.agent, traj, task.sandbox.service)
            if record is not None:
                await asyncio.to_thread(write_plugin_record, job_dir, "harness", record)
        except BaseException:
            await close_episode(env, model)
            raise
        delivered = await close_episode(env, model, functools.partial(_deliver, cfg, task, job_dir, ws, env, plugins, res))
    finally:
        setup.close()
    return res, {**delivered, **model.record_fields(res.stop_reason, cfg.budget.job_usd)}


async def close_episode(env: Any, model: JobModel, then: Callable[[], T] | None = None) -> T | None:
    """The episode's end: its environment closed, then `then` (what the agent left, delivered), in
    one worker-thread hop, while its model closes (the last spend report, a round trip to the
    governor). The model's close is awaited whatever the environment's does: a close that raises
    still leaves the sweep's totals with the job's payments (the environment's error is then the
    job's, and `then` does not run)."""
    closing = asyncio.ensure_future(model.aclose())
    try:
        return await asyncio.to_thread(_close_then, env.close, then)
    finally:
        await closing


def _close_then(close: Callable[[], None], then: Callable[[], T] | None) -> T | None:
    close()
    return then() if then is not None else None


def _environment(
    cfg: RootConfig, env_cfg: EnvConfig, task: Task, job_dir: Path, meta: JobMeta, ws: Path
) -> tuple[WorkspaceEnv, list[Any]]:
    """The task's workspace, materialized, with the method's plugins in its environment; job.json
    then says which sandbox the agent actually runs in ("bwrap", or "none": unsandboxed)."""
    materialize(task.workspace, ws, task.stage, method=env_cfg.materialize)
    urls = task.sandbox.service.urls if task.sandbox.service else ()
    plugins = build_plugins(cfg.method, ws, task.output, cfg.agent.context_level, agent_root(env_cfg, str(ws)), urls)
    env = WorkspaceEnv(ws, env_cfg, plugins, extras=task.sandbox)
    try:
        write_meta(job_dir, dataclasses.replace(meta, sandbox=env.sandbox_kind))
    except BaseException:
        env.close()
        raise
    return env, plugins


def _deliver(
    cfg: RootConfig,
    task: Task,
    job_dir: Path,
    ws: Path,
    env: WorkspaceEnv,
    plugins: list[Any],
    res: EpisodeResult,
) -> dict[str, Any]:
    """The plugins' records, the evaluator's view and the deliverable: what the agent left behind."""
    view = res.messages
    for p in plugins:
        view = p.evaluator_view(view)
        record = p.record()
        if record is not None:
            write_plugin_record(job_dir, p.name, record)
    write_view(job_dir, {"task": task.prompt, "messages": view, "final_answer": res.final_answer})
    caps = cfg.env.deliverable_max_files, cfg.env.deliverable_max_bytes
    diff = diff_workspace(task.workspace, task.stage, ws, max_files=caps[0])
    got = write_deliverable(job_dir, ws, diff, *caps)
    return {"deliverable": got.files, "deleted": diff.deleted, "left_out": got.left_out, "left_out_rest": got.rest,
            "sandbox": env.sandbox_kind, "limits_hit": [*env.limits_hit, *got.limits_hit]}


def _finished_or_started(cfg: RootConfig, task: Task, job_dir: Path, job_id: str) -> Result | _Started:
    """The job's result when its record is finished for good (`Reruns`), else its record begun (one hop for both)."""
    result = read_result(job_dir)
    if result is None or Reruns.of(cfg).again(result):
        return _start_record(cfg, task, job_dir, job_id)
    return result


def score(cfg: RootConfig, job_dir: Path, task: Task | None = None) -> dict[str, Any] | None:
    """Judge a finished record per its benchmark's protocol (None when `judge=none`)."""
    if cfg.judge.name == "none":
        return None
    from eval.score.records import score_job

    return score_job(job_dir, cfg.judge, task=task, benchmark=cfg.benchmark)


def run_and_score(
    cfg: RootConfig, task_id: str, job_dir: Path, job_id: str, model_url: str | None
) -> JobDone:
    """One job end to end, for a caller without an event loop (the single-job entry point)."""
    from eval.benchmarks import load_benchmark

    task = load_benchmark(cfg.benchmark).task(task_id)
    return asyncio.run(run_and_score_async(cfg, task, job_dir, job_id, model_url))


async def run_and_score_async(
    cfg: RootConfig, task: Task, job_dir: Path, job_id: str, model_url: str | None
) -> JobDone:
    """One job end to end: what an episode actor runs for each job it is given.

    A job run again after its actor was lost may find the record that actor finished just before
    (its node went down after the write): that record is the job's result, not run a second time."""
    found = await asyncio.to_thread(_finished_or_started, cfg, task, job_dir, job_id)
    if isinstance(found, _Started):
        result = await _run_started(cfg, task, job_dir, model_url, found)
    else:
        result = found
        record = JobRecord(job_dir)
        if record.scored:
            return JobDone(result, await asyncio.to_thread(lambda: record.scores))
    from eval.judges.base import InfrastructureFailure

    try:
        return JobDone(result, await asyncio.to_thread(score, cfg, job_dir, task))
    except InfrastructureFailure as e:  # never a score: the record stays unscored, and a resume scores it again
        log.warning("job %s is unscored: %s", job_id, e)
        return JobDone(result, None, unscored=str(e))
