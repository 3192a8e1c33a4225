"""The report kept up to date while a sweep runs.

After every `report.live_every` finished jobs (a resumed sweep counts those already complete),
`python -m eval.report` rebuilds the sweep's tables, figures and index from the records in a
background process at low priority. A job's page and its side-by-sides are written here, when its
record completes (`eval/report/pages/completed.py`): no build renders them again, so the sweep's own
build at its end computes the tables and writes the pages of no finished job. One refresh runs at
a time; a refresh that fails stops the refreshing (its log says why) and never the sweep; a page
that cannot be written is logged and never fails its job.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from envs.config import SECRET_NAME
from runners.core.project import PROJECT, pythonpath

if TYPE_CHECKING:
    from eval.report.load import Job

log = logging.getLogger(__name__)

LIVE_LOG = "report_live.log"  # in the sweep folder: what the refreshes printed
NICE = 10


class Process(Protocol):
    def poll(self) -> int | None: ...

    def wait(self) -> int: ...

    def terminate(self) -> None: ...


def spawn(sweep_dir: Path, log_path: Path) -> Process:
    """`python -m eval.report <sweep>`, niced, in one process (no page workers beside the sweep)."""
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}  # the report reads records only: no credential
    env["PYTHONPATH"] = pythonpath(env.get("PYTHONPATH"))
    cmd = [sys.executable, "-m", "eval.report", str(sweep_dir), "--nice", str(NICE), "--workers", "0"]
    with open(log_path, "ab") as out:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=PROJECT)


class LiveReport:
    """Counts finished jobs and starts a refresh when `every` have finished since the last one
    started (0: never; the sweep's build at its end is the only one). With `groups` (each job id's
    fellow jobs on its benchmark, task, model and seed), writes each finished job's pages."""

    def __init__(self, sweep_dir: Path, every: int, start: Callable[[Path, Path], Process] = spawn, already: Collection[str] = (),
                 groups: Mapping[str, Sequence[str]] | None = None) -> None:
        self.sweep_dir, self.every, self.start, self.groups = sweep_dir, every, start, groups
        self.pending = len(already)
        self.proc: Process | None = None
        self.failed = False
        self._roles: tuple[str, str] | None = None

    @property
    def log_path(self) -> Path:
        return self.sweep_dir / LIVE_LOG

    def finished(self, job: str, record: Job | None = None) -> None:
        """`job`'s records are all written (the sweep's driver writes none of them after this);
        `record`: its job.json, result and scores as the driver read them (else read here)."""
        if self.groups is not None:
            self.pages(job, record)
        self.pending += 1
        self._reap()
        if self.every > 0 and self.proc is None and not self.failed and self.pending >= self.every:
            try:
                self.proc = self.start(self.sweep_dir, self.log_path)
            except OSError as e:
                self._stop(f"could not start ({e})")
                return
            self.pending = 0

    def pages(self, job: str, record: Job | None = None) -> None:
        """The job's page and its side-by-sides with its finished fellows (never raises)."""
        from eval.report.load import roles
        from eval.report.pages.completed import at_completion

        if self._roles is None:
            self._roles = roles(self.sweep_dir, None, None)
        at_completion(self.sweep_dir, job, (self.groups or {}).get(job, ()), *self._roles, finished=record)

    def close(self) -> None:
        """Wait for a running refresh: the sweep's own build goes on from what it wrote."""
        if self.proc is not None:
            log.info("waiting for the live report's refresh to end")
            self.proc.wait()
            self._reap()

    def abort(self) -> None:
        """Stop a running refresh: the sweep was interrupted, and no build of its own follows."""
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait()
            self.proc = None

    def _reap(self) -> None:
        if self.proc is None or (rc := self.proc.poll()) is None:
            return
        self.proc = None
        if rc != 0:
            self._stop(f"failed (exit {rc})")

    def _stop(self, why: str) -> None:
        self.failed = True
        log.warning("the live report %s; see %s. No more refreshes: the report is written when the sweep ends", why, self.log_path)
