"""Reading a sweep's job records (the source of truth) into plain objects the analyses share.

A job directory is a subdirectory of the sweep that holds `job.json`; each is read through the one
record reader (runners/core/job_record.py). Everything else is read lazily, so an analysis that needs only scores never parses trajectories. At 20,000 jobs the
loader holds only what every analysis needs (ids, axes, result, scores); identical configs (all
the tasks of a grid cell) are one shared dict, tabs are kept for the last `TAB_CACHE` jobs read,
and trajectories and evaluator views are read on each use.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from eval.judges.extract.session import deliverable_texts
from runners.core.harness_names import is_own_loop
from runners.core.job_record import JobRecord, linked_entries, record_ids, record_mtime
from runners.core.job_status import Planned, read_plan
from runners.core.record_files import (
    DELIVERABLE,
    EXTRACTED,
    SCORES,
    SHOWN,
    TAB,
    TRAJECTORY,
    VIEW,
    parse_json,
)
from runners.core.record_types import (
    JobMeta,
    RecordError,
    Result,
    Scores,
    tab_config_of,
)
from tab.config import SWITCHES as TAB_SWITCHES
from tab.shown import NAME as SHOWN_LOG

log = logging.getLogger(__name__)

# The order methods appear in tables (others follow alphabetically).
TAB_CACHE = 256  # tabs kept in memory: an analysis reads a job's tab several times in a row


@dataclass
class Job:
    """One job record. `result`/`scores` are None when the job did not finish or was not scored."""

    dir: Path
    meta: JobMeta  # job.json as the record reader gives it (its config shared with the jobs of its cell)
    result: Result | None
    scores: Scores | None
    _derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)  # see `derived`
    _held: dict[str, Any] | None = field(default=None, repr=False, compare=False)  # see `reading`
    # the record's documents found unreadable so far (name -> why): each is left out of what reads it
    unreadable: dict[str, str] = field(default_factory=dict, repr=False, compare=False)

    def document(self, name: str, read: Callable[[], Any], default: Any = None) -> Any:
        """What `read` returns, or `default` when the record's document `name` cannot be read (of
        another shape, torn, too deep): one broken document must not stop a reader, and the job
        names it (`unreadable`, the report's header notes), warned once."""
        try:
            return read()
        except RecordError as e:
            if name not in self.unreadable:
                log.warning("%s: %s; left out", self.dir.name, e)
            self.unreadable[name] = str(e)
            return default

    @property
    def job_id(self) -> str:
        return self.meta.job_id

    @property
    def benchmark(self) -> str:
        return self.meta.benchmark

    @property
    def task_id(self) -> str:
        return self.meta.task_id

    @property
    def harness(self) -> str:
        """Who ran the episode: `dci` (our own loop), `claude_code`, `codex` (docs/harnesses.md)."""
        return self.meta.harness

    @property
    def method(self) -> str:
        return self.meta.method

    @property
    def harness_method(self) -> str:
        """The method, after the harness that ran it when that is not our own loop (`codex · runningtab`)."""
        return self.method if is_own_loop(self.harness) else f"{self.harness} · {self.method}"

    @property
    def model(self) -> str:
        return self.meta.model

    @property
    def seed(self) -> int:
        return self.meta.seed

    @property
    def config(self) -> dict[str, Any]:
        return self.meta.config

    @contextmanager
    def reading(self) -> Iterator[Job]:
        """Within, the trajectory, the evaluator view and the deliverable are read once (one job's
        page reads each several times); outside, on every use, so 20,000 jobs never sit in memory."""
        self._held = {}
        try:
            yield self
        finally:
            self._held = None

    def held(self, key: str, read: Callable[[], Any]) -> Any:
        """`read()` once within `reading`, on every call outside it."""
        if self._held is None:
            return read()
        if key not in self._held:
            self._held[key] = read()
        return self._held[key]

    @property
    def tab(self) -> dict[str, Any] | None:
        """From a small cache of recently read tabs (all 20,000 would be hundreds of MB); within
        `reading`, looked up once (a page asks for it several times)."""
        return self.held("tab", lambda: self.document(TAB, lambda: _TABS.get(self.dir / TAB)))

    @property
    def shown(self) -> list[dict[str, Any]] | None:
        """The shown log's excerpts (`tab/shown.py`); None for a record written before it existed.
        Read on every use (but within `reading`): analyses keep what they derive from it."""

        def read() -> list[dict[str, Any]] | None:
            doc = self.document(SHOWN, lambda: JobRecord(self.dir).plugin(SHOWN_LOG))
            return None if doc is None else list(doc["excerpts"])

        return self.held("shown", read)

    @property
    def view(self) -> dict[str, Any]:
        """Read on every use (but within `reading`): trajectories run to megabytes."""
        return self.held("view", lambda: self.document(VIEW, lambda: JobRecord(self.dir).view, {}))

    @property
    def trajectory(self) -> list[dict[str, Any]]:
        """Read on every use (but within `reading`; see `view`)."""
        return self.held("trajectory", self._trajectory)

    def _trajectory(self) -> list[dict[str, Any]]:
        record = JobRecord(self.dir)
        messages = record.trajectory()
        if record.skipped_lines:
            self.unreadable[TRAJECTORY] = f"{len(record.skipped_lines)} line(s) skipped, e.g. {record.skipped_lines[0]}"
        return messages

    @property
    def chars_read(self) -> int | None:
        return None if self.result is None else self.result.chars_read

    @property
    def errored(self) -> bool:
        """An environment or model error after its retries: not a result, so tables leave it out of
        every mean."""
        return self.result is not None and self.result.errored

    @property
    def sandbox(self) -> str | None:
        """The sandbox the agent's shell ran in (`"bwrap"`, `"none"`: unsandboxed), None when unknown."""
        return None if self.result is None else self.result.sandbox

    @property
    def unsandboxed(self) -> bool:
        return self.sandbox == "none"

    def derived(self, key: str, compute: Callable[[], Any]) -> Any:
        """`compute()` once per job and build (the analyses and pages share it)."""
        if key not in self._derived:
            self._derived[key] = compute()
        return self._derived[key]

    @property
    def has_tab(self) -> bool:
        """The job wrote a readable tab (without reading it again once known)."""
        return bool(self.derived("has_tab", lambda: self.tab is not None))

    @property
    def tab_settings(self) -> dict[str, bool] | None:
        """The tab's four switches (None when the method has no tab)."""
        return self.derived("tab_settings", self._tab_settings)

    def _tab_settings(self) -> dict[str, bool] | None:
        tab = self.tab
        if tab is not None and "settings" in tab:
            return {k: bool(tab["settings"].get(k, True)) for k in TAB_SWITCHES}
        tab_cfg = tab_config_of(self.config)
        return None if tab_cfg is None else tab_cfg.settings()

    @property
    def is_ablation(self) -> bool:
        settings = self.tab_settings
        return settings is not None and not all(settings.values())

    def deliverable_texts(self) -> list[str]:
        """Each deliverable file's text as the judges read it (never parsed here: eval/judges/extract/session.py)."""
        return self.held("deliverable_texts", lambda: self.document(EXTRACTED, lambda: deliverable_texts(JobRecord(self.dir)), []))

    def deliverable_files(self) -> list[Path]:
        def read() -> list[Path]:
            return [self.dir / DELIVERABLE / rel for rel in JobRecord(self.dir).deliverable_files()]  # named, never unpacked

        return self.held("deliverable", read)


@dataclass
class Sweep:
    dir: Path
    jobs: list[Job]
    broken: dict[str, str] = field(default_factory=dict)  # job dirs skipped (job.json or result.json unreadable) -> why
    baseline: str = "dci"  # what every comparison is against (the sweep's `report.baseline`)
    treatment: str = "runningtab"  # the method whose ablations Table 4 compares (`report.treatment`)

    @property
    def name(self) -> str:
        return self.dir.name

    @property
    def notes(self) -> list[str]:
        """`header_notes`: the records' (worked out once) and the documents found unreadable so far."""
        unreadable = self.unreadable()
        shown = "; ".join(unreadable[:10]) + (f"; and {len(unreadable) - 10} more" if len(unreadable) > 10 else "")
        return self._record_notes + ([f"Unreadable record documents (each left out of what reads it, the rest of its job "
                                      f"used): {shown}"] if unreadable else [])

    @cached_property
    def _record_notes(self) -> list[str]:
        return _notes(self)

    @cached_property
    def planned(self) -> list[Planned]:
        """The jobs the sweep's last driver planned (`plan.jsonl`; empty for a sweep from before it)."""
        return read_plan(self.dir)

    def unreadable(self) -> list[str]:
        """`<job id>: <document> (why)` for each document of a kept job found unreadable so far (the
        documents read on use: the tab, the shown log, the trajectory, the evaluator view,
        extracted.json; and scores.json, which leaves its job unscored)."""
        return [f"{j.job_id}: {name} ({why})" for j in self.jobs for name, why in j.unreadable.items()]

    def scored(self) -> list[Job]:
        """Jobs that are results: scored, and not errored (an errored record is retried, not a result)."""
        return [j for j in self.jobs if j.scores is not None and not j.errored]

    def select(self, jobs: Iterable[Job] | None = None, **where: Any) -> list[Job]:
        """Jobs whose attributes equal every given value (`method="dci"`, `model=...`)."""
        pool = self.jobs if jobs is None else jobs
        return [j for j in pool if all(getattr(j, k) == v for k, v in where.items())]

    def failed_attempts(self) -> dict[str, str]:
        """Jobs whose latest ledger entry (`jobs.jsonl`) is not ok, with its status and error."""
        path = self.dir / "jobs.jsonl"
        latest: dict[str, tuple[Any, Any]] = {}  # (status, why) only: the ledger is read line by line
        if path.is_file():
            with open(path, encoding="utf-8", errors="replace") as f:  # a line that is not UTF-8 is not JSON either: skipped
                for line in f:
                    try:
                        entry = parse_json(line)
                        latest[str(entry["job_id"])] = (entry.get("status"), entry.get("error") or entry.get("stop_reason"))
                    except (ValueError, KeyError, TypeError, AttributeError):
                        continue
        return {j: f"{status}: {why}" for j, (status, why) in latest.items() if status != "ok"}

    def job(self, job_id: str) -> Job:
        for j in self.jobs:
            if j.job_id == job_id:
                return j
        known = ", ".join(j.job_id for j in self.jobs[:10])
        raise KeyError(f"no job {job_id!r} in {self.dir}; some of its jobs: {known}")


def shared_config(configs: dict[str, dict[str, Any]], config: dict[str, Any]) -> dict[str, Any]:
    """The one dict of every job with this config (read-only: analyses only read it)."""
    key = json.dumps(config, default=str)
    return configs.setdefault(key, dict(config))


class _TabCache:
    """The last `TAB_CACHE` tabs read, by path; a tab rewritten since (re-scoring) is read again. A
    tab that cannot be read is kept as its RecordError, raised again on each hit."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._tabs: OrderedDict[Path, tuple[float | None, Any]] = OrderedDict()

    def get(self, path: Path) -> dict[str, Any] | None:
        written = record_mtime(path.parent, path.name)  # its record's folder or pack
        stamp: float | None = written
        hit = self._tabs.get(path)
        if hit is not None and hit[0] == stamp:
            self._tabs.move_to_end(path)
            tab = hit[1]
        else:
            try:
                tab = JobRecord(path.parent).plugin(path.stem) if stamp is not None else None
            except RecordError as e:
                tab = e
            self._tabs[path] = (stamp, tab)
            while len(self._tabs) > self.size:
                self._tabs.popitem(last=False)
        if isinstance(tab, RecordError):
            raise tab
        return tab


_TABS = _TabCache(TAB_CACHE)


def header_notes(sweep: Sweep) -> list[str]:
    """What the reader should know before the tables: records that could not be used (worked out
    once per sweep: the Markdown report and the index both show them, and they read the ledger)."""
    return sweep.notes


def _notes(sweep: Sweep) -> list[str]:
    notes = []
    if sweep.broken:
        shown = "; ".join(f"{d} ({why})" for d, why in list(sweep.broken.items())[:10])
        notes.append(f"{len(sweep.broken)} unreadable job record(s), skipped: {shown}")
    unfinished = [j.job_id for j in sweep.jobs if j.result is None]
    if unfinished:
        notes.append(f"{len(unfinished)} job(s) without result.json (unfinished): {', '.join(unfinished[:10])}")
    errored = [j.job_id for j in sweep.jobs if j.errored]
    if errored:
        notes.append(f"{len(errored)} errored job(s) (env_error/model_error; not results, left out of every analysis;"
                     f" a re-run retries them): {', '.join(errored[:10])}")
    failed = sweep.failed_attempts()
    if failed:
        shown = "; ".join(f"{j} ({why})" for j, why in list(failed.items())[:10])
        notes.append(f"{len(failed)} job(s) whose last attempt failed (jobs.jsonl): {shown}")
    return notes


def roles(sweep_dir: Path, baseline: str | None, treatment: str | None) -> tuple[str, str]:
    """The baseline and treatment: given, else the sweep's `report:` settings (sweep.yaml), else DCI
    and RunningTab."""
    saved: Any = {}
    try:
        import yaml

        saved = (yaml.safe_load((sweep_dir / "sweep.yaml").read_text()) or {}).get("report")
    except (OSError, ValueError, AttributeError, ImportError, RecursionError):
        pass
    saved = {k: v for k, v in saved.items() if isinstance(v, str) and v} if isinstance(saved, dict) else {}
    return baseline or saved.get("baseline") or "dci", treatment or saved.get("treatment") or "runningtab"


def load_sweep(sweep_dir: Path, baseline: str | None = None, treatment: str | None = None) -> Sweep:
    """Every job record of a sweep directory, sorted by job id."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise FileNotFoundError(f"sweep directory {sweep_dir} does not exist (give outputs/<sweep>)")
    jobs, broken = [], {}
    configs: dict[str, dict[str, Any]] = {}  # one dict per distinct config, shared by its jobs
    for d in job_dirs(sweep_dir):
        try:
            jobs.append(read_job(d, configs))
        except RecordError as e:
            log.warning("%s: %s; skipped", d.name, e)
            broken[d.name] = str(e)
    return Sweep(sweep_dir, jobs, broken, *roles(sweep_dir, baseline, treatment))


def job_dirs(sweep_dir: Path) -> list[Path]:
    """The sweep's job records (folders and packed ones: `record_ids`), and the links in its folder
    (never followed: `JobRecord` refuses them, so they are named as broken), sorted by name."""
    return [Path(sweep_dir) / j for j in sorted({*record_ids(Path(sweep_dir)), *linked_entries(Path(sweep_dir))})]


def read_job(d: Path, configs: dict[str, dict[str, Any]]) -> Job:
    """One job from its record; RecordError when its job.json or result.json cannot be read (what
    ran and how it ended: without either there is no job to count). scores.json that cannot be read
    leaves the job unscored, and named. `configs` collects the one shared dict of each distinct config."""
    record = JobRecord(d)
    meta = record.meta
    job = Job(d, dataclasses.replace(meta, config=shared_config(configs, meta.config)), record.result if record.finished else None, None)
    job.scores = job.document(SCORES, lambda: record.scores)
    return job
