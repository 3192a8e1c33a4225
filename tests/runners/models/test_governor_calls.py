"""How often a job calls the sweep's governor (runners/models/governor.py `SweepSpend`, lease.py):
each call is a Ray round trip that costs the episode actor and the governor CPU, so a job makes
none that tells the governor nothing. The governor is the real one, in this process, behind a
handle of a Ray actor's shape that counts the calls made through it."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from runners.models.governor import Governor, SpendLimits, SweepSpend
from runners.models.lease import Lease
from runners.models.rate_limit import Limits


class _Method:
    def __init__(self, handle: Handle, name: str) -> None:
        self.handle, self.name = handle, name

    def remote(self, *args: Any) -> asyncio.Future[Any]:
        self.handle.calls[self.name] += 1
        return asyncio.ensure_future(getattr(self.handle.governor, self.name)(*args))


class Handle:
    """`handle.spend.remote(...)` and `handle.lease.remote(...)` as on a Ray actor, run on `governor`."""

    def __init__(self, governor: Governor) -> None:
        self.governor, self.calls = governor, Counter[str]()
        self.spend, self.lease = _Method(self, "spend"), _Method(self, "lease")


async def _job(handle: Handle, job_id: str, calls: int, usd: float) -> None:
    spend = SweepSpend(handle, job_id, "cell")
    for _ in range(calls):
        await spend.check()
        await asyncio.sleep(0)
        spend.paid(usd)
    await spend.close()


def test_without_a_budget_only_the_first_job_asks_and_unpaid_calls_report_nothing() -> None:
    handle = Handle(Governor(SpendLimits()))

    async def main() -> None:
        for j in range(8):
            await _job(handle, f"j{j}", 7, 0.0)

    asyncio.run(main())
    assert handle.calls["spend"] == 2, handle.calls  # the first job learns there is no budget (and closes); the rest ask nothing
    snap = handle.governor.snapshot()
    assert snap["paid_total"] == 0.0 and snap["paid_jobs"] == {}


def test_without_a_budget_paid_calls_still_reach_the_totals() -> None:
    handle = Handle(Governor(SpendLimits()))

    async def main() -> None:
        await _job(handle, "first", 1, 0.0)
        await asyncio.gather(*(_job(handle, f"j{j}", 40, 0.01) for j in range(4)))
        await asyncio.sleep(0)  # the batches sent without waiting are taken

    asyncio.run(main())
    snap = handle.governor.snapshot()
    assert abs(snap["paid_total"] - 4 * 40 * 0.01) < 1e-9 and snap["paid_jobs"] == {}
    assert handle.calls["spend"] == 2 + 4 * (1 + 40 // 16), handle.calls  # batches of 16 and the close: no check


def test_with_a_budget_every_job_asks_for_its_allowance() -> None:
    handle = Handle(Governor(SpendLimits(sweep_usd=10.0)))

    async def main() -> None:
        for j in range(3):
            await _job(handle, f"j{j}", 2, 0.01)

    asyncio.run(main())
    snap = handle.governor.snapshot()
    assert abs(snap["paid_total"] - 0.06) < 1e-9 and snap["paid_jobs"] == {}
    assert handle.calls["spend"] >= 3 * 2  # each job's allowance asked for, and its close


def test_a_job_ending_while_the_lease_has_calls_in_flight_leaves_the_report_to_the_renewals() -> None:
    handle = Handle(Governor())

    async def main() -> None:
        gate = Lease(handle, "http://p/v1 [K]", Limits(), 60)
        first, other = await gate.acquire(10), await gate.acquire(10)
        gate.release(first, 10, 200, None)
        before = handle.calls["lease"]
        await gate.flush()  # the first call's job ends: the other call is still in flight
        assert handle.calls["lease"] == before
        gate.release(other, 10, 200, None)
        await gate.flush()  # the last one leaves the lease idle: everything is reported now
        assert handle.calls["lease"] == before + 1
        snap = handle.governor.snapshot()["providers"]["http://p/v1 [K]"]
        assert snap["granted"] == 2 and snap["in_flight"] == 0
        gate._renewer.cancel()

    asyncio.run(main())
