"""One rate limiter per provider: requests and tokens per minute, calls in flight, and adaptive
concurrency that backs off on 429/overload answers (honouring Retry-After) and grows back while the
provider keeps up.

`RateLimiter` is the state machine alone (a clock is passed in, nothing waits), so one
implementation serves both places a limiter lives: in a sweep inside the shared governor actor
(runners/models/governor.py), which leases shares of it to the episode actors (runners/models/shares.py,
lease.py), and, awaited by `AsyncLimiter` in one event loop, in a single `runners.job` in its own
process (`local_gate`). `GatedTransport` wraps the OpenAI-compatible client's transport, so the limiter sees
every attempt, its status and its Retry-After, not only the call's final outcome.

Requests per minute are paced (one start every 60/rpm seconds), so no second ever sees more than
rpm/60 (+1) starts; tokens per minute are a sliding 60-second window of each call's tokens (the
request's estimate, replaced by the reply's `usage.total_tokens`). A grant is a lease: one whose
holder never comes back (its actor died) is reclaimed after `lease_s`.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import uuid
import weakref
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

OVERLOAD = frozenset({429, 503, 529})  # rate limited, unavailable, overloaded
WINDOW_S = 60.0
DECREASE_EVERY_S = 1.0  # one halving per burst of 429s: the answers to one flight arrive together


@dataclass(frozen=True)
class Limits:
    """What the model's config allows: calls in flight (0 = no cap), requests and tokens per minute (0 = none)."""

    concurrency: int = 0
    rpm: int = 0
    tpm: int = 0


@dataclass
class _Lease:
    tokens: int
    expires: float


@dataclass
class RateLimiter:
    """The limiter's state; `try_acquire` grants or says how long to wait, `release` takes the outcome."""

    limits: Limits
    clock: Callable[[], float] = time.monotonic
    limit: float | None = None  # the adaptive concurrency limit (None: no cap yet)
    leases: dict[str, _Lease] = field(default_factory=dict)
    paused_until: float = 0.0
    _tat: float = 0.0  # the paced requests' next start
    _tokens: deque[tuple[float, int]] = field(default_factory=deque)
    _overloads: deque[float] = field(default_factory=deque)
    _last_decrease: float = -math.inf
    _successes: int = 0
    cancelled: set[str] = field(default_factory=set)
    granted: int = 0
    _window: int = 0  # tokens in `_tokens`
    _leased: int = 0  # tokens of the leases held
    _next_expiry: float = math.inf  # the earliest lease's end (leases are swept only then)

    def __post_init__(self) -> None:
        self.limit = float(self.limits.concurrency) if self.limits.concurrency > 0 else None

    def try_acquire(self, grant: str, tokens: int, lease_s: float) -> float:
        """0.0: granted (the lease is held); else the seconds to wait before asking again
        (`math.inf`: until a call is released)."""
        now = self.clock()
        self._reclaim(now)
        waits = [self.paused_until - now]
        if self.limit is not None and len(self.leases) >= self.limit:
            waits.append(math.inf)
        if self.limits.rpm > 0:
            waits.append(self._tat - now)
        if self.limits.tpm > 0:
            held = self._window + self._leased
            if held and held + tokens > self.limits.tpm:  # a call larger than the limit alone goes when nothing is held
                waits.append(self._tokens[0][0] + WINDOW_S - now if self._tokens else math.inf)
        wait = max(waits)
        if wait > 0:
            return wait
        if self.limits.rpm > 0:
            self._tat = max(self._tat, now) + 60.0 / self.limits.rpm
        self.leases[grant] = _Lease(tokens, now + lease_s)
        self._next_expiry = min(self._next_expiry, now + lease_s)
        self._leased += tokens
        self.granted += 1
        return 0.0

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        """The attempt `grant` is over: its tokens (None: the estimate stands), its HTTP status
        (None: no answer) and the server's Retry-After."""
        now = self.clock()
        lease = self.leases.pop(grant, None)
        if lease is None:
            return  # reclaimed, or released twice
        self._leased -= lease.tokens
        if self.limits.tpm > 0:
            used = lease.tokens if tokens is None else tokens
            self._tokens.append((now, used))
            self._window += used
        if status in OVERLOAD:
            self._overloaded(now, retry_after, len(self.leases) + 1)
        elif status is not None and status < 500:
            self._grow()

    def cancel(self, grant: str) -> None:
        """The caller stopped waiting (its job was cancelled): free its lease, or refuse it later."""
        lease = self.leases.pop(grant, None)
        if lease is None:
            self.cancelled.add(grant)
        else:
            self._leased -= lease.tokens

    def overloaded(self, retry_after: float | None, in_flight: int) -> None:
        """An overload answer a lease holder saw (runners/models/shares.py), with `in_flight` calls
        across the sweep then."""
        self._overloaded(self.clock(), retry_after, in_flight)

    def answered(self, n: int = 1) -> None:
        """`n` answers without overload that a lease holder saw."""
        for _ in range(min(n, 10_000)):
            self._grow()

    def _overloaded(self, now: float, retry_after: float | None, in_flight: int) -> None:
        self._overloads.append(now)
        if retry_after:
            self.paused_until = max(self.paused_until, now + retry_after)
        if now - self._last_decrease >= DECREASE_EVERY_S:
            current = in_flight if self.limit is None else min(self.limit, max(in_flight, 1))
            self.limit = max(1.0, math.floor(current / 2))
            self._last_decrease = now
            self._successes = 0

    def _grow(self) -> None:
        """Additive increase: one more call in flight after `limit` answers in a row without overload."""
        if self.limit is None:
            return
        self._successes += 1
        if self._successes >= self.limit:
            self._successes = 0
            self.limit += 1
            cap = self.limits.concurrency
            if cap > 0 and self.limit >= cap:
                self.limit = float(cap)

    def _reclaim(self, now: float) -> None:
        if now >= self._next_expiry:
            for grant in [g for g, lease in self.leases.items() if lease.expires <= now]:
                self._leased -= self.leases.pop(grant).tokens
            self._next_expiry = min((lease.expires for lease in self.leases.values()), default=math.inf)
        while self._tokens and self._tokens[0][0] <= now - WINDOW_S:
            self._window -= self._tokens.popleft()[1]
        while self._overloads and self._overloads[0] <= now - WINDOW_S:
            self._overloads.popleft()

    def snapshot(self, waiting: int) -> dict[str, Any]:
        """What the progress shows: calls waiting and in flight, the current limit, 429s in the last minute."""
        self._reclaim(self.clock())
        return {"waiting": waiting, "in_flight": len(self.leases), "limit": None if self.limit is None else int(self.limit),
                "cap": self.limits.concurrency or None, "overloads_1m": len(self._overloads), "granted": self.granted,
                "paused_s": round(max(0.0, self.paused_until - self.clock()), 1)}


