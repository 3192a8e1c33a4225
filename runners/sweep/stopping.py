"""Ctrl-C (SIGINT) and SIGTERM to the sweep's driver: stop cleanly and say how to resume.

The first signal raises `Interrupted` (a KeyboardInterrupt) in the driver's main thread, wherever it
is (the scheduler waits in `ray.wait`, which checks for signals). What runs then unwinds as on
any exception: the episode actors are killed (their jobs' records stay incomplete and run again on
resume), the model servers stopped, the uploads in flight finished and their ledger lines written,
the tracker flushed. The driver then prints one line (jobs complete, in flight, not started, the
command that resumes) and exits with 128 + the signal's number. A second signal while it cleans up
ends it at once.

Ray's `init` on the main thread would install a SIGTERM handler of its own (exit at once); the
driver starts Ray on another thread (runners/sweep/local_ray.py), which leaves the Python handlers in
place, but Ray's core worker still sets a native SIGTERM handler (a dump, then abort) once it is up:
the driver installs these again when Ray is ready.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """A signal asked the driver to stop; `status` is the line it prints once everything is stopped.

    A KeyboardInterrupt, because Ray's waits turn a signal handler's KeyboardInterrupt into a plain
    new one of their own (and any other exception into a SystemError): catch KeyboardInterrupt and
    ask `Signals.caught` which signal it was."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.status = ""

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class Signals:
    """SIGINT and SIGTERM as `Interrupted` while installed (main thread only; elsewhere a no-op)."""

    def __init__(self) -> None:
        self.caught: int | None = None
        self._saved: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in SIGNALS:
            previous = signal.signal(sig, self._handle)
            self._saved.setdefault(sig, previous)

    def restore(self) -> None:
        for sig, previous in self._saved.items():
            signal.signal(sig, previous)
        self._saved.clear()

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        if self.caught is not None:  # again, while stopping: no more waiting
            say(f"\n{signal.Signals(signum).name} again: exiting without cleaning up")
            os._exit(128 + signum)
        self.caught = signum
        say(f"\n{signal.Signals(signum).name}: stopping the sweep (the jobs in flight run again on resume)…")
        raise Interrupted(signum)


@contextmanager
def interruptible() -> Iterator[Signals]:
    """SIGINT and SIGTERM raise `Interrupted` within the block."""
    signals = Signals()
    signals.install()
    try:
        yield signals
    finally:
        signals.restore()


def say(line: str) -> None:
    """A line on stderr, which may be a pipe whose reader is gone (`| tail`, killed with us)."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except OSError:
        pass


def exit_stopped(stop: Interrupted, shutdown_s: float = 10.0) -> NoReturn:
    """Print the status line and end the driver with 128 + the signal's number. Ray is shut down
    first, for at most `shutdown_s` (the driver's own local Ray was already, as the sweep's block
    ended: runners/sweep/local_ray.py): a local cluster signalled with the driver (SIGTERM to its
    process group) drains for a minute and would hold an ordinary exit until its client gives up,
    so then the driver leaves at once."""
    from runners.sweep.local_ray import shut_down

    say(stop.status or f"sweep interrupted by {stop} before any job ran")
    if not shut_down(shutdown_s):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        os._exit(stop.exit_code)
    sys.exit(stop.exit_code)


def status_line(signum: int, total: int, before: int, now: int, in_flight: int, resume: str) -> str:
    """The line the driver prints when a signal stopped it."""
    left = total - before - now - in_flight
    return (f"sweep interrupted by {signal.Signals(signum).name}: {before + now} of {total} jobs complete "
            f"({now} in this run), {in_flight} in flight stopped (they run again), {left} not started; "
            f"resume with: {resume}")
