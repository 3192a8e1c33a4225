"""The storage tests' moto server (a real S3-compatible server on 127.0.0.1, bucket "runs"), for the
frames' S3 tests."""

from tests.runners.core.test_storage import s3  # noqa: F401
