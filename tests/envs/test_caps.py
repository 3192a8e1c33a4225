"""Which caps a bash call ran into, read from its output's last bytes (`Caps.check`, envs/limits.py):
the kernel's and the runtimes' refusal messages, in any case, anywhere in the tail; output without
them notes nothing."""

from __future__ import annotations

import signal

import pytest

from envs.config import EnvConfig
from envs.limits import Caps

FILLER = "ordinary output of a command, line after line\n" * 60


@pytest.mark.parametrize(("message", "cap"), [
    ("MemoryError", "memory"),
    ("bash: fork: Cannot allocate memory", "memory"),
    ("terminate called after throwing an instance of 'std::bad_alloc'", "memory"),
    ("ERROR: OUT OF MEMORY", "memory"),
    ("sort: memory exhausted", "memory"),
    ("bash: fork: retry: Resource temporarily unavailable", "processes"),
    ("python: Cannot fork", "processes"),
    ("sh: CAN'T FORK", "processes"),
    ("File size limit exceeded (core dumped)", "file_size"),
    ("cp: error writing 'big': File too large", "file_size"),
])
def test_a_refusal_in_the_tail_notes_its_cap(message: str, cap: str) -> None:
    caps = Caps(EnvConfig())
    try:
        for tail in (f"{FILLER}{message}\n", f"{message}\n{FILLER}", message):
            caps.hit.clear()
            caps.check(tail[-4096:], 1)
            assert caps.hit == [cap], (tail[-200:], caps.hit)
    finally:
        caps.close()


def test_ordinary_output_notes_nothing_and_sigxfsz_notes_the_file_size() -> None:
    caps = Caps(EnvConfig())
    try:
        caps.check(FILLER + "memory use is fine; forks are fine; a File is fine\n", 0)
        assert caps.hit == []
        caps.check(FILLER, 128 + signal.SIGXFSZ)
        assert caps.hit == ["file_size"]
    finally:
        caps.close()
