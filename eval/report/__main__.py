"""`python -m eval.report outputs/<sweep> [--job ID ...] [--tracker wandb|jsonl|none] [--workers N] [--nice N] [--pages]`

Writes `outputs/<sweep>/report/` and prints where; `--job` also writes and prints the Table 5-like
view of that job's tab (`report/tab_<id>.md`). Job and side-by-side pages are written with their
records; a build writes only those missing, `--pages` every one again (after a change to the
report's code).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from runners.core.paths import user_path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.report", description="Tables and figures of a sweep's job records.")
    ap.add_argument("sweep_dir", type=user_path, help="the sweep directory, e.g. outputs/demo")
    ap.add_argument("--job", action="append", default=[], metavar="ID", help="also render this job's tab over time (repeatable)")
    ap.add_argument("--tracker", choices=("none", "jsonl", "wandb"), default="none", help="also log the tables to this tracker's summary run")
    ap.add_argument("--baseline", help="the method every comparison is against (default: the sweep's report.baseline, else dci)")
    ap.add_argument("--treatment", help="the method Table 4's ablations are compared with (default: report.treatment, else runningtab)")
    ap.add_argument("--workers", type=int, metavar="N", help="page-writing processes at most (0: none; default: one per CPU, up to 4)")
    ap.add_argument("--nice", type=int, default=0, metavar="N", help="run at this lower priority (the sweep's live refreshes use 10)")
    ap.add_argument("--pages", action="store_true",
                    help="render every job and side-by-side page again (after a change to the report's code; a build writes only missing ones)")
    args = ap.parse_args(argv)
    if args.workers is not None and args.workers < 0:
        ap.error(f"--workers {args.workers}: give 0 or more")
    if args.nice:
        os.nice(args.nice)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    from eval.report.analyses.tabview import render_markdown
    from eval.report.build import write_report
    from eval.report.load import Sweep, load_sweep

    if not args.sweep_dir.is_dir():
        print(f"error: {args.sweep_dir} is not a directory (give a sweep directory such as outputs/demo)", file=sys.stderr)
        return 2
    tracker = None
    if args.tracker != "none":
        from runners.config.runner import TrackerConfig
        from runners.tracking.tracker import build_tracker

        tracker = build_tracker(TrackerConfig(kind=args.tracker), args.sweep_dir.name, args.sweep_dir)
    out = write_report(args.sweep_dir, tracker, baseline=args.baseline, treatment=args.treatment, workers=args.workers, pages=args.pages)
    jobs = load_sweep(args.sweep_dir, args.baseline, args.treatment).jobs if args.job else []  # read again only for --job
    for job_id in args.job:
        try:
            job = Sweep(args.sweep_dir, jobs).job(job_id)
        except KeyError as e:
            print(f"error: {e.args[0]}", file=sys.stderr)
            return 2
        text = render_markdown(job)
        (out / f"tab_{job.job_id}.md").write_text(text, encoding="utf-8")
        print(text)
    print(out / "index.html")
    return 0


if __name__ == "__main__":
    sys.exit(main())
