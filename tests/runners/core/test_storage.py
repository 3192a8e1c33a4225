"""The bucket's index: a resume lists one small key per complete job, not every file of every job
(160,000 keys for the main grid's 20,000 jobs), against a real S3-compatible server on 127.0.0.1."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from runners.core.record_files import JOB, RESULT, SCORES, TRAJECTORY
from runners.core.storage import S3Storage, S3StorageConfig
from tests.helpers.s3_server import s3_client, start_s3


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch):
    server, url = start_s3()
    for k, v in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(k, v)
    urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=10).close()  # moto's state is per process
    s3_client(url).create_bucket(Bucket="runs")
    yield url
    server.stop()


def job(root: Path, name: str, *files: str) -> Path:
    d = root / name
    d.mkdir(parents=True)
    for f in files:
        (d / f).write_text("{}")
    return d


def listed_prefixes(storage: S3Storage) -> list[str]:
    """The prefixes `complete` lists (recorded on the client's paginator)."""
    seen: list[str] = []
    real = storage.client.get_paginator

    def paginator(name: str):
        p = real(name)
        paginate = p.paginate
        p.paginate = lambda **kw: seen.append(kw["Prefix"]) or paginate(**kw)  # type: ignore[method-assign]
        return p

    storage.client.get_paginator = paginator  # type: ignore[method-assign]
    return seen


def test_a_new_sweep_resumes_from_its_index(s3: str, tmp_path: Path) -> None:
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="runs", prefix="exp", endpoint_url=s3, retries=0, timeout_s=5))
    assert storage.final_jobs("sw", scored=True) == set()  # a sweep with nothing stored starts its index
    for name, files in {"a": (JOB, TRAJECTORY, RESULT, SCORES), "b": (JOB, TRAJECTORY, RESULT), "c": (JOB, TRAJECTORY)}.items():
        assert storage.upload("sw", job(tmp_path, name, *files)) is None
    seen = listed_prefixes(storage)
    assert storage.final_jobs("sw", scored=True) == {"a"} and storage.final_jobs("sw", scored=False) == {"a", "b"}
    assert seen and all("/_index/" in p for p in seen), seen  # never the jobs' own files
    keys = {o["Key"] for o in storage.client.list_objects_v2(Bucket="runs", Prefix="exp/sw/")["Contents"]}
    assert "exp/sw/a/result.json" in keys and "exp/sw/c/job.json" in keys  # the records themselves, as before


def test_a_job_whose_upload_stopped_before_its_index_entry_is_not_complete(s3: str, tmp_path: Path) -> None:
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="runs", prefix="exp", endpoint_url=s3, retries=0, timeout_s=5))
    storage.final_jobs("sw", scored=False)
    d = job(tmp_path, "a", JOB, RESULT)
    for f in (JOB, RESULT):  # every file, but killed before the index entry
        storage.client.upload_file(str(d / f), "runs", f"exp/sw/a/{f}")
    assert storage.final_jobs("sw", scored=False) == set()
    assert storage.upload("sw", d) is None  # reconciliation uploads it again
    assert storage.final_jobs("sw", scored=False) == {"a"}


def test_a_sweep_stored_before_the_index_is_listed_in_full(s3: str, tmp_path: Path) -> None:
    """Buckets written by an earlier version have no index: their jobs are still found complete."""
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="runs", prefix="exp", endpoint_url=s3, retries=0, timeout_s=5))
    d = job(tmp_path, "old", JOB, RESULT, SCORES)
    for f in (JOB, RESULT, SCORES):
        storage.client.upload_file(str(d / f), "runs", f"exp/sw/old/{f}")
    assert storage.final_jobs("sw", scored=True) == {"old"}
    assert storage.upload("sw", job(tmp_path, "new", JOB, RESULT, SCORES)) is None
    assert storage.final_jobs("sw", scored=True) == {"old", "new"}
