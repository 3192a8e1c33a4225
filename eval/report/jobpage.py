"""One job's page: its result, its scores item by item, its tab over time, and its trajectory as the
evaluator saw it and in full."""

from __future__ import annotations

import html
import json
from typing import Any
from urllib.parse import quote

from eval.report.html import job_title, kv_table, page, table_html
from eval.report.load import Job
from eval.report.section import Table
from eval.report.tabview import snapshots, timeline

RESULT_KEYS = ("stop_reason", "turns", "tokens_in", "tokens_out", "cost", "chars_read", "wall_s", "error")
RECORD_FILES = ("job.json", "result.json", "scores.json", "tab.json", "evaluator_view.json", "trajectory.jsonl")
# What the agent saw of one tool result at most (context level 3); the record has the rest.
MAX_MESSAGE_CHARS = 20_000


def _text(content: object) -> str:
    text = str(content)
    if len(text) <= MAX_MESSAGE_CHARS:
        return html.escape(text)
    left = len(text) - MAX_MESSAGE_CHARS
    return html.escape(text[:MAX_MESSAGE_CHARS]) + f"\n<i>[… {left:,} more characters in trajectory.jsonl]</i>"


def _message(m: dict[str, Any]) -> str:
    role = str(m.get("role", "?"))
    head = f"{role} · turn {m.get('turn', '')}"
    if role == "tool":
        head += f" · {m.get('name', '')}" + (" · error" if m.get("is_error") else "")
    if m.get("stop_hook"):
        head += " · stop hook"
    parts = [f'<div class="msg {html.escape(role)}"><b>{html.escape(head)}</b>']
    if m.get("content"):
        parts.append(f"<pre>{_text(m['content'])}</pre>")
    for c in m.get("tool_calls") or []:
        fn = c.get("function") or {}
        parts.append(f"<pre>→ {html.escape(str(fn.get('name')))}({html.escape(str(fn.get('arguments')))})</pre>")
    if m.get("extra"):
        parts.append(f"<details><summary>provider extras</summary><pre>{html.escape(json.dumps(m['extra'], ensure_ascii=False))}</pre></details>")
    parts.append("</div>")
    return "".join(parts)


def _messages(title: str, messages: list[dict[str, Any]], open_: bool = False) -> str:
    body = "\n".join(_message(m) for m in messages) or "<p>(none)</p>"
    return f"<details{' open' if open_ else ''}><summary>{html.escape(title)} ({len(messages)} messages)</summary>\n{body}</details>"


def _scores(job: Job) -> str:
    if job.scores is None:
        return "<p>Not scored (no scores.json).</p>"
    s = job.scores
    out = [f"<p>Judge: {html.escape(str(s.get('judge', '?')))}</p>", kv_table(sorted(s.get("metrics", {}).items()))]
    items = s.get("items", [])
    if items:
        keys = [k for k in ("index", "kind", "text", "passed", "judged", "confidence", "evidence", "reason", "points", "result") if any(k in i for i in items)]
        rows = [[_cell(i.get(k)) for k in keys] for i in items]
        out.append(table_html(Table("items", f"Items ({sum(1 for i in items if i.get('passed') is True)} of {len(items)} passed)", keys, rows)))
    return "\n".join(out)


def _essence(m: dict[str, Any]) -> tuple[Any, ...]:
    """What a reader sees of a message (bookkeeping fields aside)."""
    return m.get("role"), m.get("content"), json.dumps(m.get("tool_calls"), sort_keys=True)


def _cell(v: Any) -> Any:
    return json.dumps(v, ensure_ascii=False) if isinstance(v, dict | list) else v


def job_html(job: Job) -> str:
    result = job.result or {}
    body = [
        '<p><a href="../index.html">← report</a></p>',
        f"<h1>{html.escape(job.job_id)}</h1>",
        f"<p>{html.escape(job_title(job))}</p>",
        "<p>Record: " + " · ".join(
            f'<a href="../../{quote(job.dir.name)}/{name}">{name}</a>' for name in RECORD_FILES if (job.dir / name).is_file()
        ) + "</p>",
        "<h2>Result</h2>",
        kv_table([(k, result.get(k)) for k in RESULT_KEYS]) if result else "<p>Unfinished (no result.json).</p>",
        "<h2>Scores</h2>",
        _scores(job),
    ]
    files = [p.relative_to(job.dir / "deliverable").as_posix() for p in job.deliverable_files()]
    links = [f'<a href="../../{quote(job.dir.name)}/deliverable/{quote(f)}">{html.escape(f)}</a>' for f in files]
    body.append(f"<h2>Deliverable</h2><p>{' · '.join(links) or '(no files)'}</p>")
    if result.get("final_answer"):
        body.append(f"<pre>{html.escape(str(result['final_answer']))}</pre>")
    if job.tab is not None:
        body += ["<h2>The tab over time</h2>", table_html(timeline(job))]
        body += [f"<details><summary>The tab {html.escape(t)}</summary><pre>{html.escape(text)}</pre></details>" for t, text in snapshots(job)]
    body.append("<h2>Trajectory</h2>")
    view, full = job.view.get("messages", []), job.trajectory
    if [_essence(m) for m in view] == [_essence(m) for m in full]:
        body.append(_messages("Full trajectory (the evaluator view is identical)", full, open_=True))
    else:
        body.append(_messages("Evaluator view (tab traces removed)", view, open_=True))
        body.append(_messages("Full trajectory", full))
    return page(job.job_id, "\n".join(body))
