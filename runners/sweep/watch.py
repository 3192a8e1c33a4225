"""The driver's view of what a running sweep spends and how its providers' limiters stand.

`SweepWatch` starts the sweep's governor (runners/models/governor.py) for the run, with the budgets
and what earlier runs paid (it stops running jobs once a budget is spent), on a thread of its own:
the governor is a Ray worker process, and it starts while the episode actors start (issue 38.5),
not before them; `admit`, which the scheduler asks before each job starts, waits for it, so no job
runs before the governor answers. The thread then reads the governor's state once a second, keeps the budget's books (runners/sweep/budget.py: `admit` is what the
scheduler asks before it starts a job) and writes `<sweep>/spend.json` (per cell: spent, expected
at completion; the limiters' last state) every few seconds and at the end, and tells the tracker
every minute (W&B: the run `<sweep>-spend`) once anything is spent or a budget is set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from envs.safeio import write_json
from runners.config.runner import BudgetConfig
from runners.job.identity import JobSpec
from runners.models import governor
from runners.sweep.budget import SweepBudget

log = logging.getLogger(__name__)
POLL_S = 1.0
WRITE_EVERY_S = 10.0
TRACK_EVERY_S = 60.0
SPEND_FILE = "spend.json"


class SweepWatch:
    """Use as a context manager around the run (after `ray.init`)."""

    def __init__(self, sweep_dir: Path, budget: BudgetConfig, specs: Iterable[JobSpec], todo: Iterable[JobSpec],
                 tracker: Any = None) -> None:
        self.sweep_dir = sweep_dir
        self.tracker = tracker  # told the spend every minute (W&B: the run `<sweep>-spend`), when there is any
        self.budget = SweepBudget(budget, specs, todo, sweep_dir)
        self.snapshot: dict[str, Any] = {}
        self.handle: Any = None
        self.lock = threading.Lock()
        self._stop = threading.Event()
        self._governed = threading.Event()  # set once the governor's start has ended (up, or failed)
        self._thread = threading.Thread(target=self._run, name="sweep-watch", daemon=True)
        self._written = self._tracked = 0.0

    def __enter__(self) -> SweepWatch:
        self._thread.start()  # the governor starts there, beside the episode actors
        return self

    def __exit__(self, *exc: object) -> None:
        with self.lock:
            self._stop.set()
            up = self._governed.is_set()
        if up:  # else its start is still under way (Ctrl-C): the thread stops the governor itself
            self._thread.join(timeout=10)
        self._refresh()
        self._write()
        if self.handle is not None:
            governor.stop(self.handle)

    def admit(self, spec: JobSpec) -> bool:
        """Whether the budget lets `spec` start now (the scheduler asks before each start); the
        first call waits for the governor's start, so that every job finds it up."""
        self._governed.wait()
        with self.lock:
            return self.budget.admit(spec)

    def _run(self) -> None:
        handle = None
        try:
            handle = self._start_governor()
        finally:
            with self.lock:  # `__exit__` sees either the governor up or the sweep stopped first
                stopped = self._stop.is_set()
                if not stopped:
                    self.handle = handle
                self._governed.set()
        if stopped:  # the sweep stopped while the governor started
            if handle is not None:
                governor.stop(handle)
            return
        self._poll()

    def _start_governor(self) -> Any:
        try:
            books = self.budget.cells
            return governor.start(self.sweep_dir, self.budget.cfg, sum(b.prior for b in books.values()),
                                  {c: b.prior for c, b in books.items() if b.prior})
        except Exception as e:  # noqa: BLE001 - the sweep runs on, each process limiting on its own
            log.warning("the sweep's governor could not start (%s: %s): rate limits hold per process", type(e).__name__, e)
            return None

    def finished(self, job_id: str, spend: float | None, budget_stop: bool = False) -> None:
        with self.lock:
            self.budget.finished(job_id, spend, budget_stop)

    def _poll(self) -> None:
        while not self._stop.wait(POLL_S):
            self._refresh()
            if time.monotonic() - self._written >= WRITE_EVERY_S:
                self._write()

    def _refresh(self) -> None:
        if self.handle is None:
            return
        import ray

        try:
            snap = ray.get(self.handle.snapshot.remote(), timeout=5)
        except Exception as e:  # noqa: BLE001 - a slow or lost governor: the last state stands
            log.debug("governor snapshot failed: %s", e)
            return
        with self.lock:
            self.snapshot = snap
            self.budget.update(snap)

    def cells(self) -> dict[str, dict[str, float]]:
        """Per cell: spent so far and expected at completion (USD)."""
        with self.lock:
            return {c: {"spent": round(self.budget.spent(c), 6), "expected": round(self.budget.at_completion(c), 6)}
                    for c in sorted(self.budget.cells)}

    def totals(self) -> tuple[float, float]:
        with self.lock:
            return self.budget.spent(), self.budget.at_completion()

    def _write(self) -> None:
        self._written = time.monotonic()
        spent, expected = self.totals()
        with self.lock:
            held = sorted(self.budget.held)
        doc = {"spent": round(spent, 6), "expected": round(expected, 6), "cells": self.cells(),
               "budget": {k: getattr(self.budget.cfg, k) for k in ("sweep_usd", "cell_usd", "job_usd", "estimate_usd")},
               "held": held, "providers": self.snapshot.get("providers", {}), "time": time.time()}
        try:
            write_json(self.sweep_dir / SPEND_FILE, doc)
        except OSError as e:
            log.warning("could not write %s: %s", SPEND_FILE, e)
        log_spend = getattr(self.tracker, "log_spend", None)  # optional in the Tracker protocol
        final = self._stop.is_set()
        anything = doc["spent"] or doc["expected"] or any(doc["budget"].values())
        if log_spend is not None and anything and (final or time.monotonic() - self._tracked >= TRACK_EVERY_S):
            self._tracked = time.monotonic()
            log_spend(doc)
