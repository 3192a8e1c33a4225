"""The governor's leases (runners/models/shares.py, lease.py) and batched spend (governor.py
`SweepSpend`): the sweep-wide cap holds across holders in two actors, an idle holder's share goes
to a busy one, a 429's pause reaches another holder, and a budget stops running jobs with a bounded
overshoot and no payment lost from the totals."""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import ray

from runners.models.rate_limit import Limits
from runners.models.shares import ShareBook, fair_shares


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def report(want: tuple[float, float, float], used: tuple[float, float, float] = (0, 0, 0), **kw: Any) -> dict[str, Any]:
    return {"want": list(want), "used": list(used), **kw}


def test_fair_shares_are_max_min_and_whole_permits_rotate() -> None:
    assert fair_shares({"a": 1, "b": 10, "c": 10}, 9, True, {}) == {"a": 1, "b": 4, "c": 4}
    assert fair_shares({"a": 5, "b": 5}, 1, True, {"a": 3, "b": 0}) == {"a": 0, "b": 1}  # the one served least gets it


def test_the_cap_holds_across_holders_and_an_idle_holder_gives_its_share_back() -> None:
    clock = Clock()
    book = ShareBook(Limits(concurrency=8, rpm=600), clock)
    assert book.lease("a", report((8, 600, 0)), 60)["grant"][:2] == [8, 600]  # alone: all of it
    assert book.lease("b", report((8, 600, 0)), 60)["grant"][:2] == [0, 0]  # a holds it all: nothing free yet
    assert book.lease("a", report((8, 600, 0), used=(6, 0, 0)), 60)["grant"][:2] == [4, 300]  # shrinks to its fair share
    assert book.lease("b", report((8, 600, 0)), 60)["grant"][:2] == [2, 300]  # a still has 6 in flight: only 2 free
    assert book.lease("a", report((8, 600, 0), used=(3, 0, 0)), 60)["grant"][:2] == [4, 300]
    assert book.lease("b", report((8, 600, 0)), 60)["grant"][:2] == [4, 300]
    assert book.lease("a", report((0, 0, 0)), 60)["grant"][:2] == [0, 0]  # idle: gives everything back
    assert book.lease("b", report((8, 600, 0)), 60)["grant"][:2] == [8, 600]  # the busy one gets all of it
    assert book.snapshot()["holders"] == 1


def test_a_dead_holders_share_is_reclaimed_after_its_lease() -> None:
    clock = Clock()
    book = ShareBook(Limits(concurrency=4), clock)
    assert book.lease("dead", report((4, 0, 0), used=(4, 0, 0)), 30)["grant"][0] == 4
    assert book.lease("b", report((4, 0, 0)), 30)["grant"][0] == 0
    clock.t += 31
    assert book.lease("b", report((4, 0, 0)), 30)["grant"][0] == 4


def test_a_429_pauses_and_halves_for_every_holder() -> None:
    clock = Clock()
    book = ShareBook(Limits(), clock)  # no caps: uncapped until the provider says otherwise
    assert book.lease("a", report((8, 0, 0)), 60)["grant"] == [None, None, None]
    assert book.lease("b", report((8, 0, 0), used=(8, 0, 0)), 60)["grant"] == [None, None, None]
    reply = book.lease("a", report((8, 0, 0), used=(8, 0, 0), overloads=[2.0]), 60)
    assert reply["paused_s"] == pytest.approx(2.0) and reply["grant"][0] == 0  # 16 in flight: halved to 8, b holds 8
    other = book.lease("b", report((8, 0, 0), used=(8, 0, 0)), 60)
    assert other["paused_s"] == pytest.approx(2.0) and other["grant"][0] == 0  # 16 still in flight, the cap is 8
    clock.t += 3
    assert book.lease("a", report((8, 0, 0)), 60)["grant"][0] == 0  # b's 8 are still out
    assert book.lease("b", report((8, 0, 0)), 60)["grant"][0] == 4  # all back: each its fair half
    assert book.lease("a", report((8, 0, 0)), 60)["grant"][0] == 4


@pytest.fixture(scope="module")
def cluster(own_ray: None) -> Iterator[None]:
    """A 2-CPU Ray of this module's own (the tests' shared one is hidden from it)."""
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    try:
        yield
    finally:
        ray.shutdown()


