"""`python -m eval.export atif`: each finished job as a Harbor trial directory (harbor_files.py), its
trajectory as ATIF (atif.py), its rewards and scores as our exported verifier writes them, its record
beside them: the same layout a Harbor run of an exported task leaves, so `python -m eval.import atif`
reads both, and `harbor view` can browse ours.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from envs.deliverable import copy_tree
from eval.harbor import harbor_files as hf
from eval.harbor.atif import AGENT_NAME, iso, to_atif
from eval.harbor.rewards import rewards
from eval.judges.scoring import find_jobs
from runners.core.job_record import JobRecord
from runners.core.record_files import TRAJECTORY, write_json

log = logging.getLogger(__name__)


def trial_result(record: JobRecord, reward: dict[str, float] | None, trial_dir: Path) -> dict[str, Any]:
    """Harbor's TrialResult for a job of ours (validated by Harbor's model in tests/test_harbor_atif.py)."""
    meta, res = record.meta, record.result
    model = str(meta.model)
    times = [m.get("time") for m in record.trajectory() if isinstance(m.get("time"), int | float)]
    return {
        "schema_version": 1, "task_name": f"runningtab/{meta.benchmark}-{meta.task_id}", "trial_name": meta.job_id,
        "trial_uri": trial_dir.resolve().as_uri(), "task_id": {"path": f"{meta.benchmark}/{meta.task_id}"},
        "source": meta.benchmark, "task_checksum": hashlib.sha256(f"{meta.benchmark}/{meta.task_id}".encode()).hexdigest()[:16],
        "config": {"task": {"path": f"{meta.benchmark}/{meta.task_id}"}, "trial_name": meta.job_id,
                   "agent": {"name": AGENT_NAME, "model_name": model}},
        "agent_info": {"name": AGENT_NAME, "version": "1", "model_info": {"name": model}},
        "agent_result": {"n_input_tokens": res.tokens_in, "n_output_tokens": res.tokens_out, "cost_usd": res.cost,
                         "metadata": {"runningtab": {"method": meta.method, "seed": meta.seed, "stop_reason": res.stop_reason}}},
        "verifier_result": {"rewards": reward} if reward else None,
        "started_at": iso(min(times)) if times else None, "finished_at": iso(max(times)) if times else None,
    }


def export_job(job_dir: Path, out: Path) -> Path:
    """One finished job as the trial directory `out/<job_id>`; returns it."""
    record = JobRecord(job_dir)
    meta = record.meta
    trial = out / meta.job_id
    (trial / "agent").mkdir(parents=True, exist_ok=True)
    doc = to_atif(record.trajectory(), {**meta.to_json(), "config": None}, record.plugin("tab"), str(meta.model))
    write_json(trial / hf.TRAJECTORY, doc)
    copy_tree(record.dir, trial / hf.RECORD, hf.RECORD_MAX_FILES, hf.RECORD_MAX_BYTES, keep=lambda rel: rel != TRAJECTORY)
    reward = None
    if record.scores is not None:
        reward = rewards(dict(record.scores))
        write_json(trial / hf.SCORES, dict(record.scores))
        write_json(trial / hf.REWARD, reward)
    write_json(trial / hf.TRIAL_RESULT, trial_result(record, reward, trial))
    return trial


def export_jobs(paths: list[Path], out: Path) -> tuple[int, int]:
    """Every finished job at or below `paths`; returns (exported, unfinished left out)."""
    jobs = find_jobs(paths)
    if not jobs:
        raise ValueError(f"no job directories (with job.json) at or below {', '.join(map(str, paths))}")
    done = skipped = 0
    for job in jobs:
        if not JobRecord(job).finished:
            skipped += 1
            continue
        export_job(job, out)
        done += 1
    return done, skipped
