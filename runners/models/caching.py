"""A `Model` behind the model-call cache (runners/models/call_cache.py), for one job.

`read`: a call found in the cache is answered from it, the model is never asked; `write`: every reply
the model gives is stored; `read_write`: both — a finished sweep re-run from its cache answers every
call from it (at no cost), and a job interrupted mid-episode re-runs from it up to where it stopped,
then continues live. A reply from the cache keeps its recorded usage (tokens, cost) and latency, so
the trajectory is the one recorded; what was actually paid is counted apart (runners/models/accounting.py).
Errors (context length, a model that failed) are never stored: they are asked again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from runners.core.messages import AssistantMessage, Model, complete_async
from runners.models.call_cache import CallCache, reply_entry, reply_of

log = logging.getLogger(__name__)


class CachingModel:
    """`inner` behind `cache` in `mode` (read | write | read_write); `keys` gives each call's key."""

    def __init__(self, inner: Model, cache: CallCache, keys: Callable[[list[dict[str, Any]], list[dict[str, Any]]], str],
                 mode: str, threaded: bool = False) -> None:
        self.inner, self.cache, self.keys, self.mode = inner, cache, keys, mode
        self.name = inner.name
        self.hits = 0
        self._read, self._write = mode in ("read", "read_write"), mode in ("write", "read_write")
        self._threaded = threaded  # a remote tier: its reads and writes leave the event loop

    def __repr__(self) -> str:
        return f"CachingModel({self.inner!r}, mode={self.mode})"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        key = self.keys(messages, tools)
        hit = self._lookup(key)
        if hit is not None:
            return hit
        reply = self.inner.complete(messages, tools)
        if self._write:
            self._store(key, reply)
        return reply

    async def acomplete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AssistantMessage:
        key = self.keys(messages, tools)
        hit = await asyncio.to_thread(self._lookup, key) if self._threaded else self._lookup(key)
        if hit is not None:
            return hit
        reply = await complete_async(self.inner, messages, tools)
        if self._write:  # a local entry is a small unsynced write, as cheap as the lookup's read: no thread hand-off
            await asyncio.to_thread(self._store, key, reply) if self._threaded else self._store(key, reply)
        return reply

    def _lookup(self, key: str) -> AssistantMessage | None:
        if not self._read:
            return None
        entry = self.cache.get(key)  # checked field by field: a bad entry is a miss
        if entry is None:
            return None
        self.hits += 1
        return reply_of(entry)

    def _store(self, key: str, reply: AssistantMessage) -> None:
        try:
            self.cache.put(key, reply_entry(reply, getattr(self.inner, "name", None)))
        except Exception as e:  # noqa: BLE001 - a cache that cannot be written must not cost the job its reply
            log.warning("model-call cache: could not store %s (%s: %s)", key, type(e).__name__, e)

    async def aclose(self) -> None:
        aclose = getattr(self.inner, "aclose", None)
        if aclose is not None:
            await aclose()
