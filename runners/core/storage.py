"""Where finished job records live besides the local disk: nothing (`local`) or an S3 bucket (`s3`).

A backend is registered in `STORAGES` and built as `backend(cfg)`, its `config` attribute naming the
config class it takes; `storage.kind` may also be the dotted path of your own (docs/extending.md). Resume asks the storage which jobs are complete, so a sweep re-run on another machine against the
same bucket never runs a finished job twice. A failed upload keeps the local record and is reported.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from envs.names import shown
from envs.safeio import write_bytes
from runners.core.record_files import RESULT, SCORES
from runners.core.registry import Registry

log = logging.getLogger(__name__)
INDEX = "_index"  # <prefix>/<sweep>/_index/: `since` (kept from the sweep's start) and result.json/<job>, scores.json/<job>


class Storage(Protocol):
    remote: bool  # whether it keeps copies besides the local disk (then uploads and reconciliation apply)

    def final_jobs(self, sweep: str, scored: bool) -> set[str]:
        """Ids of the jobs whose complete record is in this storage."""

    def upload(self, sweep: str, job_dir: Path) -> str | None:
        """Store a finished job directory; returns an error text instead of raising."""


@dataclass
class StorageConfig:
    """Where finished job records go besides the local disk (`kind`: local | s3, or a dotted path).
    A backend with settings of its own has its config class beside it (below:
    `S3StorageConfig`), named by its YAML (`conf/storage/<name>.yaml`).

    `pack_from`: a sweep of at least this many jobs packs each finished record, once booked, into
    its grid cell's pack (runners/core/record_pack.py: ~11 files a job become none, for a cluster's
    inode quota); a smaller sweep keeps its records as folders to browse; negative (the default):
    never, because a packed record's job page still links its files in the folder packing removed."""

    kind: str = "local"
    pack_from: int = -1


STORAGES: Registry[Callable[[StorageConfig], Storage]] = Registry("storage kind")


@dataclass
class S3StorageConfig(StorageConfig):
    """An S3 bucket, or any S3-compatible server at `endpoint_url`; credentials come from boto3's usual
    sources, never from the config. `timeout_s` is per connection and per read (uploads run off the
    driver's loop); `retries` are extra attempts per job directory."""

    bucket: str | None = None
    prefix: str = "runningtab"
    endpoint_url: str | None = None
    region: str | None = None
    retries: int = 3
    timeout_s: float = 30.0


@STORAGES.register("local")
class LocalStorage:
    """The local disk is the record itself: nothing more to store."""

    remote = False
    config = StorageConfig

    def __init__(self, cfg: StorageConfig | None = None) -> None:
        pass

    def final_jobs(self, sweep: str, scored: bool) -> set[str]:
        return set()

    def upload(self, sweep: str, job_dir: Path) -> str | None:
        return None


