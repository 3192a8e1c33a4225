"""Hand-run benchmark of the workspace environment's overheads (targets from the env issue).

    .venv/bin/python bench/bench_env.py [--files 5000] [--mb 200] [--repeat 5]

Prints a table: median per-call overhead of `read` on a 10 KB file (target < 2 ms), `bash true`
with and without bubblewrap (< 20 ms), materializing a 5,000-file 200 MB workspace (< 2 s) with
both methods (overlay where the process may mount, `cp --reflink=auto` copy) against a Python full
copy and hard links (reference only: unsafe, see envs/workspace.py), diff_workspace on it, and
manage_context over 300 turns.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from envs import overlay
from envs.config import EnvConfig
from envs.context import manage_context
from envs.deliverable import diff_workspace
from envs.environment import WorkspaceEnv
from envs.protocol import ToolCall
from envs.sandbox import bwrap_problem
from envs.workspace import discard_workspace, materialize


def median_ms(fn: Callable[[], object], n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def timed_copy(make: Callable[[Path], object], dest: Path, repeat: int) -> float:
    """Median seconds of `make(dest)`, with dirty pages flushed before each run so runs do not pile up."""
    times = []
    for _ in range(repeat):
        discard_workspace(dest)
        os.sync()
        t = time.perf_counter()
        make(dest)
        times.append(time.perf_counter() - t)
    discard_workspace(dest)
    return statistics.median(times)


def make_source(root: Path, files: int, mb: int) -> None:
    rng = random.Random(0)
    weights = [rng.expovariate(1.0) for _ in range(files)]
    scale = mb * 1024 * 1024 / sum(weights)
    for i, w in enumerate(weights):
        d = root / f"dept{i % 40}" / f"project{i % 9}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"file{i}.dat").write_bytes(rng.randbytes(int(w * scale)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=5000)
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rows: list[tuple[str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="bench-env-") as tmp:
        tmpdir = Path(tmp)
        ws = tmpdir / "ws"
        ws.mkdir()
        (ws / "doc.txt").write_text("".join(f"line {i:05d} " + "x" * 88 + "\n" for i in range(100)))  # 10 KB
        env = WorkspaceEnv(ws, EnvConfig(sandbox="none"))
        read = ToolCall("r", "read", json.dumps({"path": "doc.txt"}))
        rows.append(("read 10 KB file", f"{median_ms(lambda: env.execute(read, 1), 500):.3f} ms", "< 2 ms"))
        true = ToolCall("b", "bash", json.dumps({"command": "true"}))
        rows.append(("bash true, no sandbox", f"{median_ms(lambda: env.execute(true, 1), 100):.1f} ms", "< 20 ms"))
        env.close()
        if bwrap_problem() is None:
            boxed = WorkspaceEnv(ws, EnvConfig(sandbox="bwrap"))
            rows.append(("bash true, bubblewrap", f"{median_ms(lambda: boxed.execute(true, 1), 100):.1f} ms", "< 20 ms"))
            body = "\n".join("x" * 127 for _ in range(1024))  # 128 KB: over the kernel's single-argument limit
            heredoc = ToolCall("h", "bash", json.dumps({"command": f"wc -c <<'EOF'\n{body}\nEOF"}))
            rows.append(("bash 128 KB heredoc, bubblewrap", f"{median_ms(lambda: boxed.execute(heredoc, 1), 20):.1f} ms", ""))
            boxed.close()
        else:
            rows.append(("bash true, bubblewrap", f"n/a ({bwrap_problem()})", "< 20 ms"))

        src = tmpdir / "source"
        make_source(src, args.files, args.mb)
        label = f"{args.files} files, {args.mb} MB"
        dest = tmpdir / "job"
        if overlay.can_mount():
            t = timed_copy(lambda d: materialize(src, d, method="overlay"), dest, args.repeat)
            rows.append((f"materialize overlay, {label}", f"{t:.3f} s", "< 2 s"))
        else:
            rows.append((f"materialize overlay, {label}", "n/a (no mount rights)", "< 2 s"))
        t = timed_copy(lambda d: materialize(src, d, method="copy"), dest, args.repeat)
        rows.append((f"materialize copy (cp --reflink=auto), {label}", f"{t:.2f} s", "< 2 s"))
        t = timed_copy(lambda d: shutil.copytree(src, d), dest, args.repeat)
        rows.append((f"full copy (shutil.copytree), {label}", f"{t:.2f} s", "reference"))
        t = timed_copy(lambda d: subprocess.run(["cp", "-al", str(src), str(d)], check=True), dest, args.repeat)
        rows.append((f"hard links (cp -al, unsafe), {label}", f"{t:.2f} s", "reference"))
        materialize(src, dest)
        rows.append((f"diff_workspace, {label}", f"{median_ms(lambda: diff_workspace(src, None, dest), 5):.0f} ms", ""))
        discard_workspace(dest)

    msgs: list[dict] = [{"role": "system", "content": "s"}, {"role": "user", "content": "t"}]
    for i in range(300):
        msgs.append({"role": "assistant", "content": None, "tool_calls": []})
        msgs.append({"role": "tool", "content": "x" * random.Random(i).randint(100, 60_000), "tool_call_id": str(i)})
    rows.append(("manage_context level 3, 300 turns", f"{median_ms(lambda: manage_context(msgs, 3), 50):.2f} ms", ""))

    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)}  {'median':>12}  target")
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value:>12}  {target}")


if __name__ == "__main__":
    main()
