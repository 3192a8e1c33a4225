"""The sweep's governor: one Ray actor per sweep that holds the providers' limits, leased out in
shares to the episode actors (runners/models/shares.py, lease.py: an attempt's admission is a check
in its own process, the lease renewed about twice a second), and the sweep's live spend per cell,
which the jobs report in batches and check against allowances of the sweep's and the cells'
budgets (`SweepSpend`). The driver starts it with the budgets and what earlier runs' records paid, reads its state for the
progress line and the admission of jobs, and stops it.

It belongs to the driver that started it: a named actor in that driver's own Ray namespace (each
driver has one of its own), not detached, so it dies with its driver however the driver ends
(SIGKILL on a standing cluster included), and two drivers of one sweep folder (two slices of it on
one cluster, with budgets of their own) never share or replace each other's. A job finds it by name
from its own folder: the job runs in its driver's namespace.

Without it (`runners.job`, or a call that cannot reach it) a job falls back to a limiter of its own
process (`rate_limit.local_gate`): the cap then holds per process, as before; and the driver's
admission is then the only sweep budget.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runners.core.messages import BudgetExceeded
from runners.models.rate_limit import Limits
from runners.models.shares import ShareBook

log = logging.getLogger(__name__)
LEGACY_NAMESPACE = "runningtab"  # where earlier versions left their detached governors
BATCH_CALLS = 16  # payments a job reports together at most
BATCH_S = 2.0  # and at least this often while it pays
ANSWER_S = 30.0  # how long a job waits for the governor's answer before a paid call (then goes on without)
_found: dict[str, Any] = {}  # governor name -> handle (None: not running), looked up once per process
_unbudgeted: set[Any] = set()  # the governors this process learned hold no budget (their limits never change)


@dataclass
class SpendLimits:
    """The budgets the governor holds jobs to, and what earlier runs' records paid against them."""

    sweep_usd: float | None = None
    cell_usd: float | None = None
    prior_total: float = 0.0
    prior_cells: dict[str, float] = field(default_factory=dict)


def governor_name(sweep_dir: Path) -> str:
    return "rt-governor-" + hashlib.sha256(str(Path(sweep_dir).resolve()).encode()).hexdigest()[:16]


class Governor:
    """The providers' shared limits and the sweep's live spend (the plain class; Ray is applied by `start`)."""

    def __init__(self, limits: SpendLimits | None = None) -> None:
        self.limits = limits or SpendLimits()
        self.books: dict[str, ShareBook] = {}
        self.paid_total = 0.0
        self.paid_cells: dict[str, float] = defaultdict(float)
        self.paid_jobs: dict[str, float] = defaultdict(float)  # jobs running now
        self.allowed: dict[str, tuple[str, float]] = {}  # job -> (its cell, what it may still pay unreported)

    async def lease(self, provider: str, limits: tuple[int, int, int], holder: str, report: dict[str, Any], lease_s: float) -> dict[str, Any]:
        """A lease holder's renewal (runners/models/lease.py): its report in, its share out. (Async, as
        `spend`: the actor's calls then run one at a time on its event loop, never on threads at once.)"""
        if provider not in self.books:
            self.books[provider] = ShareBook(Limits(*limits))
        return self.books[provider].lease(holder, report, lease_s)

    def paid(self, job_id: str, cell: str, usd: float) -> str | None:
        """Count a payment; the answer is `over(cell)`."""
        self.paid_total += usd
        self.paid_cells[cell] += usd
        self.paid_jobs[job_id] += usd
        if job_id in self.allowed:
            c, left = self.allowed[job_id]
            self.allowed[job_id] = (c, max(0.0, left - usd))
        return self.over(cell)

    async def spend(self, job_id: str, cell: str, usd: float, more: bool, done: bool = False) -> tuple[str | None, float | None]:
        """A job's batch of payments (`usd`, since its last report), and, with `more`, its next
        allowance: what it may pay before it reports again (None: no budget applies). The answer is
        (why the job stops, or None; the allowance). `done`: the job is over, its allowance returns."""
        reason = self.paid(job_id, cell, usd) if usd else self.over(cell)
        if done:
            self.job_over(job_id)
            return reason, 0.0
        if reason or not more:
            return reason, self.allowed.get(job_id, (cell, None))[1]
        free = self._free(cell, job_id)
        if free is None:
            self.allowed.pop(job_id, None)
            return None, None
        holders = 1 + sum(1 for j, (_, left) in self.allowed.items() if j != job_id and left > 0)
        chunk = free / (2 * holders) if free > 1e-9 else 0.0
        self.allowed[job_id] = (cell, chunk)
        return None, chunk

    def _free(self, cell: str, job_id: str) -> float | None:
        """What no job paid or holds as its allowance, of the sweep's and the cell's budgets (None: neither is set)."""
        lim, frees = self.limits, []
        held = {j: v for j, v in self.allowed.items() if j != job_id}
        if lim.sweep_usd is not None:
            frees.append(lim.sweep_usd - lim.prior_total - self.paid_total - sum(left for _, left in held.values()))
        if lim.cell_usd is not None:
            frees.append(lim.cell_usd - lim.prior_cells.get(cell, 0.0) - self.paid_cells.get(cell, 0.0)
                         - sum(left for c, left in held.values() if c == cell))
        return max(0.0, min(frees)) if frees else None

    def over(self, cell: str) -> str | None:
        """Which budget is spent, for a job of `cell`, or None."""
        lim = self.limits
        spent = lim.prior_total + self.paid_total
        if lim.sweep_usd is not None and spent >= lim.sweep_usd - 1e-9:
            return f"the sweep has spent ${spent:.4f}, its budget is ${lim.sweep_usd:g} (budget.sweep_usd)"
        spent = lim.prior_cells.get(cell, 0.0) + self.paid_cells.get(cell, 0.0)
        if lim.cell_usd is not None and spent >= lim.cell_usd - 1e-9:
            return f"the cell {cell} has spent ${spent:.4f}, its budget is ${lim.cell_usd:g} (budget.cell_usd)"
        return None

    def job_over(self, job_id: str) -> None:
        self.paid_jobs.pop(job_id, None)
        self.allowed.pop(job_id, None)

    def snapshot(self) -> dict[str, Any]:
        return {"providers": {p: book.snapshot() for p, book in self.books.items()}, "paid_total": self.paid_total,
                "paid_cells": dict(self.paid_cells), "paid_jobs": dict(self.paid_jobs),
                "budget": {"sweep_usd": self.limits.sweep_usd, "cell_usd": self.limits.cell_usd}}


