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

Every file of a trial came through the agent's container: it is read bounded, regular files only,
and checked (trial_docs.py, atif_read.py). A job id from any file has the project's form
(runners/core/job_ids.py), so a record is written at `OUT/<job_id>` and nowhere else. A trial that
fails a check is refused with one line saying which file and field; every other trial is imported
whole: its record is built in a temporary folder inside OUT and renamed into place, so no torn
record ever appears (and a record imported again replaces the old one in one rename).
"""

from __future__ import annotations

import dataclasses
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.deliverable import copy_tree
from eval.harbor import harbor_files as hf
from eval.harbor.atif_read import AtifError, messages
from eval.harbor.trial_docs import (
    MAX_TRAJECTORY_BYTES,
    HarborInfo,
    TrialError,
    check_meta,
    check_result,
    check_scores,
    harbor_info,
    read_doc,
)
from eval.harbor.verify import SANDBOX
from eval.harbor.whole import whole_folder
from runners.core.job_ids import check_job_id
from runners.core.job_record import Trajectory, write_meta, write_result, write_scores
from runners.core.record_files import JOB, RESULT, SCORES, TRAJECTORY
from runners.core.record_types import JobMeta

PLACEHOLDER = "harbor-trial"  # the job id our verifier writes: the import gives the real one
_REFUSED = (ValueError, RecursionError, OSError)  # TrialError, AtifError, RecordError are ValueErrors


@dataclass
class Trial:
    dir: Path
    result: dict[str, Any]  # Harbor's result.json, a JSON object naming a trial (not yet checked)


@dataclass
class _Planned:
    trial: Trial
    meta: JobMeta
    info: HarborInfo


def find_trials(paths: list[Path]) -> tuple[list[Trial], list[str]]:
    """Trial directories at or below `paths` (up to three levels: jobs/<job>/<trial>; links not
    followed), and a line for each `result.json` there that cannot be read."""
    found: dict[Path, Trial] = {}
    unread: list[str] = []
    for root in paths:
        for d in _folders(root, 3):
            try:
                doc = read_doc(d, hf.TRIAL_RESULT)
            except TrialError as e:
                unread.append(f"{d}: {e}")
                continue
            if isinstance(doc, dict) and "trial_name" in doc and d not in found:
                found[d] = Trial(d, doc)
    return list(found.values()), unread


def _folders(root: Path, depth: int) -> list[Path]:
    """`root` and the real folders below it, `depth` levels down (an unreadable folder is not entered)."""
    out = [root]
    level = [root]
    for _ in range(depth):
        below = []
        for d in level:
            try:
                below += [Path(e.path) for e in sorted(os.scandir(d), key=lambda e: e.name) if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
        out.extend(below)
        level = below
    return out


def _stop(info: HarborInfo) -> tuple[str, str | None]:
    if not info.exception_type:
        return "finished", None
    message = f"{info.exception_type}: {info.exception_message}".strip()
    return ("time_limit" if info.exception_type == "AgentTimeoutError" else "env_error"), message[:2000]


def _safe(s: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", s).strip("-") or "x"


def _plan(t: Trial) -> _Planned | None:
    """The trial's checked identity; None when it holds no record of ours."""
    info = harbor_info(t.result, hf.TRIAL_RESULT)
    doc = read_doc(t.dir, f"{hf.RECORD}/{JOB}")
    if doc is None:
        return None
    return _Planned(t, check_meta(doc, f"{hf.RECORD}/{JOB}"), info)


def import_trials(paths: list[Path], out: Path) -> tuple[list[Path], list[str]]:
    """Write one job record per trial under `out`; returns (records written, trials refused with why)."""
    trials, refused = find_trials(paths)
    if not trials:
        raise ValueError(f"no Harbor trial directories (with {hf.TRIAL_RESULT} naming a trial) at or below {', '.join(map(str, paths))}")
    planned: list[_Planned] = []
    for t in trials:
        try:
            p = _plan(t)
        except _REFUSED as e:
            refused.append(f"{t.dir}: {e}")
            continue
        if p is None:
            refused.append(f"{t.dir}: no RunningTab record ({hf.RECORD}/{JOB}): not an exported task, or its verifier did not run")
        else:
            planned.append(p)
    seeds: dict[tuple[str, ...], int] = {}
    taken: dict[str, Path] = {}
    written = []
    for p in sorted(planned, key=lambda p: (p.info.started, p.trial.dir.name)):
        meta = p.meta
        try:
            if meta.job_id == PLACEHOLDER:
                key = (meta.benchmark, meta.task_id, meta.method, p.info.model)
                seed = seeds[key] = seeds.get(key, -1) + 1
                job_id = "__".join(_safe(x) for x in (meta.benchmark, meta.task_id, meta.method, p.info.model, f"s{seed}", "harbor"))
                meta = dataclasses.replace(meta, job_id=check_job_id(job_id, "the id made for this trial"), model=p.info.model, seed=seed)
            if meta.job_id in taken:
                raise TrialError(f"job id {meta.job_id} is also the id of {taken[meta.job_id]}: imported once")
            written.append(_write(p.trial, meta, p.info, out))
            taken[meta.job_id] = p.trial.dir
        except _REFUSED as e:
            refused.append(f"{p.trial.dir}: {e}")
    return written, refused


def _write(t: Trial, meta: JobMeta, info: HarborInfo, out: Path) -> Path:
    """The record of `t` built in a temporary folder inside `out`, then renamed to `out/<job_id>`."""
    check_job_id(meta.job_id, JOB)
    src = t.dir / hf.RECORD
    atif = read_doc(t.dir, hf.TRAJECTORY, MAX_TRAJECTORY_BYTES)
    try:
        msgs = messages(atif) if atif is not None else None
    except AtifError as e:
        raise TrialError(f"{hf.TRAJECTORY}: {e}") from None
    scores = check_scores(read_doc(src, SCORES), f"{hf.RECORD}/{SCORES}")
    result = check_result(read_doc(src, RESULT), f"{hf.RECORD}/{RESULT}", meta.job_id)
    if meta.sandbox == SANDBOX:  # a Harbor run: how it ended and what it cost are Harbor's
        stop, error = _stop(info)
        result = dataclasses.replace(
            result, stop_reason=stop, error=error, tokens_in=info.tokens_in, tokens_out=info.tokens_out, cost=info.cost,
            wall_s=_seconds(info.agent_started, info.agent_finished),
            turns=sum(1 for m in msgs or [] if m["role"] == "assistant") or None,
        )
    dest = out / meta.job_id
    with whole_folder(dest) as tmp:
        copy_tree(src, tmp, hf.RECORD_MAX_FILES, hf.RECORD_MAX_BYTES, keep=lambda rel: rel not in (JOB, RESULT, SCORES, TRAJECTORY))
        write_meta(tmp, meta)
        if msgs is not None:
            traj = Trajectory(tmp)
            try:
                for m in msgs:
                    traj(m)
            finally:
                traj.close()
        if scores is not None:
            write_scores(tmp, {**scores, "job_id": meta.job_id})
        write_result(tmp, result)
    return dest


def _seconds(start: str | None, end: str | None) -> float:
    from eval.harbor.atif import epoch

    a, b = epoch(start), epoch(end)
    return round(b - a, 3) if a is not None and b is not None else 0.0
