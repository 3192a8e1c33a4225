"""A sweep folder, local or in S3, read with the report's readers and bounded: records are what the
agent influenced, so no file past `MAX_FILE_BYTES`, no link and nothing but regular files is read,
and a job directory that breaks these rules is skipped with a warning (listed in `Sweep.broken`).

An S3 sweep (`s3://bucket/prefix/<sweep>`, as `storage=s3` stored it) is copied by the storage
layer (`runners.core.storage.S3Storage.download`: the record's documents only, never the
deliverable) into a local folder, then read the same way.
"""

from __future__ import annotations

import logging
import stat
import tempfile
from pathlib import Path

from envs.safeio import lstat_inside
from eval.report.load import Job, Sweep, job_dirs, read_job, roles
from runners.core.record_files import (
    EXTRACTED,
    JOB,
    RESULT,
    SCORES,
    SHOWN,
    TAB,
    TRAJECTORY,
    VIEW,
)
from runners.core.record_types import RecordError

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 64 * 2**20  # a record document larger than this is not read (trajectories run to a few MB)
DOCUMENTS = (JOB, RESULT, SCORES, TRAJECTORY, TAB, SHOWN, VIEW, EXTRACTED)  # what the frames may read of a job
LEDGER = "jobs.jsonl"
SETTINGS = "sweep.yaml"


def read_sweep(location: str | Path, endpoint_url: str | None = None, into: Path | None = None,
               max_file_bytes: int = MAX_FILE_BYTES) -> Sweep:
    """The sweep at `location`: a local folder (`outputs/demo`) or `s3://bucket/prefix/<sweep>`
    (`endpoint_url` for a server that is not AWS; the records are copied into `into/<sweep>`, default a
    new temporary folder that is kept: `Sweep.dir` names it). Credentials come from boto3's usual sources."""
    text = str(location)
    if text.startswith("s3://"):
        return read_local(download(text, endpoint_url, into, max_file_bytes), max_file_bytes)
    return read_local(Path(location), max_file_bytes)


def download(url: str, endpoint_url: str | None, into: Path | None, max_file_bytes: int) -> Path:
    """The records of the S3 sweep `url` copied into `into/<sweep>` (returned)."""
    from runners.core.storage import S3Storage, S3StorageConfig

    bucket, _, key = url[len("s3://"):].partition("/")
    prefix, _, sweep = key.strip("/").rpartition("/")
    if not bucket or not sweep:
        raise ValueError(f"{url}: give the sweep's address as s3://BUCKET/PREFIX/SWEEP (storage.bucket, storage.prefix, the sweep's name)")
    dest = Path(into) if into is not None else Path(tempfile.mkdtemp(prefix="runningtab-frames-"))
    storage = S3Storage(S3StorageConfig(kind="s3", bucket=bucket, prefix=prefix, endpoint_url=endpoint_url))
    skipped = storage.download(sweep, dest / sweep, DOCUMENTS, max_file_bytes)
    for why in skipped:
        log.warning("%s: %s", url, why)
    return dest / sweep


def unreadable(job_dir: Path, max_file_bytes: int) -> str | None:
    """Why a job directory is not read (a link, a document that is not a regular file or too large), or None."""
    if job_dir.is_symlink():
        return "is a link"
    for name in DOCUMENTS:
        st = lstat_inside(job_dir, name)
        if st is None:
            continue
        if not stat.S_ISREG(st.st_mode):
            return f"{name} is not a regular file"
        if st.st_size > max_file_bytes:
            return f"{name} has {st.st_size:,} bytes, more than {max_file_bytes:,} (read_sweep(..., max_file_bytes=N) to allow it)"
    return None


def read_local(sweep_dir: Path, max_file_bytes: int = MAX_FILE_BYTES) -> Sweep:
    """Every readable job record of a local sweep folder, sorted by job id."""
    if not sweep_dir.is_dir() or sweep_dir.is_symlink():
        raise FileNotFoundError(f"{sweep_dir} is not a sweep folder (give outputs/<sweep>, or s3://bucket/prefix/<sweep>)")
    jobs: list[Job] = []
    broken: dict[str, str] = {}
    configs: dict[str, dict] = {}
    for d in job_dirs(sweep_dir):
        why = unreadable(d, max_file_bytes)
        try:
            if why is None:
                jobs.append(read_job(d, configs))
                continue
        except RecordError as e:
            why = str(e)
        log.warning("%s: %s; skipped", d, why)
        broken[d.name] = why
    if not regular(sweep_dir, SETTINGS, max_file_bytes):  # the report's baseline and treatment: their defaults
        return Sweep(sweep_dir, jobs, broken)
    return Sweep(sweep_dir, jobs, broken, *roles(sweep_dir, None, None))


def regular(folder: Path, name: str, max_file_bytes: int) -> bool:
    """Whether `folder/name` is a regular file (not a link) within the bound."""
    st = lstat_inside(folder, name)
    return st is not None and stat.S_ISREG(st.st_mode) and st.st_size <= max_file_bytes


def ledger_readable(sweep: Sweep, max_file_bytes: int = MAX_FILE_BYTES) -> bool:
    """Whether the sweep's ledger (`jobs.jsonl`) may be read: a regular file within the bound."""
    return regular(sweep.dir, LEDGER, max_file_bytes)
