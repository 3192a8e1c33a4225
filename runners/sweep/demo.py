"""`python -m runners.sweep.demo [OVERRIDES…]` (`make demo`, `runningtab demo`): the first ten minutes.

1. The embedded model's sweep, `experiment=demo` (OVERRIDES go to it): SmolLM2-135M served by
   llama.cpp on 127.0.0.1, DCI and RunningTab on one task of each built-in suite, judged, tracked
   (W&B offline) and reported. It shows the whole path runs offline; a 135M model does not do these
   tasks, so its scores mean nothing.
2. The tab at work, `experiment=demo_tour`: the built-in benchmark's reference solution of one task
   replayed by the scripted model under DCI and RunningTab (no model server, seconds), so that a
   report page shows what the tab captures, shows and checks while an agent reads. A replay of a
   known solution: the machinery at work, not a result.
3. What to look at, and what to do next: the pages, then the commands for your own benchmark.

Each part is the sweep command a user would type; a second run resumes both (nothing runs twice).
A part that stops (a refusal, Ctrl-C) ends the demo with its exit code.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

TOUR_TASK = "ws-02-purchase-order-summary"  # conf/experiment/demo_tour.yaml
OWN_BENCHMARK = ("runningtab sweep benchmark=native benchmark.path=my_bench 'grid.method=[dci,runningtab]' "
                 "model=openai model.base_url=URL model.name=NAME model.api_key_env=VAR sweep=mine")


@dataclass(frozen=True)
class TabAtWork:
    """The tour's RunningTab job page, what its tab holds, and its side-by-side with DCI (if written)."""

    page: Path
    entries: int
    files: int
    candidates: int
    compare: Path | None


def sweep_dir(overrides: list[str]) -> Path:
    """The folder `python -m runners.sweep OVERRIDES` writes, composed as the sweep composes it."""
    from runners.preflight.command_line import root_choices
    from runners.sweep.driver import sweep_dir_for
    from runners.sweep.grid import compose_sweep

    root, experiment, _ = compose_sweep(overrides, root_choices(overrides))
    return sweep_dir_for(root, experiment, overrides)


def sweep(overrides: list[str]) -> int:
    """One sweep, as typed on the command line (its output is the user's to see)."""
    return subprocess.run([sys.executable, "-m", "runners.sweep", *overrides]).returncode


def tour_overrides(overrides: list[str]) -> list[str]:
    """The tour's command: the generated built-in benchmark's reference solutions as the script, and
    where the user's overrides put records (`out`)."""
    from eval.benchmarks.builtin.loader import Config, builtin_root, ensure_generated

    solutions = ensure_generated(builtin_root(Config()), 0) / "workspace" / "solutions"
    out = [o for o in overrides if o.partition("=")[0] == "out"][-1:]
    return ["experiment=demo_tour", f"model.script_dir={solutions}", *out]


def tab_at_work(tour: Path) -> TabAtWork | None:
    """The tour's RunningTab job with the fullest read log, from its record."""
    from eval.report.load import load_sweep

    jobs = [j for j in load_sweep(tour).jobs if j.tab is not None and j.tab["read_log"]]
    if not jobs:
        return None
    job = max(jobs, key=lambda j: len(j.tab["read_log"]))
    log = job.tab["read_log"]
    compare = tour / "report" / "compare" / f"{job.job_id}__vs__dci.html"
    return TabAtWork(tour / "report" / "jobs" / f"{job.job_id}.html", len(log), len({e["path"] for e in log}),
                     len(job.tab["candidates"]), compare if compare.is_file() else None)


def guide(demo: Path, tour: Path, tab: TabAtWork | None) -> str:
    """What the demo ends with: where to look, and the commands that come next."""
    lines = ["", "What to look at:",
             f"  {demo / 'report' / 'index.html'}",
             "    the embedded model's sweep: Table 1, each job's page, its trajectory beside the tab. SmolLM2-135M",
             "    shows the whole path runs offline; it does not do these tasks, so its scores mean nothing."]
    if tab is not None:
        lines += [f"  {tab.page}",
                  f"    the tab at work: the reference solution of {TOUR_TASK} replayed by the scripted model (a",
                  f"    replay, not a result): the read log filling turn by turn ({tab.entries} excerpts of {tab.files} files),",
                  f"    the {tab.candidates} files listed but never opened, the status line after each observation, the finish check."]
        if tab.compare is not None:
            lines += [f"  {tab.compare}", "    the same job beside DCI's: what the agent saw with the tab and without it."]
    else:
        lines += [f"  {tour / 'report' / 'index.html'}: the tour's report (no job with a tab to point at)"]
    lines += ["", "What to do next (. .venv/bin/activate puts runningtab on PATH):",
              "  your own tasks, in the native format (README, 'Your own tasks'), on any OpenAI-compatible model:",
              f"    {OWN_BENCHMARK}",
              "  add --cfg job first: the grid, where the records go and the preflight's verdict, running nothing.",
              "  the paper's grid and data: README, 'Everyday use'; every verb: runningtab --help."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    overrides = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in overrides):
        print(__doc__)
        return 0
    demo = ["experiment=demo", *overrides]
    code = sweep(demo)
    if code != 0:
        return code
    print(f"\nThe tab at work: the reference solution of {TOUR_TASK}, replayed (experiment=demo_tour)", flush=True)
    tour = tour_overrides(overrides)
    code = sweep(tour)
    if code != 0:
        return code
    tour_dir = sweep_dir(tour)
    print(guide(sweep_dir(demo), tour_dir, tab_at_work(tour_dir)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
