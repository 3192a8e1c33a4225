"""The report kept up to date while a sweep runs.

After every `report.live_every` finished jobs (a resumed sweep counts those already complete),
`python -m eval.report` rebuilds the sweep's report in a background process at low priority. The
report is incremental (`eval/report/manifest.py`), so each refresh reads and renders only what
finished since the last one, and the sweep's own build at its end only the last few: at 20,000
jobs that build takes seconds where one from scratch takes a minute. One refresh runs at a time;
a refresh that fails stops the refreshing (its log says why) and never the sweep.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from envs.config import SECRET_NAME
from runners.project import PROJECT, pythonpath

log = logging.getLogger(__name__)

LIVE_LOG = "report_live.log"  # in the sweep folder: what the refreshes printed
NICE = 10


class Process(Protocol):
    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


def spawn(sweep_dir: Path, log_path: Path) -> Process:
    """`python -m eval.report <sweep>`, niced, in one process (no page workers beside the sweep)."""
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}  # the report reads records only: no credential
    env["PYTHONPATH"] = pythonpath(env.get("PYTHONPATH"))
    cmd = [sys.executable, "-m", "eval.report", str(sweep_dir), "--nice", str(NICE), "--workers", "0"]
    with open(log_path, "ab") as out:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=PROJECT)


class LiveReport:
    """Counts finished jobs and starts a refresh when `every` have finished since the last one
    started (0: never; the sweep's build at its end is the only one)."""

    def __init__(self, sweep_dir: Path, every: int, start: Callable[[Path, Path], Process] = spawn, already: int = 0) -> None:
        self.sweep_dir, self.every, self.start = sweep_dir, every, start
        self.pending = already
        self.proc: Process | None = None
        self.failed = False

    @property
    def log_path(self) -> Path:
        return self.sweep_dir / LIVE_LOG

    def finished(self, n: int = 1) -> None:
        self.pending += n
        self._reap()
        if self.every > 0 and self.proc is None and not self.failed and self.pending >= self.every:
            try:
                self.proc = self.start(self.sweep_dir, self.log_path)
            except OSError as e:
                self._stop(f"could not start ({e})")
                return
            self.pending = 0

    def close(self) -> None:
        """Wait for a running refresh: the sweep's own build goes on from what it wrote."""
        if self.proc is not None:
            log.info("waiting for the live report's refresh to end")
            self.proc.wait()
            self._reap()

    def _reap(self) -> None:
        if self.proc is None or (rc := self.proc.poll()) is None:
            return
        self.proc = None
        if rc != 0:
            self._stop(f"failed (exit {rc})")

    def _stop(self, why: str) -> None:
        self.failed = True
        log.warning("the live report %s; see %s. No more refreshes: the report is written when the sweep ends", why, self.log_path)
