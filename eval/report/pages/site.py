"""The report as a static site: `index.html` (tables, figures, every job), one page per job,
`compare/` with the side-by-side views, and `links.js` (each job's side-by-side links).

Self-contained (see `html.py`): the pages open from disk anywhere.
"""

from __future__ import annotations

import gc
import html
import json
import logging
import multiprocessing
import os
import shutil
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from urllib.parse import quote

from eval.report.load import Job, Sweep, header_notes
from eval.report.pages.glance import GLANCE, PER_TASK, glance_html, per_task_html
from eval.report.pages.html import page, section_html
from eval.report.pages.jobpage import job_html
from eval.report.pages.page_files import write_new, write_page
from eval.report.pages.viewer_assets import LINKS, LINKS_GLOBAL, script_tag
from eval.report.pages.viewer_compare import compare_html, compare_name, pairs
from eval.report.pages.viewer_index import jobs_section
from eval.report.section import Section

log = logging.getLogger(__name__)
POOL_PAGES = 2_000  # from this many pages to write, worker processes share them out
MAX_WORKERS = 4
CHUNK_PAGES = 500  # pages per task sent to a worker
Page = tuple[list[Job], Callable[[], str]]  # (its jobs, render)



def index_html(sweep: Sweep, sections: list[Section], compare: dict[str, list[tuple[str, str]]]) -> str:
    """The first screen (`glance.py`: the forest plot and the leaderboard's heat map), the per-task
    view, then every table and figure, then every job."""
    toc = " · ".join([f'<a href="#{GLANCE}">At a glance</a>', f'<a href="#{PER_TASK}">Per task</a>',
                      *(f'<a href="#{html.escape(s.name)}">{html.escape(s.title.split(":")[0])}</a>' for s in sections)])
    body = [f"<h1>Report of sweep {html.escape(sweep.name)}</h1>", f"<p>{toc} · <a href=\"#jobs\">Jobs</a></p>"]
    body.append(f"<p>{len(sweep.jobs)} jobs, {len(sweep.scored())} scored.</p>")
    body += [f'<p class="skip">{html.escape(n)}</p>' for n in header_notes(sweep)]
    body += [glance_html(sweep, sections), per_task_html(sweep, sections)]
    body += [section_html(s) for s in sections]
    body.append(f'<section id="jobs"><h2>Jobs</h2>{jobs_section(sweep, compare)}</section>')
    return page(f"Report: {sweep.name}", "\n".join(body), script_tag())


def compare_links(sweep: Sweep) -> dict[str, list[tuple[str, str]]]:
    """Each job's side-by-side views as (label, href under `report/`) (`viewer_compare.pairs`)."""
    links: dict[str, list[tuple[str, str]]] = {}
    for a, b in pairs(sweep):
        name = quote(compare_name(a, b))
        for j, other in ((a, b), (b, a)):
            links.setdefault(j.job_id, []).append((f"vs {other.method}", f"compare/{name}"))
    return links


def write_links(out: Path, compare: dict[str, list[tuple[str, str]]]) -> Path:
    """`links.js`: every job page loads it (`<script src>`, which works from `file://`) and draws its
    side-by-side links from it, so a partner that finishes later never makes a page be rewritten."""
    body = json.dumps(dict(sorted(compare.items())), ensure_ascii=True, separators=(",", ":"))
    path = out / LINKS
    write_page(path, f"window.{LINKS_GLOBAL} = {body};\n")
    return path


def write_index(sweep: Sweep, sections: list[Section], out: Path, compare: dict[str, list[tuple[str, str]]]) -> Path:
    index = out / "index.html"
    write_page(index, index_html(sweep, sections, compare))
    return index


