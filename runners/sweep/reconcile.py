"""A sweep's start: bring the ledger, the tracker and the bucket up to date with the local records.

A driver killed mid-sweep leaves jobs whose record is complete on disk (their actor finished after
the kill, or their upload never ran or failed) but which never reached `jobs.jsonl`, the tracker
or the bucket. Resume skips complete records, so without this they would be missing forever.
Each locally complete job is checked against all three and logged, tracked or uploaded now; its
ledger line then says `"reconciled": true`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from runners.core.job_record import read_result
from runners.job.identity import JobSpec
from runners.job.resume import ledger_vouches
from runners.sweep.bookkeeping import log_entry, record_fields, then_pack, track
from runners.sweep.ledger import RECORD_STATUSES, Ledger
from runners.sweep.packing import Packer
from runners.sweep.uploads import Uploader
from runners.tracking.tracker import Tracker

log = logging.getLogger(__name__)


def reconcile(
    complete: list[JobSpec], sweep_dir: Path, stored: set[str] | None, uploader: Uploader, tracker: Tracker, ledger: Ledger,
    packer: Packer | None = None, pack_as: Callable[[JobSpec], str] | None = None,
) -> dict[str, int]:
    """Log, track and upload what each complete job lacks; `stored` None: the bucket is unknown
    (unreachable), so uploads wait for a later run. Returns how many jobs needed each. With a
    `packer`, each record reconciled is packed (into `pack_as(spec)`) once its ledger line is written."""
    logged = _ledger_records(ledger)
    latest = ledger.records()
    tracked = tracker.logged()
    counts = {"ledger": 0, "tracker": 0, "bucket": 0}
    for spec in complete:
        job_dir = sweep_dir / spec.job_id
        upload = uploader.storage.remote and stored is not None and spec.job_id not in stored
        if not upload and (tracked is None or spec.job_id in tracked) and ledger_vouches(job_dir, latest.get(spec.job_id)):
            continue  # logged, tracked and stored: the record need not be read (a 20,000-job resume reads none)
        result = read_result(job_dir)
        if result is None:  # complete in the bucket only: nothing here to reconcile
            continue
        fields = record_fields(result)
        in_ledger = (spec.job_id, fields["record_attempt"]) in logged
        if not (spec.job_id in tracked if tracked is not None else in_ledger):
            track(job_dir, tracker, None)
            counts["tracker"] += 1
        if in_ledger and not upload:
            continue
        counts["ledger"] += not in_ledger
        counts["bucket"] += upload
        entry = {"job_id": spec.job_id, "status": "error" if result.errored else "ok",
                 "stop_reason": result.stop_reason, "error": result.error, "reconciled": True, **fields}
        then = then_pack(lambda error, e=entry: log_entry(ledger, e, error), packer, spec.job_id, pack_as(spec) if packer and pack_as else "")
        uploader.submit(job_dir, then, upload=upload)
    if any(counts.values()):
        log.warning("reconciled complete records missing from the ledger (%d), tracker (%d), bucket (%d)",
                    counts["ledger"], counts["tracker"], counts["bucket"])
    return counts


def _ledger_records(ledger: Ledger) -> set[tuple[str, int]]:
    """(job id, record attempt) of every record the ledger logged."""
    return {(e["job_id"], e["record_attempt"]) for e in ledger.iter_entries() if e.get("status") in RECORD_STATUSES}
