"""The tab as it stood at every turn, as data for the viewer's panel.

Each thing the tab held gets the turns it was there: a requirement from `turn_added` with each
status a `resolve` event gave it, a read-log entry from the turn it was captured, a candidate from
the listing that added it until a read of that path (the same replay as `tab.render.render_tab`),
plus every review, finish check and status line with its turn. The page's script then shows, for
turn k, everything whose turn is at most k; no state is rebuilt in the browser.
"""

from __future__ import annotations

from typing import Any

from eval.report.analyses.tabview import describe
from eval.report.pages.viewer_turns import Turn

EXCERPT_LINE = 120


def _first_line(text: str) -> str:
    line = next((ln.strip() for ln in text.split("\n") if ln.strip()), "")
    return line if len(line) <= EXCERPT_LINE else line[: EXCERPT_LINE - 1] + "…"


def _requirements(tab: dict[str, Any]) -> list[dict[str, Any]]:
    reqs = {r["id"]: {"id": r["id"], "text": r["text"], "added": r.get("turn_added", 0), "changes": []}
            for r in tab.get("requirements", [])}
    for e in tab.get("events", []):
        if e["kind"] == "resolve" and e["id"] in reqs:
            how = ", ".join(e.get("entries") or []) if e.get("status") == "done" else str(e.get("reason") or "")
            reqs[e["id"]]["changes"].append([e["turn"], e.get("status"), how])
    return list(reqs.values())


def _candidates(tab: dict[str, Any]) -> list[dict[str, Any]]:
    """One interval per listing: from the listing that added the path to the read that opened it."""
    out: list[dict[str, Any]] = []
    current: dict[str, dict[str, Any]] = {}
    for e in tab.get("events", []):
        if e["kind"] == "candidates":
            for p in e.get("paths") or []:
                if p not in current:
                    current[p] = {"path": p, "command": e.get("command", ""), "listed": e["turn"], "gone": None}
                    out.append(current[p])
        elif e["kind"] == "read" and e.get("path") in current:
            current.pop(e["path"])["gone"] = e["turn"]
    return out


def _reviews(tab: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for e in tab.get("events", []):
        if e["kind"] == "review":
            rows = [[rid, e.get("lines", {}).get(rid) or [], e.get("candidates", {}).get(rid) or []] for rid in e.get("open", [])]
            out.append({"turn": e["turn"], "source": e.get("source"), "rows": rows})
    return out


def status_lines(turns: list[Turn]) -> list[list[Any]]:
    """[turn, status line] for every tool result that carried one (the tab's appendix)."""
    return [[t.number, str(s.message["appendix"]).strip()] for t in turns for s in t.messages if s.message.get("appendix")]


def tab_data(tab: dict[str, Any] | None, turns: list[Turn]) -> dict[str, Any]:
    """Everything the panel shows, each item stamped with its turn(s)."""
    last = max((t.number for t in turns), default=0)
    if tab is None:
        return {"last": last, "tab": False, "status": status_lines(turns)}
    entries = [{"id": e["id"], "path": e["path"], "command": e["command"], "turn": e["turn"], "chars": e.get("chars", len(e["excerpt"])),
                "first": _first_line(e["excerpt"]), "excerpt": e["excerpt"]} for e in tab.get("read_log", [])]
    finish = [{"turn": e["turn"], "case": e.get("case"), "text": e.get("text", "")} for e in tab.get("events", []) if e["kind"] == "finish_check"]
    return {
        "last": max(last, *(e["turn"] for e in tab.get("events", [])), 0),
        "tab": True,
        "settings": tab.get("settings") or {},
        "requirements": _requirements(tab),
        "entries": entries,
        "candidates": _candidates(tab),
        "reviews": _reviews(tab),
        "finish": finish,
        "status": status_lines(turns),
    }


def events_by_turn(tab: dict[str, Any] | None) -> dict[int, list[str]]:
    """A one-line description of each tab event, by turn (for the turn headers)."""
    out: dict[int, list[str]] = {}
    for e in (tab or {}).get("events", []):
        out.setdefault(e["turn"], []).append(describe(e)[1])
    return out
