"""Running every analysis over a sweep and writing what they return (Markdown, CSV, PNG, HTML, W&B).

An analysis that cannot run on this sweep raises `Skip` with the reason; the report keeps a line
saying why instead of failing. Any other error in one analysis is reported the same way (with its
traceback in the log), so that one broken analysis never costs the others.
"""

from __future__ import annotations

import fcntl
import gc
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval.report.analyses import (
    failing,
    figure2,
    figure4,
    figure5,
    table1,
    table3,
    table4,
)
from eval.report.load import Sweep, header_notes, load_sweep
from eval.report.pages.page_files import REPORT_DIR
from eval.report.section import Section, Skip

log = logging.getLogger(__name__)

LOCK = ".report.lock"  # in the sweep folder: held by the build of its report
ANALYSES: dict[str, tuple[str, Callable[[Sweep, Path], Section]]] = {
    "table1": ("Table 1: main results", table1.build),
    "table3": ("Table 3: the tab's contents", table3.build),
    "figure2": ("Figure 2: where the values of failed rubrics went", figure2.build),
    "figure4": ("Figure 4: what the read log holds and gives back", figure4.build),
    "figure5": ("Figure 5: gain over DCI by reading volume", figure5.build),
    "table4": ("Table 4: ablations", table4.build),
    "failing": ("Rubrics that fail most", failing.build),
}


def run_analyses(sweep: Sweep, out: Path) -> list[Section]:
    sections = []
    for name, (title, build) in ANALYSES.items():
        try:
            sections.append(build(sweep, out))
        except Skip as e:
            sections.append(Section(name, title, skipped=str(e)))
        except Exception as e:  # one broken analysis must not cost the others
            log.exception("analysis %s failed", name)
            sections.append(Section(name, title, skipped=f"failed with {type(e).__name__}: {e} (see the log)"))
    return sections


def write_markdown(sweep: Sweep, sections: list[Section], out: Path) -> Path:
    parts = [f"# Report of sweep {sweep.name}\n", f"{len(sweep.jobs)} jobs, {len(sweep.scored())} scored.\n"]
    parts += [f"{line}\n" for line in header_notes(sweep)]
    for s in sections:
        parts.append(f"## {s.title}\n")
        if s.skipped:
            parts.append(f"Skipped: {s.skipped}\n")
        parts += [f"- {n}" for n in s.notes] + ([""] if s.notes else [])
        for t in s.tables:
            (out / f"{t.name}.md").write_text(t.markdown(), encoding="utf-8")  # alone: its whole title
            t.write_csv(out / f"{t.name}.csv")
            parts.append(t.markdown(under=s.title))
        parts += [f"![{f.title}]({f.path.name})\n" for f in s.figures]
    path = out / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def log_to_tracker(tracker: Any, sections: list[Section]) -> None:
    """Every table (raw rows) and, when the tracker takes them, every figure, to the summary run."""
    tables = {t.name: (t.columns, t.rows) for s in sections for t in s.tables}
    images = {f.name: f.path for s in sections for f in s.figures}
    tracker.log_summary(tables, images=images)


def write_report(sweep_dir: Path, tracker: Any = None, baseline: str | None = None, treatment: str | None = None,
                 workers: int | None = None, pages: bool = False) -> Path:
    """Write `<sweep_dir>/report/` from the job records and return it. `baseline`/`treatment`
    override the sweep's `report:` settings (which methods the comparisons are between); `workers`
    caps the page-writing processes (0: none; default: one per CPU, up to `site.MAX_WORKERS`).

    The tables, figures, index and `links.js` are computed from the records every time; the job and
    side-by-side pages were written with their records (`completed.py`), so a build writes only
    those missing, and `pages=True` every one again (after a change to the report's code). Builds of
    one report run one at a time: a second waits for the first (`LOCK`)."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise FileNotFoundError(f"sweep directory {sweep_dir} does not exist (give outputs/<sweep>)")
    out = sweep_dir / REPORT_DIR
    with exclusive(sweep_dir / LOCK), no_gc():
        sweep = load_sweep(sweep_dir, baseline, treatment)
        clear(out)
        from eval.report.pages.site import (
            Pages,
            compare_links,
            write_index,
            write_links,
        )

        with Pages(sweep, out, workers, rewrite=pages):  # written by workers while the analyses run here
            sections = run_analyses(sweep, out)
            write_markdown(sweep, sections, out)
        compare = compare_links(sweep)
        write_links(out, compare)
        write_index(sweep, sections, out, compare)
    for s in sections:
        if s.skipped:
            log.info("%s skipped: %s", s.name, s.skipped)
    if tracker is not None:
        log_to_tracker(tracker, sections)
    return out


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Held while a build writes the report (released when its process ends, however it ends)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.info("another build of this report is running; waiting for it to end (%s)", path)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextmanager
def no_gc() -> Iterator[None]:
    """The cyclic collector paused: a build holds millions of small objects (20,000 jobs' results
    and scores) and makes few cycles, and each full collection walks them all (a quarter of a
    re-build's time at 20,000 jobs). What cycles it leaves are collected after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def clear(out: Path) -> None:
    """The report folder emptied for this build but for the job and side-by-side pages (the tables,
    figures and index are always written again)."""
    out.mkdir(parents=True, exist_ok=True)
    for p in out.iterdir():
        if p.name in ("jobs", "compare") and p.is_dir() and not p.is_symlink():
            continue
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
