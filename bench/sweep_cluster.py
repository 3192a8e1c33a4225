"""A real sweep on a Ray cluster of several nodes with storage=s3, its driver killed and resumed (run by hand).

    python -m bench.sweep_cluster [--tasks 5000] [--seeds 10] [--nodes 3] [--latency 0.05] [--pack-from N] [--keep DIR]

100,000 jobs by default: a native benchmark of `--tasks` tasks × methods dci, runningtab × `--seeds`
seeds (20 grid cells); each job's model is `bench/stub_model.py` (scripted answers after `--latency`
seconds: one `bash cat`, then the answer), every call through the model-call cache as a sweep makes
it (`read_write`). The cluster is `--nodes` Ray nodes on loopback (`bench/ray_nodes.py`), the bucket
a local S3 server (moto, in its own process), W&B offline. The driver (`cluster=ray`, joining the
cluster) is SIGKILLed once `--kill-after` of the jobs are in the ledger, the bucket's listing that a
resume starts with is timed (`S3Storage.final_jobs`, what the driver calls), and the same command
runs again to the end.

Checked at the end: every job is in the ledger exactly once, W&B has one run per grid cell plus the
summary, and the bucket lists every job. Reported: each run's wall time, the listing's time, the
driver's CPU per job, and the files and folders of the sweep by part (records, report, W&B, the
call cache, the rest) per job. Last line: `jobs=N nodes=K cells=C wandb_runs=R exactly_once=…
listing_s=… inodes_per_job=… …`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.ray_nodes import REPO, LocalCluster
from bench.sweep import start_stub
from bench.sweep_20k import ledger_ids, run, wandb_runs
from runners.core.record_pack import PACKS
from slurm.node import free_ports

BUCKET, PREFIX, SWEEP = "bench", "runs", "cluster"
CREDS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}


def write_benchmark(root: Path, tasks: int) -> Path:
    """`tasks` one-question tasks over one small workspace; each prompt names its task, so that no
    two jobs of a cell make the same model call (the cache would answer the repeats at once)."""
    ws = root / "workspaces" / "w"
    ws.mkdir(parents=True)
    (ws / "notes.txt").write_text("the budget is 42 euros\n")
    lines = [{"id": f"t{i:05d}", "prompt": f"Task {i}: what is the budget?", "workspace": "w", "answer": "42"} for i in range(tasks)]
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in lines))
    return root


def start_s3() -> tuple[subprocess.Popen[bytes], str]:
    """moto's S3 server on a free loopback port, in its own process (the uploads are ~10 requests a job)."""
    port = free_ports(1)[0]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    import boto3

    client = boto3.client("s3", endpoint_url=url)
    deadline = time.monotonic() + 60
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            return proc, url
        except Exception:  # noqa: BLE001 - not listening yet
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("the S3 server (moto) did not start") from None
            time.sleep(0.3)


def sweep_cmd(root: Path, bench: Path, seeds: int, in_flight: int, address: str, model_port: int, s3_url: str, *extra: str) -> list[str]:
    """The sweep: the benchmark × dci, runningtab × `seeds` seeds on the cluster at `address`, the
    stub model at `model_port`, records also in the bucket at `s3_url`, W&B offline under `root`;
    `extra` overrides (`storage.pack_from=-1`: records left as folders, the figure before packs)."""
    return [sys.executable, "-m", "runners.sweep", "benchmark=native", f"benchmark.path={bench}", "benchmark.limit=null",
            "grid.benchmark=[native]", "grid.method=[dci,runningtab]", f"grid.seed=[{','.join(map(str, range(seeds)))}]",
            "grid.model=[openai]", "model=openai", f"model.base_url=http://127.0.0.1:{model_port}/v1", "model.name=stub",
            "cluster=ray", f"cluster.address={address}", f"cluster.max_in_flight={in_flight}",
            "storage=s3", f"storage.bucket={BUCKET}", f"storage.prefix={PREFIX}", f"storage.endpoint_url={s3_url}",
            "tracker=wandb", f"tracker.dir={root / 'wandb-dir'}", f"out={root / 'out'}", f"sweep={SWEEP}",
            f"agent.work_dir={root / 'work'}", *extra]


def sweep_env(cluster: LocalCluster) -> dict[str, str]:
    """The driver's environment: the cluster's (its auth token), the bucket's credentials, W&B
    offline, and no shared call cache (the sweep's own, under `out`, is counted with its files)."""
    env = {k: v for k, v in cluster.env.items() if k != "RUNNINGTAB_CALL_CACHE"}
    return {**env, **CREDS, "WANDB_MODE": "offline", "WANDB_SILENT": "true"}


