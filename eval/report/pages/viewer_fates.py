"""Where each value of a failed rubric went, turn by turn: the shown log's excerpts that showed it
(and whether the model still saw it there after context management), the read-log entries that hold
it, and whether the deliverable kept it. The categories are `fates.py`'s; this adds the turns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from eval.report.analyses.fates import Fate, fates
from eval.report.analyses.values import Haystack, Value, observation
from eval.report.load import Job
from eval.report.pages.viewer_turns import Turn


@dataclass
class Trail:
    value: Value
    shown_at: list[int]  # turns whose workspace content (the shown log's excerpts) held the value
    seen_at: list[int]  # of those, the turns where the model saw it (not cut by context management)
    entries: list[str]  # read-log entries whose excerpt holds it
    delivered: bool

    @property
    def lost(self) -> bool:
        """Shown to the agent, absent from the deliverable."""
        return bool(self.shown_at) and not self.delivered


@dataclass
class RubricTrail:
    fate: Fate
    trails: list[Trail]

    @property
    def index(self) -> int:
        return int(self.fate.item.get("index", -1))


def _shown_at(job: Job) -> list[tuple[int, Haystack]]:
    """(turn, excerpt) of every excerpt of the job's shown log: where a value counts as shown."""
    return [(int(e.get("turn", 0)), Haystack(str(e.get("excerpt", "")))) for e in job.shown or []]


def _cut(turns: list[Turn]) -> dict[int, list[Haystack]]:
    """Per turn, what the model saw of each tool result that context management cut."""
    out: dict[int, list[Haystack]] = {}
    for t in turns:
        for s in t.messages:
            if s.message.get("role") != "tool" or s.seen is None:
                continue
            seen = observation({"content": s.seen, "appendix": s.message.get("appendix")})
            if seen != observation(s.message):
                out.setdefault(t.number, []).append(Haystack(seen))
    return out


def rubric_trails(job: Job, turns: list[Turn]) -> list[RubricTrail]:
    """The failed rubrics with expected values, each value with its trail (empty when unscored)."""
    failed = [f for f in fates(job) if not f.passed and f.values]
    if not failed:
        return []
    excerpts, cut = _shown_at(job), _cut(turns)
    log = [(e["id"], Haystack(str(e.get("excerpt", "")))) for e in (job.tab or {}).get("read_log", [])]
    out = []
    for f in failed:
        delivered = {v.key for v in f.delivered}
        trails = []
        for v in f.values:
            shown = [(t, t not in cut or any(h.has(v) for h in cut[t])) for t, hay in excerpts if hay.has(v)]
            trails.append(Trail(
                value=v,
                shown_at=sorted({t for t, _ in shown}),
                seen_at=sorted({t for t, ok in shown if ok}),
                entries=[eid for eid, hay in log if hay.has(v)],
                delivered=v.key in delivered,
            ))
        out.append(RubricTrail(f, trails))
    return out


def trail_text(tr: Trail, has_log: bool) -> str:
    """One value's trail in a line: `55,000: shown t3 (cut t3) · read L2 · lost`."""
    parts = [tr.value.text + ":"]
    if tr.shown_at:
        turns = ", ".join(f"t{t}" for t in tr.shown_at[:8]) + (" …" if len(tr.shown_at) > 8 else "")
        cut = [t for t in tr.shown_at if t not in tr.seen_at]
        parts.append(f"shown {turns}" + (f" (cut by context management at {', '.join(f't{t}' for t in cut[:5])})" if cut else ""))
    else:
        parts.append("never shown")
    if has_log:
        parts.append(f"· read {', '.join(tr.entries)}" if tr.entries else "· not in the read log")
    parts.append("· delivered" if tr.delivered else ("· lost" if tr.shown_at else "· not delivered"))
    return " ".join(parts)


def summary(job: Job, turns: list[Turn]) -> dict[int, dict[str, Any]]:
    """By rubric index: its text, category and (trail line, lost) per value (for tables); `turns`
    are the job's own (`viewer_turns.turns(job)`): within `Job.reading` the summary is made once."""
    return job.held("summary", lambda: _summary(job, turns))


def _summary(job: Job, turns: list[Turn]) -> dict[int, dict[str, Any]]:
    has_log = bool((job.tab or {}).get("read_log"))
    return {
        rt.index: {"text": rt.fate.item.get("text", ""), "category": rt.fate.category,
                   "trails": [(trail_text(t, has_log), t.lost) for t in rt.trails]}
        for rt in rubric_trails(job, turns)
    }
