"""A job's model as the job uses it: the client for its config, behind the provider's rate limiter,
what it paid, the model-call cache and the job's budget.

    JobBudget( CachingModel( Paid( client with the provider's gate ) ) )

The gate sees every HTTP attempt to a provider (runners/models/rate_limit.py; a model server the
sweep starts itself is capped per process by `model.concurrency`, as before, and sized by the
scheduler); `Paid` every call the model
answered (what the job paid, reported to the sweep's governor in batches and at the job's end); the cache answers what
it holds (model.cache; off unless the sweep or the config turns it on); `JobBudget` every reply,
cached or not, and stops the job at `budget.job_usd`.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runners.config.schema import RootConfig
from runners.core.messages import Model
from runners.models import build_model, governor
from runners.models.accounting import JobBudget, Paid
from runners.models.caching import CachingModel
from runners.models.call_cache import (
    CallCache,
    CallKeys,
    agent_identity,
    echo_fields,
    settled,
)
from runners.models.config import ApiModelConfig
from runners.models.lease import leased_gate
from runners.models.rate_limit import Limits, local_gate, provider_key
from runners.models.registry import seeded
from runners.models.server import needs_server
from runners.models.weights import WeightsUnknown

log = logging.getLogger(__name__)
_refused: set[str] = set()  # models whose calls this process does not cache (said once)


@dataclass
class JobModel:
    """The wrapped model and what the job's record says of its calls."""

    model: Model
    paid: Paid
    cached: CachingModel | None
    job_id: str
    handle: Any = None  # the sweep's governor
    gate: Any = None  # the provider's (a `_LazyGate`), when the client has one

    def record_fields(self, stop_reason: str, budget_usd: float | None) -> dict[str, Any]:
        """`spend`, `cached_calls` and, for a stop at the job's own budget, `budget_usd` (result.json;
        None for a stop at the sweep's or the cell's budget: a re-run of the sweep may continue it)."""
        swept = self.paid.spend is not None and self.paid.spend.stopped
        return {"spend": round(self.paid.usd, 6), "cached_calls": self.cached.hits if self.cached else 0,
                "budget_usd": budget_usd if stop_reason == "budget" and not swept else None}

    async def aclose(self) -> None:
        """Report the job's last payments and its provider's use to the governor (awaited: the sweep's
        totals hold every call the job paid once it returns), then close the client."""
        if self.paid.spend is not None:
            await self.paid.spend.close()
        flush = getattr(self.gate.gate if self.gate is not None else None, "flush", None)
        if flush is not None:
            await flush()
        aclose = getattr(self.model, "aclose", None)
        if aclose is not None:
            await aclose()


def job_model(cfg: RootConfig, task_id: str, model_url: str | None, sweep_dir: Path, job_id: str) -> JobModel:
    """The job's model for task `task_id` (`model_url`: a served model's URL); `sweep_dir` names the
    sweep whose governor the job reports to, when one runs."""
    from runners.core.record_types import Cell

    mc = settled(seeded(cfg.model, cfg.seed).for_task(task_id), cfg.out)  # as to_root left it, or a config made in Python
    client = build_model(mc, model_url)
    handle = governor.find(sweep_dir)
    gate = None
    if isinstance(mc, ApiModelConfig) and not needs_server(mc) and hasattr(client, "gate"):  # a provider, not our own server
        gate = client.gate = _gate(mc, getattr(client, "base_url", model_url or ""), handle)
    spend = None
    if handle is not None:
        spend = governor.SweepSpend(handle, job_id, Cell.of_config(cfg).name)
    paid = Paid(client, spend)
    model: Model = paid
    cached = None
    identity = _cache_identity(mc, cfg.seed, Path(mc.cache_dir)) if mc.cache != "off" else None
    if identity is not None:
        tier = _bucket_tier(cfg)
        store = CallCache(Path(mc.cache_dir), tier)
        cached = CachingModel(paid, store, CallKeys(identity, echo_fields(mc)), mc.cache, threaded=tier is not None)
        model = cached
    return JobModel(JobBudget(model, cfg.budget.job_usd), paid, cached, job_id, handle, gate)


def _cache_identity(mc: Any, seed: int, root: Path) -> dict[str, Any] | None:
    """The model's part of the cache keys; None (the cache refused for it, said once per process)
    when the weights it serves cannot be keyed by their content."""
    try:
        return agent_identity(mc, seed, root)
    except WeightsUnknown as e:
        if mc.id not in _refused:
            _refused.add(mc.id)
            log.warning("model.cache: calls to model %s are not cached: %s, so its content cannot be part of the key "
                        "(new weights there would get the old replies). Point model.server.model_path at a local copy "
                        "to cache them", mc.id, e)
        return None


def _gate(mc: ApiModelConfig, base_url: str, handle: Any) -> _LazyGate:
    """The provider's limiter: the sweep's shared one, else this process's. A lease outlives any one
    attempt (the client's timeout between bytes, twice, plus a minute); a holder that died frees it then."""
    limits = Limits(mc.concurrency, mc.rpm, mc.tpm)
    provider = provider_key(base_url, mc.api_key_env)
    lease_s = 2 * mc.timeout_s + 60
    if handle is not None:
        return _LazyGate(functools.partial(leased_gate, handle, provider, limits, lease_s))
    return _LazyGate(functools.partial(local_gate, provider, limits, lease_s))


class _LazyGate:
    """The gate `make` returns, looked up in the event loop of the first call (the job's loop): the
    process's lease from the sweep's governor (runners/models/lease.py), or its own limiter."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make
        self.gate: Any = None

    async def acquire(self, tokens: int) -> str:
        if self.gate is None:
            self.gate = self.make()
        return await self.gate.acquire(tokens)

    def release(self, grant: str, tokens: int | None, status: int | None, retry_after: float | None) -> None:
        self.gate.release(grant, tokens, status, retry_after)


def _bucket_tier(cfg: RootConfig) -> Any:
    """With `storage=s3`, the cache's second tier in the bucket."""
    if cfg.storage.kind != "s3":
        return None
    from runners.models.call_cache_s3 import BucketTier

    return BucketTier.of(cfg.storage)
