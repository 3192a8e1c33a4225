"""Where every planned job went: per Table 1 row (benchmark, harness, model, method), how many were
planned, how many are results, and how many are not, by kind (errored, unscored, unfinished, not
started: `runners/core/job_status.py`). Table 1, the forest plot and `eval.frames` show these
counts beside each row's numbers, so that a row's mean is never read without what it left out.

Planned is the sweep's plan (`plan.jsonl`, written by the driver) together with every job that has
a record. A method whose not-results differ from its baseline's by more than `FLAG_GAP` jobs on the
same benchmark, harness and model is flagged: its mean is over a different set of jobs, and the
difference may be the method's own failures.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from eval.report.load import Job, Sweep
from runners.core.job_status import NOT_RESULTS, job_status

Key = tuple[str, str, str, str]  # benchmark, harness, model, method (eval/report/analyses/table1.py)
FLAG_GAP = 2  # "more than a few jobs": a gap of 3 or more not-results against the baseline is flagged


@dataclass(frozen=True)
class Accounting:
    """One row's jobs: planned, and what each became."""

    planned: int = 0
    results: int = 0
    errored: int = 0
    unscored: int = 0
    unfinished: int = 0
    not_started: int = 0

    @property
    def not_results(self) -> int:
        return self.planned - self.results

    def kinds(self) -> dict[str, int]:
        """The not-results by kind (every kind, zeros included), in `NOT_RESULTS` order."""
        return {k: getattr(self, k) for k in NOT_RESULTS}

    def text(self) -> str:
        """`0`, or `3: 2 errored, 1 unscored`: the not-results as a table cell says them."""
        parts = [f"{n} {k.replace('_', ' ')}" for k, n in self.kinds().items() if n]
        return f"{self.not_results}: {', '.join(parts)}" if parts else str(self.not_results)


def status(job: Job) -> str:
    """What the job's record makes it (`runners.core.job_status.STATUSES`)."""
    judge = job.config.get("judge")
    judged = not (isinstance(judge, dict) and judge.get("name") == "none")
    return job_status(job.result, job.scores is not None, judged)


def by_row(sweep: Sweep) -> dict[Key, Accounting]:
    """Every row's accounting: the jobs with a record, and the planned jobs without a readable one."""
    counts: dict[Key, Counter[str]] = defaultdict(Counter)
    recorded = set()
    for job in sweep.jobs:
        recorded.add(job.job_id)
        counts[(job.benchmark, job.harness, job.model, job.method)][status(job)] += 1
    for planned in sweep.planned:
        if planned.job_id not in recorded:
            recorded.add(planned.job_id)  # a plan that lists a job twice counts it once
            counts[planned.row][unrecorded(sweep, planned.job_id)] += 1
    return {k: _accounting(c) for k, c in counts.items()}


def unrecorded(sweep: Sweep, job_id: str) -> str:
    """A planned job the loader has no record of: `unfinished` when its record was skipped as
    unreadable (`Sweep.broken`), else `not_started`."""
    return "unfinished" if job_id in sweep.broken else "not_started"


def of_jobs(statuses: Iterable[str]) -> Accounting:
    """The accounting of a set of jobs given by their statuses."""
    return _accounting(Counter(statuses))


def _accounting(c: Counter[str]) -> Accounting:
    return Accounting(sum(c.values()), c["result"], c["errored"], c["unscored"], c["unfinished"], c["not_started"])


def flagged(rows: dict[Key, Accounting], baseline: str) -> list[str]:
    """The note lines for methods whose not-results differ from the baseline's by more than FLAG_GAP."""
    notes = []
    for (b, h, mo, me), acc in sorted(rows.items()):
        ref = rows.get((b, h, mo, baseline))
        if me == baseline or ref is None or abs(acc.not_results - ref.not_results) <= FLAG_GAP:
            continue
        where = " · ".join([b, *([h] if h != "dci" else []), mo])
        notes.append(f"{where} · {me}: {acc.not_results} of {acc.planned} planned job(s) are not results ({acc.text()}), "
                     f"against {ref.not_results} of {ref.planned} for {baseline}: its mean is over other jobs than "
                     f"{baseline}'s, and what it left out may be its own failures (the paired comparison uses common pairs only)")
    return notes
