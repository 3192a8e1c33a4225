"""Two jobs on the same task side by side: their trajectories aligned by turn, and for each rubric
that failed in either job where its values were shown, read and lost.

Pairs are the comparisons the paper makes, on the same benchmark, task, model and seed: every
method against DCI, and every ablation also against the full tab (`runningtab`).
"""

from __future__ import annotations

import html
from urllib.parse import quote

from eval.report.analyses.fates import LABELS
from eval.report.load import Job, Sweep
from eval.report.pages.html import job_title, page
from eval.report.pages.viewer_fates import summary
from eval.report.pages.viewer_render import turn_html
from eval.report.pages.viewer_tab import events_by_turn
from eval.report.pages.viewer_turns import Turn, context_level, turns

# A compare cell shows this much of each message; the job page has the rest.
CELL_CHARS = 1500


def pairs(sweep: Sweep) -> list[tuple[Job, Job]]:
    """(baseline, other) for every comparison the sweep allows (within a harness: `agent.harness`)."""
    groups: dict[tuple[str, str, str, str, int], dict[str, Job]] = {}
    for j in sweep.jobs:
        groups.setdefault((j.benchmark, j.harness, j.task_id, j.model, j.seed), {})[j.method] = j
    out = []
    for by_method in groups.values():
        for method, job in sorted(by_method.items()):
            baselines = [sweep.baseline] + ([sweep.treatment] if job.is_ablation else [])
            out += [(by_method[b], job) for b in baselines if b in by_method and b != method]
    return out


def compare_name(a: Job, b: Job) -> str:
    return f"{b.job_id}__vs__{a.method}.html"


def _rubrics(a: Job, b: Job, ta: list[Turn], tb: list[Turn]) -> str:
    sa, sb = summary(a, ta), summary(b, tb)
    if not sa and not sb:
        return "<p>No failed rubric with expected values in either job.</p>"
    items = {i.get("index"): i for j in (a, b) for i in (j.scores or {}).get("items", []) if i.get("kind") == "rubric"}
    passed = {j.job_id: {i.get("index"): i.get("passed") is True for i in (j.scores or {}).get("items", [])} for j in (a, b)}
    rows = ["<table id=\"rubrics\"><thead><tr><th>#</th><th>rubric</th>"
            f"<th>{html.escape(a.method)}</th><th>{html.escape(b.method)}</th></tr></thead><tbody>"]
    for idx in sorted(set(sa) | set(sb), key=lambda x: (x is None, x)):
        cells = []
        for j, s in ((a, sa), (b, sb)):
            if idx in s:
                lines = "".join(f'<li class="{"lost" if lost else ""}">{html.escape(line)}</li>' for line, lost in s[idx]["trails"])
                cells.append(f"<b>failed: {html.escape(LABELS.get(s[idx]['category'] or '', ''))}</b><ul>{lines}</ul>")
            else:
                state = passed[j.job_id].get(idx)
                cells.append("passed" if state else ("failed (no values)" if state is False else "not scored"))
        text = str(items.get(idx, {}).get("text", ""))
        rows.append(f'<tr data-rubric="{idx}"><td>{idx}</td><td>{html.escape(text)}</td><td>{cells[0]}</td><td>{cells[1]}</td></tr>')
    rows.append("</tbody></table>")
    return "".join(rows)


def _side(job: Job) -> str:
    r, ms = job.result, (job.scores or {}).get("metrics", {})
    facts = ["stop unfinished"] if r is None else [f"stop {r.stop_reason}", f"{r.turns if r.turns is not None else '?'} turns",
                                                   f"{r.chars_read} chars read"]
    facts += [f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}" for k, v in sorted(ms.items())]
    link = f'<a href="../jobs/{quote(job.job_id)}.html">{html.escape(job.job_id)}</a>'
    return f"<td>{link}<br>{html.escape(' · '.join(facts))}</td>"


def _cells(job: Job, ts: list[Turn]) -> dict[int, str]:
    """The job's turns as side-by-side cells, by turn number (made once while the job is held: a
    baseline job's are in every side-by-side of its task)."""

    def render() -> dict[int, str]:
        level, events = context_level(job)[0], events_by_turn(job.tab)
        href = f"../jobs/{quote(job.job_id)}.html#t"
        return {t.number: turn_html(t, level, events.get(t.number, []), CELL_CHARS, f"{href}{t.number}", anchor=False) for t in ts}

    return job.held("compare_cells", render)


def compare_html(a: Job, b: Job) -> str:
    ta, tb = turns(a), turns(b)
    ca, cb = _cells(a, ta), _cells(b, tb)
    body = ['<p><a href="../index.html">← report</a></p>',
            f"<h1>{html.escape(a.method)} vs {html.escape(b.method)}</h1>",
            f"<p>{html.escape(a.benchmark)} · {html.escape(a.task_id)} · {html.escape(a.model)} · seed {a.seed}</p>",
            f'<table class="pair"><tr>{_side(a)}{_side(b)}</tr></table>',
            "<h2>Failed rubrics: where their values were shown, read and lost</h2>", _rubrics(a, b, ta, tb),
            "<h2>The trajectories, turn by turn</h2>",
            f'<table id="aligned" class="pair"><thead><tr><th>{html.escape(a.method)}</th><th>{html.escape(b.method)}</th></tr></thead><tbody>']
    for n in sorted(set(ca) | set(cb)):
        body.append(f'<tr data-turn="{n}"><td data-side="a">{ca.get(n, "")}</td><td data-side="b">{cb.get(n, "")}</td></tr>')
    body.append("</tbody></table>")
    return page(f"{a.method} vs {b.method}: {job_title(b)}", "\n".join(body))
