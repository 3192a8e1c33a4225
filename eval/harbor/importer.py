"""`python -m eval.import atif DIR...`: Harbor trial directories (a `harbor run`'s jobs folder, or what
`python -m eval.export atif` wrote) back into our job records, so that `eval.report`, the paired
statistics and the viewer work on Harbor runs.

A trial of an exported task carries our verifier's record of it (`verifier/runningtab/`: job.json,
result.json, scores.json, deliverable/, tab.json); the import adds the trajectory (ATIF, atif.py)
and the trial's identity from Harbor's `result.json`: the model is `<agent>:<model>` (e.g.
`claude-code:anthropic/claude-sonnet-4-5`), the seed is the attempt's rank among the trials of the
same task, arm, agent and model (by start time), tokens and cost are the agent's. A record written
by `eval.export atif` keeps its own ids. An agent that timed out is a result (`time_limit`); any
other trial error makes the record errored (`env_error`: not a result, as in our sweeps). A trial
without our record (a task we did not export, or a verifier that never wrote it) is listed and left out.

Every file of a trial came through the agent's container and is read bounded, regular files only.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.deliverable import copy_tree
from envs.safeio import read_regular
from eval.harbor import harbor_files as hf
from eval.harbor.atif import messages
from eval.harbor.verify import SANDBOX
from runners.core.job_record import (
    JobRecord,
    Trajectory,
    write_meta,
    write_result,
    write_scores,
)
from runners.core.record_files import JOB, RESULT, SCORES, TRAJECTORY
from runners.core.record_types import JobMeta, Result

log = logging.getLogger(__name__)
MAX_JSON_BYTES = 256_000_000  # a trajectory of a long run
PLACEHOLDER = "harbor-trial"  # the job id our verifier writes: the import gives the real one


@dataclass
class Trial:
    dir: Path
    result: dict[str, Any]

    @property
    def started(self) -> str:
        return str(self.result.get("started_at") or "")

    @property
    def model(self) -> str:
        cfg_agent = (self.result.get("config") or {}).get("agent") or {}
        info = self.result.get("agent_info") or {}
        agent = cfg_agent.get("name") or info.get("name") or "agent"
        model = cfg_agent.get("model_name") or (info.get("model_info") or {}).get("name") or ""
        return f"{agent}:{model}" if model else str(agent)


def _json(root: Path, rel: str) -> Any:
    """A JSON document of a trial, or None when it is missing, not a regular file, too big or broken."""
    try:
        data = read_regular(root, rel, limit=MAX_JSON_BYTES)
        return None if data is None else json.loads(data)
    except (OSError, ValueError) as e:
        log.warning("%s/%s not read: %s", root, rel, e)
        return None


def find_trials(paths: list[Path]) -> list[Trial]:
    """Trial directories at or below `paths` (up to three levels: jobs/<job>/<trial>)."""
    found: dict[Path, Trial] = {}
    for root in paths:
        candidates = [root, *[p for depth in ("*", "*/*", "*/*/*") for p in sorted(root.glob(depth)) if p.is_dir()]]
        for d in candidates:
            doc = _json(d, hf.TRIAL_RESULT) if (d / hf.TRIAL_RESULT).is_file() else None
            if isinstance(doc, dict) and "trial_name" in doc and d not in found:
                found[d] = Trial(d, doc)
    return list(found.values())


def _stop(trial: Trial) -> tuple[str, str | None]:
    exc = trial.result.get("exception_info") or {}
    kind = exc.get("exception_type")
    if not kind:
        return "finished", None
    message = f"{kind}: {exc.get('exception_message') or ''}".strip()
    return ("time_limit" if kind == "AgentTimeoutError" else "env_error"), message[:2000]


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-") or "x"


def import_trials(paths: list[Path], out: Path) -> tuple[list[Path], list[str]]:
    """Write one job record per trial under `out`; returns (records written, trials left out with why)."""
    trials = find_trials(paths)
    if not trials:
        raise ValueError(f"no Harbor trial directories (with {hf.TRIAL_RESULT} naming a trial) at or below {', '.join(map(str, paths))}")
    metas: list[tuple[Trial, JobMeta]] = []
    skipped = []
    for t in trials:
        doc = _json(t.dir, f"{hf.RECORD}/{JOB}")
        if not isinstance(doc, dict):
            skipped.append(f"{t.dir}: no RunningTab record ({hf.RECORD}/{JOB}): not an exported task, or its verifier did not run")
            continue
        try:
            metas.append((t, JobMeta.from_json(doc)))
        except ValueError as e:
            skipped.append(f"{t.dir}: {e}")
    seeds: dict[tuple[str, ...], int] = {}
    written = []
    for t, meta in sorted(metas, key=lambda tm: (tm[0].started, tm[0].dir.name)):
        if meta.job_id == PLACEHOLDER:
            key = (meta.benchmark, meta.task_id, meta.method, t.model)
            seed = seeds[key] = seeds.get(key, -1) + 1
            job_id = "__".join(_safe(x) for x in (meta.benchmark, meta.task_id, meta.method, t.model, f"s{seed}", "harbor"))
            meta = dataclasses.replace(meta, job_id=job_id, model=t.model, seed=seed)
        written.append(_write(t, meta, out / meta.job_id))
    return written, skipped


def _write(t: Trial, meta: JobMeta, dest: Path) -> Path:
    src = t.dir / hf.RECORD
    copy_tree(src, dest, hf.RECORD_MAX_FILES, hf.RECORD_MAX_BYTES, keep=lambda rel: rel not in (JOB, RESULT, SCORES, TRAJECTORY))
    write_meta(dest, meta)
    atif = _json(t.dir, hf.TRAJECTORY)
    if isinstance(atif, dict):
        traj = Trajectory(dest)
        try:
            for m in messages(atif):
                traj(m)
        finally:
            traj.close()
    scores = _json(src, SCORES)
    if isinstance(scores, dict):
        write_scores(dest, {**scores, "job_id": meta.job_id})
    recorded = _json(src, RESULT)
    result = Result.from_json(recorded, meta.job_id) if isinstance(recorded, dict) else Result(meta.job_id, "finished")
    if meta.sandbox == SANDBOX:  # a Harbor run: how it ended and what it cost are Harbor's
        stop, error = _stop(t)
        agent = t.result.get("agent_result") or {}
        timing = t.result.get("agent_execution") or {}
        result = dataclasses.replace(
            result, stop_reason=stop, error=error, tokens_in=int(agent.get("n_input_tokens") or 0),
            tokens_out=int(agent.get("n_output_tokens") or 0), cost=float(agent.get("cost_usd") or 0.0),
            wall_s=_seconds(timing.get("started_at"), timing.get("finished_at")),
            turns=sum(1 for m in JobRecord(dest).trajectory() if m.get("role") == "assistant") or None,
        )
    write_result(dest, dataclasses.replace(result, job_id=meta.job_id))
    return dest


def _seconds(start: Any, end: Any) -> float:
    from eval.harbor.atif import epoch

    a, b = epoch(start), epoch(end)
    return round(b - a, 3) if a is not None and b is not None else 0.0
