"""Waiting for a descriptor to be readable, whatever its number.

`select.select` refuses descriptors numbered 1,024 and up (FD_SETSIZE) with a ValueError, and an
episode actor running hundreds of jobs holds more than that: every bash call and every file the
judge read failed at 1,024 in flight. `poll` has no such limit.
"""

from __future__ import annotations

import math
import select

_EVENTS = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR


def readable(fds: list[int], timeout_s: float) -> list[int]:
    """The descriptors of `fds` that have data or reached end of file (as select() counts readable)
    within `timeout_s` seconds (0: only look)."""
    poller = select.poll()
    for fd in fds:
        poller.register(fd, _EVENTS)
    return [fd for fd, _ in poller.poll(math.ceil(max(timeout_s, 0.0) * 1000))]
