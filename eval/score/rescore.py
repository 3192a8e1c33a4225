"""`python -m eval.score RECORDS… [--judge NAME | --judge-config FILE]`: score job records now or again
later (a new judge, a fixed rule) without re-running agents; the scoring itself is eval/score/records.py.
Where a sweep's report exists, the re-scored jobs' pages are written again."""

from __future__ import annotations

import argparse
import json
import logging

from eval.config import judge_config
from eval.judges.base import InfrastructureFailure
from eval.judges.metrics import aggregate, counts
from eval.score.records import find_jobs, named_judge_config, score_job
from runners.core.job_record import JobRecord
from runners.core.paths import user_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.score", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("jobs", nargs="+", type=user_path, help="job directories (or folders holding them)")
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--judge", help="a judge config name from conf/judge/ (e.g. rule, llm_rubric)")
    group.add_argument("--judge-config", type=user_path, help="a judge config YAML file")
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
    scored, failed, unscored, rescored = [], 0, 0, []
    for job in jobs:
        if not JobRecord(job).finished:
            print(f"skip {job}: unfinished (no result.json)")
            continue
        try:
            scores = score_job(job, judge)
        except InfrastructureFailure as e:  # the record could not be read: its scores.json, if any, is kept
            unscored += 1
            print(f"UNSCORED {job}: {e}")
            continue
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
    if unscored:
        print(f"{unscored} job(s) left unscored by a failure of the host (their scores.json, if any, kept): fix it and score them again")
    return 1 if failed or unscored else 0

