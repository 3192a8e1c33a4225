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
import secrets
import subprocess
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Protocol

from envs.config import SECRET_NAME
from eval.report.manifest import Settled
from runners.core.project import PROJECT, pythonpath

log = logging.getLogger(__name__)

LIVE_LOG = "report_live.log"  # in the sweep folder: what the refreshes printed
SETTLED_FILE = ".report_settled.json"  # in the sweep folder: what the running refresh need not stamp
NICE = 10


class Process(Protocol):
    def poll(self) -> int | None: ...

    def wait(self) -> int: ...

    def terminate(self) -> None: ...


def spawn(sweep_dir: Path, log_path: Path, build_id: str, settled: Settled | None = None) -> Process:
    """`python -m eval.report <sweep>`, niced, in one process (no page workers beside the sweep);
    `settled` (the jobs final before the last good refresh began) goes to it in `SETTLED_FILE`."""
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}  # the report reads records only: no credential
    env["PYTHONPATH"] = pythonpath(env.get("PYTHONPATH"))
    cmd = [sys.executable, "-m", "eval.report", str(sweep_dir), "--nice", str(NICE), "--workers", "0", "--build-id", build_id]
    if settled is not None:
        cmd += ["--settled", str(settled.write(sweep_dir / SETTLED_FILE))]
    with open(log_path, "ab") as out:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=PROJECT)


class LiveReport:
    """Counts finished jobs and starts a refresh when `every` have finished since the last one
    started (0: never; the sweep's build at its end is the only one).

    It also tells each refresh and the sweep's last build which jobs they need not stamp again
    (`settled`): those whose records were final when the last refresh that succeeded began."""

    def __init__(self, sweep_dir: Path, every: int, start: Callable[[Path, Path, str, Settled | None], Process] = spawn,
                 already: Collection[str] = ()) -> None:  # fmt: skip
        self.sweep_dir, self.every, self.start = sweep_dir, every, start
        self.done: list[str] = list(already)  # job folders whose records are final, in the order they settled
        self.pending = len(self.done)
        self.proc: Process | None = None
        self.running: tuple[str, int] = ("", 0)  # the running refresh's build id and how many jobs had settled when it began
        self.good: tuple[str, int] | None = None  # the same of the last refresh that succeeded
        self.failed = False

    @property
    def log_path(self) -> Path:
        return self.sweep_dir / LIVE_LOG

    def finished(self, job: str) -> None:
        """`job`'s records are all written (the sweep's driver writes none of them after this)."""
        self.done.append(job)
        self.pending += 1
        self._reap()
        if self.every > 0 and self.proc is None and not self.failed and self.pending >= self.every:
            build_id = secrets.token_hex(8)
            try:
                self.proc = self.start(self.sweep_dir, self.log_path, build_id, self.settled())
            except OSError as e:
                self._stop(f"could not start ({e})")
                return
            self.running = (build_id, len(self.done))
            self.pending = 0

    def settled(self) -> Settled | None:
        """The jobs settled before the last good refresh began, for a build after it (the vouch holds
        only on the manifest that refresh wrote)."""
        if self.good is None:
            return None
        build_id, n = self.good
        return Settled(build_id, frozenset(self.done[:n]))

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
        else:
            self.good = self.running

    def _stop(self, why: str) -> None:
        self.failed = True
        log.warning("the live report %s; see %s. No more refreshes: the report is written when the sweep ends", why, self.log_path)
