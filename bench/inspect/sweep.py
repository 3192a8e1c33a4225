"""bench.sweep's workload through Inspect AI, for the side-by-side in docs/measurements.md (run by hand).

    python3.11 -m venv /tmp/insp && /tmp/insp/bin/pip install inspect-ai openai aiohttp
    python -m bench.inspect.sweep --inspect /tmp/insp/bin/inspect --in-flight 256 --latency 2 --jobs 1024
    python -m bench.sweep --in-flight 256 --latency 2 --jobs 1024 --inspect /tmp/insp/bin/inspect   # in one run with ours

Inspect AI runs in its own venv (`--inspect`: its `inspect` executable); this module runs in ours and
only launches it. The same stub server (`bench/stub_model.py`, told that Inspect's bash parameter is
`cmd`), the same 7 calls per sample (6 `bash`, then an answer: bench/inspect/task.py), Inspect's
`local` sandbox (unsandboxed commands, Inspect's default of one subprocess slot per CPU),
`--max-samples` and `--max-connections` set to the number in flight. Prints the same last line as
bench.sweep, from the same /proc sampling.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from bench.sweep import REPO, Result, Tree, result, start_stub, stub_times


def inspect_beside(python: str = sys.executable) -> Path:
    """The `inspect` executable of the venv of `python` (where `pip install inspect-ai` puts it)."""
    return Path(python).with_name("inspect")


def run(args: argparse.Namespace, tmp: Path, inspect: Path) -> Result:
    """One `inspect eval` of the workload (args: in_flight, latency, jobs, tool_turns, jitter,
    max_subprocesses), its logs in the fresh folder `tmp`."""
    if not inspect.is_file():
        raise SystemExit(f"--inspect {inspect}: no such executable (python3.11 -m venv V && V/bin/pip install inspect-ai openai aiohttp)")
    tmp.mkdir(parents=True)
    stub, port = start_stub(args.latency, args.tool_turns, arg="cmd", jitter=args.jitter)
    cmd = [str(inspect), "eval", "bench/inspect/task.py", "--model", "openai-api/stub/stub",
           "--model-base-url", f"http://127.0.0.1:{port}/v1", "--max-samples", str(args.in_flight),
           "--max-connections", str(args.in_flight), "-T", f"jobs={args.jobs}", "--log-dir", str(tmp), "--display", "none",
           *(["--max-subprocesses", str(args.max_subprocesses)] if getattr(args, "max_subprocesses", None) else [])]
    env = {**os.environ, "STUB_API_KEY": "stub", "STUB_BASE_URL": f"http://127.0.0.1:{port}/v1"}
    env.pop("PYTHONPATH", None)  # Inspect's venv imports nothing of ours
    try:
        with open(tmp / "inspect.log", "w") as log:
            proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=log)
        tree = Tree(proc.pid)
        wall = tree.follow(proc)
        times = stub_times(port)
    finally:
        stub.kill()
        stub.wait()
    if proc.returncode != 0:
        raise SystemExit(f"inspect eval failed (exit {proc.returncode}):\n{(tmp / 'inspect.log').read_text()[-3000:]}")
    print(f"Inspect AI: {args.jobs} samples, {len(times)} model calls in {wall:.1f} s wall", flush=True)
    if len(times) != args.jobs * (args.tool_turns + 1):
        print(f"warning: {args.jobs * (args.tool_turns + 1)} model calls expected: see the logs in {tmp}", flush=True)
    return result(times, tree, args.in_flight, args.latency)


def main() -> None:
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inspect", type=Path, default=inspect_beside(), help="Inspect AI's `inspect` executable (its own venv)")
    ap.add_argument("--in-flight", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--tool-turns", type=int, default=6)
    ap.add_argument("--jitter", type=float, default=0.0)
    ap.add_argument("--max-subprocesses", type=int, default=None, help="Inspect's own (default: its CPU count)")
    args = ap.parse_args()
    args.jobs = args.jobs or 4 * args.in_flight
    with tempfile.TemporaryDirectory() as tmp:
        print(run(args, Path(tmp) / "inspect", args.inspect).line())


if __name__ == "__main__":
    main()
