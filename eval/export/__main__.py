"""Export to Harbor (docs/harbor.md).

    python -m eval.export harbor BENCHMARK [KEY=VALUE ...] --out DIR [--tab on|off|both] [--judge NAME]
        every task of the benchmark (a name from conf/benchmark/ or a YAML file, with its settings as
        KEY=VALUE, e.g. `native path=my_bench`) as a Harbor task, under DIR/tab-on and/or DIR/tab-off
    python -m eval.export atif SWEEP_OR_JOB... --out DIR
        each finished job's trajectory as ATIF (the tab's state per step in `extra`), in the layout of
        a Harbor trial (DIR/<job_id>/agent/trajectory.json, verifier/, result.json); a record whose job id
        is not of the project's form is refused (exit code 1), the others exported
"""

from __future__ import annotations

import argparse
import logging
import sys

from runners.core.paths import user_path


def _harbor(args: argparse.Namespace) -> int:
    from eval.harbor.export_tasks import benchmark_from, export
    from eval.harbor.task_dir import Resources
    from eval.score.records import named_judge_config

    bench = benchmark_from(args.benchmark, args.overrides)
    judge = named_judge_config(args.judge)
    res = Resources(agent_timeout_s=args.agent_timeout, cpus=args.cpus, memory_mb=args.memory_mb)
    written = export(bench, judge, args.out, args.tab, res, args.tab_method)
    for arm, tasks in written.items():
        print(f"{args.out / arm}: {len(tasks)} Harbor task(s) of {bench.label}")
    return 0


def _atif(args: argparse.Namespace) -> int:
    from eval.harbor.trial import export_jobs

    done, skipped, refused = export_jobs(args.jobs, args.out)
    for line in refused:
        print(f"refused: {line}")
    print(f"{args.out}: {done} trajectory(ies) as ATIF" + (f"; {skipped} unfinished job(s) left out" if skipped else "")
          + (f"; {len(refused)} refused (listed above)" if refused else ""))
    return 1 if refused else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.export", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    h = sub.add_parser("harbor", help="benchmark tasks as Harbor tasks")
    h.add_argument("benchmark", help="a benchmark config name from conf/benchmark/ (builtin, native, ...) or a YAML file")
    h.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="the benchmark's settings, e.g. path=my_bench suite=qa")
    h.add_argument("--out", type=user_path, required=True)
    h.add_argument("--tab", choices=("on", "off", "both"), default="both")
    h.add_argument("--judge", default="auto", help="a judge config from conf/judge/ (default auto: the benchmark's own)")
    h.add_argument("--tab-method", default="runningtab", help="the tab's settings for its MCP server (a method with a tab)")
    h.add_argument("--agent-timeout", type=float, default=3600.0, help="seconds (default: the paper's 1 hour)")
    h.add_argument("--cpus", type=int, default=2)
    h.add_argument("--memory-mb", type=int, default=4096)
    a = sub.add_parser("atif", help="job records' trajectories as ATIF")
    a.add_argument("jobs", nargs="+", type=user_path, help="sweep folders or job folders")
    a.add_argument("--out", type=user_path, required=True)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    try:
        return _harbor(args) if args.what == "harbor" else _atif(args)
    except ValueError as e:
        ap.error(str(e))
    return 2


if __name__ == "__main__":
    sys.exit(main())
