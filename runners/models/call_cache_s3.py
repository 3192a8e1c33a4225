"""The model-call cache's second tier in the sweep's bucket (`storage=s3`): `s3://B/P/_calls/<key>.json`.

Read on a disk miss (the entry is then kept on disk too), written after the disk. One client per
process and bucket. A bucket that cannot be reached costs only the cache: a miss, an entry not
mirrored (logged), never the job's reply.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from runners.core.storage import S3Storage, S3StorageConfig
from runners.models.call_cache import MAX_ENTRY_BYTES

log = logging.getLogger(__name__)
PREFIX = "_calls"
_tiers: dict[tuple[Any, ...], BucketTier] = {}
_lock = threading.Lock()


class BucketTier:
    """Entries as objects under `<prefix>/_calls/<key[:2]>/<key>.json`."""

    def __init__(self, cfg: S3StorageConfig) -> None:
        self.client = S3Storage(cfg).client
        self.bucket = cfg.bucket
        self.prefix = f"{cfg.prefix.strip('/')}/{PREFIX}/" if cfg.prefix.strip("/") else f"{PREFIX}/"

    @classmethod
    def of(cls, cfg: Any) -> BucketTier:
        key = (cfg.bucket, cfg.prefix, cfg.endpoint_url, cfg.region)
        with _lock:
            if key not in _tiers:
                _tiers[key] = cls(cfg)
            return _tiers[key]

    def _key(self, key: str) -> str:
        return f"{self.prefix}{key[:2]}/{key}.json"

    def get(self, key: str) -> bytes | None:
        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"].read(MAX_ENTRY_BYTES + 1)  # bounded
        except Exception as e:  # noqa: BLE001 - NoSuchKey, or a bucket out of reach: a miss either way
            if "NoSuchKey" not in type(e).__name__ and "NoSuchKey" not in str(e):
                log.warning("model-call cache: bucket read of %s failed (%s: %s)", key, type(e).__name__, e)
            return None

    def put(self, key: str, data: bytes) -> None:
        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(key), Body=data)
        except Exception as e:  # noqa: BLE001 - the disk has it; the bucket gets it on a later run's write
            log.warning("model-call cache: bucket write of %s failed (%s: %s)", key, type(e).__name__, e)
