"""Packing finished records off the driver's loop: once a job is booked (its ledger line written,
its upload done, tracked), its folder is appended to its grid cell's pack and removed
(runners/core/record_pack.py: ~11 files and folders a job become none).

One thread packs, in the order jobs were booked; the sweep drains it before it ends. A record that
cannot be packed (out of the packer's bounds, a full disk) stays a folder, logged, and reads as
before; a driver killed before packing a record leaves its folder, which the next run packs.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import deque
from collections.abc import Iterable
from pathlib import Path

from runners.core.record_pack import pack_record
from runners.core.record_types import Cell

log = logging.getLogger(__name__)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.=-]+")
NAME_MAX = 160


def pack_name(cfg: object, part: tuple[int, int] | None = None) -> str:
    """The pack of a job's grid cell (`Cell.name`, made a safe file name); a Slurm slice of the sweep
    packs into packs of its own (`.<i>of<n>`), so that drivers on several hosts never append to one."""
    name = _UNSAFE.sub("-", Cell.of_config(cfg).name)[:NAME_MAX]
    return name if part is None else f"{name}.{part[0]}of{part[1]}"


class Packer:
    """The sweep's packing thread: `submit` after a job is booked, `drain` before the sweep ends."""

    def __init__(self, sweep_dir: Path) -> None:
        self.sweep_dir = sweep_dir
        self.packed = self.kept = 0
        self._todo: deque[tuple[str, str]] = deque()
        self._seen: set[str] = set()
        self._cond = threading.Condition()
        self._closing = False
        self._thread = threading.Thread(target=self._run, name="packer", daemon=True)
        self._thread.start()

    def submit(self, job_id: str, name: str) -> None:
        """Pack `job_id`'s record into `name` (once: a job handed over twice is packed once)."""
        with self._cond:
            if job_id in self._seen:
                return
            self._seen.add(job_id)
            self._todo.append((job_id, name))
            self._cond.notify()

    def leftovers(self, complete: Iterable[str], names: dict[str, str]) -> int:
        """Submit the complete records still in folders (a driver killed before packing them): the
        sweep folder listed once, no stat per job. Returns how many."""
        try:
            with os.scandir(self.sweep_dir) as entries:
                folders = {e.name for e in entries if e.is_dir(follow_symlinks=False)}
        except OSError:
            return 0
        found = [j for j in complete if j in folders]
        for j in found:
            self.submit(j, names[j])
        return len(found)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._todo and not self._closing:
                    self._cond.wait()
                if not self._todo:
                    return
                job_id, name = self._todo.popleft()
            try:
                if pack_record(self.sweep_dir, job_id, name):
                    self.packed += 1
                else:
                    self.kept += 1
            except Exception as e:  # noqa: BLE001 - the record stands as a folder; the next run packs it
                self.kept += 1
                log.warning("the record of %s could not be packed (%s: %s); it stays a folder", job_id, type(e).__name__, e)

    def drain(self) -> None:
        """Pack what was submitted, then stop the thread."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()
