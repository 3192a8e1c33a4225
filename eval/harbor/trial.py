"""`python -m eval.export atif`: each finished job as a Harbor trial directory (harbor_files.py), its
trajectory as ATIF (atif.py), its rewards and scores as our exported verifier writes them, its record
beside them: the same layout a Harbor run of an exported task leaves, so `python -m eval.import atif`
reads both, and `harbor view` can browse ours.

A record's job id names the trial folder only when it has the project's form (runners/core/job_ids.py):
an id edited into `job.json` (`../x`, an absolute path) is refused, and every write stays inside
`--out`. A trial is built in a temporary folder inside `--out` and renamed into place whole; the
deliverable goes under `verifier/runningtab/deliverable/`, so whatever it holds (a `task.toml`, a
`result.json`, `agent/trajectory.json`) never stands in for the trial's own files.
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
from eval.harbor.whole import whole_folder
from eval.score.records import find_jobs
from runners.core.job_ids import check_job_id
from runners.core.job_record import JobRecord
from runners.core.record_files import TRAJECTORY, write_json
from runners.core.record_types import RecordError

log = logging.getLogger(__name__)


def trial_result(record: JobRecord, reward: dict[str, float] | None, trial_dir: Path) -> dict[str, Any]:
    """Harbor's TrialResult for a job of ours (validated by Harbor's model in tests/eval/harbor/test_atif.py)."""
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
    """One finished job as the trial directory `out/<job_id>` (ValueError: an id not of our form); returns it."""
    record = JobRecord(job_dir)
    meta = record.meta
    trial = out / check_job_id(meta.job_id, f"{job_dir}/job.json job_id")
    with whole_folder(trial) as tmp:
        (tmp / "agent").mkdir()
        doc = to_atif(record.trajectory(), {**meta.to_json(), "config": None}, record.plugin("tab"), str(meta.model))
        write_json(tmp / hf.TRAJECTORY, doc)
        copy_tree(record.dir, tmp / hf.RECORD, hf.RECORD_MAX_FILES, hf.RECORD_MAX_BYTES, keep=lambda rel: rel != TRAJECTORY)
        reward = None
        if record.scores is not None:
            reward = rewards(dict(record.scores))
            write_json(tmp / hf.SCORES, dict(record.scores))
            write_json(tmp / hf.REWARD, reward)
        write_json(tmp / hf.TRIAL_RESULT, trial_result(record, reward, trial))
    return trial


def export_jobs(paths: list[Path], out: Path) -> tuple[int, int, list[str]]:
    """Every finished job at or below `paths`; returns (exported, unfinished left out, refused with why)."""
    jobs = find_jobs(paths)
    if not jobs:
        raise ValueError(f"no job directories (with job.json) at or below {', '.join(map(str, paths))}")
    done = skipped = 0
    refused = []
    for job in jobs:
        if not JobRecord(job).finished:
            skipped += 1
            continue
        try:
            export_job(job, out)
        except (RecordError, ValueError, OSError) as e:
            refused.append(f"{job}: {e}")
            continue
        done += 1
    return done, skipped, refused
