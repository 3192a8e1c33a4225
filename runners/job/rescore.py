"""A new judge re-scores, it does not re-run (the judge is not part of a job's identity).

On resume, a finished record whose `scores.json` is missing or was written by another judge config
or other judging choices of the benchmark (`judge_key`: OfficeQA's reward version) is scored again
from its record with the sweep's judge and benchmark config; the agent does not run again.
The re-scored records are then uploaded again (storage) and tracked again by the caller.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from eval.config import judge_config
from eval.score.records import judge_key, recorded_judge_key, score_job
from runners.core.job_record import JobRecord, has_file, read_scores_of
from runners.core.record_files import SCORES
from runners.core.record_types import RecordError, Scores
from runners.job.identity import JobSpec
from runners.job.resume import Logged, Reruns, is_final, ledger_vouches_scores

log = logging.getLogger(__name__)


def stale(spec: JobSpec, job_dir: Path, key: str | None = None, logged: Logged | None = None) -> bool:
    """Whether a finished record needs scoring by this sweep's judge (`key`: its judge_key, if known;
    `logged`: its last ledger line, which spares reading a result it vouches for)."""
    if spec.cfg.judge.name == "none":
        return False
    if not is_final(job_dir, scored=False, reruns=Reruns.of(spec.cfg), logged=logged):
        return False  # not finished: it runs (and is scored) anyway
    return _stale_scores(spec, job_dir, key)


def _stale_scores(spec: JobSpec, job_dir: Path, key: str | None) -> bool:
    """`stale` for a record known to be finished."""
    try:
        scores = read_scores_of(job_dir)
    except RecordError:
        return True
    if scores is None:
        return True
    if "judge_key" in scores:
        current = key or judge_key(spec.cfg.judge, spec.cfg.benchmark)
        return scores["judge_key"] != current and not _judged_before_by(scores, job_dir, current)
    # records scored before judge_key existed: only a different judge name is known to differ
    return spec.cfg.judge.name != "auto" and scores.get("judge") != spec.cfg.judge.name


def _judged_before_by(scores: Scores, job_dir: Path, current: str) -> bool:
    """Whether version-1 scores came from the record's own judge config and that config is the
    current judge: their key was computed over `judge.model` as composed, before it was typed."""
    if scores.get("schema_version", 1) != 1:
        return False
    recorded = JobRecord(job_dir).meta.config.get("judge")
    if not isinstance(recorded, dict) or recorded_judge_key(recorded) != scores["judge_key"]:
        return False
    try:
        return judge_key(judge_config(recorded)) == current
    except Exception:  # noqa: BLE001 - a recorded config this version cannot read: score again
        return False


def rescore(specs: Iterable[JobSpec], sweep_dir: Path, logged: dict[str, Logged] | None = None) -> list[JobSpec]:
    """Score every finished record of `specs` whose scores are stale; returns those re-scored.
    A record the judge fails on keeps its old scores (logged), so nothing written is lost."""
    return resume_scan(specs, sweep_dir, logged)[0]


def resume_scan(specs: Iterable[JobSpec], sweep_dir: Path, logged: dict[str, Logged] | None = None) -> tuple[list[JobSpec], set[str]]:
    """`rescore`, and the ids of the jobs whose record is complete afterwards (finished and, with a
    judge, scored): one pass, so each record is checked once (a resume of 20,000 jobs)."""
    done: list[JobSpec] = []
    complete: set[str] = set()
    keys: dict[tuple[int, int], str] = {}  # judge_key once per cell (its jobs share their configs), not per job
    for spec in specs:
        job_dir = sweep_dir / spec.job_id
        line = (logged or {}).get(spec.job_id)
        if not is_final(job_dir, scored=False, reruns=Reruns.of(spec.cfg), logged=line):
            continue
        if spec.cfg.judge.name == "none":
            complete.add(spec.job_id)
            continue
        cell = (id(spec.cfg.judge), id(spec.cfg.benchmark))
        if cell not in keys:
            keys[cell] = judge_key(spec.cfg.judge, spec.cfg.benchmark)
        if ledger_vouches_scores(job_dir, line, keys[cell]) or not _stale_scores(spec, job_dir, keys[cell]):
            complete.add(spec.job_id)
            continue
        try:
            score_job(job_dir, spec.cfg.judge, benchmark=spec.cfg.benchmark)
        except Exception as e:  # noqa: BLE001 - one bad record must not stop the sweep
            log.warning("re-scoring %s with judge %s failed: %s: %s", spec.job_id, spec.cfg.judge.name, type(e).__name__, e)
            if has_file(job_dir, SCORES):
                complete.add(spec.job_id)  # its old scores stay
            continue
        done.append(spec)
        complete.add(spec.job_id)
    if done:
        log.info("re-scored %d finished job(s) with the sweep's judge (not re-run)", len(done))
    return done, complete