def start(sweep_dir: Path, budget: Any = None, prior_total: float = 0.0, prior_cells: dict[str, float] | None = None) -> Any:
    """The sweep's governor for this driver, holding jobs to `budget` (a `BudgetConfig`: its
    `sweep_usd` and `cell_usd`), of which earlier runs' records paid `prior_total` (`prior_cells` per
    cell). A detached governor an earlier version left for this folder is stopped."""
    import ray

    name = governor_name(sweep_dir)
    try:
        ray.kill(ray.get_actor(name, namespace=LEGACY_NAMESPACE))
    except ValueError:
        pass  # none left
    limits = SpendLimits(getattr(budget, "sweep_usd", None), getattr(budget, "cell_usd", None), prior_total, dict(prior_cells or {}))
    remote = ray.remote(Governor).options(name=name, num_cpus=0, max_concurrency=100_000, max_restarts=0)
    for _ in range(50):  # a governor this process stopped just before frees its name once it is gone
        try:
            handle = remote.remote(limits)
            break
        except ValueError:
            time.sleep(0.1)
    else:
        handle = remote.remote(limits)
    ray.get(handle.snapshot.remote())  # up before any job asks for it
    return handle


def stop(handle: Any) -> None:
    import ray

    try:
        ray.kill(handle)
    except Exception as e:  # noqa: BLE001 - already gone with its cluster
        log.debug("governor already gone: %s", e)


def find(sweep_dir: Path) -> Any:
    """The running governor of the sweep `sweep_dir` from inside one of its actors; None outside a
    Ray worker (Ray is never imported for it) or when the sweep started none."""
    ray = sys.modules.get("ray")
    if ray is None or not ray.is_initialized():
        return None
    name = governor_name(sweep_dir)
    if name not in _found:
        try:
            _found[name] = ray.get_actor(name)  # in this job's namespace: its driver's governor
        except ValueError:
            _found[name] = None
    return _found[name]


