"""What the probe asks about: failed rubrics of tab jobs whose values the deliverable left out
entirely, masked, with the values the read log holds as the ones to recover."""

from __future__ import annotations

from dataclasses import dataclass

from eval.report.analyses.fates import fates
from eval.report.analyses.values import Value, mask
from eval.report.load import Job, Sweep


@dataclass
class ProbeItem:
    job: Job
    rubric: int  # the rubric item's index
    masked: str  # the rubric text with its values replaced by [V1], [V2], ...
    labels: dict[str, Value]  # every masked value
    targets: list[str]  # the labels whose values the read log holds (what is scored)

    @property
    def task(self) -> str:
        return str(self.job.view.get("task") or "")


def probe_items(sweep: Sweep, methods: tuple[str, ...]) -> list[ProbeItem]:
    """For each scored job of `methods` with a captured read log, each failed rubric whose values are
    all absent from the deliverable and at least one of which the read log holds (and is written in
    the rubric's text, so that it can be masked)."""
    out = []
    for job in sweep.jobs:
        settings = job.tab_settings
        if job.method not in methods or job.scores is None or not settings or not settings["capture"]:
            continue
        for f in fates(job):
            if f.passed or not f.left_out_entirely:
                continue
            text, labels = mask(str(f.item.get("text", "")), f.values)
            held = {v.key for v in f.in_log}
            targets = [lab for lab, v in labels.items() if v.key in held]
            if targets:
                out.append(ProbeItem(job, int(f.item.get("index", 0)), text, labels, targets))
    return out
