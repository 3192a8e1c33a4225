"""W&B at sweep scale: one run per grid cell and one summary run per sweep, logged off the driver's loop.

One run per job meant ~10,600 runs for the paper's main grid (W&B suggests about 10,000 per project)
and ~0.2 s of driver time each. Here `log_job` only files the job under its cell (microseconds);
when the cell's last job has finished, a background thread reads the cell's records and writes its
run: a per-task table, a table per kind of scored item, the cell's metrics in its summary and the
axes and ablation switches as config keys. Cells still incomplete when the sweep ends are written
by `flush()`, marked `partial`; a later run that completes one rewrites it under the same run id.

`<sweep>/wandb/logged.jsonl` (append-only) says which cells were logged with which jobs, and the
digest of the last summary: resume asks it which jobs are already in W&B (`logged()`), a re-run of
a finished sweep logs no cell again and no second summary run. A driver killed while a run is being
written leaves no line for it, so the next run writes that cell again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import secrets
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runners.config.runner import TrackerConfig
from runners.core.harness_names import is_own_loop
from runners.core.job_record import JobRecord
from runners.core.record_types import JobMeta
from runners.tracking.cells import (
    Cell,
    cell_config,
    cell_summary,
    cell_value,
    item_tables,
    read_row,
    task_table,
)

if TYPE_CHECKING:
    from runners.job.identity import JobSpec

log = logging.getLogger(__name__)
LOGGED = "logged.jsonl"
Tables = dict[str, tuple[list[str], list[list[Any]]]]


@dataclass
class Logged:
    """A cell as last written to W&B."""

    run_id: str
    jobs: frozenset[str]
    partial: bool


@dataclass
class _Given:
    """What the driver passed for a job (its record is read by the worker)."""

    scores: dict[str, Any] | None
    stats: dict[str, float]


class LoggedCells:
    """`logged.jsonl`: the sweep's W&B id seed, each cell's last logged job set, the summary's digest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.uid: str | None = None
        self.cells: dict[str, Logged] = {}
        self.summary: str | None = None
        self._offset = 0
        self.refresh()
        if self.uid is None:
            self._append({"kind": "sweep", "uid": secrets.token_hex(4)})

    def refresh(self) -> None:
        """Read the lines appended since the last read (by this driver or by another one writing the
        same sweep, e.g. Slurm array tasks)."""
        if not self.path.is_file():
            return
        with open(self.path, "rb") as f:
            f.seek(self._offset)
            data = f.read()
        end = data.rfind(b"\n") + 1  # a line cut short by a kill is left for now
        self._offset += end
        for line in data[:end].decode("utf-8", "replace").splitlines():
            try:
                self._apply(json.loads(line))
            except (json.JSONDecodeError, KeyError, TypeError):
                continue

    def _apply(self, obj: dict[str, Any]) -> None:
        if obj["kind"] == "sweep" and self.uid is None:
            self.uid = str(obj["uid"])
        elif obj["kind"] == "cell":
            self.cells[obj["cell"]] = Logged(obj["run_id"], frozenset(obj["jobs"]), bool(obj["partial"]))
        elif obj["kind"] == "summary":
            self.summary = obj["digest"]

    def _append(self, obj: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps(obj) + "\n")
        self.refresh()

    def run_id(self, name: str) -> str:
        """Stable for this sweep directory (a re-run updates the same W&B run), distinct across directories."""
        return hashlib.sha256(f"{self.uid}/{name}".encode()).hexdigest()[:16]

    def log_cell(self, name: str, jobs: set[str], partial: bool) -> None:
        self._append({"kind": "cell", "cell": name, "run_id": self.run_id(name), "jobs": sorted(jobs), "partial": partial})

    def log_summary(self, digest: str) -> None:
        self._append({"kind": "summary", "run_id": self.run_id("summary"), "digest": digest})


