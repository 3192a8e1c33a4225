"""A concurrency cap per endpoint, shared by every model client in the process.

Semaphores are created on first use (no import-time state beyond an empty registry). Jobs that run
as threads of one process share the cap; jobs in separate processes (one Ray actor each) do not,
so there the sweep's own in-flight limit is what bounds the load on an endpoint.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

_lock = threading.Lock()
_slots: dict[str, tuple[int, threading.Semaphore]] = {}


def _semaphore(endpoint: str, limit: int) -> threading.Semaphore:
    with _lock:
        if endpoint not in _slots:
            _slots[endpoint] = (limit, threading.Semaphore(limit))
        first, sem = _slots[endpoint]
    if first != limit:
        log.warning("endpoint %s already capped at %d requests; ignoring a cap of %d", endpoint, first, limit)
    return sem


@contextmanager
def endpoint_slot(endpoint: str, limit: int) -> Iterator[None]:
    """Hold one of `limit` slots for `endpoint` while the block runs (limit <= 0: no cap)."""
    if limit <= 0:
        yield
        return
    sem = _semaphore(endpoint.rstrip("/"), limit)
    with sem:
        yield
