"""One job, in-process: materialize the workspace, plug the method in, run the episode, write the record.

Plain functions with no Ray; the sweep calls `run_job` inside an actor, the single-job entry point
calls it directly.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path
from typing import Any

from envs.environment import WorkspaceEnv
from envs.workspace import copy_files, diff_workspace, materialize
from eval.task import Task
from runners.loop import EpisodeResult, run_episode
from runners.methods import build_plugins
from runners.models import build_model
from runners.prompts import task_message
from runners.record import ERROR_STOPS, RESULT, Trajectory, fresh_job_dir, read_json, write_json
from runners.schema import RootConfig, job_record_config
from runners.scratch import job_scratch, remove_scratch

log = logging.getLogger(__name__)


def run_job(cfg: RootConfig, task: Task, job_dir: Path, job_id: str, model_url: str | None = None) -> dict[str, Any]:
    """Run `task` under `cfg` and write its complete record to `job_dir`; returns `result.json`."""
    earlier = fresh_job_dir(job_dir)
    write_json(
        job_dir / "job.json",
        {
            "job_id": job_id,
            "benchmark": cfg.benchmark.label,
            "task_id": task.id,
            "method": cfg.method.name,
            "model": cfg.model.id,
            "seed": cfg.seed,
            "sandbox": None,  # set once the environment is up: the sandbox actually used
            "config": job_record_config(cfg),
        },
    )
    started = time.time()
    ws_parent = job_scratch(job_id, cfg.agent.work_dir)
    traj = Trajectory(job_dir)
    try:
        res, extra = _episode(cfg, task, job_dir, ws_parent / "workspace", model_url, traj)
    except Exception as e:  # setting up the job failed: the record says so instead of vanishing
        log.exception("job %s failed outside the episode", job_id)
        res, extra = EpisodeResult(stop_reason="env_error", error=f"{type(e).__name__}: {e}"), {}
    finally:
        traj.close()
        remove_scratch(ws_parent)
    result = {
        "job_id": job_id,
        "stop_reason": res.stop_reason,
        "errored": res.stop_reason in ERROR_STOPS,  # not a result: excluded from tables, retried on resume
        "attempt": len(earlier) + 1,
        "turns": res.turns,
        "tokens_in": res.tokens_in,
        "tokens_out": res.tokens_out,
        "cost": round(res.cost, 6),
        "chars_read": res.chars_read,
        "final_answer": res.final_answer,
        "wall_s": round(time.time() - started, 3),
        "error": res.error,
        "earlier_errors": earlier,
        "sandbox": None,
        "limits_hit": None,
        **extra,
    }
    write_json(job_dir / RESULT, result)
    return result


def _episode(
    cfg: RootConfig, task: Task, job_dir: Path, ws: Path, model_url: str | None, traj: Trajectory
) -> tuple[EpisodeResult, dict[str, Any]]:
    materialize(task.workspace, ws, task.stage, method=cfg.env.materialize)
    plugins = build_plugins(cfg.method, ws, task.output, cfg.agent.context_level)
    model_cfg = cfg.model if cfg.model.seed is not None else dataclasses.replace(cfg.model, seed=cfg.seed)
    model = build_model(model_cfg, model_url)
    env = WorkspaceEnv(ws, cfg.env, plugins)
    _record_sandbox(job_dir, env.sandbox_kind)
    prompt = task_message(task, str(env.root), cfg.method.texts)
    try:
        res = run_episode(model, env, prompt, cfg.agent, on_message=traj)
    finally:
        env.close()
    view = res.messages
    for p in plugins:
        view = p.evaluator_view(view)
        record = p.record()
        if record is not None:
            write_json(job_dir / f"{p.name}.json", record)
    write_json(job_dir / "evaluator_view.json", {"task": task.prompt, "messages": view, "final_answer": res.final_answer})
    changed, deleted = diff_workspace(task.workspace, task.stage, ws)
    copied = copy_files(ws, changed, job_dir / "deliverable")
    return res, {"deliverable": copied, "deleted": deleted, "sandbox": env.sandbox_kind, "limits_hit": env.limits_hit}


def _record_sandbox(job_dir: Path, kind: str) -> None:
    """job.json says which sandbox the agent actually ran in ("bwrap", or "none": unsandboxed)."""
    job = read_json(job_dir / "job.json")
    write_json(job_dir / "job.json", {**job, "sandbox": kind})


def score(cfg: RootConfig, job_dir: Path, task: Task | None = None) -> dict[str, Any] | None:
    """Judge a finished record per its benchmark's protocol (None when `judge=none`)."""
    if cfg.judge.name == "none":
        return None
    from eval.score import score_job

    return score_job(job_dir, cfg.judge, task=task)


def run_and_score(cfg: RootConfig, task_id: str, job_dir: Path, job_id: str, model_url: str | None) -> dict[str, Any]:
    """One job end to end (what a sweep actor and the single-job entry point both do)."""
    from eval.benchmarks import load_benchmark

    task = load_benchmark(cfg.benchmark).task(task_id)
    result = run_job(cfg, task, job_dir, job_id, model_url)
    return {"result": result, "scores": score(cfg, job_dir, task)}
