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
from stat import S_IFLNK, S_IFREG
from typing import Any

from eval.report import failing, figure2, figure4, figure5, table1, table3, table4
from eval.report.load import Sweep, header_notes, read_job, roles
from eval.report.manifest import MANIFEST, Manifest, Settled, Untrusted, code_version, stamp, sweep_subdirs
from eval.report.section import Section, Skip
from runners.core.record_types import RecordError

log = logging.getLogger(__name__)

REPORT_DIR = "report"
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
        except Untrusted:
            raise  # the manifest's kept data is unusable: the report is rebuilt from scratch
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
                 workers: int | None = None, build_id: str | None = None, settled: Settled | None = None) -> Path:
    """Write `<sweep_dir>/report/` from the job records and return it. `baseline`/`treatment`
    override the sweep's `report:` settings (which methods the comparisons are between); `workers`
    caps the page-writing processes (0: none; default: one per CPU, up to `site.MAX_WORKERS`).
    `build_id` names this build in the manifest (default: a random one); `settled` vouches for
    jobs unchanged since a named build began (`manifest.Settled`: the sweep's last build).

    A re-build reads only the records changed since the last build and re-renders only their pages
    (`manifest.py`); what it writes is what a build from scratch writes. Builds of one report run
    one at a time: a second waits for the first (`LOCK`)."""
    sweep_dir = Path(sweep_dir)
    if not sweep_dir.is_dir():
        raise FileNotFoundError(f"sweep directory {sweep_dir} does not exist (give outputs/<sweep>)")
    out = sweep_dir / REPORT_DIR
    base, treat = roles(sweep_dir, baseline, treatment)
    key = {"code": code_version(), "baseline": base, "treatment": treat}
    with exclusive(sweep_dir / LOCK), no_gc():
        try:
            sections = _build(sweep_dir, out, Manifest.read(out, key), base, treat, workers, build_id, settled)
        except Untrusted as e:
            log.warning("%s; rebuilding the report from scratch", e)
            sections = _build(sweep_dir, out, Manifest(key), base, treat, workers, build_id, None)
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
    """The cyclic collector paused: a build holds millions of small objects (the manifest's rows,
    20,000 jobs) and makes few cycles, and each full collection walks them all (a quarter of a
    re-build's time at 20,000 jobs). What cycles it leaves are collected after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _build(sweep_dir: Path, out: Path, manifest: Manifest, baseline: str, treatment: str, workers: int | None,
           build_id: str | None, settled: Settled | None) -> list[Section]:  # fmt: skip
    if build_id is not None:
        manifest.build = build_id
    sweep = load_stamped(sweep_dir, manifest, baseline, treatment, manifest.vouched(settled))
    clear(out, keep_pages=bool(manifest.old_pages))
    from eval.report.site import Pages, write_index

    with Pages(sweep, out, manifest, workers) as pages:  # written by workers while the analyses run here
        sections = run_analyses(sweep, out)
        write_markdown(sweep, sections, out)
    write_index(sweep, sections, out, pages.compare)
    manifest.write(out, sweep.jobs)
    return sections


def load_stamped(sweep_dir: Path, manifest: Manifest, baseline: str, treatment: str, vouched: frozenset[str] = frozenset()) -> Sweep:
    """The sweep, each job taken from the manifest when its record is unchanged, else read (and
    stamped first: a file changed while it is read is read again next time). A `vouched` job
    found in the manifest is taken from it without stamping (`Settled`)."""
    jobs, broken, n_stamped = [], [], 0
    configs: dict[str, dict[str, Any]] = {}
    subdirs = sweep_subdirs(sweep_dir)
    for d in subdirs:
        if d.name in vouched and (job := manifest.cached_job(d, None, configs)) is not None:
            jobs.append(job)
            continue
        st = stamp(d)
        if st[0] is None or st[0][2] not in (S_IFREG, S_IFLNK):
            continue  # no job.json file: not a job directory (report/, wandb/, ...)
        n_stamped += 1
        job = manifest.cached_job(d, st, configs)
        if job is None:
            try:
                job = read_job(d, configs)
            except RecordError as e:
                log.warning("%s; skipped", e)
                broken.append(d.name)
                continue
        manifest.keep(job, st)
        jobs.append(job)
    if vouched:
        log.info("report: stamped %d of %d job folders (the others settled before the build that wrote the manifest)", n_stamped, len(jobs) + len(broken))
    return Sweep(sweep_dir, jobs, broken, baseline, treatment, manifest.results)


def clear(out: Path, keep_pages: bool) -> None:
    """The report folder emptied for this build: everything but the manifest and, when it vouches
    for them, the job and side-by-side pages (the tables, figures and index are always rewritten)."""
    if out.exists() and not keep_pages:
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    for p in out.iterdir():
        if p.name in (MANIFEST, "jobs", "compare") and not p.is_symlink():
            continue
        shutil.rmtree(p) if p.is_dir() and not p.is_symlink() else p.unlink()
