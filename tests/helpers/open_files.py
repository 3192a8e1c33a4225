"""Holding many descriptors open, as an episode actor running hundreds of jobs does, so that the next
ones the process opens are numbered past 1,024 (select()'s FD_SETSIZE)."""

from __future__ import annotations

import os
import resource
from collections.abc import Iterator
from contextlib import contextmanager

import pytest


@contextmanager
def held_open(n: int = 1100) -> Iterator[list[int]]:
    """`n` descriptors of /dev/null, closed after; skips when the hard limit does not allow them."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = n + 300
    if hard != resource.RLIM_INFINITY and hard < need:
        pytest.skip(f"the hard limit on open files is {hard}, under {need}")
    if soft != resource.RLIM_INFINITY and soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
    fds = [os.open(os.devnull, os.O_RDONLY) for _ in range(n)]
    try:
        yield fds
    finally:
        for fd in fds:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
