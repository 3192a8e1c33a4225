"""The frames of a sweep: jobs, items (rubrics, checkpoints, answers), turns (model calls), tab
events, and the accounting of Table 1's rows (planned, results, not results by kind). Each job row
starts with the job's id and axes (`columns.AXES`), so frames join on `job_id`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from eval.frames.columns import (
    ASSISTANT,
    AXES,
    EVENT_STAGES,
    JOB_META,
    RESULT,
    SCORES,
    USAGE,
)
from eval.frames.read import ledger_readable, read_sweep
from eval.judges.metrics import METRICS, rubric_parts
from eval.report.analyses import accounting
from eval.report.load import Job, Sweep

if TYPE_CHECKING:
    import pandas as pd

SweepLike = Sweep | str | Path


def _sweep(sweep: SweepLike) -> Sweep:
    return sweep if isinstance(sweep, Sweep) else read_sweep(sweep)


def _frame(rows: list[dict[str, Any]], columns: list[str]) -> pd.DataFrame:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError("eval.frames needs pandas: pip install -e '.[frames]' (or pip install pandas)") from None

    return pd.DataFrame(rows, columns=list(dict.fromkeys([*columns, *(k for r in rows for k in r)])))


def _axes(job: Job) -> dict[str, Any]:
    return {"job_id": job.job_id, **{a: getattr(job, a) for a in AXES}}


def status(job: Job) -> str:
    """`columns.STATUSES`: what the record says of the job (the report's own accounting)."""
    return accounting.status(job)


def accounting_df(sweep: SweepLike) -> pd.DataFrame:
    """One row per Table 1 row (benchmark, harness, model, method): `planned`, `results` and each kind
    of not-result (`errored`, `unscored`, `unfinished`, `not_started`), as Table 1 shows them."""
    sweep = _sweep(sweep)
    kinds = list(accounting.NOT_RESULTS)
    rows = [{"benchmark": b, "harness": h, "model": mo, "method": me, "planned": acc.planned, "results": acc.results,
             **acc.kinds()} for (b, h, mo, me), acc in sorted(accounting.by_row(sweep).items())]
    return _frame(rows, ["benchmark", "harness", "model", "method", "planned", "results", *kinds])


def jobs_df(sweep: SweepLike) -> pd.DataFrame:
    """One row per planned job: `job.json`'s fields (`JobMeta`), `result.json`'s (`Result`, empty when
    unfinished), `status`, the ledger's `failed_attempt`, the judge and each metric of
    `scores.json`, and each pooled rate's numerator and denominator (`rubric_pass_rate_num`,
    `_den`: sums over jobs give the report's pooled rate). A job of the sweep's plan that has no
    readable record has its id and axes only, `status` `not_started` (or `unfinished`: its record
    was skipped as unreadable)."""
    sweep = _sweep(sweep)
    failed = sweep.failed_attempts() if ledger_readable(sweep) else {}
    metric_cols = [c for m in METRICS for c in (m, *(f"{m}_{p}" for p in ("num", "den") if m == "rubric_pass_rate"))]
    columns = ["job_id", *AXES, *JOB_META.columns, "status", "failed_attempt", *RESULT.columns, "errored",
               *SCORES.columns, *metric_cols]
    rows = []
    for job in sweep.jobs:
        row = _axes(job) | {c: getattr(job.meta, c) for c in JOB_META.columns}
        row |= {"status": status(job), "failed_attempt": failed.get(job.job_id)}
        if job.result is not None:
            row |= {c: getattr(job.result, c) for c in RESULT.columns} | {"errored": job.result.errored}
        if job.scores is not None:
            row |= {k: job.scores.get(k) for k in SCORES.columns}
            metrics = job.scores.get("metrics")
            row |= {str(k): v for k, v in metrics.items()} if isinstance(metrics, dict) else {}
            for m, (num, den) in rubric_parts({**job.scores, "items": _items(job)}).items():
                row |= {f"{m}_num": num, f"{m}_den": den}
        rows.append(row)
    recorded = {job.job_id for job in sweep.jobs}
    for planned in sweep.planned:
        if planned.job_id not in recorded:
            recorded.add(planned.job_id)
            rows.append({"job_id": planned.job_id, **{a: getattr(planned, a) for a in AXES},
                         "status": accounting.unrecorded(sweep, planned.job_id)})
    return _frame(rows, columns)


def items_df(sweep: SweepLike) -> pd.DataFrame:
    """One row per item the judge wrote (`scores.json` `items`: rubrics, checkpoints, answers), with
    its verdict (`passed`, `judged`) and the evidence trail the judge left (`reason`, `check`, and
    each judge's own fields, e.g. `expected`/`predicted` or `points`/`earned`)."""
    sweep = _sweep(sweep)
    rows = []
    for job in sweep.jobs:
        rows += [_axes(job) | {"errored": job.errored, **item} for item in _items(job)]
    return _frame(rows, ["job_id", *AXES, "errored", "kind", "index", "text", "passed", "judged", "reason"])


def _items(job: Job) -> list[dict[str, Any]]:
    """The judge's items of a scored job (none unscored); what is not an item is left out."""
    items = job.scores.get("items") if job.scores is not None else None
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []


def _tools(message: dict[str, Any]) -> list[str]:
    calls = message.get("tool_calls")
    functions = [c.get("function") for c in calls if isinstance(c, dict)] if isinstance(calls, list) else []
    return [str(f.get("name")) for f in functions if isinstance(f, dict)]


def turns_df(sweep: SweepLike) -> pd.DataFrame:
    """One row per model call (an assistant message of `trajectory.jsonl`): its `turn` and `time`,
    the reply's `Usage` fields (tokens, cost) and `AssistantMessage` fields (`latency_s`), the tools
    it called (`tools`; `tool`: the first, None for a final answer) and its text's length."""
    sweep = _sweep(sweep)
    columns = ["job_id", *AXES, "turn", "time", *USAGE.columns, *ASSISTANT.columns, "tool", "tools", "content_chars"]
    rows = []
    for job in sweep.jobs:
        for m in job.trajectory:
            if not isinstance(m, dict) or m.get("role") != "assistant":
                continue
            usage = m.get("usage") if isinstance(m.get("usage"), dict) else {}
            tools = _tools(m)
            row = _axes(job) | {"turn": m.get("turn"), "time": m.get("time")}
            row |= {c: usage.get(c, 0) for c in USAGE.columns}
            row |= {c: m.get(c) for c in ASSISTANT.columns}
            row |= {"tool": tools[0] if tools else None, "tools": tools, "content_chars": len(text) if isinstance(text := m.get("content"), str) else None}
            rows.append(row)
    return _frame(rows, columns)


def tab_df(sweep: SweepLike) -> pd.DataFrame:
    """One row per event of each job's tab (`tab.json` `events`), in order: its `turn`, `kind` and
    `stage` (`capture`: reads and candidates; `operation`: the agent's tab calls; `check`: the
    tab's refusals and finish checks; `columns.EVENT_STAGES`), and the event's own fields (lists
    and dicts as JSON text)."""
    sweep = _sweep(sweep)
    rows = []
    for job in sweep.jobs:
        tab = job.tab
        events = tab.get("events") if isinstance(tab, dict) else None
        for i, event in enumerate(events if isinstance(events, list) else []):
            if not isinstance(event, dict):
                continue
            kind = str(event.get("kind"))
            details = {k: json.dumps(v) if isinstance(v, list | dict) else v for k, v in event.items() if k not in ("turn", "kind")}
            rows.append(_axes(job) | {"event": i, "turn": event.get("turn"), "kind": kind,
                                      "stage": EVENT_STAGES.get(kind, "other")} | details)
    return _frame(rows, ["job_id", *AXES, "event", "turn", "kind", "stage"])


__all__ = ["accounting_df", "items_df", "jobs_df", "status", "tab_df", "turns_df"]
