"""Where each rubric's expected values went in one job: shown to the agent, kept in the deliverable,
held in the read log. Figure 2, Figure 4 and the recovery probe all read these.

A failed rubric with expected values falls in exactly one category:
  never_shown     none of its values appeared in workspace content the agent received;
  shown_missing   some value that appeared there is absent from the deliverable;
  present_wrong   every value that appeared is in the deliverable, yet the rubric failed.
A failed rubric without expected values is counted as `no_values`. "Shown" is the shown log's rule
(`tab/shown.py`): excerpts of workspace files as the tab's capture finds them, for every method, never
harness text, paths, error messages, listings or the prompt. A record without a shown log (written
before it existed) has no fates: the analyses leave it out and say how many they left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from eval.report.analyses.values import (
    Haystack,
    Value,
    deliverable,
    read_log,
    rubric_items,
    rubric_values,
    shown,
)
from eval.report.load import Job

CATEGORIES = ("never_shown", "shown_missing", "present_wrong")
LABELS = {
    "never_shown": "never shown",
    "shown_missing": "shown but missing",
    "present_wrong": "present but judged wrong",
}


@dataclass
class Fate:
    item: dict[str, Any]
    values: list[Value]
    shown: list[Value] = field(default_factory=list)
    delivered: list[Value] = field(default_factory=list)
    in_log: list[Value] = field(default_factory=list)  # empty when the job has no read log

    @property
    def passed(self) -> bool:
        return self.item.get("passed") is True

    @property
    def missing(self) -> list[Value]:
        """Values that were shown to the agent yet are absent from the deliverable."""
        keys = {v.key for v in self.delivered}
        return [v for v in self.shown if v.key not in keys]

    @property
    def left_out_entirely(self) -> bool:
        """The deliverable holds none of the rubric's values (the probe's requirements)."""
        return bool(self.values) and not self.delivered

    @property
    def category(self) -> str | None:
        """The failed rubric's category (None for a passed rubric or one without values)."""
        if self.passed or not self.values:
            return None
        if not self.shown:
            return "never_shown"
        return "shown_missing" if self.missing else "present_wrong"


def fates(job: Job) -> list[Fate]:
    """Every rubric item of a scored job with where its values went (computed once per job); none for
    a job without rubric items or without a shown log."""
    return job.derived("fates", lambda: _fates(job))


def _fates(job: Job) -> list[Fate]:
    items = rubric_items(job)
    shown_text = shown(job) if items else None
    if shown_text is None:
        return []
    obs, out = Haystack(shown_text), Haystack(deliverable(job))
    log = Haystack(read_log(job)) if (job.tab or {}).get("read_log") else None
    result = []
    for item in items:
        values = rubric_values(item)
        result.append(
            Fate(
                item=item,
                values=values,
                shown=[v for v in values if obs.has(v)],
                delivered=[v for v in values if out.has(v)],
                in_log=[v for v in values if log is not None and log.has(v)],
            )
        )
    return result


def unshown(jobs: list[Job]) -> int:
    """How many of these scored jobs with rubric items have no shown log (recorded before it existed),
    so that no analysis of what was shown can count them."""
    return sum(1 for j in jobs if rubric_items(j) and not fates(j))


def unshown_note(n: int) -> str:
    return (f"{n} job(s) recorded without a shown log (shown.json, written by every job since the rule that "
            "counts only workspace content as shown) are left out: run them again to count them")
