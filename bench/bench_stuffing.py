"""Hand-run baselines of the rule judge on the built-in suites (numbers go in docs/benchmarks.md):
what a deliverable that does no task can score, beside an empty one and the reference solutions.

    .venv/bin/python -m bench.bench_stuffing                     # all three suites, seed 0
    .venv/bin/python -m bench.bench_stuffing --suite workspace --keep /tmp/stuffing

The baselines (stuffing, empty, reference) are runners/job/baselines.py's, as real jobs. Per
suite and baseline it prints the pass rate and the tasks passed: rubrics pooled over tasks and
TCR@70 (workspace), checkpoint points pooled and tasks at full score (company), answers right at
1% (qa). Your own benchmark: `runningtab check-bench DIR` (runners/job/check_bench.py).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from eval.benchmarks.builtin import SUITES
from runners.job.baselines import BASELINES, run_baseline, summary


def main(argv: list[str] | None = None) -> None:
    from eval.benchmarks.builtin.loader import ensure_generated

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--suite", action="append", choices=SUITES)
    ap.add_argument("--keep", type=Path, help="write the benchmark and the job records here (default: a temp folder)")
    args = ap.parse_args(argv)
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-stuffing-"))
    bench = ensure_generated(root / f"builtin-seed{args.seed}", args.seed)
    for name in args.suite or SUITES:
        for baseline in BASELINES:
            for kind, s in summary(run_baseline(bench / name, baseline, root / "jobs" / name)).items():
                print(f"{name:<10} {baseline:<10} {kind:<11} pass {s['passed']}/{s['total']} = {s['rate']:.1%}  tasks {s['tasks_ok']}/{s['tasks']}")
    print(f"records under {root}")


if __name__ == "__main__":
    main()
