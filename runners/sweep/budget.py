"""The sweep's and the grid cells' budgets, as the scheduler starts jobs (`admit`), and the spend so
far and expected at completion per cell (the progress line, the end of the sweep).

Spent = what the records of earlier runs paid (`result.json` `spend`) + what this run has paid so far
(the governor's live count of every call a model answered, jobs still running and attempts lost with
their actor included). A running job is expected to cost its cell's expected cost at most; what it
has paid already counts against that. A cell's expected cost per job is the mean spend of its
finished jobs, else `budget.estimate_usd`, else `budget.job_usd`. A job is started only when the
sweep's spend, plus what the running jobs may still cost, plus its own expected cost stays within
`budget.sweep_usd` (and likewise for its cell and `budget.cell_usd`). A job held back is asked again
whenever one finishes; jobs still held when nothing runs are not started at all (no record: a
re-run with a higher budget runs them).

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


def cell_of(spec: JobSpec) -> str:
    c = spec.cfg
    return Cell.of_config(c).name


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
        self.live_cells: dict[str, float] = {}
        self.live_jobs: dict[str, float] = {}
        self.live_total = 0.0
        self.finished_this_run = 0.0
        self.held: set[str] = set()

    @property
    def limited(self) -> bool:
        return bool(self.cfg.sweep_usd or self.cfg.cell_usd)

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
        """Whether `spec` may start now; if so it counts as running from here."""
        cell = self.cell[spec.job_id]
        cost = self.expected(cell)
        ok = True
        if self.cfg.sweep_usd is not None:
            ok = self.spent() + self._reserved(self.cells) + cost <= self.cfg.sweep_usd + 1e-9
        if ok and self.cfg.cell_usd is not None:
            ok = self.spent(cell) + self._reserved([cell]) + cost <= self.cfg.cell_usd + 1e-9
        if not ok:
            self.held.add(spec.job_id)
            return False
        self.held.discard(spec.job_id)
        book = self.cells[cell]
        if spec.job_id not in book.running:  # a job retried after its actor was lost is still running
            book.pending -= 1
            book.running.add(spec.job_id)
        return True

    def finished(self, job_id: str, spend: float | None) -> None:
        """A job came back: with its record's spend, or None (no record: an attempt lost, run again)."""
        cell = self.cell[job_id]
        book = self.cells[cell]
        book.running.discard(job_id)
        if spend is None:
            book.pending += 1
            return
        book.finished.append(spend)
        book.this_run += spend
        self.finished_this_run += spend

    def not_started(self) -> str | None:
        """The line that says which jobs the budget kept from starting, or None."""
        if not self.held:
            return None
        limit = [f"budget.sweep_usd=${self.cfg.sweep_usd:g}" if self.cfg.sweep_usd else "",
                 f"budget.cell_usd=${self.cfg.cell_usd:g}" if self.cfg.cell_usd else ""]
        return (f"{len(self.held)} job(s) not started: their expected cost would pass {' / '.join(x for x in limit if x)} "
                f"(spent ${self.spent():.2f}); raise the budget and run the same command again to run them")


def _paid(job_dir: Path) -> float | None:
    """What the job's record says its runs paid, earlier errored ones included (None: no record)."""
    try:
        result = read_result(job_dir)
    except RecordError:
        return None
    if result is None:
        return None
    return result.spend + sum(float(e.get("spend") or 0.0) for e in result.earlier_errors)
