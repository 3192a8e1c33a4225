"""One job, in-process, without Ray — for debugging:

    python -m runners.job benchmark=builtin task=<id> method=runningtab model=scripted \
        model.script=turns.jsonl seed=0 out=DIR

writes the job directory under `out` (default `outputs/`), scores it, and prints its path.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from runners.schema import register, to_root


@hydra.main(config_path="../conf", config_name="config", version_base=None)
def main(dcfg: DictConfig) -> None:
    from eval.benchmarks import load_benchmark
    from runners.grid import job_id
    from runners.models import served
    from runners.record import RESULT
    from runners.run import run_and_score

    cfg = to_root(dcfg)
    if cfg.task is None:
        ids = [t.id for t in load_benchmark(cfg.benchmark).tasks()]
        sys.exit(f"error: name the task to run with task=ID; {cfg.benchmark.name} has: {', '.join(ids[:30])}")
    jid = job_id(cfg, cfg.task)
    job_dir = Path(cfg.out) / jid
    if (job_dir / RESULT).exists():
        print(f"already complete: {job_dir}", file=sys.stderr)
        print(job_dir)
        return
    with served(cfg.model) as url:
        out = run_and_score(cfg, cfg.task, job_dir, jid, url)
    r = out["result"]
    metrics = (out["scores"] or {}).get("metrics", {})
    print(f"{r['stop_reason']} after {r['turns']} turns; metrics {json.dumps(metrics)}", file=sys.stderr)
    print(job_dir)


if __name__ == "__main__":
    register()
    main()
