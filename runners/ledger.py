"""The sweep's ledger: one line per job outcome (`<sweep>/jobs.jsonl`), appended as jobs finish.

The job records are the source of truth for results; the ledger says what happened to each attempt
(including jobs that died before writing a record), so failures are visible and countable.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any


class Ledger:
    def __init__(self, sweep_dir: Path) -> None:
        self.path = sweep_dir / "jobs.jsonl"

    def append(self, entry: dict[str, Any]) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps({**entry, "time": time.time()}, default=str) + "\n")

    def entries(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        out = []
        for line in self.path.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:  # the last line of a driver killed mid-write
                continue
        return out
