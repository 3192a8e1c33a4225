"""The documents of a Harbor trial, read as hostile input: bounded, regular files only, checked.

A trial's files came through the agent's container (the agent can write its own trajectory, and
whatever reaches the trial folder). Each JSON document is read only when it is a regular file under
its cap (its size is read before its bytes), parsed, and refused when nested deeper than MAX_DEPTH;
then every field the import uses is checked for its type (`check_meta`, `check_result`,
`check_scores`, `harbor_info`). Each failure is a `TrialError` whose message says which file and
which field, so that the import refuses that trial in one line and goes on with the others.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.safeio import UnsafePath, lstat_inside, open_regular
from runners.core.job_ids import check_job_id
from runners.core.record_types import JobMeta, Result

MAX_TRAJECTORY_BYTES = 128 << 20  # an ATIF trajectory of a long run; parsed, it takes several times this in memory
MAX_DOC_BYTES = 16 << 20  # result.json, job.json (its config), scores.json
MAX_DEPTH = 64  # our documents nest under 12 levels


class TrialError(ValueError):
    """A trial the import refuses; the message says which file and what is wrong."""


def read_doc(root: Path, rel: str, limit: int = MAX_DOC_BYTES) -> Any:
    """The JSON document `root/rel`, None when there is none; TrialError when it is not a regular file
    reached without links, is over `limit` bytes, is not JSON, or nests deeper than MAX_DEPTH."""
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
        doc = json.loads(data)
    except RecursionError:
        raise TrialError(f"{rel}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as e:
        raise TrialError(f"{rel}: not JSON ({str(e)[:120]})") from None
    _check_depth(doc, rel)
    return doc


def _check_depth(doc: Any, rel: str) -> None:
    stack = [(doc, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TrialError(f"{rel}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def _is_count(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_amount(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0


def _is_strs(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _fields(doc: Any, rel: str, checks: dict[str, tuple[Any, str]]) -> None:
    for name, (ok, what) in checks.items():
        if name in doc and not ok(doc[name]):
            raise TrialError(f"{rel}: `{name}` should be {what}, not {doc[name]!r:.60}")


_STR = (lambda v: isinstance(v, str), "a string")
_STR_OR_NONE = (lambda v: v is None or isinstance(v, str), "a string or null")
_COUNT = (_is_count, "an integer >= 0")
_AMOUNT = (_is_amount, "a number >= 0")
_STRS = (_is_strs, "a list of strings")


def check_meta(doc: Any, rel: str) -> JobMeta:
    """job.json of a trial's record, its id of the project's form."""
    if not isinstance(doc, dict):
        raise TrialError(f"{rel}: not a JSON object")
    _fields(doc, rel, {"benchmark": _STR, "task_id": _STR, "method": _STR, "model": _STR, "seed": _COUNT, "sandbox": _STR_OR_NONE,
                       "config": (lambda v: v is None or isinstance(v, dict), "an object")})
    missing = [k for k in ("job_id", "benchmark", "task_id", "method") if k not in doc]
    if missing:
        raise TrialError(f"{rel}: lacks {', '.join(missing)}")
    check_job_id(doc["job_id"], f"{rel} job_id")
    return JobMeta.from_json(doc)


_RESULT = {"stop_reason": _STR, "attempt": _COUNT, "turns": (lambda v: v is None or _is_count(v), "an integer >= 0 or null"),
           "tokens_in": _COUNT, "tokens_out": _COUNT, "cost": _AMOUNT, "chars_read": _COUNT, "final_answer": _STR, "wall_s": _AMOUNT,
           "error": _STR_OR_NONE, "earlier_errors": (lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v), "a list of objects"),
           "sandbox": _STR_OR_NONE, "limits_hit": (lambda v: v is None or _is_strs(v), "a list of strings or null"),
           "deliverable": _STRS, "deleted": _STRS, "left_out": _STRS, "left_out_rest": (lambda v: isinstance(v, bool), "true or false"),
           "spend": _AMOUNT, "cached_calls": _COUNT, "budget_usd": (lambda v: v is None or _is_amount(v), "a number >= 0 or null")}


def check_result(doc: Any, rel: str, job_id: str) -> Result:
    """result.json of a trial's record (a missing one: a finished job)."""
    if doc is None:
        return Result(job_id, "finished")
    if not isinstance(doc, dict):
        raise TrialError(f"{rel}: not a JSON object")
    _fields(doc, rel, {k: v for k, v in _RESULT.items() if doc.get(k) is not None})  # a null is the field's default
    return dataclasses.replace(Result.from_json(doc, job_id), job_id=job_id)


def check_scores(doc: Any, rel: str) -> dict[str, Any] | None:
    """scores.json of a trial's record: the judge's names, numeric metrics (or null: not computed), items."""
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise TrialError(f"{rel}: not a JSON object")
    _fields(doc, rel, {"judge": _STR, "task_id": _STR, "kind": _STR,
                       "items": (lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v), "a list of objects")})
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
    _fields(doc, rel, {"started_at": _STR_OR_NONE})
    _fields(cfg_agent, f"{rel} config.agent", {"name": _STR_OR_NONE, "model_name": _STR_OR_NONE})
    _fields(info, f"{rel} agent_info", {"name": _STR_OR_NONE})
    _fields(model_info, f"{rel} agent_info.model_info", {"name": _STR_OR_NONE})
    _fields(exc, f"{rel} exception_info", {"exception_type": _STR_OR_NONE, "exception_message": _STR_OR_NONE})
    nullable = {k: (lambda v, ok=ok: v is None or ok(v), what) for k, (ok, what) in (("n_input_tokens", _COUNT), ("n_output_tokens", _COUNT), ("cost_usd", _AMOUNT))}
    _fields(agent, f"{rel} agent_result", nullable)
    _fields(timing, f"{rel} agent_execution", {"started_at": _STR_OR_NONE, "finished_at": _STR_OR_NONE})
    name = cfg_agent.get("name") or info.get("name") or "agent"
    model = cfg_agent.get("model_name") or model_info.get("name") or ""
    return HarborInfo(
        started=doc.get("started_at") or "", model=f"{name}:{model}" if model else name,
        exception_type=exc.get("exception_type") or None, exception_message=exc.get("exception_message") or "",
        tokens_in=agent.get("n_input_tokens") or 0, tokens_out=agent.get("n_output_tokens") or 0, cost=float(agent.get("cost_usd") or 0.0),
        agent_started=timing.get("started_at"), agent_finished=timing.get("finished_at"),
    )
