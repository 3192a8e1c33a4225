"""Score job records, now or again later (a new judge, a fixed rule) without re-running agents.

    python -m eval.score JOB_DIR... [--judge NAME | --judge-config conf/judge/X.yaml]

A JOB_DIR without job.json is searched for job directories below it. Each job's task is rebuilt
from its own `job.json` (`config.benchmark`, `task_id`); the judge config is the job's own
(`config.judge`) unless overridden. `scores.json` is written atomically beside the record, and
the aggregate metrics over the scored jobs are printed per benchmark.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

from eval.benchmarks import Benchmark, benchmark_config, default_judge, load_benchmark
from eval.config import REPO_ROOT, JudgeConfig
from eval.extraction import kept_doc, scoring
from eval.judges import make_judge
from eval.metrics import aggregate, counts
from runners.core.frozen_fields import FROZEN_JUDGE, defaults_of, drop_new_defaults
from runners.core.job_record import JobRecord, is_job_dir, write_extracted, write_scores
from runners.core.messages import Model
from runners.core.record_files import JOB
from runners.core.task import Task
from runners.models.config import ApiModelConfig
from runners.models.registry import flat_defaults, flat_model, model_config

log = logging.getLogger(__name__)
_BENCHMARKS: dict[str, Benchmark] = {}


def judge_config(node: Any) -> JudgeConfig:
    """A `JudgeConfig` from a dict (a record's `config.judge`), an OmegaConf node or a YAML file path
    (without a defaults list). Its model is always an `ApiModelConfig`; records of schema 2 kept every
    model kind's fields, which are dropped here."""
    if isinstance(node, JudgeConfig):
        return node
    from omegaconf import DictConfig, OmegaConf

    recorded = isinstance(node, dict)
    if isinstance(node, str | Path):
        node = OmegaConf.load(node)
    d = OmegaConf.to_container(node, resolve=True) if isinstance(node, DictConfig) else dict(node)
    assert isinstance(d, dict), type(d)
    model = d.pop("model", None)  # records from before the model was typed kept `{}` for none
    jc = OmegaConf.to_object(OmegaConf.merge(OmegaConf.structured(JudgeConfig), d))
    assert isinstance(jc, JudgeConfig), type(jc)
    jc.model = model_config(model, recorded=recorded, cls=ApiModelConfig) if model else None  # type: ignore[assignment]
    return jc


def named_judge_config(name: str) -> JudgeConfig:
    """`conf/judge/<name>.yaml`, composed by Hydra (so its defaults list applies)."""
    from hydra import compose, initialize_config_dir

    conf = REPO_ROOT / "conf" / "judge"
    if not (conf / f"{name}.yaml").is_file():
        raise ValueError(f"no judge config {name!r}; valid: {', '.join(sorted(p.stem for p in conf.glob('*.yaml')))}")
    with initialize_config_dir(config_dir=str(conf), version_base=None):
        return judge_config(compose(config_name=name))


# Judge settings that cannot change a verdict (where calls are cached, retries, timeouts).
_RUNTIME_ONLY = ("cache_dir", "max_retries", "evaluator_timeout_s")
# Judge-model settings that change where or how a reply is fetched or billed, not which reply.
_MODEL_RUNTIME_ONLY = ("base_url", "api_key_env", "server", "timeout_s", "call_timeout_s", "max_reply_bytes", "max_retries",
                       "backoff_base_s", "backoff_max_s", "concurrency", "price_in_per_mtok", "price_out_per_mtok", "pricing",
                       "cache", "cache_dir", "rpm", "tpm")  # fmt: skip


def judge_key(jc: JudgeConfig) -> str:
    """What identifies a judge: a digest of its config without the runtime-only settings. A sweep
    re-scores a record whose scores carry another key (runners/rescore.py)."""
    d = dataclasses.asdict(jc)
    if jc.model is not None:
        d["model"] = flat_model(jc.model)  # as the flat schema-2 model config held it: keys stay
    return recorded_judge_key(d)


def recorded_judge_key(judge: dict[str, Any]) -> str:
    """`judge_key` of a judge config as a record keeps it (`job.json` `config.judge`). Records from
    before `judge.model` was typed kept the model node as composed, so this gives their own key."""
    fields = {k: v for k, v in judge.items() if k not in _RUNTIME_ONLY}
    model = {k: v for k, v in (fields.get("model") or {}).items() if k not in _MODEL_RUNTIME_ONLY}
    defaults = defaults_of(JudgeConfig())
    defaults["model"] = flat_defaults(ApiModelConfig())
    blob = json.dumps(drop_new_defaults({**fields, "model": model}, defaults, FROZEN_JUDGE), sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _benchmark(node: dict[str, Any]) -> Benchmark:
    key = json.dumps(node, sort_keys=True, default=str)
    if key not in _BENCHMARKS:
        _BENCHMARKS[key] = load_benchmark(benchmark_config(node))
    return _BENCHMARKS[key]


def score_job(job_dir: Path, judge: JudgeConfig | None = None, task: Task | None = None, model: Model | None = None) -> dict[str, Any] | None:
    """Score one finished job and write its scores.json; None when the judge is `none`.

    `judge` defaults to the job's own judge config, `task` to the task rebuilt from job.json;
    `model` replaces the judge model (tests).
    """
    record = JobRecord(job_dir)
    record.result  # noqa: B018 - fail early on an unfinished job
    meta = record.meta
    bench_node = meta.config.get("benchmark") or {"name": meta.benchmark}  # a record without its config: its label
    name = bench_node.get("name") or meta.benchmark
    try:
        benchmark_judge = default_judge(name)
    except ValueError as e:
        raise ValueError(f"{job_dir / JOB}: {e}") from None
    jc = judge or judge_config(meta.config.get("judge") or {})
    scorer = make_judge(jc, benchmark_judge, model)
    if scorer is None:
        return None
    if task is None:
        task = _benchmark(bench_node).task(meta.task_id)
    with scoring(jc.extract) as files:  # every file read once, out of process, under jc.extract
        scores = scorer.score(task, record.dir)
        write_extracted(record.dir, kept_doc(files, record))
    scores["job_id"] = meta.job_id
    scores["judge_key"] = judge_key(jc)
    scores["benchmark"] = meta.benchmark  # the job's own label (`builtin-workspace`): one spelling
    return write_scores(record.dir, scores)


def find_jobs(paths: list[Path]) -> list[Path]:
    """Job directories (those with job.json) at or below each path, sorted, without duplicates."""
    found: dict[Path, None] = {}
    for p in paths:
        for job in [p] if is_job_dir(p) else sorted(j.parent for j in p.rglob(JOB)):
            found[job] = None
    return list(found)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.score", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jobs", nargs="+", type=Path, help="job directories (or folders holding them)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--judge", help="a judge config name from conf/judge/ (e.g. rule, llm_rubric)")
    group.add_argument("--judge-config", type=Path, help="a judge config YAML file")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    judge = None
    try:
        if args.judge:
            judge = named_judge_config(args.judge)
        elif args.judge_config:
            judge = judge_config(args.judge_config)
    except Exception as e:  # noqa: BLE001 - a bad judge config is a usage error
        ap.error(f"bad judge config: {e}")
    jobs = find_jobs(args.jobs)
    if not jobs:
        ap.error("no job directories (with job.json) found")
    scored, failed, rescored = [], 0, []
    for job in jobs:
        if not JobRecord(job).finished:
            print(f"skip {job}: unfinished (no result.json)")
            continue
        try:
            scores = score_job(job, judge)
        except Exception as e:  # noqa: BLE001 - report and go on with the other jobs
            failed += 1
            print(f"FAIL {job}: {type(e).__name__}: {e}")
            continue
        if scores is not None:
            scored.append(scores)
            rescored.append(job)
            print(f"{job}: {scores['judge']} {json.dumps({k: round(v, 4) for k, v in scores['metrics'].items()})}")
    from eval.report.pages.completed import rescored as rescored_pages

    rescored_pages(rescored)  # where a sweep's report exists, these jobs' pages show their new scores
    for bench in sorted({s["benchmark"] for s in scored}):
        group = [s for s in scored if s["benchmark"] == bench]
        print(f"aggregate {bench}:", json.dumps({k: round(v, 4) for k, v in aggregate(group).items()}), json.dumps(counts(group)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
