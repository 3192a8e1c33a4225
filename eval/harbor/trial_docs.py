"""The documents of a Harbor trial, read as hostile input: bounded, regular files only, checked.

A trial's files came through the agent's container (the agent can write its own trajectory, and
whatever reaches the trial folder). Each JSON document is read only when it is a regular file under
its cap (its size is read before its bytes), parsed by the record's one parser (refused when nested
deeper than `record_files.MAX_DEPTH`); then every field the import uses is checked for its type by
the record's own readers (`JobMeta.from_json`, `Result.from_json`) and here for what only a trial
has (`check_scores`, `harbor_info`). Each failure is a `TrialError` whose message says which file
and which field, so that the import refuses that trial in one line and goes on with the others.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.safeio import UnsafePath, lstat_inside, open_regular
from runners.core.field_checks import (
    AMOUNT,
    COUNT,
    OBJECTS,
    STR,
    Check,
    RecordError,
    check_fields,
    optional,
)
from runners.core.job_ids import check_job_id
from runners.core.record_files import parse_json
from runners.core.record_types import JobMeta, Result

MAX_TRAJECTORY_BYTES = 128 << 20  # an ATIF trajectory of a long run; parsed, it takes several times this in memory
MAX_DOC_BYTES = 16 << 20  # result.json, job.json (its config), scores.json


class TrialError(ValueError):
    """A trial the import refuses; the message says which file and what is wrong."""


def read_doc(root: Path, rel: str, limit: int = MAX_DOC_BYTES) -> Any:
    """The JSON document `root/rel`, None when there is none; TrialError when it is not a regular file
    reached without links, is over `limit` bytes, is not JSON, or nests too deep."""
    if lstat_inside(root, rel) is None:
        return None
    try:
        with open_regular(root, rel) as f:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise TrialError(f"{rel}: {size:,} bytes, over the {limit:,}-byte cap")
            data = f.read(limit + 1)
    except UnsafePath as e:
        raise TrialError(f"{rel}: {e}") from None
    try:
        return parse_json(data)
    except ValueError as e:
        raise TrialError(f"{rel}: not JSON ({str(e)[:120]})") from None


def _fields(doc: Any, rel: str, checks: dict[str, Check]) -> None:
    try:
        check_fields(doc, rel, checks)
    except RecordError as e:
        raise TrialError(str(e)) from None


def check_meta(doc: Any, rel: str) -> JobMeta:
    """job.json of a trial's record (every field checked by its reader), its id of the project's form."""
    try:
        meta = JobMeta.from_json(doc)
    except RecordError as e:
        raise TrialError(f"{rel}: {e}") from None
    check_job_id(meta.job_id, f"{rel} job_id")
    return meta


def check_result(doc: Any, rel: str, job_id: str) -> Result:
    """result.json of a trial's record (a missing one: a finished job), every field checked by its reader."""
    if doc is None:
        return Result(job_id, "finished")
    try:
        return dataclasses.replace(Result.from_json(doc, job_id), job_id=job_id)
    except RecordError as e:
        raise TrialError(f"{rel}: {e}") from None


def check_scores(doc: Any, rel: str) -> dict[str, Any] | None:
    """scores.json of a trial's record: the judge's names, numeric metrics (or null: not computed), items."""
    if doc is None:
        return None
    _fields(doc, rel, {"judge": STR, "task_id": STR, "kind": STR, "items": OBJECTS})
    metrics = doc.get("metrics", {})
    if not isinstance(metrics, dict) or not all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)) for v in metrics.values()):
        raise TrialError(f"{rel}: `metrics` should map names to numbers")
    return doc


@dataclass(frozen=True)
class HarborInfo:
    """What the import takes from Harbor's TrialResult (the trial's result.json)."""

    started: str
    model: str  # `<agent>:<model>`
    exception_type: str | None
    exception_message: str
    tokens_in: int
    tokens_out: int
    cost: float
    agent_started: str | None
    agent_finished: str | None


def _get(doc: dict[str, Any], key: str, rel: str) -> dict[str, Any]:
    v = doc.get(key)
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise TrialError(f"{rel}: `{key}` should be an object, not {type(v).__name__}")
    return v


def harbor_info(doc: dict[str, Any], rel: str) -> HarborInfo:
    """Harbor's result.json of a trial, checked."""
    config, info, agent, timing, exc = (_get(doc, k, rel) for k in ("config", "agent_info", "agent_result", "agent_execution", "exception_info"))
    cfg_agent, model_info = _get(config, "agent", f"{rel} config"), _get(info, "model_info", f"{rel} agent_info")
    _fields(doc, rel, {"started_at": optional(STR)})
    _fields(cfg_agent, f"{rel} config.agent", {"name": optional(STR), "model_name": optional(STR)})
    _fields(info, f"{rel} agent_info", {"name": optional(STR)})
    _fields(model_info, f"{rel} agent_info.model_info", {"name": optional(STR)})
    _fields(exc, f"{rel} exception_info", {"exception_type": optional(STR), "exception_message": optional(STR)})
    nullable = {"n_input_tokens": optional(COUNT), "n_output_tokens": optional(COUNT), "cost_usd": optional(AMOUNT)}
    _fields(agent, f"{rel} agent_result", nullable)
    _fields(timing, f"{rel} agent_execution", {"started_at": optional(STR), "finished_at": optional(STR)})
    name = cfg_agent.get("name") or info.get("name") or "agent"
    model = cfg_agent.get("model_name") or model_info.get("name") or ""
    return HarborInfo(
        started=doc.get("started_at") or "", model=f"{name}:{model}" if model else name,
        exception_type=exc.get("exception_type") or None, exception_message=exc.get("exception_message") or "",
        tokens_in=agent.get("n_input_tokens") or 0, tokens_out=agent.get("n_output_tokens") or 0, cost=float(agent.get("cost_usd") or 0.0),
        agent_started=timing.get("started_at"), agent_finished=timing.get("finished_at"),
    )