@STORAGES.register("s3")
class S3Storage:
    """Job directories under `s3://bucket/prefix/<sweep>/<job_id>/`, uploaded file by file, and the
    sweep's index of complete records under `s3://bucket/prefix/<sweep>/_index/`."""

    remote = True
    config = S3StorageConfig

    def __init__(self, cfg: S3StorageConfig) -> None:
        import boto3
        from botocore.config import Config

        if not cfg.bucket or cfg.bucket == "???":
            raise ValueError("storage=s3 needs a bucket: add storage.bucket=NAME (and storage.endpoint_url=URL for a non-AWS server)")
        self.cfg = cfg
        timeouts = Config(connect_timeout=cfg.timeout_s, read_timeout=cfg.timeout_s, retries={"max_attempts": 2, "mode": "standard"})
        self.client = boto3.client("s3", endpoint_url=cfg.endpoint_url, region_name=cfg.region, config=timeouts)

    def _prefix(self, sweep: str) -> str:
        return f"{self.cfg.prefix.strip('/')}/{sweep}/"

    def final_jobs(self, sweep: str, scored: bool) -> set[str]:
        """From the sweep's index (one key per stored record file: ~40 pages for 20,000 jobs instead
        of ~160 for every file); a sweep stored before there was an index is listed in full."""
        prefix = self._prefix(sweep)
        if not self._indexed(sweep):
            return self._listed(prefix, scored)
        done = self._names(f"{prefix}{INDEX}/{RESULT}/")
        return done & self._names(f"{prefix}{INDEX}/{SCORES}/") if scored else done

    def _indexed(self, sweep: str) -> bool:
        """Whether the sweep has kept its index from the start; a sweep with nothing stored yet starts one."""
        from botocore.exceptions import ClientError

        since = f"{self._prefix(sweep)}{INDEX}/since"
        try:
            self.client.head_object(Bucket=self.cfg.bucket, Key=since)
            return True
        except ClientError as e:
            if e.response.get("Error", {}).get("Code") not in ("404", "NoSuchKey", "NotFound"):
                raise
        if self.client.list_objects_v2(Bucket=self.cfg.bucket, Prefix=self._prefix(sweep), MaxKeys=1).get("KeyCount", 0):
            return False
        self.client.put_object(Bucket=self.cfg.bucket, Key=since, Body=b"")
        return True

    def _names(self, prefix: str) -> set[str]:
        pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=self.cfg.bucket, Prefix=prefix)
        return {obj["Key"][len(prefix) :] for page in pages for obj in page.get("Contents", [])}

    def _listed(self, prefix: str, scored: bool) -> set[str]:
        files: dict[str, set[str]] = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.cfg.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                job, _, name = obj["Key"][len(prefix) :].partition("/")
                files.setdefault(job, set()).add(name)
        need = {RESULT, SCORES} if scored else {RESULT}
        return {job for job, names in files.items() if job != INDEX and need <= names}

    def download(self, sweep: str, dest: Path, names: tuple[str, ...], max_bytes: int) -> list[str]:
        """Copy the named documents of every stored job (`<prefix>/<sweep>/<job>/<name>`) into
        `dest/<job>/<name>`; returns what was left out and why. Keys are the agent's to influence
        (its deliverable's names), so only those names directly in a job's folder are taken, a job
        name must be one plain folder name, and no object past `max_bytes` is read."""
        prefix, skipped = self._prefix(sweep), []
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=self.cfg.bucket, Prefix=prefix):
            for obj in page.get("Contents", []):
                job, _, name = obj["Key"][len(prefix):].partition("/")
                if job == INDEX or name not in names:
                    continue
                if job in ("", ".", "..") or "\\" in job or "\x00" in job:
                    skipped.append(f"{obj['Key']}: not a job folder's name")
                elif obj["Size"] > max_bytes:
                    skipped.append(f"{obj['Key']}: {obj['Size']:,} bytes, more than {max_bytes:,}")
                else:
                    body = self.client.get_object(Bucket=self.cfg.bucket, Key=obj["Key"])["Body"].read(max_bytes + 1)
                    if len(body) > max_bytes:
                        skipped.append(f"{obj['Key']}: more than {max_bytes:,} bytes")
                        continue
                    write_bytes(dest / job / name, body)
        return skipped

    def upload(self, sweep: str, job_dir: Path) -> str | None:
        # The record's copy of the deliverable is bounded (envs/deliverable.py), so is this; a name
        # that is not UTF-8 gets the key it is shown as (`bad\xff.md`).
        # result.json and scores.json last, then their index entries: a partial upload never looks complete.
        from runners.core.job_record import packed_record

        error = None
        for attempt in range(self.cfg.retries + 1):
            try:
                packed = packed_record(job_dir)  # a record packed since it finished (reconciled on resume): from its pack
                if packed is not None:
                    rels = [rel for rel, m in packed.members.items() if m.kind == "f"]
                else:
                    rels = [p.relative_to(job_dir).as_posix() for p in job_dir.rglob("*") if p.is_file()]
                rels.sort(key=lambda rel: rel in (RESULT, SCORES))
                indexed = [f"{self._prefix(sweep)}{INDEX}/{name}/{job_dir.name}" for name in (RESULT, SCORES) if name in rels]
                for rel in rels:
                    key = self._prefix(sweep) + job_dir.name + "/" + shown(rel)  # keys are UTF-8
                    if packed is not None:
                        self.client.put_object(Bucket=self.cfg.bucket, Key=key, Body=packed.read(rel))
                    else:
                        self.client.upload_file(str(job_dir / rel), self.cfg.bucket, key)
                for key in indexed:
                    self.client.put_object(Bucket=self.cfg.bucket, Key=key, Body=b"")
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


def storage_config_class(kind: str) -> type[StorageConfig] | None:
    """The config class storage `kind` takes; None for a plugin that names none (it takes any)."""
    cls = getattr(STORAGES.get(kind), "config", None)
    return cls if isinstance(cls, type) and issubclass(cls, StorageConfig) else None
