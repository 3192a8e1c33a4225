"""What a job's model calls cost and what they paid, and the job's own budget.

Two wrappers around a job's model (runners/job/model.py puts them on either side of the cache):
`Paid`, inside the cache, sees only the calls a model answered — its total is what the job paid
(a reply from the cache costs nothing) and each payment is reported as it happens (to the sweep's
governor: live spend per cell), which stops the job before its next paid call once the sweep's or
the cell's budget is spent (a call the cache answers is free and goes on); `JobBudget`, outside the cache, adds up every reply's cost, cached or
not — what the trajectory cost, the same on every re-run — and refuses the next call once that
reaches `budget.job_usd`: the episode then stops with `stop_reason: job_budget` (a result).
"""

from __future__ import annotations

from typing import Any, Protocol

from runners.core.messages import (
    AssistantMessage,
    BudgetExceeded,
    Model,
    complete_async,
)


class _Wrapped:
    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self._before()
        return self._after(self.inner.complete(messages, tools))

    async def acomplete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        self._before()
        return self._after(await complete_async(self.inner, messages, tools))

    def _before(self) -> None:
        pass

    def _after(self, reply: AssistantMessage) -> AssistantMessage:
        return reply

    async def aclose(self) -> None:
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()


class Spend(Protocol):
    """Where a job's payments go (the sweep's governor: runners/models/governor.py `SweepSpend`), and
    the check before each paid call that stops the job once the sweep's or its cell's budget is spent
    (`stopped`: why, once it did)."""

    stopped: str | None

    def paid(self, usd: float) -> None: ...

    async def check(self) -> None: ...

    def check_now(self) -> None: ...


class Paid(_Wrapped):
    """The calls `inner` answered and what they cost, each told to `spend`, which may refuse the
    next one (`BudgetExceeded`) once the sweep's or the cell's budget is spent."""

    def __init__(self, inner: Model, spend: Spend | None = None) -> None:
        super().__init__(inner)
        self.usd, self.calls, self.spend = 0.0, 0, spend

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        if self.spend is not None:
            self.spend.check_now()
        return self._after(self.inner.complete(messages, tools))

    async def acomplete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        if self.spend is not None:
            await self.spend.check()
        return self._after(await complete_async(self.inner, messages, tools))

    def _after(self, reply: AssistantMessage) -> AssistantMessage:
        self.usd += reply.usage.cost
        self.calls += 1
        if self.spend is not None:
            self.spend.paid(reply.usage.cost)
        return reply


class JobBudget(_Wrapped):
    """Refuses a call once the replies so far cost `budget_usd` or more (None: no budget)."""

    def __init__(self, inner: Model, budget_usd: float | None) -> None:
        super().__init__(inner)
        self.budget_usd, self.cost = budget_usd, 0.0

    def _before(self) -> None:
        if self.budget_usd is not None and self.cost >= self.budget_usd:
            raise BudgetExceeded(
                f"the job's replies cost ${self.cost:.4f}, its budget is ${self.budget_usd:g} (budget.job_usd): "
                "a re-run with a higher budget continues it (from the model-call cache, unpaid, up to here)"
            )

    def _after(self, reply: AssistantMessage) -> AssistantMessage:
        self.cost += reply.usage.cost
        return reply
