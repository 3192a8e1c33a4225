"""Where a turn's time goes, from a sweep's trajectories: each message carries the time it was added.

For every turn after the first: the *tool* span (the model's reply added → the tool's result added:
the worker thread's queue, the bash call in its sandbox, the record), and the *model call beyond its
latency* (the tool's result added → the next reply added, less the stub's fixed latency: the
context view, the cache, the governor, the HTTP request and reply, the event loop's queue). A turn
of ideal throughput spends only the latency; these two are what it spends besides. And once per
job, in its slot but outside its turns: its start (its environment ready → its first request) and its end
(its last message → its scores written).

    python -m bench.turn_timeline OUT_DIR LATENCY
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from runners.core.record_files import JOB, SCORES, TRAJECTORY


def spans(trajectory: Path, latency: float) -> tuple[list[float], list[float], list[float], list[float]]:
    """(tool spans, model-call spans beyond `latency`, the job's start, its end) of one trajectory, in
    seconds: the start is its environment ready (job.json's last write) → its first reply less `latency`, the end its last
    message → its scores written; a job holds its slot in flight through both."""
    tools, calls, start, end = [], [], [], []
    prev: dict | None = None
    lines = [json.loads(line) for line in trajectory.read_text().splitlines()]
    job, scores = trajectory.parent / JOB, trajectory.parent / SCORES
    first = next((m for m in lines if m.get("role") == "assistant"), None)
    if first is not None and job.exists():
        start.append(first["time"] - latency - job.stat().st_mtime)
    if lines and scores.exists():
        end.append(scores.stat().st_mtime - lines[-1]["time"])
    for msg in lines:
        role = msg.get("role")
        if prev is not None and prev.get("role") == "assistant" and role == "tool":
            tools.append(msg["time"] - prev["time"])
        if prev is not None and prev.get("role") == "tool" and role == "assistant":
            calls.append(msg["time"] - prev["time"] - latency)
        prev = msg
    return tools, calls, start, end


def summary(out: Path, latency: float) -> str:
    """Median, 90th percentile and mean of both spans over every trajectory under `out`, in ms; a
    job's first tool call apart too (it met the job's shell session starting, when one did)."""
    tools: list[float] = []
    firsts: list[float] = []
    calls: list[float] = []
    starts: list[float] = []
    ends: list[float] = []
    for path in out.rglob(TRAJECTORY):
        t, c, s, e = spans(path, latency)
        tools += t
        firsts += t[:1]
        calls += c
        starts += s
        ends += e
    if len(tools) < 2 or len(calls) < 2 or len(starts) < 2 or len(ends) < 2:
        return f"turn timeline: no turns found under {out}"

    def row(name: str, xs: list[float]) -> str:
        q = statistics.quantiles(xs, n=10)
        return f"  {name:<32} median {1000 * statistics.median(xs):7.0f} ms  p90 {1000 * q[8]:7.0f} ms  mean {1000 * statistics.mean(xs):7.0f} ms  ({len(xs)})"

    apart = len(firsts) >= 2 and len(tools) - len(firsts) >= 2  # the first calls and the later ones
    return ("turn timeline (besides the model's latency):\n" + row("tool (reply → result)", tools) + "\n"
            + (row("  a job's first (shell start)", firsts) + "\n" if apart else "")
            + row("model call − latency", calls) + "\n" + row("job start (env ready → 1st call)", starts) + "\n"
            + row("job end (last message → scores)", ends))


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]), float(sys.argv[2])))
