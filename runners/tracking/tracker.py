"""A thin tracker over W&B (or a JSONL file, or nothing). The disk record stays the source of truth.

W&B (runners/tracking/wandb_runs.py): one run per grid cell (benchmark × method × model × seed), written
off the driver's loop when the cell's last job finishes, and one summary run per sweep. Configs hold
names of secret variables, never secrets. Offline unless the user configured W&B (WANDB_MODE or
WANDB_API_KEY), so it works without network.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from runners.config.runner import TrackerConfig
from runners.core.record_types import JobMeta
from runners.core.registry import Registry

if TYPE_CHECKING:
    from runners.job.identity import JobSpec

Tables = dict[str, tuple[list[str], list[list[Any]]]]


class Tracker(Protocol):
    def log_job(self, job: JobMeta, scores: dict[str, Any] | None, stats: dict[str, float]) -> None: ...

    def logged(self) -> set[str] | None:
        """Ids of the jobs already logged, or None when the tracker cannot tell (the ledger decides)."""

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None: ...

    def flush(self) -> None:
        """Write what is still buffered (a W&B cell whose jobs did not all finish) and wait for it."""

    # Optional (the driver calls it when present): `log_spend(doc)`, the sweep's spend while it runs —
    # `doc` is `<sweep>/spend.json` (spent and expected at completion, in total and per cell);
    # `closing_line()`, one line printed when the sweep ends (W&B: its runs and how to upload them).


class NoTracker:
    def log_job(self, job: JobMeta, scores: dict[str, Any] | None, stats: dict[str, float]) -> None:
        pass

    def logged(self) -> set[str] | None:
        return None

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None:
        pass

    def flush(self) -> None:
        pass


class JsonlTracker:
    """Appends one line per job and one per summary to `<sweep>/tracker.jsonl`."""

    def __init__(self, sweep_dir: Path) -> None:
        self.path = sweep_dir / "tracker.jsonl"

    def _write(self, obj: dict[str, Any]) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(obj, default=str) + "\n")

    def log_job(self, job: JobMeta, scores: dict[str, Any] | None, stats: dict[str, float]) -> None:
        self._write({"kind": "job", "job_id": job.job_id, "metrics": (scores or {}).get("metrics", {}), "tab": stats})

    def logged(self) -> set[str] | None:
        if not self.path.is_file():
            return set()
        ids = set()
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:  # a line cut short by a kill
                continue
            if obj.get("kind") == "job":
                ids.add(obj["job_id"])
        return ids

    def log_spend(self, doc: dict[str, Any]) -> None:
        self._write({"kind": "spend", "spent": doc["spent"], "expected": doc["expected"], "cells": doc["cells"]})

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None:
        self._write({
            "kind": "summary",
            "tables": {k: {"columns": c, "rows": r} for k, (c, r) in tables.items()},
            "images": {k: str(p) for k, p in (images or {}).items()},
        })

    def flush(self) -> None:
        pass  # every line is written when logged


TrackerFactory = Callable[[TrackerConfig, str, Path, "Iterable[JobSpec]"], Tracker]
TRACKERS: Registry[TrackerFactory] = Registry("tracker kind")
TRACKERS.add("wandb", "runners.tracking.wandb_runs:from_config")  # imports wandb only when chosen
TRACKERS.add("jsonl", lambda cfg, sweep, sweep_dir, specs: JsonlTracker(sweep_dir))
TRACKERS.add("none", lambda cfg, sweep, sweep_dir, specs: NoTracker())


def build_tracker(cfg: TrackerConfig, sweep: str, sweep_dir: Path, specs: Iterable[JobSpec] = ()) -> Tracker:
    """The configured tracker (`tracker.kind`: a registered name or a dotted path to a factory);
    `specs` (the sweep's jobs) tell W&B which jobs make up each grid cell."""
    return TRACKERS.get(cfg.kind)(cfg, sweep, sweep_dir, specs)
