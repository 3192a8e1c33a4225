"""Hand-run benchmark of the disk quota's cost and overshoot (envs/disk_quota.py).

    .venv/bin/python -m bench.bench_disk_quota [--repeat 50]

Prints: what the quota adds to every bash call (start + the last measure after it, on a workspace of
100 and 5,000 files), the per-job baseline measure, one poll round's CPU, `bash true` end to end under
bubblewrap, and the overshoot: how far past a 64 MB quota fast writers get before they are killed
(many 1 MB files; `yes` into many files), on the disk that holds $TMPDIR.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

from envs.config import EnvConfig
from envs.disk_quota import DiskQuota, measure
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem


def workspace(root: Path, files: int) -> Path:
    ws = root / f"ws{files}"
    for i in range(files):
        p = ws / f"d{i % 50}" / f"f{i}.txt"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"x" * (i % 4000))
    return ws


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def per_call(ws: Path, repeat: int) -> tuple[float, float]:
    """Median ms of wall and CPU of what the quota adds to one call: start, then stop (one measure)."""
    quota = DiskQuota(1 << 30, [str(ws)], lambda: [])
    walls, cpus = [], []
    for _ in range(repeat):
        t, c = time.perf_counter(), cpu()
        quota.start()
        quota.stop()
        walls.append((time.perf_counter() - t) * 1000)
        cpus.append((cpu() - c) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def baseline(ws: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        measure([str(ws)], None)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def bash_true(root: Path, repeat: int) -> tuple[float, float]:
    ws = root / "bt"
    ws.mkdir(parents=True)
    env = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"))
    try:
        call = ToolCall("c", "bash", json.dumps({"command": "true"}))
        env.execute(call, 1)
        walls, cpus = [], []
        for _ in range(repeat):
            t, c = time.perf_counter(), cpu()
            env.execute(call, 1)
            walls.append((time.perf_counter() - t) * 1000)
            cpus.append((cpu() - c) * 1000)
        return statistics.median(walls), statistics.median(cpus)
    finally:
        env.close()


def overshoot(root: Path, name: str, command: str) -> tuple[float, float]:
    """(MB held past a 64 MB quota when the writer was killed, seconds it ran)."""
    ws = root / f"o-{name}"
    ws.mkdir()
    env = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap" if bwrap_problem() is None else "none", disk_quota_bytes=64 << 20))
    try:
        t = time.perf_counter()
        result = env.execute(ToolCall("c", "bash", json.dumps({"command": command, "timeout": 600})), 1)
        took = time.perf_counter() - t
        assert result.stop == "disk_quota", result.content[-500:]
        return (measure([str(ws)], None)[0] - (64 << 20)) / (1 << 20), took
    finally:
        env.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for files in (100, 5000):
            ws = workspace(root, files)
            wall, c = per_call(ws, args.repeat)
            print(f"quota per call, {files} files: {wall:.2f} ms wall, {c:.2f} ms CPU; baseline per job {baseline(ws, 5):.2f} ms")
        if bwrap_problem() is None:
            wall, c = bash_true(root / "on", args.repeat)
            print(f"bash true under bubblewrap (session), with the quota: {wall:.1f} ms wall, {c:.1f} ms CPU of the runner")
            start, stop = DiskQuota.start, DiskQuota.stop
            DiskQuota.start, DiskQuota.stop = lambda self: None, lambda self: None  # the same call, nothing watched
            try:
                wall, c = bash_true(root / "off", args.repeat)
            finally:
                DiskQuota.start, DiskQuota.stop = start, stop
            print(f"bash true under bubblewrap (session), quota not watched: {wall:.1f} ms wall, {c:.1f} ms CPU of the runner")
        for name, command in (("files", "for i in $(seq 1 1000); do head -c 1000000 /dev/zero > f$i; done"),
                              ("yes", "for i in $(seq 1 1000); do timeout 0.2 yes > y$i; done")):
            mb, took = overshoot(root, name, command)
            print(f"overshoot, {name}: {mb:.0f} MB past the 64 MB quota, killed after {took:.2f} s")


if __name__ == "__main__":
    main()
