"""What the driver does with each finished job: complete its record, store it, track it, log it."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from runners.ledger import Ledger
from runners.record import RESULT, SCORES, read_json
from runners.scheduler import Outcome
from runners.storage import Storage
from runners.tracking import Tracker

log = logging.getLogger(__name__)


def finish_job(outcome: Outcome, sweep_dir: Path, storage: Storage, tracker: Tracker, ledger: Ledger) -> None:
    spec = outcome.spec
    job_dir = sweep_dir / spec.job_id
    scores = outcome.scores
    if outcome.status == "timeout" and spec.cfg.judge.name != "none" and (job_dir / RESULT).exists():
        from runners.run import score

        scores = score(spec.cfg, job_dir)  # a stopped job is judged on what it left
    entry: dict[str, Any] = {
        "job_id": spec.job_id,
        "status": outcome.status,
        "attempts": outcome.attempts,
        "wall_s": round(outcome.wall_s, 3),
        "stop_reason": (outcome.result or {}).get("stop_reason"),
        "error": outcome.error,
    }
    if (job_dir / RESULT).exists():
        upload_error = storage.upload(sweep_dir.name, job_dir)
        if upload_error:
            entry["upload_error"] = upload_error
            log.warning("%s; the local record is kept", upload_error)
        job = read_json(job_dir / "job.json")
        if scores is None and (job_dir / SCORES).exists():
            scores = read_json(job_dir / SCORES)
        tracker.log_job(job, scores, tab_stats(job_dir))
    ledger.append(entry)


def tab_stats(job_dir: Path) -> dict[str, float]:
    """Table 3's per-job numbers from `tab.json` (empty when the job had no tab)."""
    from tab.stats import tab_summary

    path = job_dir / "tab.json"
    if not path.exists():
        return {}
    return {k: v for k, v in tab_summary(read_json(path)).items() if v is not None}