def listing_s(s3_url: str) -> tuple[float, int]:
    """The bucket's listing a resume starts with (`S3Storage.final_jobs`): seconds, jobs complete."""
    from runners.core.storage import S3Storage, S3StorageConfig

    storage = S3Storage(S3StorageConfig(bucket=BUCKET, prefix=PREFIX, endpoint_url=s3_url))
    t0 = time.perf_counter()
    done = storage.final_jobs(SWEEP, scored=True)
    return time.perf_counter() - t0, len(done)


def inodes(path: Path) -> int:
    """Files and folders under `path` (itself included), links not followed; 0 when absent."""
    if not path.exists():
        return 0
    return 1 + sum(len(dirs) + len(files) for _, dirs, files in os.walk(path))


def inode_parts(root: Path) -> dict[str, int]:
    """The sweep's files and folders by part: the job records (folders and packs), the report, W&B
    (its offline runs and the sweep's own `wandb/` notes), the call cache, and the sweep folder's other files."""
    sdir = root / "out" / SWEEP
    parts = {"report": inodes(sdir / "report"), "wandb": inodes(root / "wandb-dir") + inodes(sdir / "wandb"),
             "call_cache": inodes(root / "out" / ".cache")}
    folders = sum(inodes(d) for d in sdir.iterdir() if d.is_dir() and (d / "job.json").is_file()) if sdir.is_dir() else 0
    parts["records"] = folders + inodes(sdir / PACKS)
    parts["rest"] = inodes(sdir) - parts["records"] - inodes(sdir / "report") - inodes(sdir / "wandb")
    return parts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=5000)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--nodes", type=int, default=3, help="Ray nodes on this machine (a head and workers)")
    ap.add_argument("--cpus", type=int, default=1, help="Ray CPUs of each node")
    ap.add_argument("--latency", type=float, default=0.05, help="seconds the model takes per call")
    ap.add_argument("--kill-after", type=float, default=0.3, help="fraction of jobs in the ledger before the SIGKILL")
    ap.add_argument("--in-flight", type=int, default=128)
    ap.add_argument("--keep", type=Path, default=None, help="keep the sweep here (default: a temporary folder)")
    ap.add_argument("--pack-from", type=int, default=None,
                    help="storage.pack_from (default the config's, -1: folders): 0 packs every record, -1 keeps folders (the files before packs)")
    args = ap.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="sweep-cluster-"))
    root.mkdir(parents=True, exist_ok=True)
    os.environ.update(CREDS)
    bench = write_benchmark(root / "bench", args.tasks)
    jobs, cells = args.tasks * 2 * args.seeds, 2 * args.seeds
    s3, s3_url = start_s3()
    stub, port = start_stub(args.latency, 1)
    try:
        with LocalCluster(args.nodes, args.cpus) as cluster:
            env = sweep_env(cluster)
            cmd = sweep_cmd(root, bench, args.seeds, args.in_flight, cluster.address, port, s3_url,
                            *([f"storage.pack_from={args.pack_from}"] if args.pack_from is not None else []))
            sdir = root / "out" / SWEEP
            wall1, cpu1, killed = run(cmd, root / "run1.log", int(jobs * args.kill_after), sdir, env)
            done1 = len(ledger_ids(sdir))
            list1, stored1 = listing_s(s3_url)
            wall2, cpu2, _ = run(cmd, root / "run2.log", None, sdir, env)
            list2, stored2 = listing_s(s3_url)
    finally:
        stub.kill()
        s3.kill()
    ids = ledger_ids(sdir)
    once = len(ids) == len(set(ids)) == jobs
    runs = wandb_runs(root)
    parts = inode_parts(root)
    total = sum(parts.values())
    print(f"run 1: {wall1:.0f} s, killed={killed} with {done1} jobs in the ledger; the bucket listed {stored1} complete jobs in {list1:.2f} s")
    print(f"run 2 (resume): {wall2:.0f} s; then the bucket listed {stored2} complete jobs in {list2:.2f} s")
    print(f"ledger: {len(ids)} lines, {len(set(ids))} distinct jobs of {jobs}; each exactly once: {once}")
    print("files and folders per job: " + ", ".join(f"{k} {v / jobs:.2f} ({v:,})" for k, v in parts.items()) + f"; all told {total / jobs:.2f}")
    print(f"jobs={jobs} nodes={args.nodes} cells={cells} wandb_runs={len(runs)} exactly_once={once} bucket_jobs={stored2} "
          f"listing_s={list1:.2f} listing_end_s={list2:.2f} driver_ms_per_job={1000 * (cpu1 + cpu2) / jobs:.2f} "
          f"run1_s={wall1:.0f} run2_s={wall2:.0f} inodes_per_job={total / jobs:.2f} dir={root}")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
