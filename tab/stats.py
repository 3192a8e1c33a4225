"""Numbers analyses take from a recorded tab (the paper's Table 3), from `tab.json` alone."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def review_coverage(record: dict[str, Any], sources: Iterable[str] = ("tool",)) -> float | None:
    """Share of open requirements that the review showed beside a read-log line sharing their words.

    Pooled over every review pulled in the attempt (source "tool"; add "finish_check" to count the
    review inside the finish check). None when no review with an open requirement was pulled.
    """
    wanted = set(sources)
    shown = total = 0
    for e in record.get("events", []):
        if e["kind"] == "review" and e["source"] in wanted:
            total += len(e["open"])
            shown += sum(1 for rid in e["open"] if e["lines"].get(rid))
    return shown / total if total else None


def tab_summary(record: dict[str, Any]) -> dict[str, float | None]:
    """Table 3's per-attempt numbers."""
    log = record.get("read_log", [])
    return {
        "requirements": len(record.get("requirements", [])),
        "read_log_entries": len(log),
        "distinct_files": len({e["path"] for e in log}),
        "excerpt_chars": sum(e["chars"] for e in log),
        "candidates": len(record.get("candidates", [])),
        "review_coverage": review_coverage(record),
    }
