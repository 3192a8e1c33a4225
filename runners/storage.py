"""Where finished job records live besides the local disk: nothing (`local`) or an S3 bucket (`s3`).

A backend is registered in `STORAGES` and built as `backend(cfg: StorageConfig)`; `storage.kind` may
also be the dotted path of your own (docs/extending.md). Resume asks the storage which jobs are complete, so a sweep re-run on another machine against the
same bucket never runs a finished job twice. A failed upload keeps the local record and is reported.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from runners.config import StorageConfig
from runners.core.record_files import RESULT, SCORES
from runners.core.registry import Registry

log = logging.getLogger(__name__)


class Storage(Protocol):
    remote: bool  # whether it keeps copies besides the local disk (then uploads and reconciliation apply)

    def complete(self, sweep: str, scored: bool) -> set[str]:
        """Ids of the jobs whose complete record is in this storage."""

    def upload(self, sweep: str, job_dir: Path) -> str | None:
        """Store a finished job directory; returns an error text instead of raising."""


STORAGES: Registry[Callable[[StorageConfig], Storage]] = Registry("storage kind")


@STORAGES.register("local")
class LocalStorage:
    """The local disk is the record itself: nothing more to store."""

    remote = False

    def __init__(self, cfg: StorageConfig | None = None) -> None:
        pass

    def complete(self, sweep: str, scored: bool) -> set[str]:
        return set()

    def upload(self, sweep: str, job_dir: Path) -> str | None:
        return None


@STORAGES.register("s3")
class S3Storage:
    """Job directories under `s3://bucket/prefix/<sweep>/<job_id>/`, uploaded file by file."""

    remote = True

    def __init__(self, cfg: StorageConfig) -> None:
        import boto3
        from botocore.config import Config

        if not cfg.bucket or cfg.bucket == "???":
            raise ValueError("storage=s3 needs a bucket: add storage.bucket=NAME (and storage.endpoint_url=URL for a non-AWS server)")
        self.cfg = cfg
        timeouts = Config(connect_timeout=cfg.timeout_s, read_timeout=cfg.timeout_s, retries={"max_attempts": 2, "mode": "standard"})
        self.client = boto3.client("s3", endpoint_url=cfg.endpoint_url, region_name=cfg.region, config=timeouts)

    def _prefix(self, sweep: str) -> str:
        return f"{self.cfg.prefix.strip('/')}/{sweep}/"

    def complete(self, sweep: str, scored: bool) -> set[str]:
        prefix = self._prefix(sweep)
        files: dict[str, set[str]] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.cfg.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                job, _, name = obj["Key"][len(prefix) :].partition("/")
                files.setdefault(job, set()).add(name)
        need = {RESULT, SCORES} if scored else {RESULT}
        return {job for job, names in files.items() if need <= names}

    def upload(self, sweep: str, job_dir: Path) -> str | None:
        # result.json last, so a partial upload never looks complete to `complete()`.
        paths = sorted((p for p in job_dir.rglob("*") if p.is_file()), key=lambda p: p.name in (RESULT, SCORES))
        error = None
        for attempt in range(self.cfg.retries + 1):
            try:
                for p in paths:
                    key = self._prefix(sweep) + job_dir.name + "/" + p.relative_to(job_dir).as_posix()
                    self.client.upload_file(str(p), self.cfg.bucket, key)
                return None
            except Exception as e:  # boto3 raises many types; all mean "not uploaded"
                error = f"upload of {job_dir.name} failed: {type(e).__name__}: {e}"
                log.warning("%s (attempt %d of %d)", error, attempt + 1, self.cfg.retries + 1)
                if attempt < self.cfg.retries:
                    time.sleep(min(2**attempt, 10))
        return error


def build_storage(cfg: StorageConfig) -> Storage:
    """The backend `storage.kind` names, built from its config."""
    return STORAGES.get(cfg.kind)(cfg)
