"""The sweep's governor: one Ray actor per sweep that every episode actor, on every node, asks before
each model attempt (the providers' shared rate limiters) and tells what each call paid (live spend
per cell). The driver starts it (named after the sweep folder, detached, so that a job finds it by
name from its own folder), reads its state for the progress line and the budget, and stops it.

Without it (`runners.job`, or a call that cannot reach it) a job falls back to a limiter of its own
process (`rate_limit.local_gate`): the cap then holds per process, as before.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from runners.models.rate_limit import AsyncLimiter, Limits, local_gate, new_grant

log = logging.getLogger(__name__)
NAMESPACE = "runningtab"
_found: dict[str, Any] = {}  # governor name -> handle (None: not running), looked up once per process


def governor_name(sweep_dir: Path) -> str:
    return "rt-governor-" + hashlib.sha256(str(Path(sweep_dir).resolve()).encode()).hexdigest()[:16]


class Governor:
    """The providers' limiters and the sweep's live spend (the plain class; Ray is applied by `start`)."""

    def __init__(self) -> None:
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

    def paid(self, job_id: str, cell: str, usd: float) -> None:
        self.paid_total += usd
        self.paid_cells[cell] += usd
        self.paid_jobs[job_id] += usd

    def job_over(self, job_id: str) -> None:
        self.paid_jobs.pop(job_id, None)

    def snapshot(self) -> dict[str, Any]:
        return {"providers": {p: lim.snapshot() for p, lim in self.limiters.items()}, "paid_total": self.paid_total,
                "paid_cells": dict(self.paid_cells), "paid_jobs": dict(self.paid_jobs)}


def start(sweep_dir: Path) -> Any:
    """The sweep's governor, started afresh: one a killed driver left on the cluster is replaced (its
    counts were of that run; what its jobs paid is in their records)."""
    import ray

    name = governor_name(sweep_dir)
    try:
        ray.kill(ray.get_actor(name, namespace=NAMESPACE))
    except ValueError:
        pass  # none left
    remote = ray.remote(Governor).options(
        name=name, namespace=NAMESPACE, lifetime="detached", num_cpus=0, max_concurrency=100_000, max_restarts=0,
    )
    for _ in range(50):  # the killed one's name is freed once it is gone
        try:
            handle = remote.remote()
            break
        except ValueError:
            time.sleep(0.1)
    else:
        handle = remote.remote()
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
            _found[name] = ray.get_actor(name, namespace=NAMESPACE)
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
