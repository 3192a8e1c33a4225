"""What a replayed tab changed against the recorded one: read-log entries gained and lost, candidates
gained and lost, resolutions that would now be refused (or accepted), and the reviews' hits per
requirement (a review shows a requirement beside at least one read-log line)."""

from __future__ import annotations

from typing import Any


def compare(before: dict[str, Any] | None, after: dict[str, Any]) -> dict[str, Any]:
    """The differences of one job (`before` None: the job had no tab, everything is new)."""
    before = before or {"read_log": [], "candidates": [], "events": [], "requirements": []}
    old, new = _entries(before), _entries(after)
    return {
        "entries_gained": [_name(e) for k, e in new.items() if k not in old],
        "entries_lost": [_name(e) for k, e in old.items() if k not in new],
        "candidates_gained": sorted({c["path"] for c in after["candidates"]} - {c["path"] for c in before["candidates"]}),
        "candidates_lost": sorted({c["path"] for c in before["candidates"]} - {c["path"] for c in after["candidates"]}),
        **_resolutions(before, after),
        "review_hits": {"before": _hits(before), "after": _hits(after)},
    }


def _entries(tab: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(e["path"], e["excerpt"]): e for e in tab.get("read_log", [])}


def _name(entry: dict[str, Any]) -> str:
    return f"{entry['path']} (turn {entry['turn']}, {entry.get('chars', len(entry['excerpt']))} chars)"


def _resolutions(before: dict[str, Any], after: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The agent's tab_resolve calls, in order, as the recorded tab and today's answered them."""
    was = [e for e in before.get("events", []) if e["kind"] in ("resolve", "resolve_refused")]
    now = [e for e in after.get("events", []) if e["kind"] in ("resolve", "resolve_refused")]
    refused, accepted = [], []
    for a, b in zip(was, now, strict=False):
        if a["kind"] == "resolve" and b["kind"] == "resolve_refused":
            refused.append({"id": a["id"], "turn": a["turn"], "status": a.get("status"), "why": b.get("why")})
        elif a["kind"] == "resolve_refused" and b["kind"] == "resolve":
            accepted.append({"id": b["id"], "turn": b["turn"], "status": b.get("status"), "was_refused_for": a.get("why")})
    return {"now_refused": refused, "now_accepted": accepted}


def _hits(tab: dict[str, Any]) -> dict[str, list[int]]:
    """Per requirement: [reviews that showed it beside a read-log line, reviews that listed it open]
    (the agent's tab_review calls only, as Table 3's coverage counts them)."""
    out: dict[str, list[int]] = {}
    for e in tab.get("events", []):
        if e["kind"] == "review" and e.get("source") == "tool":
            for rid in e["open"]:
                pair = out.setdefault(rid, [0, 0])
                pair[0] += bool(e["lines"].get(rid))
                pair[1] += 1
    return out


def totals(diffs: list[dict[str, Any]]) -> dict[str, int]:
    """The differences summed over jobs."""
    out = {k: sum(len(d[k]) for d in diffs) for k in ("entries_gained", "entries_lost", "candidates_gained", "candidates_lost",
                                                      "now_refused", "now_accepted")}
    out["jobs_changed"] = sum(1 for d in diffs if any(d[k] for k in out if k != "jobs_changed"))
    for side in ("before", "after"):
        pairs = [p for d in diffs for p in d["review_hits"][side].values()]
        out[f"review_hits_{side}"] = sum(p[0] for p in pairs)
        out[f"review_slots_{side}"] = sum(p[1] for p in pairs)
    return out