class Pages:
    """The job and side-by-side pages a build writes, while the caller goes on (the report's
    analyses): with many pages, by worker processes started on entry; all written when the block ends.

    A build writes only the pages that are missing (a finished job's page was written with its
    record: `completed.py`), each only if still missing when it is done (never over a page the
    sweep's driver wrote meanwhile); with `rewrite` (`--pages`, after a change to the report's
    code), every page. Pages of jobs whose folder is gone are removed."""

    def __init__(self, sweep: Sweep, out: Path, workers: int | None = None, rewrite: bool = False) -> None:
        self.out = out
        self.workers = min(MAX_WORKERS, os.cpu_count() or 1) if workers is None else workers
        wanted: dict[str, Page] = {f"compare/{compare_name(a, b)}": ([a, b], partial(compare_html, a, b)) for a, b in pairs(sweep)}
        wanted |= {f"jobs/{j.job_id}.html": ([j], partial(job_html, j)) for j in sweep.jobs}
        existing = set()
        for sub in ("jobs", "compare"):
            (out / sub).mkdir(parents=True, exist_ok=True)
            existing |= {f"{sub}/{e.name}" for e in os.scandir(out / sub) if not e.name.startswith(".")}  # not a page being written
        for rel in sorted(existing - set(wanted)):
            if not (sweep.dir / _job_of(rel)).is_dir():  # a job gone from the sweep (not one newer than this build's reading)
                shutil.rmtree(out / rel) if (out / rel).is_dir() and not (out / rel).is_symlink() else (out / rel).unlink()
        todo = [(rel, jobs, render) for rel, (jobs, render) in wanted.items() if rewrite or rel not in existing]
        self.groups = _groups(todo)
        self.replace = rewrite
        self.pool: ProcessPoolExecutor | None = None
        self.futures: list[Future[None]] = []
        log.info("report: writing %d of %d pages (the others were written with their records)", len(todo), len(wanted))

    def __enter__(self) -> Pages:
        workers = self.workers
        if sum(len(g) for g in self.groups) >= POOL_PAGES and workers >= 2:
            # spawn, never fork: the sweep's driver calls the report from a process with Ray's threads
            # (spawn imports the driver's main module again: every entry point here keeps its work
            # under `if __name__ == "__main__"`)
            try:
                self.pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
                self.futures = [self.pool.submit(write_chunk, self.out, c, self.replace) for c in _chunks(self.groups)]
            except Exception as e:  # noqa: BLE001 - a pool that cannot start: the pages are written here
                self._pool_failed(e)
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        if kind is not None:  # the caller failed: no page is waited for
            if self.pool is not None:
                self.pool.shutdown(wait=False, cancel_futures=True)
            return
        if self.pool is not None:
            try:
                for f in self.futures:
                    f.result()
                self.pool.shutdown()
            except Exception as e:  # noqa: BLE001 - a broken pool (a bug in a page shows again below)
                self._pool_failed(e)
        if self.pool is None:
            for pages in self.groups:
                write_pages(self.out, pages, self.replace)

    def _pool_failed(self, e: Exception) -> None:
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), "")
        log.warning("the page workers failed (%s: %s); writing the pages in this process", type(e).__name__, first)
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = None


def _job_of(rel: str) -> str:
    """The job folder a page belongs to (`jobs/<id>.html`, `compare/<id>__vs__<method>.html`)."""
    return rel.partition("/")[2].removesuffix(".html").partition("__vs__")[0]


def _groups(todo: list[tuple[str, list[Job], Callable[[], str]]]) -> list[list[tuple[str, list[Job], Callable[[], str]]]]:
    """The pages by task (one benchmark, harness, task, model, seed): a group's jobs are read once for
    their pages and their side-by-sides."""
    groups: dict[tuple[str, str, str, str, int], list[tuple[str, list[Job], Callable[[], str]]]] = {}
    for rel, jobs, render in todo:
        j = jobs[0]
        groups.setdefault((j.benchmark, j.harness, j.task_id, j.model, j.seed), []).append((rel, jobs, render))
    return list(groups.values())


def _chunks(groups: list[list[tuple[str, list[Job], Callable[[], str]]]]) -> list[list[list[tuple[str, list[Job], Callable[[], str]]]]]:
    """Whole task groups, about CHUNK_PAGES pages a worker's task."""
    chunks, chunk = [], []
    for pages in groups:
        chunk.append(pages)
        if sum(len(c) for c in chunk) >= CHUNK_PAGES:
            chunks.append(chunk)
            chunk = []
    return chunks + ([chunk] if chunk else [])


def write_chunk(out: Path, chunk: list[list[tuple[str, list[Job], Callable[[], str]]]], replace: bool = True) -> None:
    """A worker's share: whole task groups (see `write_pages`), without the cyclic collector
    (see `build.no_gc`; a worker process lives for one build)."""
    gc.disable()
    for pages in chunk:
        write_pages(out, pages, replace)


def write_pages(out: Path, pages: list[tuple[str, list[Job], Callable[[], str]]], replace: bool = True) -> None:
    """One task group's pages, each of its jobs read once; without `replace`, a page that exists
    by the time it is written is left as it is (`write_new`)."""
    with ExitStack() as stack:
        for j in {id(j): j for _, jobs, _ in pages for j in jobs}.values():
            stack.enter_context(j.reading())
        for rel, _, render in pages:
            (write_page if replace else write_new)(out / rel, render())
