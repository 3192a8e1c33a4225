"""A concurrency cap per endpoint, shared by every model client in the process.

Semaphores are created on first use (no import-time state beyond an empty registry). Episodes that
run as threads or as asyncio tasks of one process (one episode actor) share the cap; episodes in
separate processes do not, so across actors the sweep's own in-flight limit is what bounds the load
on an endpoint.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

log = logging.getLogger(__name__)

_lock = threading.Lock()
_slots: dict[str, tuple[int, threading.Semaphore]] = {}
# per event loop: an asyncio semaphore belongs to the loop that first waits on it
_async_slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[int, asyncio.Semaphore]]]
_async_slots = weakref.WeakKeyDictionary()


def _semaphore(endpoint: str, limit: int) -> threading.Semaphore:
    with _lock:
        if endpoint not in _slots:
            _slots[endpoint] = (limit, threading.Semaphore(limit))
        first, sem = _slots[endpoint]
    _check(endpoint, first, limit)
    return sem


def _check(endpoint: str, first: int, limit: int) -> None:
    if first != limit:
        log.warning("endpoint %s already capped at %d requests; ignoring a cap of %d", endpoint, first, limit)


@asynccontextmanager
async def thread_slot(endpoint: str, limit: int) -> AsyncIterator[None]:
    """Hold one of `limit` slots for `endpoint`, shared by every thread of the process, while the
    block runs (limit <= 0: no cap). For blocking callers, each of which runs its call on a loop of
    its own: the slot is polled, so that the call's deadline can cancel the wait."""
    if limit <= 0:
        yield
        return
    sem = _semaphore(endpoint.rstrip("/"), limit)
    pause = 0.001
    while not sem.acquire(blocking=False):
        await asyncio.sleep(pause)
        pause = min(2 * pause, 0.05)
    try:
        yield
    finally:
        sem.release()


class AsyncEndpointSlot:
    """`thread_slot` for the episodes of one event loop: waits without blocking the loop's others.
    A class, not a generator: entered once per model attempt, and an uncapped endpoint (the
    default) then costs two empty awaits, not an async generator's set-up."""

    __slots__ = ("endpoint", "limit", "_sem")

    def __init__(self, endpoint: str, limit: int) -> None:
        self.endpoint, self.limit = endpoint, limit
        self._sem: asyncio.Semaphore | None = None

    async def __aenter__(self) -> None:
        if self.limit <= 0:
            return
        slots = _async_slots.setdefault(asyncio.get_running_loop(), {})
        first, sem = slots.setdefault(self.endpoint.rstrip("/"), (self.limit, asyncio.Semaphore(self.limit)))
        _check(self.endpoint, first, self.limit)
        await sem.acquire()
        self._sem = sem

    async def __aexit__(self, *exc: object) -> None:
        if self._sem is not None:
            self._sem.release()
            self._sem = None