class AsyncLimiter:
    """A `RateLimiter` awaited in one event loop: `acquire` returns once granted."""

    def __init__(self, limits: Limits) -> None:
        self.core = RateLimiter(limits)
        self.waiting = 0
        self._changed = asyncio.Event()

    async def acquire(self, grant: str, tokens: int, lease_s: float) -> bool:
        """Wait for the grant; False when it was cancelled meanwhile."""
        self.waiting += 1
        try:
            while True:
                if grant in self.core.cancelled:
                    self.core.cancelled.discard(grant)
                    return False
                wait = self.core.try_acquire(grant, tokens, lease_s)
                if wait == 0:
                    return True
                changed = self._changed
                try:
                    await asyncio.wait_for(changed.wait(), timeout=None if math.isinf(wait) else wait)
                except TimeoutError:
                    pass
        finally:
            self.waiting -= 1

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        self.core.release(grant, tokens, status, retry_after)
        self._wake()

    def cancel(self, grant: str) -> None:
        self.core.cancel(grant)
        self._wake()

    def _wake(self) -> None:
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def snapshot(self) -> dict[str, Any]:
        return self.core.snapshot(self.waiting)


class Gate(Protocol):
    """Where a model client asks before each attempt: a provider's limiter, here or shared."""

    async def acquire(self, tokens: int) -> str:
        """Wait for a grant; returns its id."""

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        """Hand the grant back with the attempt's outcome (never waits)."""


def new_grant() -> str:
    """A grant id unique across every process asking one governor."""
    return uuid.uuid4().hex


class LocalGate:
    """A gate on an `AsyncLimiter` of this process (a single `runners.job`, or no shared governor)."""

    def __init__(self, limiter: AsyncLimiter, lease_s: float) -> None:
        self.limiter, self.lease_s = limiter, lease_s

    async def acquire(self, tokens: int) -> str:
        grant = new_grant()
        try:
            await self.limiter.acquire(grant, tokens, self.lease_s)
        except asyncio.CancelledError:
            self.limiter.cancel(grant)
            raise
        return grant

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        self.limiter.release(grant, tokens, status, retry_after)


_local: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, AsyncLimiter]] = weakref.WeakKeyDictionary()


def local_gate(provider: str, limits: Limits, lease_s: float) -> LocalGate:
    """The gate of `provider` in the running event loop (made on first use; the first limits win)."""
    limiters = _local.setdefault(asyncio.get_running_loop(), {})
    if provider not in limiters:
        limiters[provider] = AsyncLimiter(limits)
    return LocalGate(limiters[provider], lease_s)


def provider_key(base_url: str, api_key_env: str | None) -> str:
    """One limiter per endpoint and key (the key's variable name, never the key)."""
    return f"{base_url.rstrip('/')} [{api_key_env or 'no key'}]"


class GatedTransport:
    """The client's awaited transport (`post`, `aclose`) with each attempt passed through `gate`."""

    def __init__(self, inner: Any, gate: Gate, max_tokens: int | None, count_tokens: bool) -> None:
        self.inner, self.gate, self.max_tokens, self.count_tokens = inner, gate, max_tokens or 0, count_tokens

    async def post(self, url: str, body: bytes, headers: dict[str, str], max_bytes: int) -> Any:
        from runners.models.retry import retry_after_s

        estimate = len(body) // 4 + self.max_tokens  # ~4 bytes a token; providers count max_tokens against the limit
        grant = await self.gate.acquire(estimate)
        try:
            reply = await self.inner.post(url, body, headers, max_bytes)
        except BaseException:
            self.gate.release(grant, None, None, None)
            raise
        used = used_tokens(reply.text) if self.count_tokens else None  # parsed again only when tokens are limited
        self.gate.release(grant, used, reply.status_code, retry_after_s(reply.headers))
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()


def used_tokens(text: str) -> int | None:
    """`usage.total_tokens` of a reply body, None when it has none (an error, not JSON)."""
    try:
        usage = json.loads(text).get("usage") or {}
        return int(usage.get("total_tokens") or 0) or None
    except (ValueError, AttributeError, TypeError):
        return None
