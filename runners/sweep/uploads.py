"""Uploads off the driver's scheduling loop: a slow or unreachable bucket never stalls scheduling.

Each finished job's upload runs in a small thread pool; its outcome (None, or the error text) is
handed to a callback there, which writes the job's ledger line. The sweep drains the pool before it
ends. A job whose upload was lost (failed, or the driver was killed first) is uploaded again by
the next run's reconciliation (runners/sweep/reconcile.py).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from runners.core.storage import Storage

log = logging.getLogger(__name__)


class Uploader:
    def __init__(self, storage: Storage, sweep: str, workers: int = 4) -> None:
        self.storage, self.sweep = storage, sweep
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="upload") if storage.remote else None
        self._futures: list[Future[None]] = []

    def submit(self, job_dir: Path, then: Callable[[str | None], None], upload: bool = True) -> None:
        """Upload `job_dir` (when `upload` and the storage keeps copies), then call `then(error)`."""
        if self._pool is None or not upload:
            then(None)
            return
        self._futures.append(self._pool.submit(self._run, job_dir, then))

    def _run(self, job_dir: Path, then: Callable[[str | None], None]) -> None:
        try:
            then(self.storage.upload(self.sweep, job_dir))
        except Exception:  # a failing callback must not vanish silently in a worker thread
            log.exception("recording the upload of %s failed", job_dir.name)

    def drain(self) -> None:
        """Wait for every submitted upload (and its ledger line)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
