"""A text rendering of a recorded tab as it stood at a given turn (the paper's Table 5), for reports.

Works from `tab.json` alone: the events replay which candidates were listed and opened, how each
requirement was resolved, what the review showed and when the finish check came.
"""

from __future__ import annotations

from typing import Any

from tab.match import clip, requirement_words, word_set

MAX_CANDIDATES = 10
LINE = 110


def render_tab(record: dict[str, Any], upto_turn: int | None = None) -> str:
    events = [e for e in record.get("events", []) if upto_turn is None or e["turn"] <= upto_turn]
    last = max((e["turn"] for e in record.get("events", [])), default=0)
    turn = last if upto_turn is None else upto_turn
    reqs = [dict(r) for r in record.get("requirements", []) if r["turn_added"] <= turn]
    _replay_resolutions(reqs, events)
    entries = [e for e in record.get("read_log", []) if e["turn"] <= turn]
    candidates = _replay_candidates(events)
    out = [f"Tab at turn {turn}" + (f" (of {last})" if turn != last else "")]

    n_open = sum(r["status"] == "open" for r in reqs)
    out.append(f"(A) Requirements: {len(reqs)} ({n_open} open)")
    for r in reqs:
        how = {"open": "open", "done": "done" + (f" {', '.join(r['entries'])}" if r["entries"] else ""),
               "set_aside": f"set aside: {r['reason']}"}[r["status"]]
        out.append(f"  {r['id']} [{how}] t{r['turn_added']}  {r['text']}")

    chars = sum(e["chars"] for e in entries)
    out.append(f"(B) Read log: {len(entries)} entries, {len({e['path'] for e in entries})} files, {chars:,} characters")
    for e in entries:
        first = next((ln.strip() for ln in e["excerpt"].split("\n") if ln.strip()), "")
        out.append(_cut(f"  {e['id']} t{e['turn']} {e['path']}  [{_cut(e['command'], 40)}]  \"{first}\""))
    out.append(f"(B) Candidates: {len(candidates)}")
    for path, (cmd, t) in list(candidates.items())[:MAX_CANDIDATES]:
        out.append(_cut(f"  {path}  (t{t}: {cmd})"))
    if len(candidates) > MAX_CANDIDATES:
        out.append(f"  ... {len(candidates) - MAX_CANDIDATES} more")

    review = next((e for e in reversed(events) if e["kind"] == "review"), None)
    if review:
        out.append(f"(C) Review at t{review['turn']} ({review['source']})")
        by_id = {e["id"]: e for e in record.get("read_log", [])}
        texts = {r["id"]: r["text"] for r in record.get("requirements", [])}
        for rid in review["open"]:
            out.append(f"  {rid} {texts.get(rid, '')}")
            words = requirement_words(texts.get(rid, ""))
            for eid in review["lines"].get(rid, []):
                entry = by_id.get(eid)
                if entry:
                    out.append(_cut(f"    {eid} {entry['path']}: {_best_line(entry['excerpt'], words)}"))
            if review["candidates"].get(rid):
                out.append(_cut(f"    unopened: {', '.join(review['candidates'][rid])}"))

    out.append("(D) Timeline")
    out.extend(_cut(f"  t{e['turn']} {_describe(e)}") for e in events)
    return "\n".join(out)


def _replay_resolutions(reqs: list[dict[str, Any]], events: list[dict[str, Any]]) -> None:
    by_id = {r["id"]: r for r in reqs}
    for r in reqs:
        r.update(status="open", entries=[], reason=None)
    for e in events:
        if e["kind"] == "resolve" and e["id"] in by_id:
            by_id[e["id"]].update(status=e["status"], entries=e["entries"], reason=e["reason"])


def _replay_candidates(events: list[dict[str, Any]]) -> dict[str, tuple[str, int]]:
    candidates: dict[str, tuple[str, int]] = {}
    for e in events:
        if e["kind"] == "candidates":
            for p in e["paths"]:
                candidates.setdefault(p, (e["command"], e["turn"]))
        elif e["kind"] == "read":
            candidates.pop(e["path"], None)
    return candidates


def _best_line(excerpt: str, words: frozenset[str]) -> str:
    lines = [ln for ln in excerpt.split("\n") if ln.strip()]
    if not lines:
        return ""
    best = max(lines, key=lambda ln: len(words & word_set(ln)))
    return clip(best, words, 90)


def _describe(e: dict[str, Any]) -> str:
    kind = e["kind"]
    if kind == "add":
        return f"add {', '.join(e['ids'])}"
    if kind == "read":
        return f"+{e['entry']} {e['path']}" + (" (was a candidate)" if e.get("opened") else "")
    if kind == "candidates":
        return f"+{len(e['paths'])} candidates [{_cut(e['command'], 50)}]"
    if kind == "review":
        shown = sum(1 for r in e["open"] if e["lines"].get(r))
        return f"review ({e['source']}): {shown} of {len(e['open'])} open shown beside an entry"
    if kind == "resolve":
        how = ", ".join(e["entries"]) if e["status"] == "done" else e["reason"]
        return f"resolve {e['id']} {e['status']}" + (f" ({how})" if how else "")
    if kind == "resolve_refused":
        return f"resolve {e['id']} refused ({e['why']})"
    if kind == "show":
        return f"show {e['entry']}"
    if kind == "finish_check":
        return f"finish check ({e['case']})"
    return kind


def _cut(text: str, limit: int = LINE) -> str:
    """One line of at most `limit` characters (indentation kept, inner whitespace collapsed)."""
    indent = text[: len(text) - len(text.lstrip(" "))]
    text = indent + " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
