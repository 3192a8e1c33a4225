"""One job's page: its result, its scores item by item, where the values of its failed rubrics went,
and the viewer: the trajectory turn by turn, each tool result as the model saw it, with the tab as it
stood at the selected turn beside it."""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import quote

from eval.report.analyses.tabview import snapshots, timeline
from eval.report.load import Job
from eval.report.pages.deliverable import deliverable_html
from eval.report.pages.html import job_title, kv_table, page, table_html
from eval.report.pages.viewer_assets import LINKS, script_tag
from eval.report.pages.viewer_fates import summary
from eval.report.pages.viewer_render import json_script, message_html, turn_html
from eval.report.pages.viewer_tab import events_by_turn, tab_data
from eval.report.pages.viewer_turns import Seen, Turn, context_level, turns
from eval.report.section import Table, fmt, percent
from runners.core.job_record import JobRecord
from runners.core.record_files import (
    JOB,
    RESULT,
    SCORES,
    TAB,
    TRAJECTORY,
    VIEW,
)
from runners.core.record_types import RecordError

RESULT_KEYS = ("stop_reason", "turns", "tokens_in", "tokens_out", "cost", "chars_read", "wall_s", "sandbox", "errored", "limits_hit", "error")
RECORD_FILES = (JOB, RESULT, SCORES, TAB, VIEW, TRAJECTORY)
# What the page shows of one evaluator-view message at most; the record has the rest.
MAX_MESSAGE_CHARS = 20_000


def _evaluator_view(messages: list[dict[str, Any]], level: int) -> str:
    body = "\n".join(message_html(Seen(m, str(m.get("content") or "")), level, MAX_MESSAGE_CHARS) for m in messages)
    return f"<details><summary>Evaluator view: tab traces removed ({len(messages)} messages)</summary>\n{body or '(none)'}</details>"


def _scores(job: Job) -> str:
    if job.scores is None:
        return "<p>Not scored (no scores.json).</p>"
    s = job.scores
    metrics = [(k, percent(v)) for k, v in sorted(s.get("metrics", {}).items())]
    out = [f"<p>Judge: {html.escape(str(s.get('judge', '?')))}</p>", kv_table(metrics)]
    items = s.get("items", [])
    if items:
        keys = [k for k in ("index", "kind", "text", "passed", "judged", "confidence", "evidence", "reason", "points", "result") if any(k in i for i in items)]
        rows = [[_cell(i.get(k)) for k in keys] for i in items]
        out.append(table_html(Table("items", f"Items ({sum(1 for i in items if i.get('passed') is True)} of {len(items)} passed)", keys, rows)))
    return "\n".join(out)


def _files(job: Job) -> set[str]:
    """The names at the top of the job's record (its folder's, or its pack's): one listing, not a
    stat per record file."""
    try:
        return JobRecord(job.dir).names()
    except RecordError:
        return set()


def _essence(m: dict[str, Any]) -> tuple[Any, ...]:
    """What a reader sees of a message (bookkeeping fields aside); its tool calls as parsed (dicts
    compare without regard to key order, so no JSON of them is made)."""
    return m.get("role"), m.get("content"), m.get("tool_calls")


def _cell(v: Any) -> Any:
    return json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v


def _fates(job: Job, ts: list[Turn]) -> str:
    rows = [[idx, s["text"], s["category"], "; ".join(line for line, _ in s["trails"])] for idx, s in summary(job, ts).items()]
    if not rows:
        return ""
    t = Table("fates", f"Failed rubrics: where their values went ({len(rows)})", ["index", "text", "category", "values"], rows)
    return table_html(t)


def _viewer(job: Job, ts: list[Turn]) -> str:
    level, stated = context_level(job)
    note = f"context level {level}" + ("" if stated else " (not in the record: the runner's default)")
    events = events_by_turn(job.tab)
    blocks = "\n".join(turn_html(t, level, events.get(t.number, [])) for t in ts) or "<p>(no trajectory)</p>"
    return (f'<h2 id="viewer">Trajectory and tab, turn by turn</h2><p class="note">Tool results as the model saw them '
            f"({html.escape(note)}); click a turn to see the tab as it stood then.</p>"
            f'<div class="viewer"><div class="traj">{blocks}</div><aside class="panel" id="tabpanel">'
            f"<noscript>The tab panel needs JavaScript; the timeline below has the same events.</noscript></aside></div>"
            + json_script("viewer-data", tab_data(job.tab, ts)))


def job_html(job: Job) -> str:
    """The page. Its side-by-side links are drawn in the browser from `../links.js`, which every
    build writes (`site.write_links`), so the page is written once, with its record; without
    script, or before a build, the index's jobs table lists them."""
    result, ts, present = job.result, turns(job), _files(job)
    fields = {} if result is None else {k: getattr(result, k) for k in RESULT_KEYS}  # what the page shows (no deep copy of the rest)
    body = [
        '<p><a href="../index.html">← report</a></p>',
        f"<h1>{html.escape(job.job_id)}</h1>",
        f"<p>{html.escape(job_title(job))}</p>",
        "<p>Record: " + " · ".join(
            f'<a href="../../{quote(job.dir.name)}/{name}">{name}</a>' for name in RECORD_FILES if name in present
        ) + "</p>",
    ]
    body.append(f'<p id="side-by-side" data-job="{html.escape(job.job_id)}">Side by side: see this job in the'
                ' <a href="../index.html#jobs">report\'s jobs table</a></p>')
    facts = [f"{k} {fmt(fields[k], 4)}" for k in ("stop_reason", "turns", "chars_read", "sandbox") if fields.get(k) is not None]
    metrics = [f"{k} {percent(v)}" for k, v in sorted((job.scores or {}).get("metrics", {}).items())]
    body.append(f"<p><b>{html.escape(' · '.join(facts + metrics) or 'unfinished')}</b></p>")
    body.append(_viewer(job, ts))
    body += [
        "<h2>Result</h2>",
        kv_table([(k, fields[k]) for k in RESULT_KEYS]) if fields else "<p>Unfinished (no result.json).</p>",
        "<h2>Scores</h2>",
        _scores(job),
        _fates(job, ts),
    ]
    body.append(deliverable_html(job))
    if job.tab is not None:
        body += ["<h2>The tab over time</h2>", table_html(timeline(job))]
        body += [f"<details><summary>The tab {html.escape(t)}</summary><pre>{html.escape(text)}</pre></details>" for t, text in snapshots(job)]
    view = job.view.get("messages", [])
    if [_essence(m) for m in view] != [_essence(m) for m in job.trajectory]:
        body += ["<h2>What the judges read</h2>", _evaluator_view(view, context_level(job)[0])]
    return page(job.job_id, "\n".join(body), f'<script src="../{LINKS}"></script>{script_tag()}')
