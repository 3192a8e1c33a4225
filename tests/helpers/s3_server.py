"""A real S3-compatible server on 127.0.0.1 (moto's) and a boto3 client of it, for the storage and
call-cache tests. moto (with its Flask server) and boto3 are imported when a test starts one, not
when the suite is collected: about 0.4 s of CPU for each xdist worker, most of whose tests never
start one (docs/measurements.md, "The suite's time, fourth pass")."""

from __future__ import annotations

from typing import Any


def start_s3(port: int = 0) -> tuple[Any, str]:
    """A started `ThreadedMotoServer` on `port` (0: a free one) and its URL; the caller stops it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    server.start()
    return server, "http://{}:{}".format(*server.get_host_and_port())


def s3_client(url: str) -> Any:
    """boto3's S3 client of the server at `url` (credentials from the environment)."""
    import boto3

    return boto3.client("s3", endpoint_url=url)
