"""The governor's side of the providers' leases: each episode actor (a lease holder,
runners/models/lease.py) holds a share of a provider's limits — calls in flight, requests per
minute, tokens per minute — and admits its calls against that share in its own process. It renews
the share every `RENEW_S` while busy (or at once when it runs short or sees a 429), reporting what
it used; an idle holder gives its share back.

The sweep-wide cap holds because the governor never grants more than is free: a holder's grant is
its max-min fair share of the cap among the holders that want some, and at most what the others
do not hold. What a holder holds counts as the larger of its grant and what it still uses (calls in
flight, tokens in its last minute), so a share taken back is handed on only once its calls are over.
Shares shrunk to let a newcomer in are given up at each holder's next renewal: a holder waits at
most about one `RENEW_S` for its fair share. Slack, stated: requests are paced per holder, so a
second may see one start more per holder than rpm/60; a call larger than a holder's whole token
share goes alone when the holder holds none. A 429's pause (its Retry-After) and the halved
concurrency reach every other holder at its next renewal, within `RENEW_S` while it is busy, and
before its next call when it was idle.

The adaptive concurrency, the pause and the overload history are `rate_limit.RateLimiter`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from runners.models.rate_limit import Limits, RateLimiter

RENEW_S = 0.5  # a busy holder's renewal period
KINDS = 3  # calls in flight, requests per minute, tokens per minute


@dataclass
class _Holder:
    want: list[float] = field(default_factory=lambda: [0.0] * KINDS)
    used: list[float] = field(default_factory=lambda: [0.0] * KINDS)  # in flight, -, tokens in its last minute
    grant: list[float] = field(default_factory=lambda: [0.0] * KINDS)
    waiting: int = 0
    starts: int = 0  # every start it reported
    seen: float = 0.0


def fair_shares(wants: dict[str, float], cap: float, whole: bool, served: dict[str, int]) -> dict[str, float]:
    """Max-min fair shares of `cap` (`whole`: in whole units; the remainder goes to those `served`
    least, so that a cap smaller than the holders rotates among them)."""
    shares: dict[str, float] = {}
    left = cap
    order = sorted(wants, key=lambda h: (wants[h], -served.get(h, 0), h))
    for i, h in enumerate(order):
        each = left / (len(order) - i)
        share = min(wants[h], math.floor(each) if whole else each)
        shares[h] = max(0.0, share)
        left -= shares[h]
    return shares


class ShareBook:
    """One provider's limits, shared out among the lease holders (the plain state; the governor calls it)."""

    def __init__(self, limits: Limits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits, self.clock = limits, clock
        self.core = RateLimiter(limits, clock)
        self.holders: dict[str, _Holder] = {}

    def caps(self) -> list[float | None]:
        lim = self.limits
        return [self.core.limit, float(lim.rpm) if lim.rpm > 0 else None, float(lim.tpm) if lim.tpm > 0 else None]

    def lease(self, holder: str, report: dict[str, Any], lease_s: float) -> dict[str, Any]:
        """Take `holder`'s report (what it wants, uses, started, and the answers it saw) and give its
        grant: per kind, a number or None (no cap), and how long every call waits (`paused_s`)."""
        now = self.clock()
        h = self.holders.setdefault(holder, _Holder())
        h.seen, h.waiting = now, int(report.get("waiting", 0))
        h.want = [max(0.0, float(x)) for x in report["want"]][:KINDS]
        h.used = [max(0.0, float(x)) for x in report["used"]][:KINDS]
        h.starts += int(report.get("starts", 0))
        self.core.granted += int(report.get("starts", 0))
        if report.get("answered"):
            self.core.answered(int(report["answered"]))
        for retry_after in report.get("overloads", ()):
            self.core.overloaded(retry_after, max(1, int(self._in_flight())))
        self._reclaim(now, lease_s)
        grant: list[float | None] = []
        for kind, cap in enumerate(self.caps()):
            if cap is None:
                h.grant[kind] = 0.0
                grant.append(None)
                continue
            live = {k: o.want[kind] for k, o in self.holders.items()}
            share = fair_shares(live, cap, kind == 0, {k: o.starts for k, o in self.holders.items()})[holder]
            others = sum(max(o.grant[kind], o.used[kind]) for k, o in self.holders.items() if k != holder)
            g = max(0.0, min(share, cap - others))
            h.grant[kind] = math.floor(g) if kind == 0 else g
            grant.append(h.grant[kind])
        if not any(h.want) and not any(h.used):
            del self.holders[holder]  # gave everything back
        return {"grant": grant, "paused_s": max(0.0, self.core.paused_until - now), "renew_s": RENEW_S}

    def _in_flight(self) -> float:
        return sum(o.used[0] for o in self.holders.values())

    def _reclaim(self, now: float, lease_s: float) -> None:
        """A holder not heard of for `lease_s` (its actor died) frees what it held."""
        for k in [k for k, o in self.holders.items() if o.seen + lease_s < now]:
            del self.holders[k]

    def snapshot(self) -> dict[str, Any]:
        """What the progress shows (as `RateLimiter.snapshot`), over every holder's last report."""
        snap = self.core.snapshot(sum(o.waiting for o in self.holders.values()))
        snap["in_flight"] = int(self._in_flight())
        snap["holders"] = len(self.holders)
        return snap
