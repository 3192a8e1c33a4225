"""The time by which the current job must end, as seen by the code that waits on its behalf.

A job's time limit is the agent loop's (`agent.time_limit_s`) and, in a sweep, the sweep's hard
limit for the whole job, judging included. Code that waits on the network (the model client, for
the agent, the judges and the probe) cannot see those limits through its arguments, so they travel
in a context variable: the loop and the episode actor set it, the client reads it and ends each
call by then. Context variables follow coroutines into the threads they start (`asyncio.to_thread`
copies the context), so a judge running in a worker thread sees the job's deadline too.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_DEADLINE: ContextVar[float | None] = ContextVar("runningtab_deadline", default=None)


@contextmanager
def until(when: float) -> Iterator[None]:
    """Within the block, the deadline is `when` (a `time.monotonic()` time), or the earlier one
    already set: an inner limit never extends an outer one."""
    current = _DEADLINE.get()
    token = _DEADLINE.set(when if current is None else min(current, when))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def deadline() -> float | None:
    """The current deadline (`time.monotonic()` time), None when no job limit applies."""
    return _DEADLINE.get()


def remaining() -> float | None:
    """Seconds left before the current deadline (negative once past), None when none is set."""
    when = _DEADLINE.get()
    return None if when is None else when - time.monotonic()
