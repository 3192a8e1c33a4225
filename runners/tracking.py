"""A thin tracker over W&B (or a JSONL file, or nothing). The disk record stays the source of truth.

W&B: one run per job (group = sweep, job type = method, tags benchmark/model/seed, config = the
resolved job config, which holds names of secret variables, never secrets) and one summary run per
sweep. Offline unless the user configured W&B (WANDB_MODE or WANDB_API_KEY), so it works without
network.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

from runners.config import TrackerConfig

Tables = dict[str, tuple[list[str], list[list[Any]]]]


class Tracker(Protocol):
    def log_job(self, job: dict[str, Any], scores: dict[str, Any] | None, stats: dict[str, float]) -> None: ...

    def logged(self) -> set[str] | None:
        """Ids of the jobs already logged, or None when the tracker cannot tell (the ledger decides)."""

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None: ...


class NoTracker:
    def log_job(self, job: dict[str, Any], scores: dict[str, Any] | None, stats: dict[str, float]) -> None:
        pass

    def logged(self) -> set[str] | None:
        return None

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None:
        pass


class JsonlTracker:
    """Appends one line per job and one per summary to `<sweep>/tracker.jsonl`."""

    def __init__(self, sweep_dir: Path) -> None:
        self.path = sweep_dir / "tracker.jsonl"

    def _write(self, obj: dict[str, Any]) -> None:
        with open(self.path, "a") as f:
            f.write(json.dumps(obj, default=str) + "\n")

    def log_job(self, job: dict[str, Any], scores: dict[str, Any] | None, stats: dict[str, float]) -> None:
        self._write({"kind": "job", "job_id": job["job_id"], "metrics": (scores or {}).get("metrics", {}), "tab": stats})

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

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None:
        self._write({
            "kind": "summary",
            "tables": {k: {"columns": c, "rows": r} for k, (c, r) in tables.items()},
            "images": {k: str(p) for k, p in (images or {}).items()},
        })  # fmt: skip


class WandbTracker:
    """One W&B run per job and a summary run per sweep, under `<sweep>/wandb/`."""

    def __init__(self, cfg: TrackerConfig, sweep: str, sweep_dir: Path) -> None:
        import wandb

        self.wandb, self.cfg, self.sweep = wandb, cfg, sweep
        self.dir = Path(cfg.dir) if cfg.dir else sweep_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.mode = cfg.mode or os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB_API_KEY") else "offline")

    def logged(self) -> set[str] | None:
        return None

    def _init(self, **kw: Any) -> Any:
        return self.wandb.init(
            project=self.cfg.project,
            entity=self.cfg.entity,
            group=self.sweep,
            dir=str(self.dir),
            mode=self.mode,
            reinit="create_new",
            settings=self.wandb.Settings(silent=True, console="off", disable_git=True, x_disable_stats=True),
            **kw,
        )

    def log_job(self, job: dict[str, Any], scores: dict[str, Any] | None, stats: dict[str, float]) -> None:
        run = self._init(
            name=job["job_id"],
            job_type=job["method"],
            tags=[str(job["benchmark"]), str(job["model"]), f"seed{job['seed']}"],
            config=job["config"],
        )
        metrics = dict((scores or {}).get("metrics", {}))
        metrics.update({f"tab/{k}": v for k, v in stats.items()})
        run.log(metrics)
        run.summary.update(metrics)
        items = (scores or {}).get("items", [])
        if items:
            cols = sorted({k for it in items for k in it})
            run.log({"items": self.wandb.Table(columns=cols, data=[[_cell(it.get(c)) for c in cols] for it in items])})
        run.finish()

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None:
        run = self._init(name=f"{self.sweep}-summary", job_type="summary")
        for name, (cols, rows) in tables.items():
            run.log({name: self.wandb.Table(columns=cols, data=[[_cell(v) for v in r] for r in rows])})
        for name, path in (images or {}).items():
            run.log({name: self.wandb.Image(str(path))})
        run.finish()


def _cell(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(v, default=str)


def build_tracker(cfg: TrackerConfig, sweep: str, sweep_dir: Path) -> Tracker:
    if cfg.kind == "wandb":
        return WandbTracker(cfg, sweep, sweep_dir)
    if cfg.kind == "jsonl":
        return JsonlTracker(sweep_dir)
    if cfg.kind == "none":
        return NoTracker()
    raise ValueError(f"unknown tracker kind {cfg.kind!r}; valid: wandb, jsonl, none")