class Holder:
    """An episode actor's calls through its lease: each holds its grant for `hold_s`."""

    async def calls(self, handle: Any, n: int, hold_s: float, limits: Limits) -> list[tuple[float, float]]:
        from runners.models.lease import leased_gate

        gate = leased_gate(handle, "http://p/v1 [K]", limits, 60)
        spans: list[tuple[float, float]] = []

        async def one() -> None:
            g = await gate.acquire(10)
            t0 = time.time()
            await asyncio.sleep(hold_s)
            spans.append((t0, time.time()))
            gate.release(g, 10, 200, None)

        await asyncio.gather(*(one() for _ in range(n)))
        await gate.flush()
        return spans

    async def overload(self, handle: Any, retry_after: float) -> None:
        from runners.models.lease import leased_gate

        gate = leased_gate(handle, "http://p/v1 [K]", Limits(), 60)
        g = await gate.acquire(10)
        gate.release(g, None, 429, retry_after)
        await gate.flush()

    async def first_start(self, handle: Any) -> float:
        from runners.models.lease import leased_gate

        gate = leased_gate(handle, "http://p/v1 [K]", Limits(), 60)
        g = await gate.acquire(10)
        gate.release(g, 10, 200, None)
        return time.time()


def most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(t, 1) for t, _ in spans] + [(t, -1) for _, t in spans], key=lambda e: (e[0], e[1]))
    now = peak = 0
    for _, step in edges:
        now += step
        peak = max(peak, now)
    return peak


@pytest.mark.slow
def test_two_actors_lease_one_cap_and_a_429_pauses_the_other(cluster: None) -> None:
    from runners.models import governor

    with tempfile.TemporaryDirectory() as sweep:
        handle = governor.start(Path(sweep))
        try:
            a, b = (ray.remote(Holder).options(num_cpus=0, max_concurrency=100).remote() for _ in range(2))
            limits = Limits(concurrency=4)
            spans = ray.get([a.calls.remote(handle, 12, 0.2, limits), b.calls.remote(handle, 12, 0.2, limits)], timeout=120)
            assert [len(s) for s in spans] == [12, 12]
            assert most_at_once(spans[0] + spans[1]) <= 4
            assert min(t for s in spans for t, _ in s) < max(t for s in spans for t, _ in s)
            snap = ray.get(handle.snapshot.remote())["providers"]["http://p/v1 [K]"]
            assert snap["granted"] == 24 and snap["in_flight"] == 0

            c, d = (ray.remote(Holder).options(num_cpus=0, max_concurrency=100).remote() for _ in range(2))
            ray.get(c.overload.remote(handle, 3.0), timeout=60)
            told = time.time()
            started = ray.get(d.first_start.remote(handle), timeout=60)  # another process, its lease new
            assert started - told >= 2.0, started - told
        finally:
            governor.stop(handle)


class Payer:
    """Jobs paying `usd` per call, as `Paid` does: check, then pay, until the budget stops them."""

    async def jobs(self, handle: Any, n: int, usd: float, calls: int) -> list[tuple[float, bool]]:
        from runners.core.messages import BudgetExceeded
        from runners.models.governor import SweepSpend

        async def job(j: int) -> tuple[float, bool]:
            spend, paid = SweepSpend(handle, f"j{j}", "cell"), 0.0
            try:
                for _ in range(calls):
                    await spend.check()
                    await asyncio.sleep(0.01)  # the model's answer
                    paid += usd
                    spend.paid(usd)
                return paid, False
            except BudgetExceeded:
                return paid, True
            finally:
                await spend.close()

        return list(await asyncio.gather(*(job(j) for j in range(n))))


@pytest.mark.slow
@pytest.mark.parametrize("budget", [1.0, None])
def test_batched_spend_stops_jobs_at_the_budget_with_a_bounded_overshoot_and_loses_nothing(cluster: None, budget: float | None) -> None:
    """8 jobs of 40 calls at $0.05 in one actor: with a $1 sweep budget the spend ends within
    [$1, $1 + one call per job]; without, every call is paid. Either way the governor's total is
    exactly what the jobs paid once they closed."""
    from runners.config.runner import BudgetConfig
    from runners.models import governor

    with tempfile.TemporaryDirectory() as sweep:
        handle = governor.start(Path(sweep), BudgetConfig(sweep_usd=budget, estimate_usd=0.1))
        try:
            payer = ray.remote(Payer).options(num_cpus=0, max_concurrency=100).remote()
            outcome = ray.get(payer.jobs.remote(handle, 8, 0.05, 40), timeout=120)
            snap = ray.get(handle.snapshot.remote())
        finally:
            governor.stop(handle)
    paid = sum(p for p, _ in outcome)
    assert snap["paid_total"] == pytest.approx(paid) and snap["paid_jobs"] == {}
    if budget is None:
        assert paid == pytest.approx(8 * 40 * 0.05) and not any(stopped for _, stopped in outcome)
    else:
        assert budget - 1e-9 <= paid <= budget + 8 * 0.05 + 1e-9, paid
        assert all(stopped for _, stopped in outcome)
