"""The driver's bookkeeping without a sweep: live progress counts errored and unsandboxed jobs
apart, an upload to a bucket that never answers does not hold up the driver, and a finished job's
page is made from its record as booked, the same page a build makes from the disk."""

from __future__ import annotations

import io
import socket
import threading
from pathlib import Path

import pytest
from rich.console import Console

from runners.core.record_types import Result
from runners.core.storage import S3Storage, S3StorageConfig
from runners.job.identity import JobSpec
from runners.sweep.progress import Progress
from runners.sweep.scheduler import Outcome
from runners.sweep.uploads import Uploader
from tests.conftest import compose_root


def test_a_finished_jobs_page_is_made_from_its_record_as_booked(tmp_path: Path) -> None:
    from bench.bench_viewer import write_scripted_job
    from eval.report.load import load_sweep
    from eval.report.pages.completed import pages_of
    from runners.core.job_record import JobRecord, read_result, write_scores
    from runners.core.storage import LocalStorage
    from runners.sweep.bookkeeping import book_job
    from runners.sweep.ledger import Ledger
    from runners.sweep.live_report import LiveReport
    from runners.tracking.tracker import JsonlTracker

    sdir = tmp_path / "s"
    job_dir = write_scripted_job(sdir, "runningtab", 6, 2)
    job = job_dir.name
    write_scores(job_dir, {**(JobRecord(job_dir).scores or {}), "judge_key": "the judge's key"})
    spec = JobSpec(job, compose_root(["model=scripted", "judge=none"]), "t1")
    booked = book_job(Outcome(spec, "ok", 1, 1.0, result=read_result(job_dir)), sdir, Uploader(LocalStorage(), "s"),
                      JsonlTracker(sdir), Ledger(sdir))
    assert booked is not None and booked.meta == JobRecord(job_dir).meta and booked.result == read_result(job_dir)
    assert booked.scores == JobRecord(job_dir).scores  # what the tracker logged is what the page shows
    LiveReport(sdir, every=0, groups={job: [job]}).finished(job, booked)
    page = sdir / "report" / "jobs" / f"{job}.html"
    written = page.read_text()
    pages_of(load_sweep(sdir), [job])  # a build's page, every file read from the disk
    assert written == page.read_text()
    assert [e["job_id"] for e in Ledger(sdir).entries()] == [job]  # booked: its ledger line is on disk
    assert Ledger(sdir).records()[job].judge_key == "the judge's key"  # a resume need not read the scores


def test_progress_counts_errored_and_unsandboxed_apart() -> None:
    cfg = compose_root(["model=scripted", "judge=none"])
    specs = [JobSpec(f"j{i}", cfg, f"t{i}") for i in range(3)]
    out = io.StringIO()
    with Progress(specs, skipped=0, console=Console(file=out, width=200)) as p:
        for s in specs:
            p.start(s)
        p.finish(Outcome(specs[0], "ok", 1, 1.0, result=Result("", "finished", sandbox="bwrap")))
        p.finish(Outcome(specs[1], "ok", 1, 1.0, result=Result("", "finished", sandbox="none")))
        p.finish(Outcome(specs[2], "error", 1, 1.0, result=Result("", "model_error", sandbox="bwrap"),
                         error="model 'x': gave up after 7 attempts"))
        assert (dict(p.done), dict(p.errored), dict(p.failed)) == ({"dci": 2}, {"dci": 1}, {})
        assert "1 UNSANDBOXED" in p.table().caption
    text = out.getvalue()
    lines = text.splitlines()
    assert "UNSANDBOXED" in next(x for x in lines if " j1 " in x) and "UNSANDBOXED" not in next(x for x in lines if " j0 " in x)
    assert "error   j2" in text
    assert "1 job(s) did not finish ok" in text and "j2: error: model 'x': gave up after 7 attempts" in text


def test_a_finished_jobs_line_is_its_error_as_it_is_on_one_line() -> None:
    """An error's text (a tool's, a provider's) is shown as written: no `:name:` made an emoji, and
    no line break or terminal escape from it reaches the log."""
    cfg = compose_root(["model=scripted", "judge=none"])
    spec = JobSpec("j0", cfg, "t0")
    out = io.StringIO()
    with Progress([spec], skipped=0, console=Console(file=out, width=80)) as p:
        p.start(spec)
        error = "provider said :warning: quota\n\x1b[31mred\rdone " + "x" * 200
        p.finish(Outcome(spec, "failed", 1, 1.0, error=error))  # no record: the line gives its error
    line = next(x for x in out.getvalue().splitlines() if " j0 " in x)
    assert "(provider said :warning: quota [31mred done " in line and line.endswith("x, 1.0 s)")
    assert "\x1b" not in out.getvalue().split("did not finish ok")[0]


@pytest.mark.slow
def test_an_unanswering_bucket_does_not_hold_up_the_driver(tmp_path: Path, monkeypatch) -> None:
    for k, v in {"AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    hole = socket.socket()
    hole.bind(("127.0.0.1", 0))
    hole.listen(16)  # accepts connections, never answers
    url = f"http://127.0.0.1:{hole.getsockname()[1]}"
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="b", endpoint_url=url, retries=0, timeout_s=1))
    job = tmp_path / "job1"
    job.mkdir()
    (job / "result.json").write_text("{}")
    uploader = Uploader(storage, "sweep")
    done = threading.Event()
    errors: list[str | None] = []
    uploader.submit(job, lambda e: (errors.append(e), done.set()))
    assert not done.is_set()  # submit returned while the upload still waits on the endpoint
    uploader.drain()
    hole.close()
    assert done.is_set() and errors[0] and "upload of job1 failed" in errors[0]


def test_shell_scratch_of_killed_processes_is_removed_at_sweep_start(tmp_path: Path, monkeypatch) -> None:
    import os
    import subprocess
    import sys
    import tempfile

    from envs.sandbox import make_scratch
    from runners.job.scratch import clean_stale

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.Popen([sys.executable, "-c", "import envs.sandbox as s; print(s.make_scratch())"],
                            stdout=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path)})
    left = Path(dead.communicate()[0].strip())  # a killed actor's shell scratch, never closed
    assert left.parent == tmp_path and left.is_dir()
    mine = Path(make_scratch())  # this live process's own
    removed = clean_stale([], {None})
    assert removed == [left] and not left.exists() and mine.is_dir()


def test_the_ledger_is_0644_under_a_group_writable_umask(tmp_path: Path) -> None:
    import os

    from runners.sweep.ledger import Ledger

    old = os.umask(0o002)
    try:
        Ledger(tmp_path).append({"job_id": "j", "status": "ok"})
    finally:
        os.umask(old)
    assert oct((tmp_path / "jobs.jsonl").stat().st_mode & 0o777) == oct(0o644)  # was 0664: never more than 0644
