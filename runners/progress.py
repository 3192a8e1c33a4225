"""The sweep's live progress: done / running / failed / remaining per method, and an ETA."""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.table import Table

from runners.grid import JobSpec
from runners.scheduler import Outcome


class Progress:
    """Counts per method; a live table on a terminal, one line per finished job elsewhere."""

    def __init__(self, specs: list[JobSpec], skipped: int, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.total = {m: 0 for m in dict.fromkeys(s.cfg.method.name for s in specs)}
        for s in specs:
            self.total[s.cfg.method.name] += 1
        self.done: dict[str, int] = defaultdict(int)
        self.failed: dict[str, int] = defaultdict(int)
        self.running: dict[str, int] = defaultdict(int)
        self.walls: list[float] = []
        self.skipped = skipped
        self.t0 = time.monotonic()
        self.live = Live(self.table(), console=self.console, refresh_per_second=2) if self.console.is_terminal else None

    def __enter__(self) -> Progress:
        if self.live:
            self.live.__enter__()
        else:
            self.console.print(f"sweep: {sum(self.total.values())} jobs to run, {self.skipped} already complete")
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.live:
            self.live.__exit__(*exc)

    def start(self, spec: JobSpec) -> None:
        self.running[spec.cfg.method.name] += 1
        self._refresh()

    def finish(self, o: Outcome) -> None:
        m = o.spec.cfg.method.name
        self.running[m] -= 1
        (self.done if o.status == "ok" else self.failed)[m] += 1
        self.walls.append(o.wall_s)
        if not self.live:
            n = sum(self.done.values()) + sum(self.failed.values())
            reason = (o.result or {}).get("stop_reason", o.error)
            self.console.print(f"[{n}/{sum(self.total.values())}] {o.status:7} {o.spec.job_id} ({reason}, {o.wall_s:.1f} s)")
        self._refresh()

    def eta_s(self) -> float | None:
        finished = sum(self.done.values()) + sum(self.failed.values())
        if not finished:
            return None
        left = sum(self.total.values()) - finished
        rate = finished / (time.monotonic() - self.t0)
        return left / rate if rate else None

    def table(self) -> Table:
        t = Table(title="sweep progress")
        for c in ("method", "done", "running", "failed", "remaining"):
            t.add_column(c)
        for m, total in self.total.items():
            left = total - self.done[m] - self.failed[m] - self.running[m]
            t.add_row(m, str(self.done[m]), str(self.running[m]), str(self.failed[m]), str(left))
        eta = self.eta_s()
        t.caption = f"{self.skipped} already complete · ETA {eta:.0f} s" if eta is not None else f"{self.skipped} already complete"
        return t

    def _refresh(self) -> None:
        if self.live:
            self.live.update(self.table())
