"""The sweep's ledger: one line per job outcome (`<sweep>/jobs.jsonl`), appended as jobs finish.

The job records are the source of truth for results; the ledger says what happened to each attempt
(including jobs that died before writing a record), so failures are visible and countable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.safeio import open_append


class Ledger:
    """`<sweep>/jobs.jsonl`, appended line by line and read as a stream."""

    def __init__(self, sweep_dir: Path) -> None:
        self.path = sweep_dir / "jobs.jsonl"

    def append(self, entry: dict[str, Any]) -> None:
        with open_append(self.path) as f:  # 0644 under the user's umask, like every record file
            f.write((json.dumps({**entry, "time": time.time()}, default=str) + "\n").encode())

    def entries(self) -> list[dict[str, Any]]:
        return list(self.iter_entries())

    def iter_entries(self) -> Iterator[dict[str, Any]]:
        """The lines one at a time (a 20,000-job ledger is never held as text)."""
        if not self.path.exists():
            return
        with open(self.path, encoding="utf-8") as f:
            for line in f:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:  # the last line of a driver killed mid-write
                    continue
                if isinstance(entry, dict):
                    yield entry

    def records(self) -> dict[str, Logged]:
        """Each job's last line that logged a record (status ok, error or timeout), by job id."""
        out: dict[str, Logged] = {}
        for e in self.iter_entries():
            if e.get("status") in RECORD_STATUSES and "job_id" in e:
                at = e.get("time")
                out[str(e["job_id"])] = Logged(str(e["status"]), int(e.get("record_attempt") or 1), at if isinstance(at, float | int) else None)
        return out


RECORD_STATUSES = ("ok", "error", "timeout")  # lines that log a record (failed: the job left none)


@dataclass(frozen=True, slots=True)
class Logged:
    """What the ledger says of a job's record: its status, which run of the record, and when."""

    status: str
    record_attempt: int
    time: float | None
