"""One job, in-process, without Ray — for debugging:

    python -m runners.job benchmark=builtin task=<id> method=runningtab model=scripted \
        model.script=turns.jsonl seed=0 out=DIR

writes the job directory under `out` (default `outputs/`), scores it, and prints its path.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from runners.config.schema import CONF_DIR, RootConfig, to_root
from runners.core.harness_names import is_own_loop
from runners.core.task import Task


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base=None)
def main(dcfg: DictConfig) -> None:
    from runners.config.schema import UnknownKeys
    from runners.core.job_record import RecordWriteError
    from runners.core.record_types import RecordError
    from runners.preflight.config_checks import ConfigError

    _logs_to_stderr()
    try:
        cfg = to_root(dcfg)
        task = preflight(cfg)
    except UnknownKeys as e:  # said with every other refusal of the command line
        from hydra.core.hydra_config import HydraConfig

        from runners.preflight.command_line import every_refusal

        sys.exit(every_refusal(e, list(HydraConfig.get().overrides.task), check_command_line))
    except ConfigError as e:
        sys.exit(f"error: {e}")
    try:
        _run(cfg, task)
    except RecordError as e:  # a record this version cannot read: left as it is
        sys.exit(f"error: {e}")
    except RecordWriteError as e:  # a full disk: the job is left unfinished, nothing torn
        sys.exit(f"error: {e.strerror}")


def preflight(cfg: RootConfig) -> Task:
    """The job's task, once every check has passed; every refusal at once, before anything is written."""
    from runners.preflight.config_checks import check_config, check_tasks
    from runners.preflight.refusals import Refusals

    refusals = Refusals()
    task = refusals.run(_task, cfg)
    refusals.run(check_config, cfg)
    if task is not None:
        refusals.run(check_tasks, cfg, [task.id])
    refusals.raise_any()
    assert task is not None
    return task


def check_command_line(overrides: list[str]) -> None:
    """The job of these overrides composed and checked as `main` would, outside Hydra's `main`
    (raising what either refuses; runners.preflight.command_line.every_refusal)."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base=None):
        preflight(to_root(compose("config", overrides=overrides)))


def _run(cfg: RootConfig, task: Task) -> None:
    from runners.core.job_record import JobRecord
    from runners.job.identity import JobSpec, job_id
    from runners.job.rescore import rescore
    from runners.job.resume import Reruns, is_final
    from runners.job.run import run_and_score
    from runners.models import served

    jid = job_id(cfg, task)
    job_dir = Path(cfg.out) / jid
    if is_final(job_dir, scored=False, reruns=Reruns.of(cfg)):
        r = JobRecord(job_dir).result
        note = ""
        if r.stop_reason == "job_budget":
            note = f" (stopped at its budget of ${r.budget_usd:g}, a result: raise budget.job_usd to run it further)"
        if rescore([JobSpec(jid, cfg, task.id)], Path(cfg.out)):
            note += f" (re-scored with judge {cfg.judge.name})"
        elif cfg.judge.name != "none" and not JobRecord(job_dir).scored:  # not a result: never "already complete"
            print(job_dir)
            sys.exit(f"error: the job finished but is UNSCORED, not a result: its judge could not read the record (a failure of "
                     f"the host, see the log above; score it again with python -m eval.score {job_dir})")
        print(f"already complete{note}: {job_dir}", file=sys.stderr)
        print(job_dir)
        return
    with served(cfg.model) as url:
        out = run_and_score(cfg, task.id, job_dir, jid, url)
    r = out.result
    metrics = (out.scores or {}).get("metrics", {})
    who = "" if is_own_loop(cfg.agent.harness) else f"{cfg.agent.harness}: "
    print(f"{who}{r.stop_reason} after {r.turns} turns; metrics {json.dumps(metrics)}", file=sys.stderr)
    print(job_dir)
    if out.unscored:
        sys.exit(f"error: the job finished but is UNSCORED, its judge could not read the record (a failure of the host, "
                 f"not of the agent; score it again with python -m eval.score {job_dir}): {out.unscored}")
    if r.errored:
        sys.exit(f"error: the job ended in {r.stop_reason}, a failure of the host, not a result: {r.error} (the same command runs it again)")


def _logs_to_stderr() -> None:
    """stdout is what the command returns, the job directory (`dir=$(python -m runners.job ...)`):
    the log lines (Hydra sends them to stdout, as the sweep wants) go to stderr here."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and handler.stream is sys.stdout:
            handler.setStream(sys.stderr)


def _task(cfg: RootConfig) -> Task:
    """The task named by `task=`; a missing name, an unknown id or a benchmark that cannot load is a
    config error whose message lists the ids there are."""
    from runners.preflight.config_checks import ConfigError, benchmark_tasks

    tasks = benchmark_tasks(cfg)
    ids = [t.id for t in tasks]
    if cfg.task is None or str(cfg.task) not in ids:
        what = "name the task to run with task=ID" if cfg.task is None else f"task={cfg.task} is not a task of it"
        raise ConfigError(f"{what}; {cfg.benchmark.name} has: {', '.join(ids[:30])}{' …' if len(ids) > 30 else ''}")
    return next(t for t in tasks if t.id == str(cfg.task))