class SweepSpend:
    """One job's payments, told to the sweep's governor in batches, and the budget check before each paid call.

    The check is in-process while the job holds an allowance: what it may pay before it reports
    again, a share of what neither was paid nor is held by other jobs of the sweep's and the cell's
    budgets (`Governor.spend`; None: no budget applies). Once the allowance is used up, the next
    paid call first reports and asks for another; with none free it waits, polling, until another
    job's report frees some or a budget is spent — then it raises `BudgetExceeded` (`stopped` says
    why). Allowances never add up to more than the budget's rest, so the spend passes a budget by at
    most the call each running job had started past its allowance: one call per job running.

    Payments are reported every `BATCH_CALLS` calls or `BATCH_S` seconds (the progress line's live
    spend) and at the job's end (`close`, awaited: nothing paid is left out of the totals). An actor
    that dies loses at most its jobs' last batch from the live count; the driver's count from the
    records is what a re-run sees (runners/sweep/budget.py)."""

    def __init__(self, handle: Any, job_id: str, cell: str) -> None:
        self.handle, self.job_id, self.cell = handle, job_id, cell
        self.stopped: str | None = None
        self.allowance: float | None = 0.0  # None: no budget applies
        self._asked = handle is not None and handle in _unbudgeted  # no budget: nothing to ask before a call
        if self._asked:
            self.allowance = None
        self._told = False  # the governor has heard of this job (it holds state for it until `close`)
        self._usd, self._calls, self._since = 0.0, 0, time.monotonic()

    def paid(self, usd: float) -> None:
        if self.handle is None:
            return
        self._usd += usd
        self._calls += 1
        if self.allowance is not None:
            self.allowance -= usd
        if self._usd and (self._calls >= BATCH_CALLS or time.monotonic() - self._since >= BATCH_S):
            self._send(more=False)  # a batch of nothing changes no total: never sent

    def _send(self, more: bool, done: bool = False) -> Any:
        ref = self.handle.spend.remote(self.job_id, self.cell, self._usd, more, done)
        self._usd, self._calls, self._since, self._told = 0.0, 0, time.monotonic(), True
        return ref

    def _allowed(self) -> bool:
        return self._asked and (self.allowance is None or self.allowance > 1e-12)

    async def check(self) -> None:
        """Raise `BudgetExceeded` when a budget is spent; wait while the rest is held by other jobs."""
        pause = 0.05
        while self.handle is not None and not self._allowed():
            try:
                answer = await asyncio.wait_for(_result(self._send(more=True)), ANSWER_S)
            except TimeoutError:  # a congested governor: this call goes on, the next one asks again
                log.warning("the sweep's governor did not answer within %g s: job %s calls without the budget check", ANSWER_S, self.job_id)
                return
            except Exception as e:  # noqa: BLE001 - a lost governor: the job goes on; the driver's admission still holds
                self._lost(e)
                return
            if self._take(answer):
                return
            await asyncio.sleep(pause)
            pause = min(2 * pause, 1.0)

    def check_now(self) -> None:
        """`check` for a synchronous call (waits for the answer on this thread)."""
        import ray

        pause = 0.05
        while self.handle is not None and not self._allowed():
            try:
                answer = ray.get(self._send(more=True), timeout=ANSWER_S)
            except Exception as e:  # noqa: BLE001 - as in `check`
                self._lost(e)
                return
            if self._take(answer):
                return
            time.sleep(pause)
            pause = min(2 * pause, 1.0)

    async def close(self) -> None:
        """The job is over: its last batch reported (awaited), its allowance given back."""
        if self.handle is None or not (self._told or self._usd):
            return  # the governor never heard of this job and it has nothing to report
        try:
            await asyncio.wait_for(_result(self._send(more=False, done=True)), ANSWER_S)
        except Exception as e:  # noqa: BLE001 - the records still count it (runners/sweep/budget.py)
            log.warning("the sweep's governor did not take job %s's last payments (%s: %s)", self.job_id, type(e).__name__, e)

    def _take(self, answer: tuple[str | None, float | None]) -> bool:
        """The governor's answer: raise at a spent budget; True once an allowance is held."""
        reason, self.allowance = answer
        self._asked = True
        if reason is None and self.allowance is None:  # neither the sweep nor its cells have a budget
            _unbudgeted.add(self.handle)
        self._stop(reason)
        return self._allowed()

    def _lost(self, e: BaseException) -> None:
        log.warning("the sweep's governor did not answer (%s: %s): job %s goes on without the sweep's budget check",
                    type(e).__name__, e, self.job_id)
        self.handle = None

    def _stop(self, reason: str | None) -> None:
        if reason:
            self.stopped = reason
            raise BudgetExceeded(f"{reason}: the job stops here; a re-run of the sweep with a higher budget continues it "
                                 "(from the model-call cache, unpaid, up to here)")


async def _result(ref: Any) -> Any:
    return await ref
