"""What the driver does with each finished job: complete its record, track it, store it, log it.

Tracking runs on the driver; the upload runs off its loop (runners/sweep/uploads.py) and the job's ledger
line is written once the upload is done, with its error if it failed. A job the driver never got
to log (killed first) is picked up by the next run's reconciliation (runners/sweep/reconcile.py).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runners.core.job_record import JobRecord, read_result
from runners.core.record_types import JobMeta, Result
from runners.job.resume import Reruns
from runners.sweep.ledger import Ledger
from runners.sweep.packing import Packer
from runners.sweep.scheduler import Outcome
from runners.sweep.uploads import Uploader
from runners.tracking.cells import tab_stats
from runners.tracking.tracker import Tracker

if TYPE_CHECKING:
    from eval.report.load import Job

log = logging.getLogger(__name__)
_ledger_lock = threading.Lock()


def book_job(outcome: Outcome, sweep_dir: Path, uploader: Uploader, tracker: Tracker, ledger: Ledger,
             packer: Packer | None = None, pack_as: str = "") -> Job | None:
    """Book one finished job; returns its record as read here (job.json, result, scores), for its
    pages (`LiveReport.finished`) to use rather than read again, or None when it left no result.
    With a `packer`, the record is packed (into the pack `pack_as`) once its ledger line is written."""
    spec = outcome.spec
    job_dir = sweep_dir / spec.job_id
    scores = outcome.scores
    result = read_result(job_dir)
    if outcome.status == "timeout" and spec.cfg.judge.name != "none" and result is not None:
        from runners.job.run import score

        scores = score(spec.cfg, job_dir)  # a stopped job is judged on what it left
    entry: dict[str, Any] = {
        "job_id": spec.job_id,
        "status": outcome.status,
        "attempts": outcome.attempts,
        "wall_s": round(outcome.wall_s, 3),
        "stop_reason": None if outcome.result is None else outcome.result.stop_reason,
        "error": outcome.error,
        "node": outcome.node,
    }
    if result is None:
        log_entry(ledger, entry)
        return None
    meta, scores = track(job_dir, tracker, scores)
    entry.update(record_fields(result), judge_key=(scores or {}).get("judge_key"))  # a resume then need not read the scores
    # an errored record with retries left is not a result: it stays local until a re-run succeeds
    upload = not Reruns.of(spec.cfg).again(result)
    then = then_pack(lambda error: log_entry(ledger, entry, error), packer if upload else None, spec.job_id, pack_as)  # one to run again stays a folder
    uploader.submit(job_dir, then, upload=upload)
    from eval.report.load import Job

    return Job(job_dir, meta, result, scores)


def record_fields(result: Result) -> dict[str, Any]:
    """What the ledger repeats from the result: which run of the record it logs, and its sandbox."""
    return {"record_attempt": result.attempt, "sandbox": result.sandbox}


def track(job_dir: Path, tracker: Tracker, scores: dict[str, Any] | None) -> tuple[JobMeta, dict[str, Any] | None]:
    """Log the job to the tracker; returns its job.json and the scores logged (`scores`, else the record's)."""
    record = JobRecord(job_dir)
    scores = record.scores if scores is None else scores
    tracker.log_job(record.meta, scores, tab_stats(record))
    return record.meta, scores


def then_pack(logged: Callable[[str | None], None], packer: Packer | None, job_id: str, name: str) -> Callable[[str | None], None]:
    """`logged` (the job's ledger line, after its upload), then the record handed to the packer."""
    if packer is None:
        return logged

    def both(error: str | None) -> None:
        logged(error)
        packer.submit(job_id, name)

    return both


def log_entry(ledger: Ledger, entry: dict[str, Any], upload_error: str | None = None) -> None:
    """Append the job's ledger line (from the driver or an upload thread)."""
    if upload_error:
        entry = {**entry, "upload_error": upload_error}
        log.warning("%s; the local record is kept and the upload is retried when the sweep is resumed", upload_error)
    with _ledger_lock:
        ledger.append(entry)
