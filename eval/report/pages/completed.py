"""Pages written with their records: a job's page when its record completes or is re-scored, a
side-by-side page when the second job of its pair completes (or either is re-scored).

So a build never renders a finished job's page again: it writes only pages that are missing (a
report from scratch, a job the driver could not write a page for) and the side-by-side links every
job page loads (`site.LINKS`). Writing a page never fails a job: an error is logged, the record
stands, and the next build writes the page that is missing.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from eval.report.load import Job, Sweep, load_sweep, read_job
from eval.report.pages.jobpage import job_html
from eval.report.pages.page_files import REPORT_DIR
from eval.report.pages.site import write_pages
from eval.report.pages.viewer_compare import compare_html, compare_name, pairs
from runners.core.job_record import has_file
from runners.core.record_files import RESULT

log = logging.getLogger(__name__)


def pages_of(sweep: Sweep, job_ids: Iterable[str]) -> list[str]:
    """Write the pages of `job_ids` and every side-by-side page they make with a finished job of
    `sweep` (rewritten whole, even when present); returns their paths under `report/`."""
    wanted = set(job_ids)
    todo = [(f"jobs/{j.job_id}.html", [j], partial(job_html, j)) for j in sweep.jobs if j.job_id in wanted]
    for a, b in pairs(sweep):
        if (a.job_id in wanted or b.job_id in wanted) and a.result is not None and b.result is not None:
            todo.append((f"compare/{compare_name(a, b)}", [a, b], partial(compare_html, a, b)))
    out = sweep.dir / REPORT_DIR
    for sub in ("jobs", "compare"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    write_pages(out, todo)
    return [rel for rel, _, _ in todo]


def at_completion(sweep_dir: Path, job_id: str, group: Iterable[str], baseline: str, treatment: str,
                  finished: Job | None = None) -> list[str]:
    """The pages due when `job_id`'s record completes: its own and its side-by-sides with the
    finished jobs of `group` (the ids of the jobs on its benchmark, task, model and seed: the
    sweep's driver knows them from its grid). `finished`: the job as the caller read it from its
    record (the driver's books), else read here. Never raises: a page that cannot be written is
    logged and left to the next build."""
    if not has_file(sweep_dir / job_id, RESULT):
        return []  # no record completed (the job failed before writing one): nothing to show yet
    try:
        configs: dict = {}
        jobs = [finished if finished is not None else read_job(sweep_dir / job_id, configs)]
        for other in group:
            d = sweep_dir / other
            if other != job_id and has_file(d, RESULT):  # its folder's or its pack's
                jobs.append(read_job(d, configs))
        return pages_of(Sweep(sweep_dir, jobs, [], baseline, treatment), [job_id])
    except Exception as e:  # noqa: BLE001 - a page must never fail a job: the record stands
        log.warning("the report pages of %s could not be written (%s: %s); the next report build writes them", job_id, type(e).__name__, e)
        return []


def rescored(job_dirs: Iterable[Path]) -> None:
    """After re-scoring: the pages of these jobs and their side-by-sides, in each sweep whose
    report exists (a sweep without one gets every page at its first build). Never raises."""
    by_sweep: dict[Path, list[str]] = {}
    for d in job_dirs:
        by_sweep.setdefault(Path(d).parent, []).append(Path(d).name)
    for sdir, names in by_sweep.items():
        if not (sdir / REPORT_DIR).is_dir():
            continue
        try:
            sweep = load_sweep(sdir)
            ids = [j.job_id for j in sweep.jobs if j.dir.name in set(names)]
            pages_of(sweep, ids)
        except Exception as e:  # noqa: BLE001 - the scores stand; the pages can be written again (--pages)
            log.warning("the report pages of %d re-scored job(s) in %s could not be written (%s: %s); run python -m eval.report %s --pages",
                        len(names), sdir, type(e).__name__, e, sdir)

