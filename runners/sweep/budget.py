"""The sweep's and the grid cells' budgets, as the scheduler starts jobs (`admit`), and the spend so
far and expected at completion per cell (the progress line, the end of the sweep).

Spent = what the records of earlier runs paid (`result.json` `spend`) + what this run has paid so far
(the governor's live count of every call a model answered, jobs still running and attempts lost with
their actor included). A running job is expected to cost its cell's expected cost at most; what it
has paid already counts against that. A cell's expected cost per job is the mean spend of its
finished jobs, else `budget.estimate_usd`, else `budget.job_usd`.

Jobs are admitted by pairs: the jobs of one task, model and seed across the sweep's methods (a
RunningTab job and its DCI job) start together or not at all, so that what a budget allows is a set
of paired comparisons. A pair is started only when the sweep's spend, plus what the running jobs may
still cost, plus the pair's expected cost stays within `budget.sweep_usd` (and likewise for each of
its cells and `budget.cell_usd`). A pair held back is asked again whenever a job finishes; pairs
still held when nothing runs are not started at all (no record: a re-run with a higher budget runs
them). Running jobs are held to the budgets too: the governor stops each at its next paid call once
the sweep's or its cell's budget is spent (runners/models/governor.py), so the spend passes a budget
by at most one call per job running then. `held_line` says how a sweep held by its budget ended.

Not counted: an attempt killed before it wrote its result (a killed driver or actor) in an earlier
run; with the model-call cache on, its re-run does not pay for those calls again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.config.runner import BudgetConfig
from runners.core.job_record import read_result
from runners.core.record_types import Cell, RecordError
from runners.job.identity import JobSpec

HELD_EXIT = 3  # the sweep's exit code when a budget held it (jobs not started, or stopped at a budget)


def cell_of(spec: JobSpec) -> str:
    c = spec.cfg
    return Cell.of_config(c).name


def pair_of(spec: JobSpec) -> tuple[str, str, str, int]:
    """The jobs compared side by side: one task, model and seed, across methods."""
    c = spec.cfg
    return c.benchmark.label, spec.task_id, c.model.id, c.seed


def paired(specs: Iterable[JobSpec]) -> list[JobSpec]:
    """`specs` with each pair's jobs next to each other (pairs in the order of their first job), so
    that a pair admitted together also starts together."""
    groups: dict[tuple[str, str, str, int], list[JobSpec]] = {}
    for s in specs:
        groups.setdefault(pair_of(s), []).append(s)
    return [s for group in groups.values() for s in group]


@dataclass
class _CellBook:
    jobs: int = 0  # the cell's jobs in this sweep
    prior: float = 0.0  # paid by records of earlier runs
    finished: list[float] = field(default_factory=list)  # spend of each finished job (earlier runs and this one)
    this_run: float = 0.0  # paid by the jobs finished in this run
    running: set[str] = field(default_factory=set)
    pending: int = 0  # not started yet in this run


class SweepBudget:
    """Budget bookkeeping on the driver: `admit` before a start, `finished` after an outcome,
    `update` with the governor's latest state."""

    def __init__(self, cfg: BudgetConfig, specs: Iterable[JobSpec], todo: Iterable[JobSpec], sweep_dir: Path) -> None:
        self.cfg = cfg
        self.cells: dict[str, _CellBook] = defaultdict(_CellBook)
        self.cell: dict[str, str] = {}
        todo_ids = {s.job_id for s in todo}
        for s in specs:
            name = self.cell[s.job_id] = cell_of(s)
            book = self.cells[name]
            book.jobs += 1
            if s.job_id in todo_ids:
                book.pending += 1
            paid = _paid(sweep_dir / s.job_id) if self.limited else None  # read only where a budget needs it
            if paid is not None:
                book.prior += paid
                if s.job_id not in todo_ids:
                    book.finished.append(paid)
        self.pairs: dict[tuple[str, str, str, int], list[str]] = defaultdict(list)  # jobs to run, per pair
        self.pair: dict[str, tuple[str, str, str, int]] = {}
        for s in todo:
            self.pair[s.job_id] = pair_of(s)
            self.pairs[pair_of(s)].append(s.job_id)
        self.waiting = set(todo_ids)  # neither running nor finished in this run
        self.promised: set[str] = set()  # admitted with their pair, not started yet
        self.live_cells: dict[str, float] = {}
        self.live_jobs: dict[str, float] = {}
        self.live_total = 0.0
        self.finished_this_run = 0.0
        self.held: set[str] = set()
        self.stopped: set[str] = set()  # jobs that ended at a budget in this run

    @property
    def limited(self) -> bool:
        return self.cfg.limits_spend

    def update(self, snapshot: dict[str, Any] | None) -> None:
        """The governor's counts: paid this run, in total, per cell and per running job."""
        if snapshot:
            self.live_total = float(snapshot.get("paid_total", 0.0))
            self.live_cells = dict(snapshot.get("paid_cells", {}))
            self.live_jobs = dict(snapshot.get("paid_jobs", {}))

    def expected(self, cell: str) -> float:
        """What a job of `cell` is expected to pay."""
        done = self.cells[cell].finished
        if done:
            return sum(done) / len(done)
        return self.cfg.estimate_usd or self.cfg.job_usd or 0.0

    def spent(self, cell: str | None = None) -> float:
        """Paid so far: by earlier runs' records and by this run's calls (the sweep's, or one cell's)."""
        if cell is not None:
            book = self.cells[cell]
            return book.prior + max(self.live_cells.get(cell, 0.0), book.this_run)
        prior = sum(b.prior for b in self.cells.values())
        return prior + max(self.live_total, self.finished_this_run)

    def _reserved(self, cells: Iterable[str]) -> float:
        """What the running jobs of `cells` may still pay."""
        return sum(max(0.0, self.expected(c) - self.live_jobs.get(j, 0.0)) for c in cells for j in self.cells[c].running)

    def at_completion(self, cell: str | None = None) -> float:
        """Spent, plus what the running jobs may still pay, plus the expected cost of those not started."""
        cells = [cell] if cell is not None else list(self.cells)
        pending = sum(self.cells[c].pending * self.expected(c) for c in cells)
        return self.spent(cell) + self._reserved(cells) + pending

    def admit(self, spec: JobSpec) -> bool:
        """Whether `spec` may start now, with the rest of its pair (they count as running from here)."""
        job = spec.job_id
        if job in self.promised:  # its pair was admitted with it
            self.promised.discard(job)
            return True
        cell = self.cell[job]
        if job not in self.waiting:  # a job retried after its actor was lost is still running
            return job in self.cells[cell].running
        pair = [j for j in self.pairs[self.pair[job]] if j in self.waiting]
        cost = {j: self.expected(self.cell[j]) for j in pair}
        ok = True
        if self.cfg.sweep_usd is not None:
            ok = self.spent() + self._reserved(self.cells) + sum(cost.values()) <= self.cfg.sweep_usd + 1e-9
        for c in {self.cell[j] for j in pair} if self.cfg.cell_usd is not None else ():
            ours = sum(v for j, v in cost.items() if self.cell[j] == c)
            ok = ok and self.spent(c) + self._reserved([c]) + ours <= self.cfg.cell_usd + 1e-9
        if not ok:
            self.held.add(job)
            return False
        for j in pair:
            book = self.cells[self.cell[j]]
            book.pending -= 1
            book.running.add(j)
            self.waiting.discard(j)
            self.held.discard(j)
            if j != job:
                self.promised.add(j)
        return True

    def finished(self, job_id: str, spend: float | None, budget_stop: bool = False) -> None:
        """A job came back: with its record's spend (`budget_stop`: it ended at a budget), or None (no
        record: an attempt that failed)."""
        cell = self.cell[job_id]
        book = self.cells[cell]
        book.running.discard(job_id)
        self.promised.discard(job_id)
        if budget_stop:
            self.stopped.add(job_id)
        if spend is None:
            book.pending += 1
            return
        book.finished.append(spend)
        book.this_run += spend
        self.finished_this_run += spend

    def _limits(self, job: bool = True) -> str:
        return " / ".join(x for x in (f"budget.sweep_usd=${self.cfg.sweep_usd:g}" if self.cfg.sweep_usd is not None else "",
                                      f"budget.cell_usd=${self.cfg.cell_usd:g}" if self.cfg.cell_usd is not None else "",
                                      f"budget.job_usd=${self.cfg.job_usd:g}" if job and self.cfg.job_usd is not None else "") if x)

    def not_started(self) -> str | None:
        """The line that says which jobs the budget kept from starting, or None."""
        if not self.held:
            return None
        return (f"{len(self.held)} job(s) not started: their expected cost would pass {self._limits(job=False)} "
                f"(spent ${self.spent():.2f}); raise the budget and run the same command again to run them")

    def held_line(self) -> str | None:
        """The sweep's last line when a budget held it (jobs not started, or stopped at a budget), or None."""
        if not self.held and not self.stopped:
            return None
        return (f"sweep held by its budget ({self._limits()}; spent ${self.spent():.2f}): {len(self.held)} job(s) not started, "
                f"{len(self.stopped)} stopped at the budget (recorded as `budget`, continued from the model-call cache); "
                f"raise the budget and run the same command again to finish it")


def _paid(job_dir: Path) -> float | None:
    """What the job's record says its runs paid, earlier errored ones included (None: no record)."""
    try:
        result = read_result(job_dir)
    except RecordError:
        return None
    if result is None:
        return None
    return result.paid
