"""The sweep's ledger: one line per job outcome (`<sweep>/jobs.jsonl`), appended as jobs finish.

The job records are the source of truth for results; the ledger says what happened to each attempt
(including jobs that died before writing a record), so failures are visible and countable. It is
read as untrusted text: a line that is not UTF-8 JSON of the expected shape (a disk error, a line
cut short by a killed driver, a hand edit) is skipped and counted, never fatal; the job it was
about is then vouched for by its record alone, and reconciliation logs it again. A line appended
after a cut one starts on a line of its own.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from envs.safeio import open_append
from runners.core.record_files import parse_json
from runners.job.resume import Logged

log = logging.getLogger(__name__)


class Ledger:
    """`<sweep>/jobs.jsonl`, appended line by line and read as a stream."""

    def __init__(self, sweep_dir: Path) -> None:
        self.path = sweep_dir / "jobs.jsonl"
        self.skipped = 0  # unreadable lines met by the last full read
        self._ends_clean = False  # whether the file is known to end with a newline

    def append(self, entry: dict[str, Any]) -> None:
        line = (json.dumps({**entry, "time": time.time()}, default=str) + "\n").encode()
        with open_append(self.path, readable=True) as f:  # 0644 under the user's umask; readable: its last byte is checked
            if not self._ends_clean and _ends_mid_line(f.fileno()):
                line = b"\n" + line  # the cut line stays unreadable; this one stays whole
            f.write(line)
        self._ends_clean = True

    def entries(self) -> list[dict[str, Any]]:
        return list(self.iter_entries())

    def iter_entries(self) -> Iterator[dict[str, Any]]:
        """The readable lines one at a time (a 20,000-job ledger is never held as text): JSON
        objects whose `job_id` is a string. The others are skipped, counted in `skipped`."""
        self.skipped = 0
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            for raw in f:
                entry = _entry(raw)
                if entry is None:
                    self.skipped += raw.strip() != b""
                    continue
                yield entry
        if self.skipped:
            log.warning("%s: %d unreadable line(s) skipped; the jobs they logged are checked against their records",
                        self.path, self.skipped)

    def records(self) -> dict[str, Logged]:
        """Each job's last line that logged a record (status ok, error or timeout), by job id."""
        out: dict[str, Logged] = {}
        for e in self.iter_entries():
            if e.get("status") in RECORD_STATUSES:
                at, stop, key = e.get("time"), e.get("stop_reason"), e.get("judge_key")
                out[e["job_id"]] = Logged(str(e["status"]), e["record_attempt"], at if isinstance(at, float | int) else None,
                                          stop if isinstance(stop, str) else None, key if isinstance(key, str) else None)
        return out


def _entry(raw: bytes) -> dict[str, Any] | None:
    """One line as a ledger entry, or None when it is not one (its `record_attempt` made an int ≥ 1)."""
    try:
        entry = parse_json(raw.decode("utf-8"))  # a line nested too deep is not an entry either
    except ValueError:  # UnicodeDecodeError among them
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("job_id"), str):
        return None
    attempt = entry.get("record_attempt", 1)
    if attempt is None:
        attempt = 1
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        return None
    entry["record_attempt"] = attempt
    return entry


def _ends_mid_line(fd: int) -> bool:
    """Whether the file ends with something other than a newline (a line cut short)."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


RECORD_STATUSES = ("ok", "error", "timeout")  # lines that log a record (failed: the job left none)
