"""Score job records, now or again later (a new judge, a fixed rule) without re-running agents.

    python -m eval.score JOB_DIR... [--judge NAME | --judge-config conf/judge/X.yaml]

A JOB_DIR without job.json is searched for job directories below it. Each job's task is rebuilt
from its own `job.json` (`config.benchmark`, `task_id`); the judge config is the job's own
(`config.judge`) unless overridden. `scores.json` is written atomically beside the record, and
the aggregate metrics over the scored jobs are printed per benchmark.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from eval.benchmarks import Benchmark, benchmark_config, default_judge, load_benchmark
from eval.config import REPO_ROOT, BenchmarkConfig, JudgeConfig, judge_config
from eval.judges import make_judge
from eval.judges.base import InfrastructureFailure
from eval.judges.extract.pool import ExtractionFailed
from eval.judges.extract.session import kept_doc, scoring
from runners.core.config_fields import Enters, changed, names
from runners.core.frozen_fields import (
    FROZEN_JUDGE,
    Defaults,
    defaults_of,
    drop_new_defaults,
)
from runners.core.job_record import (
    JobRecord,
    is_job_dir,
    packed_record,
    record_ids,
    unpacked,
    write_extracted,
    write_scores,
)
from runners.core.messages import Model
from runners.core.paths import launch_dir, resolve_paths
from runners.core.record_files import JOB
from runners.core.record_pack import PACKS, pack_record
from runners.core.task import Task
from runners.models.call_cache import beside_records
from runners.models.config import ApiModelConfig
from runners.models.registry import KINDS, config_classes, flat_defaults, flat_model

log = logging.getLogger(__name__)
_BENCHMARKS: dict[str, Benchmark] = {}


def named_judge_config(name: str) -> JudgeConfig:
    """`conf/judge/<name>.yaml`, composed by Hydra (so its defaults list applies)."""
    from hydra import compose, initialize_config_dir

    conf = REPO_ROOT / "conf" / "judge"
    if not (conf / f"{name}.yaml").is_file():
        raise ValueError(f"no judge config {name!r}; valid: {', '.join(sorted(p.stem for p in conf.glob('*.yaml')))}")
    with initialize_config_dir(config_dir=str(conf), version_base=None):
        return judge_config(compose(config_name=name))


def judge_key(jc: JudgeConfig, benchmark: BenchmarkConfig | None = None) -> str:
    """What identifies a judge: a digest of its config's settings that can change a verdict (declared
    `Enters.JUDGE_KEY`, runners/core/config_fields.py), and of the benchmark's judging choices set
    away from their defaults (OfficeQA's `reward`). A sweep re-scores a record whose scores carry
    another key (runners/job/rescore.py)."""
    d = dataclasses.asdict(jc)
    if jc.model is not None:
        d["model"] = flat_model(jc.model)  # as the flat schema-2 model config held it: keys stay
    return recorded_judge_key(d, changed(benchmark, Enters.JUDGE_KEY) if benchmark is not None else None)


def recorded_judge_key(judge: dict[str, Any], benchmark: dict[str, Any] | None = None) -> str:
    """`judge_key` of a judge config as a record keeps it (`job.json` `config.judge`). Records from
    before `judge.model` was typed kept the model node as composed, so this gives their own key.
    `benchmark`: the benchmark's judging choices away from their defaults (none: keys stay as they were)."""
    runtime = names([JudgeConfig], Enters.JUDGE_KEY, present=False)
    model_runtime = names(config_classes(), Enters.JUDGE_KEY, present=False)
    fields = {k: v for k, v in judge.items() if k not in runtime}
    model = {k: v for k, v in (fields.get("model") or {}).items() if k not in model_runtime}
    hashed = drop_new_defaults({**fields, "model": model}, _judge_defaults(tuple(KINDS.names())), FROZEN_JUDGE)
    if benchmark:
        hashed["benchmark"] = benchmark
    blob = json.dumps(hashed, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@functools.cache
def _judge_defaults(kinds: tuple[str, ...]) -> Defaults:
    """The judge config's defaults as `recorded_judge_key` compares them (read, never changed), per
    set of registered model `kinds` (a plugin kind adds its fields): built once, not on every score."""
    defaults = defaults_of(JudgeConfig())
    defaults["model"] = flat_defaults(ApiModelConfig())
    return defaults


def _benchmark(cfg: BenchmarkConfig) -> Benchmark:
    key = json.dumps(dataclasses.asdict(cfg), sort_keys=True, default=str)
    if key not in _BENCHMARKS:
        _BENCHMARKS[key] = load_benchmark(cfg)
    return _BENCHMARKS[key]


def score_job(job_dir: Path, judge: JudgeConfig | None = None, task: Task | None = None, model: Model | None = None,
              benchmark: BenchmarkConfig | None = None) -> dict[str, Any] | None:
    """Score one finished job and write its scores.json; None when the judge is `none`.
    `InfrastructureFailure` when the record cannot be read for a reason that is not the agent's: then
    nothing is written, and scores.json, if any, stays as it was.

    `judge` defaults to the job's own judge config, `benchmark` to the job's own benchmark config
    (a sweep passes its own: its data may have moved, its judging choices changed), `task` to the
    task rebuilt from that; `model` replaces the judge model (tests).
    """
    packed = packed_record(job_dir)  # a packed record is scored as a folder, and packed again after
    record = JobRecord(unpacked(job_dir) if packed is not None else job_dir)
    record.result  # noqa: B018 - fail early on an unfinished job
    meta = record.meta
    if benchmark is None:  # a record without its benchmark's config (or its name): its label
        benchmark = benchmark_config({"name": meta.benchmark, **(meta.config.get("benchmark") or {})})
        # A record written before paths were made absolute may name its data by a relative path: the
        # folder this command was started in is the one that sweep was (re-scoring from there gives back
        # the scores those records lost to the extraction worker's own working folder).
        resolve_paths(benchmark, launch_dir())
    name = benchmark.name
    try:
        benchmark_judge = default_judge(name)
    except ValueError as e:
        raise ValueError(f"{job_dir / JOB}: {e}") from None
    jc = judge or judge_config(meta.config.get("judge") or {})
    if not jc.cache_dir:  # the judges' calls are cached beside the records (<out>/<sweep>/<job>), as the agents' are
        jc = dataclasses.replace(jc, cache_dir=str(beside_records(None, job_dir.parent.parent, "judge")))
    scorer = make_judge(jc, benchmark_judge, model)
    if scorer is None:
        return None
    if task is None:
        task = _benchmark(benchmark).task(meta.task_id)
    _check_readable(record)
    try:
        with scoring(jc.extract) as files:  # every file read once, out of process, under jc.extract
            scores = scorer.score(task, record.dir)
            write_extracted(record.dir, kept_doc(files, record))
    except ExtractionFailed as e:
        raise InfrastructureFailure(f"{job_dir}: {e}; the job stays unscored (re-score it with python -m eval.score)") from e
    scores["job_id"] = meta.job_id
    scores["judge_key"] = judge_key(jc, benchmark)
    scores["benchmark"] = meta.benchmark  # the job's own label (`builtin-workspace`): one spelling
    written = write_scores(record.dir, scores)
    if packed is not None:
        pack_record(record.dir.parent, record.dir.name, packed.pack.stem)
    return written


def _check_readable(record: JobRecord) -> None:
    """Refuse a record whose deliverable/ is gone though its result lists files in it (moved or
    damaged on the host): judged, it would score as if the agent had delivered nothing."""
    kept = record.result.deliverable
    if kept and not record.deliverable_dir.is_dir():
        raise InfrastructureFailure(f"{record.deliverable_dir} is missing, but result.json lists {len(kept)} file(s) in it: the record "
                                    "was moved or damaged on the host; the job stays unscored")


def find_jobs(paths: list[Path]) -> list[Path]:
    """Job directories (those with job.json) at or below each path, sorted, without duplicates.

    The walk never enters a job directory (nor a linked folder): what is below one is that job's own,
    its deliverable the agent's files, so a `job.json` the agent wrote there is never taken for a job."""
    found: dict[Path, None] = {}
    for p in paths:
        if is_job_dir(p):
            found[p] = None
            continue
        jobs = []
        for dirpath, dirs, files in os.walk(p):
            if JOB in files:
                jobs.append(Path(dirpath))
                dirs[:] = []
            elif PACKS in dirs:  # a sweep's packed records (runners/core/record_pack.py)
                jobs += [Path(dirpath) / j for j in record_ids(Path(dirpath)) if not (Path(dirpath) / j / JOB).is_file()]
                dirs.remove(PACKS)
        for job in sorted(jobs):
            found[job] = None
    return list(found)
