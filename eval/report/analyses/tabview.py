"""A Table 5-like view of one job's tab over time, from `tab.json` alone: a timeline of every tab
event (what the agent wrote to the tab, what the environment captured, reviews, resolutions, the
finish check) with the tab's size after each, and the tab rendered (`tab.render.render_tab`) at
the moments that matter: after the requirements are stated, at each review and finish check, and
at the end.
"""

from __future__ import annotations

from typing import Any

from eval.report.load import Job
from eval.report.section import Table
from tab.render import render_tab

DETAIL = 300
MAX_SNAPSHOTS = 10


def _cut(text: str, limit: int = DETAIL) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(e: dict[str, Any]) -> tuple[str, str, str]:
    """(who, what, detail) of one tab event."""
    kind = e["kind"]
    if kind == "add":
        return "agent", f"tab_add → {', '.join(e.get('ids') or []) or 'nothing new'}", _cut("; ".join(e.get("texts") or []))
    if kind == "resolve":
        how = f"citing {', '.join(e.get('entries') or [])}" if e.get("status") == "done" else f"reason: {e.get('reason')}"
        return "agent", f"tab_resolve {e['id']} {e.get('status')}", _cut(how)
    if kind == "resolve_refused":
        return "agent", f"tab_resolve {e['id']} refused", _cut(e.get("why", ""))
    if kind == "show":
        return "agent", f"tab_show {e.get('entry')}", ""
    if kind == "review":
        parts = []
        for rid in e.get("open", []):
            lines = ", ".join(e.get("lines", {}).get(rid) or []) or "no line"
            cands = e.get("candidates", {}).get(rid) or []
            parts.append(f"{rid} ← {lines}" + (f" · unopened: {', '.join(cands)}" if cands else ""))
        who = "agent" if e.get("source") == "tool" else "environment"
        return who, f"review ({e.get('source')})", _cut("; ".join(parts) or "no open requirement")
    if kind == "finish_check":
        return "environment", f"finish check ({e.get('case')})", _cut(e.get("text", ""))
    if kind == "read":
        return "environment", f"+{e.get('entry')} {e.get('path')}", f"{e.get('chars')} chars" + (" (was a candidate)" if e.get("opened") else "")
    if kind == "candidates":
        paths = e.get("paths") or []
        return "environment", f"+{len(paths)} candidates", _cut(f"{', '.join(paths[:5])}{' …' if len(paths) > 5 else ''} (from `{e.get('command', '')}`)")
    return "environment", kind, _cut({k: v for k, v in e.items() if k not in ("turn", "kind")})


class _Replay:
    """The tab's size as events are applied in order."""

    def __init__(self, tab: dict[str, Any]) -> None:
        self.added_at = {r["id"]: r.get("turn_added", 0) for r in tab.get("requirements", [])}
        self.requirements: set[str] = set()
        self.resolved: set[str] = set()
        self.entries = 0
        self.files: set[str] = set()
        self.candidates: set[str] = set()

    def apply(self, e: dict[str, Any]) -> None:
        kind = e["kind"]
        if kind == "add":
            self.requirements.update(e.get("ids") or [])
        elif kind == "resolve":
            self.resolved.add(e["id"])
        elif kind == "read":
            self.entries += 1
            self.files.add(e.get("path", ""))
            self.candidates.discard(e.get("path", ""))
        elif kind == "candidates":
            self.candidates.update(e.get("paths") or [])

    def sizes(self) -> list[int]:
        return [len(self.requirements), len(self.requirements - self.resolved), self.entries, len(self.files), len(self.candidates)]


def timeline(job: Job) -> Table:
    """One row per tab event, with the tab's size just after it."""
    columns = ["turn", "who", "what", "detail", "requirements", "open", "entries", "files", "candidates"]
    replay, rows = _Replay(job.tab or {}), []
    for e in (job.tab or {}).get("events", []):
        replay.apply(e)
        rows.append([e.get("turn"), *describe(e), *replay.sizes()])
    return Table(f"tab_{job.job_id}", f"The tab over time: {job.job_id}", columns, rows)


def snapshot_turns(tab: dict[str, Any]) -> list[int | None]:
    """Turns worth a full rendering: requirements stated, each review and finish check; None = the end."""
    events = tab.get("events", [])
    turns = [e["turn"] for e in events if e["kind"] in ("review", "finish_check")]
    first_add = next((e["turn"] for e in events if e["kind"] == "add"), None)
    picked = sorted(set(turns + ([first_add] if first_add is not None else [])))
    return [*picked[: MAX_SNAPSHOTS - 1], None]


def snapshots(job: Job) -> list[tuple[str, str]]:
    """(title, rendered tab) at each snapshot turn."""
    out = []
    for t in snapshot_turns(job.tab or {}):
        out.append(("at the end" if t is None else f"after turn {t}", render_tab(job.tab or {}, upto_turn=t)))
    return out


def render_markdown(job: Job) -> str:
    if job.tab is None:
        return f"{job.job_id} has no tab (method {job.method})\n"
    off = [k for k, v in (job.tab.get("settings") or {}).items() if v is False]
    head = f"# {job.job_id}\n\n{job.benchmark} · task {job.task_id} · {job.method} · {job.model} · seed {job.seed}"
    head += f" · switches off: {', '.join(off)}\n\n" if off else "\n\n"
    parts = [head, timeline(job).markdown()]
    for title, text in snapshots(job):
        parts.append(f"\n#### The tab {title}\n\n```\n{text}\n```\n")
    return "\n".join(parts)