class WandbTracker:
    """One W&B run per grid cell and one summary run per sweep, under `<dir>/wandb/`.

    `plan` maps each job id of the sweep to its cell; without it (e.g. `eval.report`) a cell is
    written only by `flush()`."""

    def __init__(self, cfg: TrackerConfig, sweep: str, sweep_dir: Path, plan: dict[str, Cell] | None = None) -> None:
        import wandb

        self.wandb, self.cfg, self.sweep, self.sweep_dir = wandb, cfg, sweep, sweep_dir
        self.dir = Path(cfg.dir) if cfg.dir else sweep_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.mode = cfg.mode or os.environ.get("WANDB_MODE") or ("online" if os.environ.get("WANDB_API_KEY") else "offline")
        self.logged_cells = LoggedCells(sweep_dir / "wandb" / LOGGED)
        self.plan = plan
        self.expected: dict[Cell, set[str]] = {}
        for job_id, cell in (plan or {}).items():
            self.expected.setdefault(cell, set()).add(job_id)
        self._lock = threading.Lock()
        self._pending: dict[Cell, dict[str, _Given]] = {}  # finished this run, not yet in a written run
        self._configs: dict[Cell, dict[str, Any]] = {}
        self._waiting: dict[Cell, set[str]] = {}  # see `_waiting_for`
        self._queue: queue.Queue[Callable[[], None]] = queue.Queue()
        self._worker: threading.Thread | None = None
        self._spend_run: Any = None  # `<sweep>-spend`, open while the sweep runs (worker thread only)
        self._submitting = threading.Lock()

    # ---------------------------------------------------------------- the driver's side
    def logged(self) -> set[str] | None:
        """Jobs already in a written cell run (resume tracks the others again)."""
        with self._lock:
            return {j for c in self.logged_cells.cells.values() for j in c.jobs}

    def log_job(self, job: JobMeta, scores: dict[str, Any] | None, stats: dict[str, float]) -> None:
        """File the job under its cell; queue the cell's run once all its jobs have finished."""
        job_id = job.job_id
        cell = (self.plan or {}).get(job_id) or Cell.of_job(job)
        with self._lock:
            self._configs.setdefault(cell, job.config)
            self._pending.setdefault(cell, {})[job_id] = _Given(scores, stats)
            ready = cell in self.expected and not self._waiting_for(cell, job_id)
        if ready:
            self._submit(lambda: self._write_cell(cell))

    def flush(self) -> None:
        """Write every cell with jobs not yet in a run (incomplete ones marked partial); wait for all."""
        with self._lock:
            cells = [c for c, jobs in self._pending.items() if jobs]
        for cell in cells:
            self._submit(lambda c=cell: self._write_cell(c))
        self._submit(self._close_spend)
        self._queue.join()

    def log_spend(self, doc: dict[str, Any]) -> None:
        """One step of the run `<sweep>-spend`: spent and expected at completion, in total and per cell
        (`spend/<cell>`, `expected/<cell>`), while the sweep runs."""
        metrics = {"spend/total": doc["spent"], "expected/total": doc["expected"]}
        for cell, v in doc["cells"].items():
            metrics[f"spend/{cell}"], metrics[f"expected/{cell}"] = v["spent"], v["expected"]
        self._submit(lambda: self._write_spend(metrics))

    def wait(self) -> None:
        """Wait until every queued run is written (cells still incomplete stay buffered)."""
        self._queue.join()

    def log_summary(self, tables: Tables, images: dict[str, Path] | None = None) -> None:
        """The sweep's summary run (tables and figures), unless the same tables were logged already;
        waits until it is written (it runs once, after the sweep)."""
        rows = {k: (c, [[cell_value(v) for v in r] for r in rs]) for k, (c, rs) in tables.items()}
        digest = hashlib.sha256(json.dumps([sorted(rows.items()), sorted(images or {})], default=str).encode()).hexdigest()
        if digest != self.logged_cells.summary:
            self._submit(lambda: self._write_summary(rows, images or {}, digest))
        self._queue.join()

    def closing_line(self) -> str | None:
        """The sweep's last word on W&B: its runs, their folder, and `wandb sync` when offline."""
        from runners.tracking.wandb_line import closing_line

        with self._lock:
            self.logged_cells.refresh()
            kinds = {c.run_id: "cell" for c in self.logged_cells.cells.values()}
            kinds |= {self.logged_cells.run_id(k): k for k in ("summary", "spend")}
        return closing_line(self.dir / "wandb", self.mode, self.cfg.project, self.cfg.entity, kinds)

    def _waiting_for(self, cell: Cell, job_id: str) -> set[str]:
        """The cell's jobs neither finished in this run nor in a written run, `job_id` just finished:
        worked out once per cell, then one job off at each `log_job` (a cell of 20,000 jobs would
        otherwise gather its finished ones into a new set at every job's end, O(n²))."""
        waiting = self._waiting.get(cell)
        if waiting is None:
            logged = self.logged_cells.cells.get(cell.name)
            waiting = self._waiting[cell] = self.expected[cell] - set(self._pending.get(cell, {})) - (logged.jobs if logged else set())
        waiting.discard(job_id)
        return waiting

    def _submit(self, fn: Callable[[], None]) -> None:
        with self._submitting:  # the driver and the spend watch both submit: one worker
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="wandb-tracker", daemon=True)
                self._worker.start()
        self._queue.put(fn)

    # ---------------------------------------------------------------- the worker thread
    def _work(self) -> None:
        while True:
            fn = self._queue.get()
            try:
                fn()
            except Exception:  # W&B must never cost a sweep; the cell is written again by a later run
                log.exception("W&B logging failed")
            finally:
                self._queue.task_done()

    def _write_cell(self, cell: Cell) -> None:
        with self._lock:
            self.logged_cells.refresh()
            given = dict(self._pending.get(cell, {}))
            before = self.logged_cells.cells.get(cell.name)
            config = self._configs.get(cell)
        if not given and before is not None:
            return  # queued twice; the first write took every job
        rows = []
        for job_id in sorted(set(given) | (set(before.jobs) if before else set())):
            g = given.get(job_id)
            row = read_row(self.sweep_dir / job_id, g.scores if g else None, g.stats if g else None)
            if row is not None:
                rows.append(row)
        if not rows:
            return
        if config is None:
            config = JobRecord(self.sweep_dir / rows[0].job_id).meta.config
        expected = self.expected.get(cell)
        summary = cell_summary(rows, len(expected) if expected is not None else None)
        group, tags = cell.method, [cell.benchmark, cell.model, f"seed{cell.seed}", cell.method]
        if not is_own_loop(cell.harness):  # a production harness's runs: grouped and tagged apart from our own loop's
            group, tags = f"{cell.harness}/{cell.method}", [*tags, cell.harness]
        run = self._init(self.logged_cells.run_id(cell.name), cell.name, group, tags,
                         cell_config(cell, config, self.sweep, summary["partial"]))
        with _finishing(run):
            columns, data = task_table(rows)
            logged: dict[str, Any] = {"tasks": self.wandb.Table(columns=columns, data=data)}
            for name, (cols, items) in item_tables(rows).items():
                logged[name] = self.wandb.Table(columns=cols, data=items)
            run.log(logged)
            run.summary.update(summary)
        with self._lock:
            for job_id, g in given.items():
                if self._pending[cell].get(job_id) is g:  # not replaced by a newer record meanwhile
                    del self._pending[cell][job_id]
            self.logged_cells.log_cell(cell.name, {r.job_id for r in rows}, summary["partial"])

    def _write_spend(self, metrics: dict[str, float]) -> None:
        if self._spend_run is None:
            self._spend_run = self._init(self.logged_cells.run_id("spend"), f"{self.sweep}-spend", "spend", ["spend"], {"sweep": self.sweep})
        self._spend_run.log(metrics)

    def _close_spend(self) -> None:
        run, self._spend_run = self._spend_run, None
        if run is not None:
            run.finish()

    def _write_summary(self, tables: Tables, images: dict[str, Path], digest: str) -> None:
        run = self._init(self.logged_cells.run_id("summary"), f"{self.sweep}-summary", "summary", ["summary"], {"sweep": self.sweep})
        with _finishing(run):
            for name, (cols, rows) in tables.items():
                run.log({name: self.wandb.Table(columns=cols, data=rows)})
            for name, path in images.items():
                run.log({name: self.wandb.Image(str(path))})
        with self._lock:
            self.logged_cells.log_summary(digest)

    def _init(self, run_id: str, name: str, job_type: str, tags: list[str], config: dict[str, Any]) -> Any:
        return self.wandb.init(
            project=self.cfg.project,
            entity=self.cfg.entity,
            group=self.sweep,
            dir=str(self.dir),
            mode=self.mode,
            id=run_id,
            name=name,
            job_type=job_type,
            tags=tags,
            config=config,
            reinit="create_new",
            **({"resume": "allow"} if self.mode == "online" else {}),
            settings=self.wandb.Settings(silent=True, console="off", disable_git=True, x_disable_stats=True),
        )


@contextmanager
def _finishing(run: Any) -> Iterator[None]:
    """Finish the run even when logging into it failed (marked failed; a later run rewrites it)."""
    try:
        yield
    except BaseException:
        run.finish(exit_code=1)
        raise
    run.finish()


def from_config(cfg: TrackerConfig, sweep: str, sweep_dir: Path, specs: Iterable[JobSpec]) -> WandbTracker:
    """The registered `wandb` tracker: one run per grid cell of `specs`."""
    plan = {s.job_id: Cell.of_config(s.cfg) for s in specs}
    return WandbTracker(cfg, sweep, sweep_dir, plan or None)
