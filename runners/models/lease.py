"""A process's lease of a provider's limits from the sweep's governor: a `rate_limit.Gate` whose
admission is a check in this process (the share it holds: calls in flight, a paced request rate, a
token budget per minute, the pause a 429 set), renewed in the background while the process is busy
(runners/models/shares.py says how the shares keep the sweep-wide cap). A model attempt makes no
Ray call unless the share ran short, the lease lapsed while idle, or the attempt saw an overload;
the episode actor's jobs (one event loop) share one lease per provider.

If the governor cannot be reached, this process limits on its own from then on (logged once).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import time
import uuid
import weakref
from collections import deque
from typing import Any

from runners.models.rate_limit import OVERLOAD, WINDOW_S, Limits, local_gate
from runners.models.shares import RENEW_S

log = logging.getLogger(__name__)
MIN_GAP_S = 0.05  # between two renewals asked for by a short share
_leases: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[int, str], Lease]] = weakref.WeakKeyDictionary()


class Lease:
    """One provider's share in this event loop (a `Gate`); `flush` reports what it used now."""

    def __init__(self, handle: Any, provider: str, limits: Limits, lease_s: float) -> None:
        self.handle, self.provider, self.limits, self.lease_s = handle, provider, limits, lease_s
        self.holder = uuid.uuid4().hex
        self.grant: list[float | None] = [0.0, 0.0, 0.0]
        self.known = False  # a grant is held (else the next call asks for one)
        self.paused_until = 0.0
        self.in_flight = self.waiting = 0
        self._tat = self._last = 0.0  # the paced requests' next start; the last start
        self._window: deque[tuple[float, int]] = deque()
        self._window_sum = 0
        self._held: dict[str, int] = {}  # grant -> its estimated tokens
        self._ids = itertools.count()
        self._starts = self._answered = self._peak = 0
        self._overloads: list[float | None] = []
        self._short = [False, False, False]
        self._changed = asyncio.Event()
        self._kick = asyncio.Event()
        self._renewer: asyncio.Task[None] | None = None
        self._local: Any = None

    async def acquire(self, tokens: int) -> str:
        if self._local is not None:
            return await self._local.acquire(tokens)
        self.waiting += 1
        try:
            while True:
                self._ensure_renewer()
                wait = self._try(tokens) if self.known else math.inf
                if wait == 0:
                    grant = str(next(self._ids))
                    self._held[grant] = tokens
                    return grant
                if self._local is not None:
                    return await self._local.acquire(tokens)
                if wait == math.inf or any(self._short):
                    self._kick.set()
                changed = self._changed
                try:
                    await asyncio.wait_for(changed.wait(), None if math.isinf(wait) else wait)
                except TimeoutError:
                    pass
        finally:
            self.waiting -= 1

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        if grant not in self._held:
            if self._local is not None:
                self._local.release(grant, tokens, status, retry_after)
            return
        now = time.monotonic()
        estimate = self._held.pop(grant)
        self.in_flight -= 1
        used = estimate if tokens is None else tokens
        self._window.append((now, used))
        self._window_sum += used
        if status in OVERLOAD:
            self._overloads.append(retry_after)
            if retry_after:
                self.paused_until = max(self.paused_until, now + retry_after)
            self._kick.set()  # the governor halves the sweep's concurrency and pauses the other holders
        elif status is not None and status < 500:
            self._answered += 1
        if self.waiting:  # only an `acquire` that waits listens (a new Event per call otherwise, for nobody)
            self._wake()

    async def flush(self) -> None:
        """Report what this process used so far and wait for the answer (a job's end). While other
        calls of this process are in flight or waiting, its renewals report within `RENEW_S` anyway,
        so only the job that leaves the lease idle makes the call."""
        if self._local is None and self.known and not (self.in_flight or self.waiting):
            await self._renew()

    def _try(self, tokens: int) -> float:
        """0.0: taken; else the seconds to wait (`math.inf`: until a release or a renewal)."""
        now = time.monotonic()
        if self.paused_until > now:
            return self.paused_until - now
        permits, rate, budget = self.grant
        if permits is not None and self.in_flight >= permits:
            self._short[0] = True
            return math.inf
        if rate is not None:
            if rate <= 0:
                self._short[1] = True
                return math.inf
            if self._tat > now:
                self._short[1] = True
                return self._tat - now
        if budget is not None:
            while self._window and self._window[0][0] <= now - WINDOW_S:
                self._window_sum -= self._window.popleft()[1]
            held = self._window_sum + sum(self._held.values())
            if budget <= 0 or (held and held + tokens > budget):  # larger than the share alone: goes when none is held
                self._short[2] = True
                return self._window[0][0] + WINDOW_S - now if self._window else math.inf
        if rate is not None:
            self._tat = max(self._tat, now) + 60.0 / rate
            self._last = now
        self.in_flight += 1
        self._peak = max(self._peak, self.in_flight)
        self._starts += 1
        return 0.0

    def _report(self) -> dict[str, Any]:
        busy = bool(self.in_flight or self.waiting or self._starts)
        held = self._window_sum + sum(self._held.values())
        caps = (None, float(self.limits.rpm), float(self.limits.tpm))
        want = [float(max(self._peak, self.in_flight + self.waiting) + 1) if busy else 0.0]
        rate_now = self._starts * 60.0 / RENEW_S
        want.append((caps[1] or 0.0) if self._short[1] or not self.known else (2 * rate_now + 1 if busy else 0.0))
        want.append((caps[2] or 0.0) if self._short[2] or not self.known else (float(2 * held) if busy or held else 0.0))
        report = {"want": want, "used": [self.in_flight, 0, held], "waiting": self.waiting, "starts": self._starts,
                  "answered": self._answered, "overloads": self._overloads}
        self._starts = self._answered = 0
        self._peak = self.in_flight
        self._overloads = []
        self._short = [False, False, False]
        return report

    async def _renew(self) -> bool:
        """One renewal; False once the governor cannot be reached (this process limits alone then)."""
        report = self._report()
        try:
            reply = await self.handle.lease.remote(self.provider, (self.limits.concurrency, self.limits.rpm, self.limits.tpm),
                                                   self.holder, report, self.lease_s)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - the governor died: the jobs go on under a cap of this process
            log.warning("the sweep's rate limiter cannot be reached (%s: %s): limiting %s in this process", type(e).__name__, e, self.provider)
            self._local = local_gate(self.provider, self.limits, self.lease_s)
            self._wake()
            return False
        self.grant = list(reply["grant"])
        rate = self.grant[1]
        if rate:  # a new rate paces from the last start
            self._tat = self._last + 60.0 / rate
        self.paused_until = max(self.paused_until, time.monotonic() + reply["paused_s"])
        self.known = any(report["want"]) or any(report["used"])
        self._wake()
        return True

    def _ensure_renewer(self) -> None:
        if self._renewer is None or self._renewer.done():
            self._renewer = asyncio.get_running_loop().create_task(self._renew_loop())

    async def _renew_loop(self) -> None:
        """Renew while busy; give the share back and stop once a period passed with nothing to do."""
        while await self._renew() and self.known:
            self._kick.clear()
            await asyncio.sleep(MIN_GAP_S)
            try:
                await asyncio.wait_for(self._kick.wait(), RENEW_S - MIN_GAP_S)
            except TimeoutError:
                pass

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()


def leased_gate(handle: Any, provider: str, limits: Limits, lease_s: float) -> Lease:
    """The lease of `provider` from the governor `handle` in the running event loop (made on first use)."""
    leases = _leases.setdefault(asyncio.get_running_loop(), {})
    key = (id(handle), provider)
    if key not in leases:
        leases[key] = Lease(handle, provider, limits, lease_s)
    return leases[key]
