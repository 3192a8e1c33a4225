"""The sweep's governor: one Ray actor per sweep that every episode actor, on every node, asks before
each model attempt (the providers' shared rate limiters) and tells what each call paid (live spend
per cell), and whose answer to that says whether the sweep's or the cell's budget is spent. The
driver starts it with the budgets and what earlier runs' records paid, reads its state for the
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
from runners.models.rate_limit import AsyncLimiter, Limits, local_gate, new_grant

log = logging.getLogger(__name__)
LEGACY_NAMESPACE = "runningtab"  # where earlier versions left their detached governors
ANSWER_S = 30.0  # how long a job waits for the governor's answer before a paid call (then goes on without)
_found: dict[str, Any] = {}  # governor name -> handle (None: not running), looked up once per process


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
    """The providers' limiters and the sweep's live spend (the plain class; Ray is applied by `start`)."""

    def __init__(self, limits: SpendLimits | None = None) -> None:
        self.limits = limits or SpendLimits()
        self.limiters: dict[str, AsyncLimiter] = {}
        self.paid_total = 0.0
        self.paid_cells: dict[str, float] = defaultdict(float)
        self.paid_jobs: dict[str, float] = defaultdict(float)  # jobs running now

    def _limiter(self, provider: str, limits: tuple[int, int, int]) -> AsyncLimiter:
        if provider not in self.limiters:
            self.limiters[provider] = AsyncLimiter(Limits(*limits))
        return self.limiters[provider]

    async def acquire(self, provider: str, limits: tuple[int, int, int], grant: str, tokens: int, lease_s: float) -> bool:
        return await self._limiter(provider, limits).acquire(grant, tokens, lease_s)

    def release(self, provider: str, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        if provider in self.limiters:
            self.limiters[provider].release(grant, tokens, status, retry_after)

    def cancel(self, provider: str, grant: str) -> None:
        if provider in self.limiters:
            self.limiters[provider].cancel(grant)

    def paid(self, job_id: str, cell: str, usd: float) -> str | None:
        """Count a payment; the answer is `over(cell)` (the job reads it before its next paid call)."""
        self.paid_total += usd
        self.paid_cells[cell] += usd
        self.paid_jobs[job_id] += usd
        return self.over(cell)

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

    def snapshot(self) -> dict[str, Any]:
        return {"providers": {p: lim.snapshot() for p, lim in self.limiters.items()}, "paid_total": self.paid_total,
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


class RemoteGate:
    """A `rate_limit.Gate` on the governor's limiter for `provider`; if the governor cannot be
    reached, this process's own limiter from then on (logged once)."""

    def __init__(self, handle: Any, provider: str, limits: Limits, lease_s: float) -> None:
        self.handle, self.provider, self.limits, self.lease_s = handle, provider, limits, lease_s
        self._args = (limits.concurrency, limits.rpm, limits.tpm)
        self._local: Any = None

    async def acquire(self, tokens: int) -> str:
        if self._local is not None:
            return await self._local.acquire(tokens)
        grant = new_grant()
        try:
            await self.handle.acquire.remote(self.provider, self._args, grant, tokens, self.lease_s)
        except asyncio.CancelledError:
            self.handle.cancel.remote(self.provider, grant)
            raise
        except Exception as e:  # noqa: BLE001 - the governor died: the job goes on under a cap of its own
            log.warning("the sweep's rate limiter cannot be reached (%s: %s): limiting %s in this process", type(e).__name__, e, self.provider)
            self._local = local_gate(self.provider, self.limits, self.lease_s)
            return await self._local.acquire(tokens)
        return grant

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        if self._local is not None:
            self._local.release(grant, tokens, status, retry_after)
        else:
            self.handle.release.remote(self.provider, grant, tokens, status, retry_after)


class SweepSpend:
    """One job's payments, told to the sweep's governor, and the budget check before each paid call.

    The check reads the governor's answer to the job's last report (`Governor.paid`), so it costs no
    Ray round trip of its own: the report was sent anyway, and its answer is back long before the
    next call in all but a congested governor. Before the job's first paid call it asks once
    (`Governor.over`). Once the sweep's or the cell's budget is spent, the next paid call raises
    `BudgetExceeded` (`stopped` says why): each job running then pays at most one more call."""

    def __init__(self, handle: Any, job_id: str, cell: str) -> None:
        self.handle, self.job_id, self.cell = handle, job_id, cell
        self.stopped: str | None = None
        self._asked: Any = None  # the last report's (or the first question's) reply
        self._answer: tuple[Any, str | None] | None = None  # (that reply, its answer) once read

    def paid(self, usd: float) -> None:
        if usd and self.handle is not None:
            self._asked = self.handle.paid.remote(self.job_id, self.cell, usd)

    async def check(self) -> None:
        """Raise `BudgetExceeded` when the governor said a budget is spent."""
        if self.handle is None:
            return
        if self._asked is None:
            self._asked = self.handle.over.remote(self.cell)
        if self._answer is None or self._answer[0] is not self._asked:
            ref = self._asked
            try:
                self._answer = (ref, await asyncio.wait_for(_result(ref), ANSWER_S))
            except TimeoutError:  # a congested governor: this call goes on, the next one asks again
                log.warning("the sweep's governor did not answer within %g s: job %s calls without the budget check", ANSWER_S, self.job_id)
                return
            except Exception as e:  # noqa: BLE001 - a lost governor: the job goes on; the driver's admission still holds
                log.warning("the sweep's governor did not answer (%s: %s): job %s goes on without the sweep's budget check",
                            type(e).__name__, e, self.job_id)
                self.handle = None
                return
        self._stop(self._answer[1])

    def check_now(self) -> None:
        """`check` for a synchronous call (waits for the answer on this thread)."""
        if self.handle is None:
            return
        import ray

        if self._asked is None:
            self._asked = self.handle.over.remote(self.cell)
        try:
            self._stop(ray.get(self._asked, timeout=ANSWER_S))
        except BudgetExceeded:
            raise
        except Exception as e:  # noqa: BLE001 - as in `check`
            log.warning("the sweep's governor did not answer (%s: %s): job %s goes on without it", type(e).__name__, e, self.job_id)
            self.handle = None

    def _stop(self, reason: str | None) -> None:
        if reason:
            self.stopped = reason
            raise BudgetExceeded(f"{reason}: the job stops here; a re-run of the sweep with a higher budget continues it "
                                 "(from the model-call cache, unpaid, up to here)")


async def _result(ref: Any) -> Any:
    return await ref
