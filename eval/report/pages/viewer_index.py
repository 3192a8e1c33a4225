"""The index's table of every job, filterable by benchmark, method, model, seed and outcome.

A job's outcome tags: its stop reason (`unfinished` without `result.json`), `errored` when it stopped
on an environment or model error (or `result.json` says `"errored": true`), `unsandboxed` when its shell ran without bubblewrap, and `scored`
or `unscored`. Records older than the `sandbox` field carry no sandbox tag.
"""

from __future__ import annotations

import html
from typing import Any

from eval.report.load import Job, Sweep
from eval.report.method_names import harness_key, method_key
from eval.report.section import fmt, percent

FILTERS = ("benchmark", "method", "model", "seed", "outcome")


def outcome_tags(job: Job) -> list[str]:
    r = job.result
    if r is None:
        return ["unfinished", "unscored"]
    stop = r.stop_reason or "unknown"
    tags = [stop] + (["errored"] if r.errored else [])
    if r.sandbox == "none":
        tags.append("unsandboxed")
    tags.append("scored" if job.scores is not None else "unscored")
    return tags


def _values(job: Job) -> dict[str, str]:
    return {"benchmark": job.benchmark, "method": job.harness_method, "model": job.model, "seed": str(job.seed),
            "outcome": " ".join(outcome_tags(job))}


def _filters(values: list[dict[str, str]]) -> str:
    parts = ['<p class="filters" id="job-filters">']
    for name in FILTERS:
        seen: dict[str, None] = {}
        for vals in values:
            for v in vals[name].split(" ") if name == "outcome" else [vals[name]]:
                seen.setdefault(v)
        options = "".join(f'<option value="{html.escape(v)}">{html.escape(v)}</option>' for v in sorted(seen))
        multi = ' data-multi="1"' if name == "outcome" else ""
        parts.append(f'<label>{name} <select name="{name}"{multi}><option value="">all</option>{options}</select></label>')
    parts.append('<span id="jobs-shown"></span></p>')
    return "".join(parts)


def _cell(v: Any) -> str:
    return html.escape(fmt(v, 4)) if v is not None else ""


def job_row(j: Job, vals: dict[str, str], metrics: list[str], compare: list[tuple[str, str]]) -> str:
    """One job's row of the table."""
    r, ms = j.result, (j.scores or {}).get("metrics", {})
    data = " ".join(f'data-{k}="{html.escape(v)}"' for k, v in vals.items())
    links = " ".join(f'<a href="{html.escape(href)}">{html.escape(label)}</a>' for label, href in compare)
    # the id's digest names the job (its other parts are the next columns), so the table fits a window
    short = j.job_id.rsplit("__", 1)[-1]
    cells = [f'<a href="jobs/{html.escape(j.job_id)}.html" title="{html.escape(j.job_id)}">{html.escape(short)}</a>', *map(_cell, (
        j.benchmark, j.task_id, vals["method"], j.model, j.seed, vals["outcome"], *((None, None) if r is None else (r.turns, r.chars_read)),
        )), *(html.escape(percent(ms[m])) if m in ms else "" for m in metrics), links]
    return f"<tr {data}>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def jobs_section(sweep: Sweep, compare: dict[str, list[tuple[str, str]]]) -> str:
    """The jobs table with its filters; `compare` maps a job id to its (label, href) comparisons."""
    jobs = sorted(sweep.jobs, key=lambda j: (j.benchmark, harness_key(j.harness), j.model, method_key(j.method), j.task_id, j.seed))
    metrics = sorted({m for j in jobs for m in (j.scores or {}).get("metrics", {})})
    cols = ["job", "benchmark", "task", "method", "model", "seed", "outcome", "turns", "chars_read", *metrics, "compare"]
    values = [_values(j) for j in jobs]
    out = [f"<p>{len(jobs)} jobs.</p>", _filters(values), '<div class="wide"><table id="jobs-table"><thead><tr>']
    out += [f"<th>{html.escape(c)}</th>" for c in cols]
    out.append("</tr></thead><tbody>")
    out += [job_row(j, vals, metrics, compare.get(j.job_id, [])) for j, vals in zip(jobs, values, strict=True)]
    out.append("</tbody></table></div>")
    return "".join(out)
