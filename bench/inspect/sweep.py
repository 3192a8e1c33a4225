"""bench.sweep's workload through Inspect AI, for the side-by-side in docs/measurements.md (run by hand).

    python3.11 -m venv /tmp/insp && /tmp/insp/bin/pip install inspect-ai openai aiohttp
    PYTHONPATH=. /tmp/insp/bin/python -m bench.inspect.sweep --in-flight 32 --latency 0.5 --jobs 256

The same stub server (`bench/stub_model.py`, told that Inspect's bash parameter is `cmd`), the same
7 calls per sample (6 `bash`, then an answer), Inspect's `local` sandbox (unsandboxed commands,
Inspect's default of one subprocess slot per CPU), `--max-samples` and `--max-connections` set to
the number in flight. Prints the same last line as bench.sweep, from the same /proc sampling.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.sweep import REPO, Tree, result_line, start_stub, stub_times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--max-subprocesses", type=int, default=None, help="Inspect's own (default: its CPU count)")
    args = ap.parse_args()
    jobs = args.jobs or 4 * args.in_flight
    stub, port = start_stub(args.latency, 6, arg="cmd")
    inspect = Path(sys.executable).with_name("inspect")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(inspect), "eval", "bench/inspect/task.py", "--model", "openai-api/stub/stub",
               "--model-base-url", f"http://127.0.0.1:{port}/v1", "--max-samples", str(args.in_flight),
               "--max-connections", str(args.in_flight), "-T", f"jobs={jobs}", "--log-dir", tmp, "--display", "none",
               *(["--max-subprocesses", str(args.max_subprocesses)] if args.max_subprocesses else [])]
        try:
            proc = subprocess.Popen(cmd, cwd=REPO, env={**os.environ, "STUB_API_KEY": "stub", "STUB_BASE_URL": f"http://127.0.0.1:{port}/v1"}, stdout=subprocess.DEVNULL)
            tree = Tree(proc.pid)
            wall = tree.follow(proc)
            times = stub_times(port)
        finally:
            stub.kill()
    print(f"Inspect AI: {jobs} samples, {len(times)} model calls in {wall:.1f} s wall (exit {proc.returncode})")
    print(result_line(times, tree, args.in_flight, args.latency))

if __name__ == "__main__":
    main()
