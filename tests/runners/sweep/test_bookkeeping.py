"""The driver's bookkeeping without a sweep: live progress counts errored and unsandboxed jobs
apart, and an upload to a bucket that never answers does not hold up the driver."""

from __future__ import annotations

import io
import socket
import threading
from pathlib import Path

from rich.console import Console

from runners.core.record_types import Result
from runners.core.storage import S3Storage, S3StorageConfig
from runners.job.identity import JobSpec
from runners.sweep.progress import Progress
from runners.sweep.scheduler import Outcome
from runners.sweep.uploads import Uploader
from tests.conftest import compose_root


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
