"""`runningtab check-bench DIR`: check your own benchmark (the native format) before a sweep.

    runningtab check-bench my_bench [--task ID ...] [--out DIR]

Runs three baselines on every task as real jobs (runners/job/baselines.py: the scripted model
in the agent's sandbox, then the benchmark's own judge) and checks what a benchmark must hold:

- each reference solution (`solutions/<id>.jsonl`) reaches full marks: every rubric passes, the
  checkpoints' final score is whole, the answer is right (at 1%);
- an empty deliverable (the agent stops at once) does not;
- a stuffing one (every workspace file dumped into the output, or an answer of every number read)
  does not: a task it passes checks only for presence (docs/benchmarks.md, "Writing checks that
  bulk cannot pass").

Tasks of every kind may be mixed (rubrics, checkpoints, answers). Prints one line per task as it
is checked, then each baseline's pass rate per kind of task (rubrics pooled, checkpoint points
pooled, answers right at 1%) and its tasks passed (TCR@70, full score, right answer); exits 1 when a
check fails, 2 when DIR is not a native benchmark. A task without a reference solution is named,
not failed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

from eval.benchmarks.native_format import NativeFormatError, load_native
from runners.core.task import Task
from runners.job.baselines import full_marks, run_baseline, summary

ORDER = ("reference", "empty", "stuffing")


def share(scores: dict[str, Any]) -> float:
    """One job's score in [0, 1]: its rubrics passed, its checkpoints' final score, its answer right at 1%."""
    if scores.get("kind") == "rubrics":
        items = scores.get("items") or []
        return sum(i["passed"] for i in items) / len(items) if items else 0.0
    if scores.get("kind") == "checkpoints":
        final = scores.get("final_score") or {}
        return final["result"] / final["total"] if final.get("total") else 0.0
    return float(scores.get("metrics", {}).get("acc1", 0.0))


def verdict(task: Task, got: dict[str, dict[str, Any]]) -> list[str]:
    """What is wrong with one task, from its baselines' scores (an empty list: nothing)."""
    problems = []
    ref = got.get("reference")
    if ref is not None and not full_marks(ref):
        missed = [f"{i['kind']} {i['index'] + 1}: {i.get('reason') or 'failed'}" for i in ref["items"] if not i.get("passed")]
        problems.append("its reference solution misses full marks (" + "; ".join(missed[:3]) + ("; …" if len(missed) > 3 else "") + ")")
    for baseline in ("empty", "stuffing"):
        if baseline in got and full_marks(got[baseline]):
            problems.append(f"an {baseline} deliverable reaches full marks" if baseline == "empty" else
                            "a stuffing deliverable reaches full marks: its checks only ask for presence")
    return problems


def line(task: Task, got: dict[str, dict[str, Any]], problems: list[str], has_reference: bool) -> str:
    scores = "  ".join(f"{b} {share(got[b]):.0%}" for b in ORDER if b in got)
    note = "" if has_reference else "  (no reference solution)"
    return f"{'FAIL' if problems else 'ok':4}  {task.id}  [{task.kind}]  {scores}{note}" + "".join(f"\n      {p}" for p in problems)


def check(root: Path, out: Path, ids: list[str]) -> tuple[list[str], dict[str, list[dict[str, Any]]], int]:
    """Run the baselines on every task of `root` (or `ids`), printing each task's line; (the lines,
    the scores by baseline, the number of tasks that failed)."""
    tasks = load_native(root)
    if ids:
        unknown = [i for i in ids if i not in {t.id for t in tasks}]
        if unknown:
            raise NativeFormatError(f"no task {', '.join(unknown)} in {root}; its tasks: {', '.join(t.id for t in tasks)}")
        tasks = [t for t in tasks if t.id in ids]
    overrides = ["benchmark=native", f"benchmark.path={root}"]
    by_baseline: dict[str, list[dict[str, Any]]] = {b: [] for b in ORDER}
    lines, failed = [], 0
    for task in tasks:
        has_reference = (root / "solutions" / f"{task.id}.jsonl").is_file()
        got = {}
        for baseline in ORDER:
            if baseline == "reference" and not has_reference:
                continue
            (scores,) = run_baseline(root, baseline, out / baseline, overrides, tasks=[task])
            got[baseline] = scores
            by_baseline[baseline].append(scores)
        problems = verdict(task, got)
        failed += bool(problems)
        lines.append(line(task, got, problems, has_reference))
        print(lines[-1], flush=True)
    return lines, by_baseline, failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="runningtab check-bench", description=__doc__.split("\n\n")[0],
                                 epilog="The native format: docs/benchmarks.md#the-native-format")
    ap.add_argument("folder", type=Path, help="a benchmark in the native format (tasks.jsonl, workspaces/, solutions/)")
    ap.add_argument("--task", action="append", default=[], metavar="ID", help="only this task (repeatable)")
    ap.add_argument("--out", type=Path, help="keep the job records here (default: a temporary folder, removed)")
    args = ap.parse_args(argv)
    root = args.folder.expanduser().resolve()
    with tempfile.TemporaryDirectory(prefix="rt-check-bench-") as tmp:
        out = args.out.expanduser().resolve() if args.out else Path(tmp)
        try:
            _, by_baseline, failed = check(root, out, args.task)
        except NativeFormatError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    for baseline in ORDER:
        for kind, s in summary(by_baseline[baseline]).items():
            print(f"{baseline:<10} {kind:<11} pass {s['passed']}/{s['total']} = {s['rate']:.1%}, tasks passed {s['tasks_ok']}/{s['tasks']}")
    n = sum(1 for _ in by_baseline["empty"])
    print(f"{n - failed} of {n} task(s) pass the checks" + (f"; {failed} fail (FAIL above)" if failed else ""))
    if args.out:
        print(f"records under {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
