"""Hand-run benchmark: the S3 resume check with and without the sweep's index (docs/measurements.md, "S3 resume").

    .venv/bin/python bench/bench_s3_resume.py --jobs 2000

Fills a real S3-compatible server on 127.0.0.1 (moto) with N jobs of 8 small files each, as a
sweep stores them, once with the index (this version) and once without (a sweep stored before it),
then times `S3Storage.complete` on each. Last line: `jobs=N files=F indexed_s=… full_s=… ratio=…`.
"""

from __future__ import annotations

import argparse
import os
import time
from concurrent.futures import ThreadPoolExecutor

FILES = ["job.json", "trajectory.jsonl", "evaluator_view.json", "tab.json", "deliverable/output/guide.md",
         "workspace_diff.json", "result.json", "scores.json"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=2000)
    args = ap.parse_args()
    import boto3
    from moto.server import ThreadedMotoServer

    from runners.core.storage import INDEX, S3Storage, S3StorageConfig

    for k, v in {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_DEFAULT_REGION": "us-east-1"}.items():
        os.environ.setdefault(k, v)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    client = boto3.client("s3", endpoint_url=url)
    client.create_bucket(Bucket="bench-runs")
    storage = S3Storage(S3StorageConfig(kind="s3", bucket="bench-runs", prefix="p", endpoint_url=url))
    storage.final_jobs("indexed", scored=True)  # a new sweep: starts its index

    def put(key: str) -> None:
        client.put_object(Bucket="bench-runs", Key=key, Body=b"{}")

    keys = [f"p/{sweep}/job{j:05d}/{f}" for sweep in ("indexed", "old") for j in range(args.jobs) for f in FILES]
    keys += [f"p/indexed/{INDEX}/{f}/job{j:05d}" for j in range(args.jobs) for f in ("result.json", "scores.json")]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, keys))
    times = {}
    for sweep in ("indexed", "old"):
        t = time.perf_counter()
        done = storage.final_jobs(sweep, scored=True)
        times[sweep] = time.perf_counter() - t
        assert len(done) == args.jobs, (sweep, len(done))
    server.stop()
    print(f"jobs={args.jobs} files={len(FILES)} indexed_s={times['indexed']:.2f} full_s={times['old']:.2f} "
          f"ratio={times['old'] / times['indexed']:.1f}")


if __name__ == "__main__":
    main()
