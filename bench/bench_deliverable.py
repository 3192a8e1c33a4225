"""Hand-run benchmark of the record's copy of the deliverable (envs/deliverable.py, issue 25).

    .venv/bin/python -m bench.bench_deliverable [--files 1000000] [--dir /tmp] [--repeat 5]

Each case runs in a child process (its peak memory is its own) on a workspace made under `--dir`
and times `diff_workspace` + `copy_deliverable` with the default caps (10,000 files, 256 MB):

- normal: a deliverable of 300 files, 30 MB (mixed sizes), beside a 200-file source left as it was;
- sparse: a 200 MB sparse file (4 KB of data) and nine links to it: the record's bytes on disk;
- many: `--files` empty files in one folder, and as many again spread over 1,000 folders;
- nested: 1,000 nested folders with a file at the bottom.

Peak memory is the child's peak RSS while it delivers, over its RSS before (`/proc/self/clear_refs`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from envs.config import EnvConfig
from envs.deliverable import copy_deliverable, diff_workspace
from envs.safeio import remove_tree

CAPS = EnvConfig()


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def deliver(source: Path | None, ws: Path, dest: Path) -> dict:
    """One delivery, timed, with its peak memory over the RSS before it."""
    Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from here
    before = _rss_kb("VmRSS")
    t = time.perf_counter()
    diff = diff_workspace(source, None, ws, max_files=CAPS.deliverable_max_files)
    dest.mkdir()
    got = copy_deliverable(ws, diff, dest, CAPS.deliverable_max_files, CAPS.deliverable_max_bytes)
    wall = time.perf_counter() - t
    blocks = sum(os.lstat(os.path.join(d, n)).st_blocks * 512 for d, _, names in os.walk(dest) for n in names)
    return {"s": wall, "peak_mb": (_rss_kb("VmHWM") - before) / 1024, "files": len(got.files), "left_out": len(got.left_out),
            "rest": got.rest, "limits": got.limits_hit, "disk_mb": blocks / 2**20}


def make_case(case: str, root: Path, files: int) -> tuple[Path | None, Path]:
    ws = root / "ws"
    out = ws / "output"
    out.mkdir(parents=True)
    source = None
    if case == "normal":
        rng = random.Random(0)
        source = root / "source"
        (source / "data").mkdir(parents=True)
        for i in range(200):
            (source / "data" / f"in{i}.csv").write_bytes(rng.randbytes(rng.randint(1000, 50_000)))
        subprocess.run(["cp", "-a", f"{source}/.", str(ws)], check=True)
        sizes = [rng.randint(2_000, 20_000) for _ in range(280)] + [rng.randint(200_000, 1_000_000) for _ in range(15)]
        sizes += [rng.randint(2_000_000, 4_000_000) for _ in range(5)]
        scale = 30 * 2**20 / sum(sizes)
        for i, size in enumerate(sizes):
            (out / f"f{i:03d}.bin").write_bytes(rng.randbytes(int(size * scale)))
    elif case == "sparse":
        with open(out / "big.bin", "wb") as f:
            f.truncate(200 * 2**20)
            f.write(b"data\n")
        for i in range(1, 10):
            os.symlink("big.bin", out / f"l{i}.bin")
    elif case == "many":
        (out / "one").mkdir()
        for i in range(files):
            os.close(os.open(out / "one" / f"f{i:07d}", os.O_CREAT | os.O_WRONLY, 0o644))
        for d in range(1000):
            (out / "spread" / f"d{d:03d}").mkdir(parents=True)
            for i in range(files // 1000):
                os.close(os.open(out / "spread" / f"d{d:03d}" / f"f{i:05d}", os.O_CREAT | os.O_WRONLY, 0o644))
    elif case == "nested":
        here = out
        for _ in range(1000):
            here = here / "d"
            os.mkdir(here)
        (here / "x.txt").write_text("x")
    return source, ws


def child(case: str, base: str, files: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory(dir=base, prefix=f"bench-deliverable-{case}-") as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        source, ws = make_case(case, root, files)
        made = time.perf_counter() - t
        runs = []
        for i in range(repeat):
            os.sync()
            runs.append(deliver(source, ws, root / f"record{i}"))
            remove_tree(root / f"record{i}")
        best = runs[[r["s"] for r in runs].index(statistics.median(r["s"] for r in runs))] if repeat % 2 else runs[0]
        print(json.dumps({**best, "runs_s": [round(r["s"], 3) for r in runs], "made_s": round(made, 1)}))
        remove_tree(root)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=1_000_000)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--case", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.case:
        child(args.case, args.dir, args.files, args.repeat)
        return
    for case in ("normal", "sparse", "nested", "many"):
        repeat = 1 if case == "many" else args.repeat
        cmd = [sys.executable, __file__, "--case", case, "--dir", args.dir, "--files", str(args.files), "--repeat", str(repeat)]
        out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(Path(__file__).parent.parent)})
        print(f"{case:7s}", out.stdout.strip() or out.stderr[-2000:], flush=True)


if __name__ == "__main__":
    main()
