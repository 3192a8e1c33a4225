"""How a sweep that ran to its end ends: its plan on disk, and, when any planned job is not a result,
its last line (how many, why, the command that runs them again) and an exit code of its own.

A script or CI must tell "done" from "nothing worked": a sweep whose every job errored in a provider
outage exited 0 before issue 48. Now it exits `NOT_RESULTS_EXIT` (4), apart from a sweep a budget
held (`runners.sweep.budget.HELD_EXIT`, 3: every job that is not a result was held back or stopped
by the sweep's or its cell's budget) and from a signal (128 + its number: 130 for Ctrl-C). The
records decide (`runners/core/job_status.py`), read once each for the jobs this run had to run (the
others were complete: results).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from runners.core.job_record import has_file, read_result
from runners.core.job_status import NOT_RESULTS, Planned, job_status, write_plan
from runners.core.record_files import JOB, SCORES
from runners.core.record_types import RecordError
from runners.job.identity import JobSpec

NOT_RESULTS_EXIT = 4


def planned(spec: JobSpec) -> Planned:
    c = spec.cfg
    return Planned(spec.job_id, c.benchmark.label, c.agent.harness, c.model.id, c.method.name, spec.task_id, c.seed)


def write_sweep_plan(sweep_dir: Path, grid: Iterable[JobSpec]) -> None:
    """The grid's jobs (all of them, a Slurm slice's driver too) as the sweep's plan."""
    write_plan(sweep_dir, (planned(s) for s in grid))


@dataclass
class Ending:
    """What the jobs of one run became: statuses, and why the errored ones stopped."""

    planned: int
    statuses: Counter[str] = field(default_factory=Counter)
    stops: Counter[str] = field(default_factory=Counter)  # stop reasons of the errored jobs

    @property
    def not_results(self) -> int:
        return sum(self.statuses[s] for s in NOT_RESULTS)

    def budget_only(self, held: int) -> bool:
        """Whether every not-result is the budget's doing (`held` jobs held back, the rest stopped by it)."""
        return self.not_results == self.stops["budget"] + held and self.statuses["not_started"] == held

    def line(self, name: str, command: str) -> str:
        """The sweep's last line: how many, why, and the command that runs them again."""
        parts = []
        for status in NOT_RESULTS:
            n = self.statuses[status]
            if not n:
                continue
            why = ", ".join(f"{reason} ×{k}" for reason, k in self.stops.most_common()) if status == "errored" else ""
            parts.append(f"{n} {status.replace('_', ' ')}" + (f" ({why})" if why else ""))
        return (f"sweep {name}: {self.not_results} of {self.planned} planned job(s) are not results: {'; '.join(parts)} "
                f"(failures of the host, or jobs never run: none is in the tables); run them again with: {command}")


def ending(specs: list[JobSpec], ran: set[str], sweep_dir: Path) -> Ending:
    """The statuses of `specs` (this driver's jobs); those not in `ran` were complete before it (results)."""
    out = Ending(len(specs))
    for spec in specs:
        if spec.job_id not in ran:
            out.statuses["result"] += 1
            continue
        job_dir = sweep_dir / spec.job_id
        try:
            result = read_result(job_dir)
        except RecordError:
            result = None
        judged = spec.cfg.judge.name != "none"
        status = job_status(result, has_file(job_dir, SCORES), judged, has_file(job_dir, JOB))  # its folder or its pack
        out.statuses[status] += 1
        if status == "errored" and result is not None:
            out.stops[result.stop_reason] += 1
    return out
