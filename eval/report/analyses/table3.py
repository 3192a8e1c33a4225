"""Table 3: the tab's contents per benchmark, method and model (medians over jobs), the review's
coverage, and how the agent used the tab — all from `tab.json` (`tab.stats` gives the per-job numbers).

Review coverage is the tab's own statistic per job (open requirements the review showed beside a
read-log line sharing their words, over the reviews the agent pulled), averaged over the jobs that
pulled a review with an open requirement.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from eval.report.analyses.stats import median
from eval.report.load import Job, Sweep
from eval.report.method_names import method_key
from eval.report.section import Section, Skip, Table, pct
from tab.stats import tab_summary

CONTENTS = ("requirements", "read_log_entries", "distinct_files", "excerpt_chars", "candidates")
BEHAVIOURS = ("added_before_check", "reviewed", "showed", "resolved_citing", "opened_candidate")


def usage(tab: dict[str, Any]) -> dict[str, bool]:
    """What the agent did with the tab in one job (the behaviour columns), from its events."""
    events = tab.get("events", [])
    checks = [e["turn"] for e in events if e["kind"] == "finish_check"]
    first_check = checks[0] if checks else float("inf")
    return {
        "added_before_check": any(e["kind"] == "add" and e.get("ids") and e["turn"] <= first_check for e in events),
        "reviewed": any(e["kind"] == "review" and e.get("source") == "tool" for e in events),
        "showed": any(e["kind"] == "show" for e in events),
        "resolved_citing": any(e["kind"] == "resolve" and e.get("status") == "done" and e.get("entries") for e in events),
        "opened_candidate": any(e["kind"] == "read" and e.get("opened") for e in events),
    }


def tab_row(job: Job) -> dict[str, Any]:
    """What Table 3 takes from one job's tab (kept in the job's memo: the tab is read once)."""

    return job.derived("tab_row", lambda: summarize(job.tab or {}))


COLUMNS = ["benchmark", "method", "model", "jobs", *CONTENTS, "jobs_reviewed", "review_coverage_pct",
           *(f"{b}_pct" for b in BEHAVIOURS)]
TITLE = "Table 3: the tab's contents (medians over jobs), review coverage (mean over jobs that reviewed) and use of the tab (% of jobs)"


def rows_of(groups: dict[tuple[str, str, str], list[dict[str, Any]]]) -> list[list[Any]]:
    """Table 3's rows: one per (benchmark, method, model), from each job's `tab_row` (also what
    `python -m eval.replay` computes from replayed tabs)."""
    rows = []
    for key in sorted(groups, key=lambda k: (k[0], method_key(k[1]), k[2])):
        tabs = groups[key]
        summaries = [t["summary"] for t in tabs]
        coverage = [s["review_coverage"] for s in summaries if s["review_coverage"] is not None]
        used = [t["usage"] for t in tabs]
        rows.append([
            *key, len(tabs), *(median([s[c] for s in summaries]) for c in CONTENTS),
            len(coverage), pct(statistics.fmean(coverage)) if coverage else None,
            *(pct(sum(u[b] for u in used) / len(used)) for b in BEHAVIOURS),
        ])
    return rows


def summarize(tab: dict[str, Any]) -> dict[str, Any]:
    """What Table 3 takes from one tab record."""
    return {"summary": tab_summary(tab), "usage": usage(tab)}


def build(sweep: Sweep, out: Path) -> Section:
    groups: dict[tuple[str, str, str], list[Job]] = defaultdict(list)
    for j in sweep.jobs:
        if j.has_tab and not j.errored:
            groups[(j.benchmark, j.harness_method, j.model)].append(j)  # a production harness's method apart
    if not groups:
        raise Skip("no job has a tab (no tab.json; run a runningtab method)")
    rows = rows_of({key: [tab_row(j) for j in jobs] for key, jobs in groups.items()})
    table = Table("table3", TITLE, COLUMNS, rows)
    table.notes.append(
        "review coverage: share of open requirements a pulled review showed beside a read-log line sharing their words; "
        "behaviours: requirements added before the finish check, tab_review pulled, tab_show used, "
        "a requirement resolved done citing entries, a listed candidate opened"
    )
    return Section("table3", "Table 3: the tab's contents", tables=[table])
